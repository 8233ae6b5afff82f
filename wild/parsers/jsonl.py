"""Append-only JSON lines shared by alerts.jsonl and events.log: one-write appends, torn tails."""

from __future__ import annotations

import os
from pathlib import Path

NEWLINE = b"\n"
# Files wild creates are group/world readable like any file an editor would make.
_CREATE_MODE = 0o666


def write_all(fd: int, data: bytes) -> None:
    """Write every byte; one `os.write` unless the kernel writes less (a signal, a full disk)."""
    view = memoryview(data)
    while view:
        # Finishing a short write is better than leaving a torn line behind, even though
        # the rest is then a second write that another appender could precede.
        view = view[os.write(fd, view) :]


def seal(fd: int) -> bytes:
    """b"\\n" when the file ends in a torn line, so the next line is not glued onto it."""
    size = os.fstat(fd).st_size
    return NEWLINE if size and os.pread(fd, 1, size - 1) != NEWLINE else b""


def append_line(path: Path, line: bytes) -> None:
    """Append one whole line with a single `os.write` on an O_APPEND descriptor.

    O_APPEND makes the kernel seek and write atomically, so concurrent writers (other
    threads, other processes, a job's shell `>>`) never interleave inside a line on a local
    filesystem. A missing final newline is added; an embedded one is refused because it
    would split one record into two lines that no reader could re-join. A torn last line
    left by a crash is closed first, so it costs only itself.
    """
    if not line.endswith(NEWLINE):
        line += NEWLINE
    if NEWLINE in line[:-1]:
        raise ValueError(f"{path}: a JSON line must not contain a newline before its end")
    # O_RDWR only so `seal` can read the last byte; O_APPEND still puts the write at the end.
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, _CREATE_MODE)
    try:
        write_all(fd, seal(fd) + line)
    finally:
        os.close(fd)


def split_complete_lines(data: bytes) -> tuple[list[bytes], int]:
    """Split into complete lines (without their b"\\n") and the byte count they cover.

    Bytes after the last newline are a line still being written (or torn by a crash):
    they are left out, and the returned count tells an incremental reader where to
    resume once the line is finished.
    """
    end = data.rfind(NEWLINE) + 1
    if end == 0:
        return [], 0
    return data[: end - 1].split(NEWLINE), end
