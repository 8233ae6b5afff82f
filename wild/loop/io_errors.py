"""What the loop does when a file operation fails: wait and retry what may pass, stop with a
clear message on what will not.

A full disk, an I/O hiccup or a busy network filesystem often clears on its own, and an
overnight loop should ride it out; a permission, a read-only folder or a folder where a file
should be will not clear by waiting, so the loop stops and says what to fix.
"""

from __future__ import annotations

import errno

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
