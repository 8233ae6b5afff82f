"""wild's own writes: recognised by content until someone else writes, and read without waiting."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from wild.store import files
from wild.store.files import atomic_write, read_settled, update_text
from wild.store.self_writes import SelfWrites


def test_self_write_is_recognised_until_someone_else_writes(tmp_path: Path) -> None:
    path = tmp_path / "tasks.md"
    own = SelfWrites()
    path.write_bytes(b"- [ ] one\n")
    own.remember(path, b"- [ ] one\n")
    assert own.is_own(path) is True
    assert own.is_own(str(path)) is True  # several events for one write all match
    path.write_bytes(b"- [x] one\n")
    assert own.is_own(path) is False
    path.write_bytes(b"- [ ] one\n")
    # The entry expired at the mismatch: the same bytes written again are not ours.
    assert own.is_own(path) is False


def test_self_writes_missing_or_unknown_file_is_not_own(tmp_path: Path) -> None:
    own = SelfWrites()
    own.remember(tmp_path / "gone.md", b"x")
    assert own.is_own(tmp_path / "gone.md") is False
    assert own.is_own(tmp_path / "never.md") is False


def test_holds_compares_bytes_already_read_and_forgets_at_the_first_mismatch(
    tmp_path: Path,
) -> None:
    own = SelfWrites()
    path = tmp_path / "tasks.md"
    own.remember(path, b"mine\n")
    assert own.holds(str(path), b"mine\n") is True
    assert own.holds(path, b"yours\n") is False
    assert own.holds(path, b"mine\n") is False


def _read_fresh(path: Path, data: bytes, start: int = 0, **usable: Any) -> bytes:
    """Write `data` in place (so the file's mtime is now), then `read_settled` it."""
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        return read_settled(fd, start, **usable)
    finally:
        os.close(fd)


def _count_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    real = time.sleep

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        real(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    return slept


def test_a_file_written_a_moment_ago_is_read_once_it_has_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept = _count_sleeps(monkeypatch)
    assert _read_fresh(tmp_path / "a.md", b"someone's text\n") == b"someone's text\n"
    assert slept and sum(slept) <= files.SETTLE_S


def test_bytes_the_caller_can_use_are_read_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept = _count_sleeps(monkeypatch)
    lines = b'{"id":"a"}\n{"id":"b"}\n'
    data = _read_fresh(tmp_path / "a.jsonl", lines, 11, usable=lambda d: d.endswith(b"\n"))
    assert (data, slept) == (b'{"id":"b"}\n', [])


def test_the_store_reads_a_file_it_wrote_itself_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, lock = tmp_path / "tasks.md", tmp_path / ".lock"
    atomic_write(path, b"- [ ] one\n")
    slept = _count_sleeps(monkeypatch)
    assert update_text(path, lambda text: text + "- [ ] two\n", lock) == "- [ ] one\n- [ ] two\n"
    assert update_text(path, lambda text: text + "- [ ] 3\n", lock).endswith("two\n- [ ] 3\n")
    assert slept == []
    path.write_bytes(b"- [ ] edited by hand\n")  # not ours: read once it has settled
    assert update_text(path, lambda text: text, lock) == "- [ ] edited by hand\n"
    assert slept
