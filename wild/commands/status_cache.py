"""`wild --status` and `wild --list-work` in O(what changed): the last status's two parts,
kept in `.wild/status.cache.json`, and the last work queue, kept in `.wild/work.cache.json`,
each used again while the files it came from stand unchanged.

Parsing every file costs a fresh process ~50 ms of imports alone (issue 8: a status should
cost little more than importing click and orjson). So the status keeps its plain-data parts
(`wild.commands.status`): what the files say, keyed by the stat signature of every file it
was read from, and state.json's facts, keyed by state.json's. A status whose files have not
moved needs only this module, `status_view` and `status_text`; the loop's part is judged
against now (pid liveness, running times) on every call. The work queue is selected from
four files alone (tasks.md, alerts.jsonl, barriers.md, human.md: `Workspace.snapshot`) and
does not depend on the time, so it is kept apart, keyed by those four (issue 22 item 8).

The cache is never trusted over the files:
- signatures are taken before the files are read, so a write during the read leaves a stale
  entry, never a wrong one; a signature holds inode, size, mtime, ctime and mode of the file
  and of a link in its place (a chmod or a link swapped in moves it too);
- a file changed less than `RACY_NS` before its signature was taken is not trusted (a later
  write in the same timestamp tick could keep size and times: git's "racy" rule);
- the files' part is good only until the next policy or trust expiry (`valid_until`);
- another folder, format or wild version, or any unreadable entry, is no cache at all.
Writing it is an atomic replace with no fsync (`wild.store.files.write_cache`: a power loss
may leave it old or empty, which reads as no cache) and takes no lock; failing to write (a
read-only folder) loses nothing but time. A status right after an edit writes it, and two
fsyncs cost it more than the rest of its write (issue 22 item 8).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from wild import __version__
from wild.clock import RACY_NS
from wild.paths import WildPaths, approvals_path

if TYPE_CHECKING:  # imported when a status is composed: `wild --list-work` needs neither
    from wild.commands.status_view import Data, Judge

FORMAT = 2  # 2: the files' part's rest kept apart ("rest", wild.commands.status_tasks)
Signature = list[int] | None


def file_inputs(paths: WildPaths, approvals: Path | None = None) -> dict[str, Path]:
    """Every file the files' part is read from (`wild.workspace.load_workspace`); `approvals`:
    the project's own file in the approval store (`approvals_file`), named afresh without it."""
    if approvals is None:
        from wild.barriers.approvals import store_files

        approvals = store_files(paths.project)[0]
    return {
        "tasks": paths.tasks,
        "alerts": paths.alerts,
        "barriers": paths.barriers,
        "human": paths.human,
        "policy": paths.policy,
        "checks": paths.checks,
        "runs": paths.runs_log,
        "backup": paths.backup,  # a damaged tasks.md is named against its backups
        "approvals": approvals,  # the recorded trust holds the policy
        "approvals-machine": approvals_path(),  # read while the project has no file of its own
    }


def approvals_file(paths: WildPaths, kept: dict[str, Any]) -> tuple[list[str], Path]:
    """The project's own file in the approval store, named as the kept cache names it while
    the project's real path and the store's folder are those it was named for: naming it
    afresh hashes the path, and `hashlib` costs a status that reads nothing else ~3-10 ms of
    imports. Returns what the cache keeps to name it next time, and the file."""
    from wild.procfs import real_path

    key = [real_path(paths.project), str(approvals_path())]
    named = kept.get("approvals")
    if isinstance(named, list) and len(named) == 3 and named[:2] == key:
        return named, Path(named[2])
    from wild.barriers.approvals import project_file

    own = project_file(key[0])
    return [*key, str(own)], own


def signature(path: Path) -> Signature:
    try:
        link = os.lstat(path)
        info = os.stat(path)
    except OSError:
        return None
    return [
        link.st_ino,
        link.st_ctime_ns,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_mode,
    ]


def settled(found: Signature, taken_ns: int) -> bool:
    """Whether a file with signature `found`, taken at `taken_ns`, is old enough that any
    later change to it shows in its signature."""
    if found is None:
        return True
    return max(found[1], found[4], found[5]) < taken_ns - RACY_NS


# What tasks.md feeds alone: a status after an edit of these recomputes only its own half of
# the files' part, joined to the kept rest (`wild.commands.status_tasks`).
TASKS_FED = ("tasks", "backup")


def rest_inputs(inputs: dict[str, Signature]) -> dict[str, Signature]:
    """The signatures of the files the rest of the files' part is read from: all but
    tasks.md's own (`TASKS_FED`)."""
    return {name: found for name, found in inputs.items() if name not in TASKS_FED}


def work_inputs(paths: WildPaths) -> dict[str, Path]:
    """Every file the work queue is selected from (`Workspace.snapshot`)."""
    return {
        "tasks": paths.tasks,
        "alerts": paths.alerts,
        "barriers": paths.barriers,
        "human": paths.human,
    }


def unchanged(entry: Any, inputs: dict[str, Signature]) -> bool:
    """Whether a cache entry was made from files as `inputs` finds them, each settled then."""
    if not isinstance(entry, dict) or entry.get("inputs") != inputs:
        return False
    taken = entry.get("takenNs")
    return isinstance(taken, int) and all(settled(s, taken) for s in inputs.values())


def kept_files(entry: Any, inputs: dict[str, Signature], now: datetime) -> Data | None:
    """The files' part from a cache entry, if every input is as it was and settled then."""
    if not unchanged(entry, inputs):
        return None
    until = entry.get("validUntil")
    if until is not None and (not isinstance(until, float) or now.timestamp() >= until):
        return None
    part = entry.get("part")
    return part if isinstance(part, dict) else None


def kept_rest(entry: Any, inputs: dict[str, Signature], now: datetime) -> Data | None:
    """The rest of the files' part (all but what tasks.md feeds) from a cache entry, if every
    file it was read from is as it was and settled then."""
    return kept_files(entry, rest_inputs(inputs), now)


def kept_facts(entry: Any, state: Signature) -> Data | None:
    """state.json's facts from a cache entry, if state.json is as it was and settled then."""
    if not isinstance(entry, dict) or state is None or entry.get("input") != state:
        return None
    taken = entry.get("takenNs")
    if not isinstance(taken, int) or not settled(state, taken):
        return None
    facts = entry.get("facts")
    return facts if isinstance(facts, dict) else None


def kept_queue(entry: Any, inputs: dict[str, Signature]) -> list[Data] | None:
    """The work queue from a cache entry, if its four files are as they were and settled then."""
    if not unchanged(entry, inputs):
        return None
    queue = entry.get("queue")
    return queue if isinstance(queue, list) else None


def _load(paths: WildPaths, path: Path) -> dict[str, Any]:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    fits = isinstance(data, dict) and (
        data.get("format"),
        data.get("wild"),
        data.get("root"),
    ) == (FORMAT, __version__, str(paths.root))
    return data if fits else {}


def status_now(
    paths: WildPaths,
    now: datetime,
    judge: Judge | None = None,
    clock_ns: Callable[[], int] = time.time_ns,
) -> Data:
    """Everything `--status` shows: parts whose files stand unchanged come from the cache,
    the rest is read from the files (and kept for the next status). `judge` tells whether a
    process still runs (`wild.liveness.check` by default); `clock_ns` tells when the
    signatures are taken, against the files' own times (tests move it)."""
    from wild.commands.status_view import compose
    from wild.liveness import check

    taken_ns = clock_ns()  # before the signatures: what they show is at least this new
    kept = _load(paths, paths.status_cache)
    naming, approvals = approvals_file(paths, kept)
    inputs = {name: signature(path) for name, path in file_inputs(paths, approvals).items()}
    state = signature(paths.state)
    files_entry: Any = kept.get("files")
    rest_entry: Any = kept.get("rest")
    state_entry: Any = kept.get("state")
    files = kept_files(files_entry, inputs, now)
    facts = kept_facts(state_entry, state)
    if files is None or facts is None:
        # The parsers, for what changed only: state.json alone while a loop runs, tasks.md
        # and the queue's files alone after an edit of tasks.md.
        if files is None:
            rest = kept_rest(rest_entry, inputs, now)
            if rest is not None:
                from wild.commands.status_tasks import read_files_part

                files = read_files_part(paths, rest)
                until = rest_entry["validUntil"]
            else:
                from wild.commands.status import read_files_part as read_all

                files, rest, until = read_all(paths, now)
                rest_entry = {
                    "part": rest,
                    "validUntil": until,
                    "inputs": rest_inputs(inputs),
                    "takenNs": taken_ns,
                }
            files_entry = {"part": files, "validUntil": until}
        if facts is None:
            from wild.commands.status_facts import read_facts

            facts = read_facts(paths)
            state_entry = {"facts": facts}
        _save(
            paths.status_cache,
            {
                "format": FORMAT,
                "wild": __version__,
                "root": str(paths.root),
                "approvals": naming,
                "files": {**files_entry, "inputs": inputs, "takenNs": taken_ns},
                "rest": rest_entry,
                "state": {**state_entry, "input": state, "takenNs": taken_ns},
            },
        )
    return compose(str(paths.root), files, facts, now, check if judge is None else judge)


def work_now(
    paths: WildPaths, now: datetime, clock_ns: Callable[[], int] = time.time_ns
) -> list[Data]:
    """The ordered work queue `--list-work` shows (`wild.commands.work_queue`): from the cache
    while its four files stand unchanged, else selected from the files (and kept)."""
    taken_ns = clock_ns()  # before the signatures, as in `status_now`
    inputs = {name: signature(path) for name, path in work_inputs(paths).items()}
    queue = kept_queue(_load(paths, paths.work_cache).get("work"), inputs)
    if queue is None:
        from wild.commands.work_queue import list_work_data
        from wild.workspace import load_workspace

        queue = list_work_data(load_workspace(paths, now))
        entry = {"queue": queue, "inputs": inputs, "takenNs": taken_ns}
        _save(
            paths.work_cache,
            {"format": FORMAT, "wild": __version__, "root": str(paths.root), "work": entry},
        )
    return queue


def _save(path: Path, entry: dict[str, Any]) -> None:
    from wild.store.files import write_cache

    # A cache: failing to save it loses nothing. Text a file holds as undecodable bytes
    # (kept as surrogates) has no JSON form: such a status is read afresh every time.
    with contextlib.suppress(OSError, orjson.JSONEncodeError):
        write_cache(path, orjson.dumps(entry))
