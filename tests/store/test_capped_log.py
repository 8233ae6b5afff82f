"""The capped log keeps the head and the tail of a flood and says what it cut: real flooding
processes (`seq`, `yes`) write into a pipe, the pump copies into the log."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from pathlib import Path

import pytest

from wild.store.capped_log import (
    DEFAULT_MAX_BYTES,
    MIN_MAX_BYTES,
    READ_CHUNK,
    TAKE_CHUNKS,
    CappedLog,
    Pump,
    max_bytes,
    notice,
)

LIMIT = 256 * 1024
CUT = re.compile(rb"\[wild\] +(\d+) bytes of output were cut here")


def _flood(tmp_path: Path, argv: list[str]) -> tuple[Path, CappedLog]:
    path = tmp_path / "log"
    path.write_bytes(b"header\n")
    log = CappedLog(os.open(path, os.O_RDWR), LIMIT, users=2)
    read_fd, write_fd = os.pipe()
    pump = Pump(read_fd, log)
    try:
        subprocess.run(argv, stdout=write_fd, check=True, timeout=60)
    finally:
        os.close(write_fd)
    pump.drain()
    log.release()
    return path, log


def test_a_flood_keeps_its_head_and_newest_tail_and_says_what_was_cut(tmp_path: Path) -> None:
    path, log = _flood(tmp_path, ["seq", "1", "3000000"])
    data = path.read_bytes()
    everything = b"".join(b"%d\n" % n for n in range(1, 3000001))

    assert log.received == len(everything)
    assert len(data) <= len(b"header\n") + LIMIT + READ_CHUNK + len(notice(0, LIMIT))
    head, tail = data.split(notice(log.cut, LIMIT))
    assert head == b"header\n" + everything[: LIMIT // 2]
    assert everything.endswith(tail) and len(tail) >= LIMIT // 4
    assert len(everything) == len(head) - len(b"header\n") + log.cut + len(tail)
    [cut] = CUT.findall(data)
    assert int(cut) == log.cut > 0


def test_yes_for_a_while_stays_bounded(tmp_path: Path) -> None:
    path, log = _flood(tmp_path, ["sh", "-c", "yes | head -c 50000000"])
    assert log.received == 50_000_000
    assert path.stat().st_size <= len(b"header\n") + LIMIT + READ_CHUNK + len(notice(0, LIMIT))
    assert path.read_bytes().startswith(b"header\ny\ny\n")
    assert path.read_bytes().endswith(b"y\ny\n")


def test_a_small_output_is_kept_whole(tmp_path: Path) -> None:
    path, log = _flood(tmp_path, ["printf", "a\\nb\\n"])
    assert path.read_bytes() == b"header\na\nb\n"
    assert (log.received, log.cut) == (4, 0)


@pytest.mark.parametrize(
    ("value", "limit"),
    [("", DEFAULT_MAX_BYTES), ("abc", DEFAULT_MAX_BYTES), ("10", MIN_MAX_BYTES),
     ("5_000_000", 5_000_000)],
)  # fmt: skip
def test_the_limit_comes_from_the_environment(value: str, limit: int) -> None:
    assert max_bytes({"WILD_MAX_LOG_BYTES": value}) == limit


def _pump_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "wild-log-pump"]


def _inline(path: Path) -> tuple[CappedLog, Pump, int]:
    """A log shared with an inline pump on a fresh pipe; the pipe's write end."""
    log = CappedLog(os.open(path, os.O_RDWR | os.O_CREAT), LIMIT, users=2)
    read_fd, write_fd = os.pipe()
    return log, Pump(read_fd, log, inline=True), write_fd


def test_an_inline_pump_copies_on_the_callers_thread_and_lets_the_log_go_at_the_end(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log"
    before = _pump_threads()
    log, pump, write_fd = _inline(path)
    os.write(write_fd, b"one\n")
    assert pump.take() is True  # copied now, by this thread; the pipe may hold more later
    assert path.read_bytes() == b"one\n"
    os.write(write_fd, b"two\n")
    os.close(write_fd)
    assert pump.take() is False  # every writer gone: over
    assert path.read_bytes() == b"one\ntwo\n"
    pump.drain()  # nothing left: no thread
    assert _pump_threads() == before
    log.release()  # the caller's share; the pump let go of its own at the end
    with pytest.raises(OSError):
        os.fstat(log.fd)


def test_an_inline_take_copies_a_bounded_amount_so_a_flood_leaves_the_poll_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = CappedLog(os.open(tmp_path / "log", os.O_RDWR | os.O_CREAT), 64 * 1024 * 1024)
    read_fd, write_fd = os.pipe()
    reads: list[int] = []
    real_read = os.read

    def endless(fd: int, size: int) -> bytes:  # a pipe a flood keeps full
        if fd != read_fd:
            return real_read(fd, size)
        reads.append(size)
        assert len(reads) <= 4 * TAKE_CHUNKS, "take never gave the caller's poll its turn"
        return b"y\n" * (size // 2)

    pump = Pump(read_fd, log, inline=True)
    monkeypatch.setattr(os, "read", endless)
    assert pump.take() is True
    assert len(reads) == TAKE_CHUNKS
    assert log.received == TAKE_CHUNKS * READ_CHUNK
    monkeypatch.undo()
    os.close(write_fd)
    assert pump.take() is False


def test_an_inline_pump_goes_on_in_a_thread_for_a_writer_left_at_drain(tmp_path: Path) -> None:
    path = tmp_path / "log"
    before = _pump_threads()
    log, pump, write_fd = _inline(path)
    os.write(write_fd, b"before\n")
    pump.drain()  # what was written is in the log; the writer is still there
    assert path.read_bytes() == b"before\n"
    [thread] = [t for t in _pump_threads() if t not in before]
    os.write(write_fd, b"after\n")  # a job the agent left behind writes on
    pump.drain()
    assert path.read_bytes() == b"before\nafter\n"
    os.close(write_fd)
    thread.join(timeout=30)  # it ends at the pipe's end, and lets the log go
    assert not thread.is_alive()
    log.release()
    with pytest.raises(OSError):
        os.fstat(log.fd)


def test_finish_copies_what_the_pipe_holds_then_closes_it_a_writer_left_or_not(
    tmp_path: Path,
) -> None:
    """The run wrapper's run over at once: what it wrote is copied here, with no thread, and
    the pipe is closed even if a writer is left (its next write gets EPIPE)."""
    path = tmp_path / "log"
    before = _pump_threads()
    log, pump, write_fd = _inline(path)
    os.write(write_fd, b"all of it\n")
    pump.finish()
    assert path.read_bytes() == b"all of it\n"
    assert _pump_threads() == before
    with pytest.raises(BrokenPipeError):
        os.write(write_fd, b"late\n")
    os.close(write_fd)
    log.release()
    with pytest.raises(OSError):
        os.fstat(log.fd)
