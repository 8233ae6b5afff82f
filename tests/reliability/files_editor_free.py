"""vim, an agent process and wild's writers on one tasks.md at once, with no hook: real timing.

Used by `soak_files_editor.py`. vim and the agent take turns through a lock of the test's
own (so neither erases the other), and wild writes whenever it likes, taking no notice of
them (they take no lock of wild's). So a line vim or the agent wrote can only be erased by
wild: every one must be there exactly once at the end. A tick or task wild wrote can be
erased by vim or the agent, when wild's write lands between their read and their write (their
own window, which wild cannot close): those are counted, not failed. vim writes with `:wq!`,
and a vim line counts as written only if it is in the file as vim exits: `vim -es` that finds
the file changed since it read it may reload it and drop its own line, no fault of wild's.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.reliability.files_editor_rounds import (
    VIM_IN_PLACE,
    VIM_RENAME,
    Agent,
    added_text,
    agent_line,
    run_vim,
    seed_line,
    vim_line,
)
from wild.commands import edits
from wild.commands.init import init_wild
from wild.errors import ConflictError
from wild.parsers import tasks as tasks_md
from wild.paths import WildPaths
from wild.store.files import update_text


@dataclass(frozen=True)
class FreeFigures:
    vim_writes: int
    agent_writes: int
    wild_ticks: int
    wild_adds: int
    wild_erased_by_others: int  # wild's ticks or tasks missing at the end (their window)
    wild_gave_up: int  # ConflictError: the file kept changing for 20 tries (said, not done)
    vim_dropped: int  # vim's line not in the file as vim exits: it reloaded the changed file


def _tick(task_id: str) -> Callable[[str], str]:
    return lambda text: tasks_md.set_status(text, task_id, "complete")


@contextmanager
def _turn(lock: Path) -> Iterator[None]:
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def free_for_all(
    folder: Path, vim_writes: int, agent_every: int = 1, pause_s: float = 0.01
) -> FreeFigures:
    """vim writes `vim_writes` times (in place and rename in turn), the agent as often, each
    `pause_s` after the other's turn; wild ticks and adds tasks until they are done. Fails if
    any line of theirs is lost."""
    paths = WildPaths(folder / ".wild")
    init_wild(paths)
    seeds = 4 * vim_writes + 100
    paths.tasks.write_text(
        "# Wild Loop Tasks\n\n" + "".join(seed_line(n, " ") + "\n" for n in range(seeds))
    )
    turn = folder / "turn.lock"
    agent = Agent(paths.tasks)
    done = threading.Event()
    failures: list[BaseException] = []

    vim_wrote: list[int] = []

    def outsiders() -> None:
        try:
            for n in range(vim_writes):
                with _turn(turn):
                    settings = VIM_IN_PLACE if n % 2 == 0 else VIM_RENAME
                    run_vim(paths.tasks, settings, vim_line(n), write="wq!")
                    # vim -es that finds the file changed since it read it may reload it and
                    # drop its own line: only a line there as vim exits counts as written.
                    if vim_line(n) + "\n" in paths.tasks.read_text():
                        vim_wrote.append(n)
                time.sleep(pause_s)  # without a pause, wild may find no quiet moment at all
                if n % agent_every == 0:
                    with _turn(turn):
                        agent.send(("inplace", "rename")[n % 2], n)
                        agent.expect("done")
                    time.sleep(pause_s)
        except BaseException as error:  # reported by the main thread
            failures.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=outsiders)
    thread.start()
    ticked: list[int] = []
    added: dict[int, str] = {}
    gave_up = 0
    n = 0
    while not done.is_set() and n < seeds:
        try:
            if n % 4 == 3:
                added[n] = edits.add_task(
                    paths, added_text(n), priority=2, depends_on=(), blocked_by=()
                )
            else:
                update_text(paths.tasks, _tick(f"seed-{n:04d}"), paths.lock)
                ticked.append(n)
        except ConflictError:
            gave_up += 1
        n += 1
    thread.join()
    agent.close()
    if failures:
        raise failures[0]
    text = paths.tasks.read_text()
    agent_writes = len(range(0, vim_writes, agent_every))
    agent_ids = list(range(0, vim_writes, agent_every))
    theirs = [vim_line(i) for i in vim_wrote]
    theirs += [agent_line(i, "x") for i in agent_ids[:-1]] + [agent_line(agent_ids[-1], " ")]
    for line in theirs:
        count = text.count(line + "\n")
        assert count == 1, f"{line!r} is there {count} times"
    doc = tasks_md.parse(text)
    ids = [t.id for t in doc.tasks]
    assert len(ids) == len(set(ids)), "a task is there twice"
    status = {t.id: t.status for t in doc.tasks}
    erased = sum(status.get(f"seed-{i:04d}") != "complete" for i in ticked)
    erased += sum(f"{task_id}: {added_text(i)}\n" not in text for i, task_id in added.items())
    os.unlink(turn)
    dropped = vim_writes - len(vim_wrote)
    return FreeFigures(vim_writes, agent_writes, len(ticked), len(added), erased, gave_up, dropped)
