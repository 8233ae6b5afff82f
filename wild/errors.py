"""The one error family: every message says what went wrong and what to do next."""

from __future__ import annotations

import errno


class WildError(Exception):
    """A user-facing error; the CLI prints `Error: <message>` and exits 1."""

    exit_code = 1


class UsageError(WildError):
    """The command line itself is wrong; exit 2."""

    exit_code = 2


class FileFormatError(WildError):
    """A `.wild/` file could not be used; the message names the file and line."""

    def __init__(self, path: str, line: int | None, problem: str, fix: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}; {fix}")
        self.path = path
        self.line = line


class ConflictError(WildError):
    """An edit could not be applied because the file kept changing under us."""


class RefusedWriteError(WildError):
    """wild will not write a file: the user made it read-only, or it is a link leading out of
    the project. The message names the file and what to do."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


# What to do about an OSError, by kind. Mapped here once, for the CLI's error handler and the
# loop's write path alike, so every refused read or write says the same useful thing.
_ADVICE: tuple[tuple[frozenset[int], str], ...] = (
    (frozenset({errno.ENOSPC, errno.EDQUOT}), "free some disk space, then try again"),
    (
        frozenset({errno.EACCES, errno.EPERM, errno.EROFS}),
        "make it and its folder readable and writable by this user, then try again",
    ),
    (
        frozenset({errno.EISDIR, errno.ENOTDIR}),
        "a folder stands where a file should be (or the reverse); move it aside",
    ),
    (frozenset({errno.ENOENT}), "check that the path exists"),
)


def describe_os_error(error: OSError, folder: object = None) -> str:
    """One line for an OSError: the file it names (else `folder`), the system's words, and
    what to do about it."""
    what = error.strerror or str(error) or type(error).__name__
    advice = next(
        (text for kinds, text in _ADVICE if error.errno in kinds),
        "check that path's type and permissions",
    )
    if error.filename is not None:
        where = f"{error.filename} -> {error.filename2}" if error.filename2 else error.filename
        return f"{where}: {what}; {advice}"
    if folder is not None:  # an error on an open descriptor names no file
        return f"{folder}: {what} on one of its files; {advice}"
    return f"{what}; {advice}"


def with_filename(error: OSError, path: object) -> OSError:
    """`error`, naming `path` when it names no file (an error on a descriptor names none)."""
    if error.filename is not None:
        return error
    # OSError(errno, …) picks the subclass again (PermissionError, IsADirectoryError …).
    return OSError(error.errno, error.strerror or str(error), str(path))


def from_os_error(error: OSError) -> WildError:
    """The WildError (exit 1) for an OSError that waiting will not fix."""
    return WildError(describe_os_error(error))
