"""One loop per state folder: an exclusive flock on `.wild/loop.lock`, held while it runs.

The kernel drops a flock when its holder dies, even by SIGKILL, so a crashed loop never
leaves the folder locked; no pid file to go stale. Two `wild "goal"` on one folder would
otherwise both run every task.
"""

from __future__ import annotations

import fcntl
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from wild.errors import WildError, with_filename
from wild.store.state_file import peek_state
from wild.store.write_guard import open_own_file


class LoopLock:
    """The held lock; `release` (or the process's end) frees the folder."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def __enter__(self) -> LoopLock:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def take_loop_lock(root: Path, holder: Callable[[], str | None] = lambda: None) -> LoopLock:
    """Lock `root` for this loop, or raise WildError naming the loop that holds it (as the
    lock file says, else as `holder()`, state.json, says) when another loop runs on it."""
    fd = open_own_file(root / "loop.lock", os.O_RDWR | os.O_CREAT, 0o666, own_folder=False)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        named = _lock_holder(fd) or holder()
        os.close(fd)
        who = f" ({named})" if named else ""
        raise WildError(
            f"{root}: another wild loop is running on this folder{who}; "
            "stop it with `wild --stop`, or wait for it to end"
        ) from None
    # Name the holder in the lock file itself, the moment it is held: state.json names the
    # loop only later, so a refused start in between could not say who runs.
    line = f"pid {os.getpid()} on {os.uname().nodename}\n".encode()
    try:
        os.pwrite(fd, line, 0)
        os.ftruncate(fd, len(line))
    except OSError as error:  # a full disk: the error names the lock file, not a descriptor
        os.close(fd)
        raise with_filename(error, root / "loop.lock") from None
    return LoopLock(fd)


# How long a refused start waits for a holder that has the lock but has not yet named itself.
HOLDER_WAIT_S = 2.0


def _lock_holder(fd: int) -> str | None:
    """The live loop the lock file names, waiting briefly while it names none yet (or still a
    dead one: a loop killed before, whose line the new holder is about to replace)."""
    deadline = time.monotonic() + HOLDER_WAIT_S
    while True:
        named = holder_in(os.pread(fd, 200, 0).decode("utf-8", "replace"))
        if named is not None or time.monotonic() >= deadline:
            return named
        time.sleep(0.01)


def holder_in(text: str) -> str | None:
    """`pid N on HOST` from the lock file's first line, when it names a process alive here
    (or on another host, which cannot be checked)."""
    match = re.fullmatch(r"pid ([1-9][0-9]{0,9}) on (\S+)", text.split("\n", 1)[0])
    if match is None:
        return None
    if match[2] == os.uname().nodename:
        try:
            os.kill(int(match[1]), 0)
        except (ProcessLookupError, OverflowError):
            return None
        except PermissionError:
            pass  # alive, someone else's
    return match[0]


def loop_running(root: Path) -> bool:
    """Whether a loop holds `root` now: its lock cannot be shared. (A shared lock held for an
    instant; a loop starting in that very instant would be told another one runs.)"""
    try:
        fd = os.open(root / "loop.lock", os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False  # no loop ever ran here
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # drops the shared lock, if taken
    return False


def running_loop(state_path: Path) -> str | None:
    """The loop that holds the folder, as its state.json names it (None when it cannot tell)."""
    state = peek_state(state_path)
    process = state.loop_process if state is not None else None
    return None if process is None else f"pid {process.pid} on {process.host}"
