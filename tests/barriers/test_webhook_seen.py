"""The webhook's spent ids on disk: kept across restarts, forgotten after their window."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from wild.barriers.webhook_seen import SeenIds
from wild.errors import WildError
from wild.parsers.webhook_seen import encode, parse
from wild.paths import WildPaths


def test_spent_ids_are_on_disk_before_spend_returns(paths: WildPaths) -> None:
    seen = SeenIds(paths.webhook_seen, now=100)
    seen.spend([("sig:a", 400.0), ("x-wild-delivery:d", 400.0)], now=100)
    assert parse(paths.webhook_seen.read_bytes()) == {"sig:a": 400.0, "x-wild-delivery:d": 400.0}
    reopened = SeenIds(paths.webhook_seen, now=399)
    assert "sig:a" in reopened and "x-wild-delivery:d" in reopened and "other" not in reopened


def test_opening_forgets_closed_windows_and_rewrites_the_file(paths: WildPaths) -> None:
    seen = SeenIds(paths.webhook_seen, now=0)
    seen.spend([("old", 50.0), ("new", 500.0)], now=0)
    reopened = SeenIds(paths.webhook_seen, now=100)
    assert "old" not in reopened and "new" in reopened
    assert parse(paths.webhook_seen.read_bytes()) == {"new": 500.0}


def test_the_file_stays_as_small_as_one_window(paths: WildPaths) -> None:
    # A 5 s window and 300 requests, one a second: dead lines are dropped once they pile up.
    seen = SeenIds(paths.webhook_seen, now=0)
    for second in range(300):
        seen.spend([(f"sig:{second}", second + 5.0)], now=second)
    assert len(seen) == 6
    assert paths.webhook_seen.read_bytes().count(b"\n") < 300 - 256 + 6


def test_a_garbage_file_costs_only_its_bad_lines(paths: WildPaths) -> None:
    paths.webhook_seen.write_bytes(b'\x00\xff garbage\n{"key": "k", "until": 900}\n{"torn')
    seen = SeenIds(paths.webhook_seen, now=0)
    assert "k" in seen
    seen.spend([("j", 900.0)], now=0)
    assert parse(paths.webhook_seen.read_bytes()) == {"k": 900.0, "j": 900.0}


def test_a_compaction_that_cannot_write_changes_nothing(
    paths: WildPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths.webhook_seen.write_bytes(encode("old", 1.0) + encode("new", 900.0))

    def full_disk(path: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("wild.barriers.webhook_seen.atomic_write", full_disk)
    seen = SeenIds(paths.webhook_seen, now=100)
    seen.spend([("j", 900.0)], now=100)
    assert "new" in seen and "j" in seen and "old" not in seen
    assert parse(paths.webhook_seen.read_bytes()) == {"old": 1.0, "new": 900.0, "j": 900.0}


def test_an_unreadable_file_stops_the_start_with_a_clear_error(paths: WildPaths) -> None:
    paths.webhook_seen.mkdir()
    with pytest.raises(WildError) as caught:
        SeenIds(paths.webhook_seen, now=0)
    assert str(caught.value) == (
        f"{paths.webhook_seen}: cannot read the webhook's spent ids (Is a directory); "
        "fix or remove that file, then start again"
    )
