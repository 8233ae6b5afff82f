"""The one error family: every message says what went wrong and what to do next."""

from __future__ import annotations


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
