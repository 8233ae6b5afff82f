"""Append-only JSON lines (alerts.jsonl, events.log, control): the one appender, and reads
by byte offset. Splitting the bytes into lines is `wild.parsers.jsonl`."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from wild.errors import WildError, with_filename
from wild.parsers.jsonl import NEWLINE

# Files wild creates are group/world readable like any file an editor would make.
_CREATE_MODE = 0o666
# How often an append follows a file replaced under it (by a compaction) before giving up.
_APPEND_ATTEMPTS = 20


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte; one `os.write` unless the kernel writes less (a signal, a full disk)."""
    view = memoryview(data)
    while view:
        # Finishing a short write is better than leaving a torn line behind, even though
        # the rest is then a second write that another appender could precede.
        view = view[os.write(fd, view) :]


def _seal(fd: int) -> bytes:
    """b"\\n" when the file ends in a torn line, so the next line is not glued onto it."""
    size = os.fstat(fd).st_size
    return NEWLINE if size and os.pread(fd, 1, size - 1) != NEWLINE else b""


def _is_current(fd: int, path: Path) -> bool:
    """Whether `fd` is still the file at `path` (compaction replaces it by rename)."""
    mine = os.fstat(fd)
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)


def append_bytes(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Append `data` (whole lines, as they are) with one `os.write` on an O_APPEND descriptor.

    O_APPEND makes the kernel seek and write atomically, so concurrent writers (other
    threads, other processes, a job's shell `>>`) never interleave inside a line on a local
    filesystem. A torn last line left by a crash is closed first, so it costs only itself.

    The shared flock on the file itself lets a compaction (exclusive flock on the old inode
    before its last read) wait for appends already under way; an append that opened the
    file just before the rename sees the inode changed and retries on the new file, so no
    line lands in a file that is about to disappear. `durable` fsyncs before returning.
    """
    for _ in range(_APPEND_ATTEMPTS):
        # O_RDWR only so `_seal` can read the last byte; O_APPEND still puts the write at the end.
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, _CREATE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            if not _is_current(fd, path):
                continue
            seal = _seal(fd)
            if seal:
                # The end may look torn only because another append is halfway through a
                # write that crosses a page (the kernel grows the file a page at a time).
                # The exclusive lock waits for the appends under way; then judge again.
                fcntl.flock(fd, fcntl.LOCK_EX)
                if not _is_current(fd, path):
                    continue
                seal = _seal(fd)
            _write_all(fd, seal + data)
            if durable:
                os.fsync(fd)
            return
        except OSError as error:  # a full disk on write: name the file
            raise with_filename(error, path) from None
        finally:
            os.close(fd)  # also releases the flock
    raise WildError(f"{path}: the file kept being replaced while appending; try again")


def append_line(path: Path, line: bytes) -> None:
    """Append one whole line through `append_bytes`.

    A missing final newline is added; an embedded one is refused because it would split one
    record into two lines that no reader could re-join.
    """
    if not line.endswith(NEWLINE):
        line += NEWLINE
    if NEWLINE in line[:-1]:
        raise ValueError(f"{path}: a JSON line must not contain a newline before its end")
    append_bytes(path, line)
