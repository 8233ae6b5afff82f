"""Rounds of a real vim, an agent process and wild's own writers editing one tasks.md.

Shared by `test_files_editor.py` (the suite) and `soak_files_editor.py` (by hand, longer).
Each round one outside writer makes one change and wild makes one: it ticks a task (the
loop's edit: `update_text` + `set_status`) or adds one (the CLI's `--add-task`:
`commands.edits.add_task`). The outside write lands at a chosen moment of wild's
compare-and-swap, by a hook in wild's own calls, so every round is a real collision:

* `before`: before wild reads the file;
* `read`: after wild read it and computed its edit (its re-check must see the change);
* `swap`: after wild's re-check, just before its atomic swap (what it displaced must be
  re-edited);
* `torn` (agent only): the agent has truncated the file and written half when wild starts
  (wild must wait for the file to settle, not read the half).

The outside writers: `vim -es` writing in place (`nobackup nowritebackup`) or saving by
rename (`writebackup backupcopy=no`: vim renames the file aside and writes a new one), and
a Python agent process (appends a note and ticks its previous one, writing in place, by
rename, or slowly in two parts). A model records what each side wrote; after each round the
round's lines are checked, and at the end the whole file: every line each side wrote is
there exactly once, with every tick wild reported done.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from wild.commands import edits
from wild.commands.init import init_wild
from wild.parsers import tasks as tasks_md
from wild.paths import WildPaths
from wild.store import files as store
from wild.store.files import update_text

VIM_IN_PLACE = "set nobackup nowritebackup"
# backupskip= : vim's default skips backups (so renames) for files under /tmp.
VIM_RENAME = "set nobackup writebackup backupcopy=no backupskip= backupdir=."
MOMENTS = ("before", "read", "swap")

AGENT = textwrap.dedent(
    """
    import os, sys, time
    path = sys.argv[1]
    for command in sys.stdin:
        how, n, prev = command.split()
        with open(path, "rb") as handle:
            text = handle.read().decode()
        if prev != "-":
            old = f"- [ ] [P2] agent-{prev}: agent note {prev}\\n"
            text = text.replace(old, old.replace("[ ]", "[x]", 1), 1)
        if text and not text.endswith("\\n"):
            text += "\\n"
        data = (text + f"- [ ] [P2] agent-{n}: agent note {n}\\n").encode()
        if how == "rename":
            with open(path + ".agent", "wb") as handle:
                handle.write(data)
            os.replace(path + ".agent", path)
        elif how == "inplace":
            with open(path, "wb") as handle:
                handle.write(data)
        else:  # torn: truncate, write half, let wild start, pause, write the rest
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, data[: len(data) // 2])
            print("half", flush=True)
            time.sleep(0.003)
            os.write(fd, data[len(data) // 2 :])
            os.close(fd)
        print("done", flush=True)
    """
)


def vim_line(n: int) -> str:
    return f"- [ ] [P2] vim-{n}: editor note {n}"


def agent_line(n: int, box: str) -> str:
    return f"- [{box}] [P2] agent-{n}: agent note {n}"


def seed_line(n: int, box: str) -> str:
    return f"- [{box}] [P2] seed-{n:04d}: tick me {n}"


def added_text(n: int) -> str:
    return f"wild added {n}"


@dataclass
class Model:
    """What each side wrote, and so what tasks.md must hold."""

    seeds: int
    ticked: set[int] = field(default_factory=set)  # seeds wild reported ticked
    added: dict[int, str] = field(default_factory=dict)  # wild's added tasks: round -> id
    vim: list[int] = field(default_factory=list)
    agent: list[int] = field(default_factory=list)  # all but the last are ticked

    def round_lines(self, r: int) -> list[str]:
        """Lines that must be present after round `r` (cheap to check on every round)."""
        lines = []
        if r in self.vim:
            lines.append(vim_line(r))
        if self.agent and self.agent[-1] == r:
            lines.append(agent_line(r, " "))
            if len(self.agent) > 1:
                lines.append(agent_line(self.agent[-2], "x"))
        if r in self.ticked:
            lines.append(seed_line(r, "x"))
        if r in self.added:
            lines.append(f"- [ ] [P2] {self.added[r]}: {added_text(r)}")
        return lines

    def expected(self) -> dict[str, str]:
        """Every task id on disk and its status."""
        status: dict[str, str] = {}
        for n in range(self.seeds):
            status[f"seed-{n:04d}"] = "complete" if n in self.ticked else "todo"
        for n in self.vim:
            status[f"vim-{n}"] = "todo"
        for n in self.agent:
            status[f"agent-{n}"] = "todo" if n == self.agent[-1] else "complete"
        for task_id in self.added.values():
            status[task_id] = "todo"
        return status


@dataclass
class Figures:
    rounds: int = 0
    vim_in_place: int = 0
    vim_rename: int = 0
    agent: int = 0
    wild_ticks: int = 0
    wild_adds: int = 0
    reapplied: int = 0  # wild's edit computed again because the file changed under it
    by_moment: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


class Agent:
    """The agent process: one change per command, answered when done."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", AGENT, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.last: int | None = None

    def send(self, how: str, n: int) -> None:
        assert self.proc.stdin is not None
        prev = "-" if self.last is None else str(self.last)
        self.proc.stdin.write(f"{how} {n} {prev}\n")
        self.proc.stdin.flush()
        self.last = n

    def expect(self, word: str) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line == f"{word}\n", f"agent process said {line!r}, not {word!r}"

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def run_vim(path: Path, settings: str, line: str, write: str = "wq") -> None:
    vim = shutil.which("vim")
    assert vim is not None, "vim is not installed: apt-get install -y vim-tiny"
    # Ex mode, silent, no vimrc, no viminfo, no swap file: set, append a line, write, quit.
    commands = ("-c", settings, "-c", f"call append('$', '{line}')", "-c", write)
    result = subprocess.run(
        [vim, "-es", "-u", "NONE", "-i", "NONE", "-N", "-n", *commands, path.name],
        cwd=path.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, f"vim failed: {result.stdout}{result.stderr}"


@contextmanager
def settle(seconds: float) -> Iterator[None]:
    before = store.SETTLE_S
    store.SETTLE_S = seconds
    try:
        yield
    finally:
        store.SETTLE_S = before


def _once(action: Callable[[], None]) -> Callable[[], None]:
    done = [False]

    def run() -> None:
        if not done[0]:
            done[0] = True
            action()

    return run


class Rounds:
    """One `.wild/` folder, the agent process, the model; `play(r, ...)` plays round `r`."""

    def __init__(self, folder: Path, seeds: int) -> None:
        self.paths = WildPaths(folder / ".wild")
        init_wild(self.paths)
        header = "# Wild Loop Tasks\n\n"
        self.paths.tasks.write_text(
            header + "".join(seed_line(n, " ") + "\n" for n in range(seeds))
        )
        self.model = Model(seeds)
        self.figures = Figures()
        self.agent = Agent(self.paths.tasks)

    def close(self) -> None:
        self.agent.close()

    def _outside(self, r: int, writer: str) -> Callable[[], None]:
        """The outside write of round `r`, to run at once (the torn one is started apart)."""
        tasks = self.paths.tasks

        def write() -> None:
            if writer in ("vim-in-place", "vim-rename"):
                settings = VIM_IN_PLACE if writer == "vim-in-place" else VIM_RENAME
                run_vim(tasks, settings, vim_line(r))
                self.model.vim.append(r)
            else:
                self.agent.send(writer.removeprefix("agent-"), r)
                self.agent.expect("done")
                self.model.agent.append(r)

        return write

    def play(self, r: int, writer: str, moment: str, wild_adds: bool) -> None:
        """Round `r`: `writer` (vim-in-place, vim-rename, agent-inplace, agent-rename,
        agent-torn) collides with wild's tick of seed r (or, `wild_adds`, an added task)."""
        outside = _once(self._outside(r, writer))
        hook = outside if moment != "before" else (lambda: None)
        calls = [0]
        if writer == "agent-torn":
            self.agent.send("torn", r)
            self.agent.expect("half")
            hook = lambda: None  # noqa: E731 - the agent finishes by itself
        elif moment == "before":
            outside()

        def wrap(edit: Callable[[str], str]) -> Callable[[str], str]:
            def edited(text: str) -> str:
                calls[0] += 1
                new = edit(text)
                if moment == "read":
                    hook()
                return new

            return edited

        def on_written(_data: bytes) -> None:
            if moment == "swap":
                hook()

        with settle(store.SETTLE_S if writer == "agent-torn" else self.fast_settle):
            if wild_adds:
                self._add(r, wrap, on_written)
            else:
                tick = wrap(lambda text: tasks_md.set_status(text, f"seed-{r:04d}", "complete"))
                done = update_text(self.paths.tasks, tick, self.paths.lock, on_written=on_written)
                assert seed_line(r, "x") in done, f"round {r}: wild's tick is not in what it wrote"
                self.model.ticked.add(r)
                self.figures.wild_ticks += 1
        if writer == "agent-torn":
            self.agent.expect("done")
            self.model.agent.append(r)
        self.figures.reapplied += calls[0] - 1
        self._count(writer, moment)
        text = self.paths.tasks.read_text()
        for line in self.model.round_lines(r):
            assert text.count(line + "\n") == 1, f"round {r} ({writer}, {moment}): {line!r}"

    # The outside write is complete before wild looks, except in torn rounds (which always
    # use wild's own settle time): a shorter wait only makes the suite faster.
    fast_settle = store.SETTLE_S

    def _add(
        self,
        r: int,
        wrap: Callable[[Callable[[str], str]], Callable[[str], str]],
        on_written: Callable[[bytes], None],
    ) -> None:
        def hooked(path: Path, edit: Callable[[str], str], lock: Path, **_: Any) -> str:
            return update_text(path, wrap(edit), lock, on_written=on_written)

        # The CLI's own edit, with the outside write hooked into its compare-and-swap.
        with mock.patch.object(edits, "update_text", hooked):
            task_id = edits.add_task(
                self.paths, added_text(r), priority=2, depends_on=(), blocked_by=()
            )
        self.model.added[r] = task_id
        self.figures.wild_adds += 1

    def _count(self, writer: str, moment: str) -> None:
        f = self.figures
        f.rounds += 1
        if writer == "vim-in-place":
            f.vim_in_place += 1
        elif writer == "vim-rename":
            f.vim_rename += 1
        else:
            f.agent += 1
        f.by_moment[moment] = f.by_moment.get(moment, 0) + 1

    def verify(self) -> None:
        """The whole file against the model: each id once, each with the status it must have."""
        text = self.paths.tasks.read_text()
        doc = tasks_md.parse(text)
        ids = [t.id for t in doc.tasks]
        duplicated = sorted({i for i in ids if ids.count(i) > 1 and i is not None})
        assert not duplicated, f"written twice: {duplicated[:10]}"
        found = {t.id: t.status for t in doc.tasks if t.id is not None}
        expected = self.model.expected()
        missing = sorted(set(expected) - set(found))
        assert not missing, f"lost: {missing[:10]} ({len(missing)} in all)"
        extra = sorted(set(found) - set(expected))
        assert not extra, f"not written by anyone: {extra[:10]}"
        wrong = {i: (found[i], s) for i, s in expected.items() if found[i] != s}
        assert not wrong, f"status (found, expected): {dict(list(wrong.items())[:10])}"
        for r, task_id in self.model.added.items():
            assert f"{task_id}: {added_text(r)}\n" in text


def schedule(rounds: int, vim_every: int, torn_every: int) -> Iterator[tuple[int, str, str, bool]]:
    """Round number, outside writer, moment and wild's edit for each round: a vim round every
    `vim_every` rounds (in place and rename in turn), a torn agent write every `torn_every`,
    the agent writing in place or by rename otherwise; wild adds a task every 4th round."""
    for r in range(rounds):
        if r % vim_every == 0:
            writer = "vim-in-place" if (r // vim_every) % 2 == 0 else "vim-rename"
        elif r % torn_every == torn_every - 1:
            writer = "agent-torn"
        else:
            writer = ("agent-inplace", "agent-rename")[r % 2]
        moment = "before" if writer == "agent-torn" else MOMENTS[(r // 2) % len(MOMENTS)]
        yield r, writer, moment, r % 4 == 3


def play_all(
    folder: Path, rounds: int, *, vim_every: int, torn_every: int, fast_settle_s: float | None
) -> Figures:
    """Play `rounds` rounds, verify the file, and return the figures. `fast_settle_s`: wild's
    settle time in the rounds where the outside write is complete before wild looks (None:
    wild's own, as in the torn rounds)."""
    start = time.monotonic()
    game = Rounds(folder, seeds=rounds)
    if fast_settle_s is not None:
        game.fast_settle = fast_settle_s
    try:
        for r, writer, moment, adds in schedule(rounds, vim_every, torn_every):
            game.play(r, writer, moment, adds)
        game.verify()
    finally:
        game.close()
    game.figures.seconds = time.monotonic() - start
    return game.figures


def inode_changes_on_rename_save(folder: Path) -> bool:
    """Sanity: vim with VIM_RENAME really saves by rename here (a new inode)."""
    path = folder / "probe.md"
    path.write_text("a\n")
    before = os.stat(path).st_ino
    keep = folder / "keep.md"
    os.link(path, keep)  # so the old inode number cannot be reused at once
    run_vim(path, VIM_RENAME, "b")
    return os.stat(path).st_ino != before and path.read_text() == "a\nb\n"
