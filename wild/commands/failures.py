"""How a command that failed is told: one line for a system error, a crash log for a bug."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from wild.errors import describe_os_error


def os_error_message(exc: OSError, folder: Path | None) -> str:
    """One line for an OSError: the file and the system's words, or who holds the lock.

    An error on an open file descriptor names no file; then the state `folder` is named.
    """
    filelock = sys.modules.get("filelock")  # loaded if a lock was taken; not imported for this
    if filelock is not None and isinstance(exc, filelock.Timeout):
        lock = Path(exc.lock_file)
        return (
            f"{lock.parent} is locked by another wild process ({lock.name}); "
            "wait or stop it (wild --stop)"
        )
    return describe_os_error(exc, folder)


def crash_log(exc: BaseException) -> str:
    """Write the traceback to a new file; the end of the error line, saying where it is.

    The name is made unique by O_EXCL (mkstemp), so crashes in the same second (several wild
    processes, or one in a loop) never overwrite each other's log.
    """
    # Only after a crash: every command would pay for these (tempfile alone is ~4 ms).
    import traceback  # noqa: PLC0415
    from tempfile import mkstemp  # noqa: PLC0415

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    try:
        fd, name = mkstemp(prefix=f"wild-crash-{stamp}-{os.getpid()}-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as log:
            log.write("".join(traceback.format_exception(exc)))
    except OSError as error:  # a full or read-only temp folder: still one line, no traceback
        return (
            f"no crash log could be written ({describe_os_error(error)}); "
            "please report it with the command you ran"
        )
    return f"details are in {name}; please report it with that file"
