"""Linux's /proc, read in one place: a process's stat fields, its children (where the kernel
lists them), whether a process or a process group still runs, and a file's real path. A
zombie (Z) or dead (X) process has exited: it only waits to be reaped, so it counts as gone
everywhere.

Standard library only, no wild imports: the run wrapper (`wild/runs/wrapper.py`) loads this
file by its path.
"""

from __future__ import annotations

import contextlib
import os

# `threading.local` itself (threading imports it from here): `threading` is not loaded by the
# run wrapper's launcher, which forks every run (`tests/runs/test_wrapper.py`).
from _thread import _local as thread_local
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

STATE, PPID, PGRP, SESSION = 0, 1, 2, 3  # indexes into `split_stat`'s fields (proc(5) 3..6)


def split_stat(line: str) -> list[str] | None:
    """The fields of a /proc/<pid>/stat line from field 3 (the state) on; None if it does not
    read. The command (field 2) is parenthesised and may itself hold spaces and parentheses,
    so the fields are counted from the last ")"."""
    close = line.rfind(")")
    fields = line[close + 2 :].split() if close >= 0 else []
    return fields or None


def _field(fields: list[str], index: int) -> str:
    return fields[index] if len(fields) > index else ""


def read_small(path: str) -> bytes:
    """A small file's bytes (a /proc file) with three system calls: no buffered file object,
    whose open alone adds five (fstat twice, an ioctl, two lseeks). The run's tree reads a
    few of these per loop iteration (issue 22 item 8)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = [os.read(fd, 4096)]
        while chunks[-1]:  # a list longer than one read (a process with many children)
            chunks.append(os.read(fd, 65536))
    finally:
        os.close(fd)
    return b"".join(chunks)


def stat_fields(pid: int) -> list[str] | None:
    """`split_stat` of /proc/<pid>/stat now; None when there is no such process (or no /proc)."""
    try:
        return split_stat(read_small(f"/proc/{pid}/stat").decode("utf-8", "replace"))
    except OSError:
        return None


def has_exited(state: str) -> bool:
    """Whether a stat state letter is a process that has exited (a zombie or a dead one)."""
    return state in ("Z", "X")


def running(pid: int) -> bool:
    """Whether `pid` exists and has not exited (a zombie has)."""
    fields = stat_fields(pid)
    return fields is not None and not has_exited(fields[STATE])


def children(pid: int, threads: Iterable[int] | None = None) -> list[int] | None:
    """The children of `pid` by its threads' /proc children lists (`threads`: those threads'
    only); None where the kernel keeps no such list (built without CONFIG_PROC_CHILDREN) or
    `pid` is gone."""
    found: list[int] = []
    try:
        tids = (
            (int(task.name) for task in os.scandir(f"/proc/{pid}/task"))
            if threads is None
            else dict.fromkeys(threads)  # each once, in order
        )
        for tid in tids:
            try:
                listed = read_small(f"/proc/{pid}/task/{tid}/children")
            except FileNotFoundError:
                if tid == pid:
                    return None  # its main thread has no list: no such lists here, or pid went
                # Another thread ended while the list was read (a pump thread of the loop, as
                # an agent exits): it has no children now, and the others' lists stand.
                # Not an answer of None, which sent the caller to read every process on the
                # machine (~1-10 ms) in ~1 iteration in 8 (issue 22 item 8).
                continue
            found.extend(int(child) for child in listed.split())
    except FileNotFoundError:
        return None
    except OSError:
        return []  # a thread or the process went while we read: what was read stands
    return found


def group_alive(pgid: int) -> bool:
    """Whether any process of group `pgid` still runs (zombies waiting to be reaped do not)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg also reaches zombies, which a slow init may leave for seconds; /proc tells them apart.
    if not os.path.isdir("/proc/self"):
        return True
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            fields = stat_fields(int(entry.name)) if entry.name.isdigit() else None
            if fields and _field(fields, PGRP) == str(pgid) and not has_exited(fields[STATE]):
                return True
        return False
    return True


class _HeldFolders(thread_local):
    answers: dict[str, str] | None = None  # per thread: None while no step holds them


_held = _HeldFolders()


def hold_real_folders() -> None:
    """From now until `release_real_folders`, on this thread, `real_folder` resolves each
    folder once. The loop holds them for one step of its own between two moments the outside
    world acts (an agent's program running, the loop waiting): from an agent's exit to the
    next agent's go it asks for the project's and `.wild/`'s real paths ~15 times, 3 system
    calls each (issue 22 item 8). A folder renamed within the step is seen at the next: as if
    it had been renamed a moment later."""
    if _held.answers is None:
        _held.answers = {}


def release_real_folders() -> None:
    """`real_folder` resolves every call again on this thread (before the outside world acts)."""
    _held.answers = None


def real_folder(path: str | os.PathLike[str]) -> str:
    """`real_path` of a folder (the project, `.wild/`): once per held step on this thread
    (`hold_real_folders`), every call otherwise. Files are resolved by `real_path` each time:
    a link planted at a file's name is seen at the next write."""
    answers = _held.answers
    if answers is None:
        return real_path(path)
    key = os.fspath(path)
    found = answers.get(key)
    if found is None:
        found = answers[key] = real_path(key)
    return found


def real_path(path: str | os.PathLike[str]) -> str:
    """`os.path.realpath(path)`, where the path exists in three system calls: the name the
    kernel gives the file it resolved (an O_PATH descriptor, which needs no read access, seen
    through /proc/self/fd), not one lstat per component of the path (~7 µs against ~18 µs
    for a file five folders deep; a loop's iteration asks ~70 times: every write is checked
    for links leaving the project). Where it does not exist (the part that does is resolved),
    through a link loop, a file deleted meanwhile or without /proc: `os.path.realpath`."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return os.path.realpath(path)
    try:
        found = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        found = ""
    finally:
        os.close(fd)
    if not found.startswith("/") or found.endswith(" (deleted)"):
        return os.path.realpath(path)
    return found
