"""What the loop does when a file operation fails: wait and retry what may pass, stop with a
clear message on what will not.

A full disk, an I/O hiccup or a busy network filesystem often clears on its own, and an
overnight loop should ride it out; a permission, a read-only folder or a folder where a file
should be will not clear by waiting, so the loop stops and says what to fix. A write wild
refuses to make (a link planted where its log or events.log belongs, a read-only file) is
the agent's or the human's doing: the work is held, said once, and tried again until fixed.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable
from pathlib import Path

from wild.errors import RefusedWriteError, describe_os_error

# Errors that may clear by themselves: disk full or over quota (someone frees space), I/O and
# stale-handle errors on network filesystems, a resource briefly busy or unavailable.
TRANSIENT = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EIO,
        errno.EAGAIN,
        errno.EBUSY,
        errno.EINTR,
        errno.ETIMEDOUT,
        errno.ESTALE,
        errno.ENFILE,
        errno.EMFILE,
    }
)
MAX_RETRIES = 6  # 1 + 2 + 4 + 8 + 16 + 32 s: about a minute of waiting in all
FIRST_WAIT_S = 1.0
LONGEST_WAIT_S = 60.0


def is_transient(error: OSError) -> bool:
    return error.errno in TRANSIENT


def retry_wait(failures: int) -> float | None:
    """Seconds to wait before retry number `failures` (1-based); None: give up."""
    if failures > MAX_RETRIES:
        return None
    wait: float = FIRST_WAIT_S * 2.0 ** (failures - 1)
    return min(wait, LONGEST_WAIT_S)


Failure = OSError | RefusedWriteError  # what the loop waits out or holds the work for
HELD_WAIT_S = 60.0  # a refused write or a held lock is tried again this often (or at an event)
HELD_LINE = "The work is held and goes on once that is fixed"


def held_lock(error: Failure) -> Path | None:
    """The lock file another process held past the lock's timeout (filelock's Timeout, a
    TimeoutError with no errno), when that is the error: an agent holding `.wild/.lock`."""
    filelock = sys.modules.get("filelock")  # loaded if a lock was taken; not imported for this
    if filelock is not None and isinstance(error, filelock.Timeout):
        return Path(error.lock_file)
    return None


def retry_after(error: Failure, failures: int) -> float | None:
    """Seconds to wait before trying again; None: stop the loop with the error."""
    if isinstance(error, RefusedWriteError) or held_lock(error) is not None:
        return HELD_WAIT_S  # never given up: the human fixes the file, the loop goes on
    return retry_wait(failures) if is_transient(error) else None


def described(error: Failure) -> str:
    lock = held_lock(error)
    if lock is not None:
        return (
            f"{lock} is held by another process (not this loop, perhaps an agent) for longer"
            f" than wild waits for it; `fuser -v {lock}` names who has it open"
        )
    return str(error) if isinstance(error, RefusedWriteError) else describe_os_error(error)


def shown(error: Failure, wait_s: float, failures: int) -> str | None:
    """The terminal's line about the failure; a held refusal or lock is said once, not at
    every retry."""
    if held_lock(error) is not None:
        return None if failures > 1 else f"⚠️  {described(error)}. {HELD_LINE}"
    if isinstance(error, RefusedWriteError):
        if failures > 1:
            return None
        return f"⚠️  {error}. {HELD_LINE}"
    return f"⚠️  {described(error)} (retrying in {wait_s:g} s, attempt {failures})"


def tell(out: Callable[[str], None], error: Failure, wait_s: float, failures: int) -> None:
    """Print `shown`'s line, if any."""
    line = shown(error, wait_s, failures)
    if line is not None:
        out(line)
