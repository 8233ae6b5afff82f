"""A full disk: `wild --alert` leaves no partial line of its own, and says so in one line."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.liveness_system import fill, needs_root, small_tmpfs
from wild.parsers.alerts import encode_alert
from wild.store.alerts_log import read_new

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _wild(*args: str, limit_file_size: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # in the child: a real short write at the file size limit (EFBIG)
        if limit_file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))

    return subprocess.run(
        [sys.executable, "-m", "wild", *args],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit,
        check=False,
    )


def _alert(folder: Path, description: str) -> subprocess.CompletedProcess[str]:
    return _wild(
        *("--dir", str(folder), "--alert", "--severity", "critical", "--source", "job"),
        *("--type", "OOM", "--description", description),
    )


def _assert_one_line_error(done: subprocess.CompletedProcess[str], log: Path, says: str) -> None:
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1, done.stderr
    assert str(log) in done.stderr and says in done.stderr, done.stderr


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A 64 KiB tmpfs of its own (root only: see `needs_root`), unmounted afterwards."""
    with small_tmpfs("64k") as where:
        yield where


@needs_root()
def test_a_full_disk_leaves_no_partial_alert_line(small_disk: Path) -> None:
    wild_dir = small_disk / ".wild"
    assert _wild("--init", "--dir", str(wild_dir)).returncode == 0
    log = wild_dir / "alerts.jsonl"
    assert _alert(wild_dir, "first").returncode == 0
    fill(small_disk)
    before = log.read_bytes()
    # The page holding the first line has room for a small line, not for a 20 KB one: the
    # kernel writes what fits and returns short.
    failed = _alert(wild_dir, "y" * 20_000)
    _assert_one_line_error(failed, log, "No space left on device")
    assert log.read_bytes() == before
    small = _alert(wild_dir, "small")
    assert small.returncode == 0, small.stderr
    alerts = read_new(log, None)
    assert [a.description for a in alerts.entries] == ["first", "small"]
    assert alerts.problems == ()


def test_a_write_cut_at_the_file_size_limit_is_taken_back(tmp_path: Path) -> None:
    """The same short write without root: the kernel stops at RLIMIT_FSIZE (EFBIG)."""
    wild_dir = tmp_path / ".wild"
    assert _wild("--init", "--dir", str(wild_dir)).returncode == 0
    log = wild_dir / "alerts.jsonl"
    log.write_bytes(encode_alert({"id": "first", "severity": "info"}))
    before = log.read_bytes()
    failed = _wild(
        *("--dir", str(wild_dir), "--alert", "--severity", "info", "--source", "job"),
        *("--type", "t", "--description", "z" * 5000),
        limit_file_size=len(before) + 100,
    )
    _assert_one_line_error(failed, log, "only 100 of ")
    assert log.read_bytes() == before
