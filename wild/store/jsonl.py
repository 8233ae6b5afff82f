"""Append-only JSON lines (alerts.jsonl, events.log, control): the one appender, and reads
by byte offset. Splitting the bytes into lines is `wild.parsers.jsonl`."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from wild.errors import WildError, with_filename
from wild.parsers.jsonl import NEWLINE
from wild.store import files
from wild.store.write_guard import check_appendable, open_own_file

# Files wild creates are group/world readable like any file an editor would make.
_CREATE_MODE = 0o666
# How often an append follows a file replaced under it (by a compaction) before giving up.
_APPEND_ATTEMPTS = 20
# The most buffers one `os.writev` takes (more are joined first: never met by wild's appends).
_IOV_MAX = os.sysconf("SC_IOV_MAX") if "SC_IOV_MAX" in os.sysconf_names else 16


def _write_line(fd: int, parts: Sequence[bytes | bytearray], *, durable: bool) -> None:
    """One `os.write` of `parts` (one `os.writev` when there are several: as atomic on an
    O_APPEND descriptor, and the parts need not be joined into one copy); if the kernel
    takes only part of it (a full disk, a quota, the file size limit) or the write or its
    fsync fails, take our bytes back out and raise.

    Finishing a short write with a second write is not an option: another appender could
    land between the two and both lines would be lost.
    """
    if len(parts) > _IOV_MAX:
        parts = [b"".join(parts)]
    size = sum(len(part) for part in parts)
    written = 0
    try:
        written = os.write(fd, parts[0]) if len(parts) == 1 else os.writev(fd, parts)
        if written < size:
            raise OSError(
                errno.ENOSPC,
                f"{os.strerror(errno.ENOSPC)}: only {written} of {size} bytes were written",
            )
        if durable:
            os.fsync(fd)
    except OSError:
        if written:
            with contextlib.suppress(OSError):  # the first error is the one to report
                _take_back(fd, written)
        raise


def _take_back(fd: int, written: int) -> None:
    """Cut the `written` bytes we just appended off the file's end again.

    With O_APPEND our write ended at the descriptor's offset. Under the exclusive flock no
    other wild appender is mid-write; if the file still ends there, truncating to where our
    bytes began restores its old size. If someone appended after us, their line is left
    alone: our bytes are then a fragment that readers skip (and read the line glued onto it).
    """
    end = os.lseek(fd, 0, os.SEEK_CUR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    if os.fstat(fd).st_size == end:
        os.ftruncate(fd, end - written)


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
    """Append `data` (whole lines, as they are) with one `os.write` on an O_APPEND descriptor
    (`append_parts`)."""
    append_parts(path, [data], durable=durable)


def append_parts(path: Path, parts: Sequence[bytes | bytearray], *, durable: bool = False) -> None:
    """Append the bytes of `parts` together (whole lines, as they are) with one write on an
    O_APPEND descriptor: `os.writev` of the parts as they are, never joined into one copy.

    O_APPEND makes the kernel seek and write atomically, so concurrent writers (other
    threads, other processes, a job's shell `>>`) never interleave inside a line on a local
    filesystem. A torn last line left by a crash is closed first, so it costs only itself.

    The shared flock on the file itself lets a compaction (exclusive flock on the old inode
    before its last read) wait for appends already under way; an append that opened the
    file just before the rename sees the inode changed and retries on the new file, so no
    line lands in a file that is about to disappear. `durable` fsyncs before returning.
    """
    KeptAppender(path).append(parts, durable=durable, keep=False)


class KeptAppender:
    """`append_parts` to one file whose descriptor is kept open between appends, for a
    process that appends to it all the time (the loop's events.log: ~4 appends an iteration,
    each an open of the folder and of the file, and their closes, otherwise; issue 22 item 8).

    Each append checks what `append_parts` checks, in the same order: the file is not a link
    leading out of the project nor read-only (`check_appendable`, on the path as it is now),
    and the descriptor is still the file at the path (`_is_current`). A file replaced since
    (a compaction's rename, a human's `rm`, a link planted at its name) is opened afresh,
    never followed through the old descriptor. Not thread-safe: its owner serialises appends.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def append(
        self, parts: Sequence[bytes | bytearray], *, durable: bool = False, keep: bool = True
    ) -> None:
        """Append `parts` as `append_parts` does; `keep`: leave the descriptor open."""
        if not parts:
            return
        check_appendable(self.path)
        try:
            for _ in range(_APPEND_ATTEMPTS):
                if self._append_once(parts, durable=durable, keep=keep):
                    return
                self.close()
        finally:
            if not keep:
                self.close()
        raise WildError(f"{self.path}: the file kept being replaced while appending; try again")

    def _append_once(
        self, parts: Sequence[bytes | bytearray], *, durable: bool, keep: bool
    ) -> bool:
        """One attempt; False when the descriptor is not the file at the path any more."""
        path = self.path
        if self._fd is None:
            # O_RDWR only so `_seal` can read the last byte; O_APPEND still puts the write
            # at the end.
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
            self._fd = open_own_file(path, flags, _CREATE_MODE, own_folder=False)
        fd = self._fd
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            if not _is_current(fd, path):
                return False
            seal = _seal(fd)
            if seal:
                # The end may look torn only because another append is halfway through a
                # write that crosses a page (the kernel grows the file a page at a time).
                # The exclusive lock waits for the appends under way; then judge again.
                fcntl.flock(fd, fcntl.LOCK_EX)
                if not _is_current(fd, path):
                    return False
                seal = _seal(fd)
            _write_line(fd, [seal + parts[0], *parts[1:]] if seal else parts, durable=durable)
            return True
        except OSError as error:  # a full disk on write: name the file
            self.close()
            raise with_filename(error, path) from None
        finally:
            if keep and self._fd is not None:  # else the close releases it
                fcntl.flock(fd, fcntl.LOCK_UN)

    def sync(self) -> None:
        """Fsync what was appended through the kept descriptor (appends made with
        `durable=False`), if it is open."""
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError as error:
                raise with_filename(error, self.path) from None

    def close(self) -> None:
        """Close the descriptor (which also releases any flock); the next append opens anew."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def append_line(path: Path, line: bytes) -> None:
    """Append one whole line through `append_bytes`.

    A missing final newline is added; an embedded one is refused because it would split one
    record into two lines that no reader could re-join.
    """
    append_lines(path, [line])


def append_lines(path: Path, lines: Sequence[bytes], appender: KeptAppender | None = None) -> None:
    """Append whole lines with one `append_bytes` (each as `append_line` takes it); through
    `appender` (a `KeptAppender` of `path`) when given."""
    whole = []
    for given in lines:
        line = given if given.endswith(NEWLINE) else given + NEWLINE
        if NEWLINE in line[:-1]:
            raise ValueError(f"{path}: a JSON line must not contain a newline before its end")
        whole.append(line)
    if whole:
        (appender or KeptAppender(path)).append([b"".join(whole)], keep=appender is not None)


def _whole_lines(data: bytes) -> bool:
    """Bytes that end a line can be carried over at once; a torn line waits for its writer."""
    return not data or data.endswith(b"\n")


def replace_carrying_appends(path: Path, fd: int, read_to: int, keep: Iterable[bytes]) -> int:
    """Replace the append-only file `path` (open as `fd`, read up to `read_to`) with the
    lines `keep`, carrying over what appenders wrote meanwhile; returns the lines carried.

    The compactions' shared protocol: from the exclusive flock on, appenders that flock
    wait, and those that opened the old file before the rename retry on the new one; what
    was appended after the read is carried, before the rename and after it."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    tail = files.read_settled(fd, read_to, usable=_whole_lines)

    def parts() -> Iterator[bytes]:
        # Written as they come, never joined: a compacted runs.jsonl of a 10,000-run sweep
        # is megabytes, and `keep` may read each line from the file only when it is asked.
        for line in keep:
            yield line + NEWLINE
        yield tail

    files.atomic_write_parts(path, parts())
    late = files.read_settled(fd, read_to + len(tail), usable=_whole_lines)
    if late:
        append_bytes(path, late)
    return tail.count(b"\n") + late.count(b"\n")
