"""The shared appender of JSON lines: flock, replaced files, torn tails, short writes."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wild.errors import WildError
from wild.store.jsonl import append_bytes, append_line


def test_append_creates_the_file_and_adds_a_missing_newline(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    append_line(path, b'{"a":1}')
    append_line(path, b'{"b":2}\n')
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n'


def test_append_closes_a_torn_last_line_first(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    append_line(path, b'{"c":3}')
    assert path.read_bytes() == b'{"a":1}\n{"b":\n{"c":3}\n'


def test_append_refuses_an_embedded_newline(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with pytest.raises(
        ValueError, match=r"a\.jsonl: a JSON line must not contain a newline before its end"
    ):
        append_line(path, b'{"a":\n1}\n')
    assert not path.exists()


def test_append_lands_after_a_writer_that_already_moved_the_end(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"1\n")
    with path.open("ab") as other:
        other.write(b"2\n")
        other.flush()
        append_line(path, b"3")
        other.write(b"4\n")
    assert path.read_bytes() == b"1\n2\n3\n4\n"


def _cut_short(monkeypatch: pytest.MonkeyPatch, keep: int, then: bytes = b"") -> list[int]:
    """Make `os.write` write only `keep` bytes (a disk filling up), then let another writer
    append `then`; returns the sizes asked for."""
    real_write = os.write
    sizes: list[int] = []

    def short_write(fd: int, data: bytes | memoryview) -> int:
        sizes.append(len(data))
        written = real_write(fd, bytes(data)[:keep])
        if then:
            other = os.open(os.readlink(f"/proc/self/fd/{fd}"), os.O_WRONLY | os.O_APPEND)
            real_write(other, then)
            os.close(other)
        return written

    monkeypatch.setattr(os, "write", short_write)
    return sizes


def test_a_short_write_is_taken_back_out_and_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"old\ntorn")
    sizes = _cut_short(monkeypatch, 3)
    with pytest.raises(OSError, match=r"^\[Errno 28\] No space left on device: only 3 of 10 bytes"):
        append_line(path, b"abcdefgh")
    assert sizes == [10]  # the seal and the line, in one write, never finished by a second
    assert path.read_bytes() == b"old\ntorn"


def test_a_failed_fsync_takes_the_line_back_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"old\n")

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="Input/output error"):
        append_bytes(path, b"a\nb\n", durable=True)
    assert path.read_bytes() == b"old\n"


def test_a_short_write_another_writer_appended_after_is_left_for_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"old\n")
    _cut_short(monkeypatch, 3, then=b'{"other":1}\n')
    with pytest.raises(OSError, match="only 3 of 9 bytes"):
        append_line(path, b"abcdefgh")
    assert path.read_bytes() == b'old\nabc{"other":1}\n'  # the reader recovers "other"


def test_append_holds_a_shared_flock_so_a_compaction_can_wait_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    real_flock = fcntl.flock
    held: list[tuple[int, bytes]] = []

    def recording_flock(fd: int, operation: int) -> None:
        real_flock(fd, operation)
        held.append((operation, path.read_bytes()))  # what the file held once we had the lock

    monkeypatch.setattr(fcntl, "flock", recording_flock)
    append_line(path, b"1")
    append_line(path, b"2")
    assert held == [(fcntl.LOCK_SH, b""), (fcntl.LOCK_SH, b"1\n")]
    assert path.read_bytes() == b"1\n2\n"


def test_append_follows_a_file_replaced_between_open_and_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"old\n")
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(b"kept\n")
    old_fd = os.open(path, os.O_RDONLY)
    real_flock = fcntl.flock
    calls: list[int] = []

    def flock_after_a_compaction(fd: int, operation: int) -> None:
        if not calls:
            os.replace(replacement, path)  # compaction wins the race for the name
        calls.append(operation)
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock_after_a_compaction)
    append_line(path, b"new")
    try:
        assert os.pread(old_fd, 1000, 0) == b"old\n"
    finally:
        os.close(old_fd)
    assert path.read_bytes() == b"kept\nnew\n"
    assert len(calls) == 2


def test_append_gives_up_on_a_file_replaced_at_every_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    calls: list[int] = []

    def flock_while_replaced(fd: int, operation: int) -> None:
        calls.append(operation)
        path.unlink()
        path.write_bytes(b"")

    monkeypatch.setattr(fcntl, "flock", flock_while_replaced)
    with pytest.raises(WildError) as caught:
        append_line(path, b"lost")
    assert str(caught.value) == f"{path}: the file kept being replaced while appending; try again"
    assert (len(calls), path.read_bytes()) == (20, b"")


def test_append_bytes_writes_several_lines_at_once_and_can_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"torn")
    real_write, real_fsync = os.write, os.fsync
    writes: list[bytes] = []
    synced: list[int] = []

    def recording_write(fd: int, data: bytes | memoryview) -> int:
        writes.append(bytes(data))
        return real_write(fd, data)

    def recording_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "write", recording_write)
    monkeypatch.setattr(os, "fsync", recording_fsync)
    append_bytes(path, b"a\nb\n")
    append_bytes(path, b"c\n", durable=True)
    assert writes == [b"\na\nb\n", b"c\n"]
    assert len(synced) == 1
    assert path.read_bytes() == b"torn\na\nb\nc\n"


_WRITER = """
import sys
from pathlib import Path
from wild.store.jsonl import append_line
for i in range(int(sys.argv[3])):
    append_line(Path(sys.argv[1]), b'{"w": "%s", "i": %d, "pad": "%s"}' % (
        sys.argv[2].encode(), i, b"x" * 900))
"""


def test_concurrent_appends_crossing_pages_leave_no_empty_line(tmp_path: Path) -> None:
    """A line that crosses a page boundary is visible half-written to another appender, whose
    torn-line check must not then add a newline of its own (an empty line in the log)."""
    path = tmp_path / "log.jsonl"
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root}
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), name, "250"], env=env)
        for name in "abcdef"
    ]
    assert [w.wait(60) for w in writers] == [0] * 6
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert [line for line in lines[:-1] if not line.startswith(b'{"w": ')] == []
    assert len(lines) - 1 == 6 * 250
