"""An append-only file read on from where the last read stopped (alerts.jsonl, runs.jsonl):
the one offset reader, and its one way with errors.

A reader keeps a cursor (`AlertCursor`: byte offset, line count, and fingerprints of the file
it read). A truncated, replaced, compacted or rewritten file is read again from the start. A
missing file is an empty one. A file that cannot be read (a folder where it belongs, no
permission, an I/O error) is one problem naming the file and what to do, and the cursor stays
where it was: the reader keeps what it read before and tries again at its next read, so a
passing error neither stops the loop nor makes it forget the alerts or runs it knew.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from wild.errors import describe_os_error
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.lines import Problem
from wild.record import record
from wild.store.files import pread_all
from wild.store.self_writes import content_hash

# Bytes hashed at the start of the file and just before the cursor: an in-place rewrite, a
# truncate-and-refill or a reused inode number changes them even when size and inode agree.
FINGERPRINT_BYTES = 64


def _fingerprint(fd: int, start: int, end: int) -> str:
    return content_hash(os.pread(fd, end - start, start))


def cursor_at(fd: int, st: os.stat_result, offset: int, line_count: int) -> AlertCursor:
    """The cursor for having read the open file up to `offset`."""
    head = _fingerprint(fd, 0, min(FINGERPRINT_BYTES, offset))
    tail = _fingerprint(fd, max(0, offset - FINGERPRINT_BYTES), offset)
    return AlertCursor(st.st_dev, st.st_ino, offset, line_count, head, tail)


def continues(cursor: AlertCursor, fd: int, st: os.stat_result) -> bool:
    """Whether the open file is the one `cursor` read, grown only by appends."""
    offset = cursor.offset
    return (
        (st.st_dev, st.st_ino) == (cursor.dev, cursor.ino)
        and st.st_size >= offset
        and _fingerprint(fd, 0, min(FINGERPRINT_BYTES, offset)) == cursor.head
        and _fingerprint(fd, max(0, offset - FINGERPRINT_BYTES), offset) == cursor.tail
    )


def _cursor_from(st: os.stat_result, data: bytes, offset: int, lines: int) -> AlertCursor:
    """`cursor_at` for having read the file up to `offset`, from `data`, its bytes from the
    start (no read that could fail)."""
    head = content_hash(data[: min(FINGERPRINT_BYTES, offset)])
    tail = content_hash(data[max(0, offset - FINGERPRINT_BYTES) : offset])
    return AlertCursor(st.st_dev, st.st_ino, offset, lines, head, tail)


# The cursor of a file that is not there: no real file continues it.
NO_FILE = AlertCursor(0, 0, 0, 0, content_hash(b""), content_hash(b""))


class Parsed(Protocol):
    """What a parser made of appended bytes: how many complete lines, and their bytes."""

    @property
    def lines(self) -> int: ...

    @property
    def consumed(self) -> int: ...


P = TypeVar("P", bound=Parsed)


@record
class OffsetRead(Generic[P]):
    """One read: the new complete lines parsed, where the next read starts, whether this one
    started from the beginning of the file (it is not the one the cursor read), and, when the
    file could not be read, the problem (then nothing was parsed and the cursor did not move).
    """

    parsed: P
    cursor: AlertCursor
    fresh: bool
    unreadable: Problem | None = None


# How much of a file a chunked read (`file_chunks`) takes at a time: a read from the start
# gives `start_over` this much at a time, and a compaction plans from chunks this size (each
# chunk is copied about three times as it is split into lines: 1 MiB chunks raised a
# 10,000-run compaction's peak RSS by 5.5 MiB, 256 KiB by 2.7 (RSS sampled), 64 KiB by 1.5:
# once a sweep's recording has freed its large buffers, glibc serves chunks this big from its
# heap, where the lines' small objects then pin them).
CHUNK_BYTES = 1 << 16


def read_on(
    path: Path,
    since: AlertCursor | None,
    parse: Callable[[bytes, int], P],
    file: str,
    start_over: Callable[[Iterator[bytes]], P] | None = None,
) -> OffsetRead[P]:
    """The complete lines appended to `path` since `since` (all of them when None), parsed by
    `parse(bytes, lines before them)`, in O(new bytes). Problems name `file`.

    With `start_over`, a file read from its start (not the one `since` read) is given to it
    as its bytes in chunks of CHUNK_BYTES, read as it takes them, never held whole (the
    loop's runs.jsonl after each compaction: megabytes at 10,000 runs). A read that fails
    then comes out of `start_over` mid-way: it must keep what it made apart from what the
    reader holds until it returns (the read is then unreadable, as any other)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return OffsetRead(parse(b"", 0), NO_FILE, fresh=True)
    except OSError as error:
        return _unreadable(since, parse, file, error)
    try:
        st = os.fstat(fd)  # the file we read, not whatever the name points at by now
        keep = since is not None and continues(since, fd, st)
        start, base = (since.offset, since.line_count) if keep and since else (0, 0)
        if keep:
            parsed = parse(pread_all(fd, start, st.st_size), base)
            cursor = cursor_at(fd, st, start + parsed.consumed, base + parsed.lines)
        elif start_over is not None:
            parsed = start_over(file_chunks(fd, st.st_size))
            cursor = cursor_at(fd, st, parsed.consumed, parsed.lines)
        else:
            data = pread_all(fd, 0, st.st_size)
            # The cursor from the bytes just read, before they are parsed: once `parse` is
            # called on a file read from its start, nothing fails, so a reader may let go of
            # what it knew of the old file as the parse begins (wild.store.runs_log).
            # (A parser that stops elsewhere than the last newline gets `cursor_at`'s.)
            consumed = data.rfind(b"\n") + 1
            cursor = _cursor_from(st, data, consumed, data.count(b"\n", 0, consumed))
            parsed = parse(data, 0)
            if (parsed.consumed, parsed.lines) != (cursor.offset, cursor.line_count):
                cursor = cursor_at(fd, st, parsed.consumed, parsed.lines)
    except OSError as error:  # a folder opens, then fails to read: EISDIR
        return _unreadable(since, parse, file, error)
    finally:
        os.close(fd)
    return OffsetRead(parsed, cursor, fresh=not keep)


def file_chunks(fd: int, end: int | None = None) -> Iterator[bytes]:
    """The open file's bytes up to `end` (None: its end, as far as it grows while read),
    CHUNK_BYTES at a time, each read when asked: the whole file is never held."""
    at = 0
    while end is None or at < end:
        want = CHUNK_BYTES if end is None else min(CHUNK_BYTES, end - at)
        chunk = os.pread(fd, want, at)
        if not chunk:
            return
        at += len(chunk)
        yield chunk


def _unreadable(
    since: AlertCursor | None, parse: Callable[[bytes, int], P], file: str, error: OSError
) -> OffsetRead[P]:
    # Worded without the path the error may carry: the problem names `file` itself.
    words = describe_os_error(OSError(error.errno, error.strerror or str(error)))
    cursor = since if since is not None else NO_FILE
    problem = Problem(file, 1, words)
    return OffsetRead(parse(b"", cursor.line_count), cursor, fresh=False, unreadable=problem)
