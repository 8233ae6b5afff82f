"""The alerts summary: read commands see exactly what a full read of alerts.jsonl gives."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.parsers.alert_samples import line
from wild.parsers.alerts import INCOMPLETE, AlertIndex
from wild.parsers.alerts_file import Appended, parse_appended
from wild.parsers.alerts_summary import VERSION, decode_summary
from wild.parsers.lines import Problem
from wild.store import alerts_log
from wild.store.alerts_compaction import compact
from wild.store.alerts_summary import load_summary, read_open_alerts

FILE = "x/alerts.jsonl"
State = tuple[list[tuple[str, str, int, dict[str, Any]]], list[Problem]]


def full_read(log: Path) -> State:
    """What the summary must give: every line parsed, the open alerts of the index."""
    result = alerts_log.read_new(log, None, file=FILE)
    open_ = [a for a in AlertIndex(result.entries).all() if a.status != "resolved"]
    return [(a.id, a.status, a.line, dict(a.raw)) for a in open_], list(result.problems)


def summary_read(log: Path) -> State:
    alerts, problems = read_open_alerts(log, summary_of(log), file=FILE)
    return [(a.id, a.status, a.line, dict(a.raw)) for a in alerts], list(problems)


def summary_of(log: Path) -> Path:
    return log.with_name("alerts.summary.json")


def append(log: Path, data: bytes) -> None:
    with log.open("ab") as handle:
        handle.write(data)


statuses = st.sampled_from(["pending", "in-progress", "resolved", "escalated", "odd"])
lines = st.one_of(
    st.builds(
        lambda i, s, n: line(f"a{i}", s, description=f"d{n}"),
        st.integers(0, 5),
        statuses,
        st.integers(0, 9),
    ),
    st.sampled_from([b"not json\n", b"\n", b'{"no":"id"}\n', b'{"id":"s","severity":3}\n']),
)


@given(st.lists(st.lists(lines, max_size=6), min_size=1, max_size=6), st.binary(max_size=12))
def test_reading_after_each_append_equals_a_full_read(
    chunks: list[list[bytes]], torn: bytes
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "alerts.jsonl"
        log.write_bytes(b"")
        for chunk in chunks:
            append(log, b"".join(chunk))
            assert summary_read(log) == full_read(log)
        append(log, torn.replace(b"\n", b" "))  # a writer still busy with its line
        assert summary_read(log) == full_read(log)


def test_an_alert_reopened_after_it_was_resolved_goes_last_in_both_reads(tmp_path: Path) -> None:
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(line("a") + line("b") + line("a", "resolved"))
    assert [a[0] for a in summary_read(log)[0]] == ["b"]
    append(log, line("a", "pending") + line("b", "in-progress"))
    assert [(a[0], a[1]) for a in summary_read(log)[0]] == [("b", "in-progress"), ("a", "pending")]
    assert summary_read(log) == full_read(log)


def test_a_missing_summary_is_built_and_an_unchanged_log_is_not_rewritten(tmp_path: Path) -> None:
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(line("a") + line("b", "resolved") + b"oops\n")
    assert not summary_of(log).exists()
    assert summary_read(log) == full_read(log)
    stored = load_summary(summary_of(log))
    assert stored is not None
    assert [a.id for a in stored.open] == ["a"]
    assert stored.problems == ((3, "not valid JSON, skipped; fix or delete the line: oops"),)
    assert stored.cursor.offset == log.stat().st_size
    written = summary_of(log).stat()
    assert summary_read(log) == full_read(log)
    again = summary_of(log).stat()
    assert (again.st_ino, again.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)


def test_appended_lines_are_the_only_bytes_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(b"".join(line(f"a{i}", "resolved") for i in range(100)) + line("open"))
    summary_read(log)
    parsed: list[int] = []

    def counting(data: bytes, lines_before: int, file: str = "alerts.jsonl") -> Appended:
        parsed.append(len(data))
        return parse_appended(data, lines_before, file)

    monkeypatch.setattr(alerts_log, "parse_appended", counting)
    new = line("open", "in-progress") + line("late")
    append(log, new)
    assert summary_read(log) == full_read(log)
    assert parsed[0] == len(new)  # then the full read of the reference
    assert [a[0] for a in summary_read(log)[0]] == ["open", "late"]


def test_a_truncated_log_is_read_again_from_the_start(tmp_path: Path) -> None:
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(line("a") + line("b") + line("c"))
    summary_read(log)
    with log.open("r+b") as handle:
        handle.truncate(len(line("a")))
    assert summary_read(log) == full_read(log)
    assert [a[0] for a in summary_read(log)[0]] == ["a"]
    log.write_bytes(b"")  # emptied, then refilled with as many bytes as before
    append(log, line("x") + line("y") + line("z"))
    assert [a[0] for a in summary_read(log)[0]] == ["x", "y", "z"]
    assert summary_read(log) == full_read(log)


def test_a_log_replaced_or_rewritten_in_place_is_read_again(tmp_path: Path) -> None:
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(line("a") + line("b"))
    summary_read(log)
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(line("c") + line("d") + line("e"))
    os.replace(replacement, log)  # an editor's save, or a restore from a backup
    assert [a[0] for a in summary_read(log)[0]] == ["c", "d", "e"]
    with log.open("r+b") as handle:  # same inode, same size, other alerts
        handle.write(line("f") + line("g") + line("h"))
    assert [a[0] for a in summary_read(log)[0]] == ["f", "g", "h"]
    assert summary_read(log) == full_read(log)


def test_compaction_leaves_the_same_open_alerts(tmp_path: Path) -> None:
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(
        line("a") + line("b") + line("a", "resolved") + line("b", "escalated") + line("c")
    )
    before = summary_read(log)[0]
    compact(log, tmp_path / "alerts.archive.jsonl", tmp_path / ".lock")
    after = summary_read(log)
    assert after == full_read(log)
    assert [a[:2] for a in after[0]] == [a[:2] for a in before]


@pytest.mark.parametrize(
    "stored",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"version": 999}',
        # A cut-short copy of a valid summary (written below) and other damage.
        b"CUT",
        b"BAD-ENTRY",
        b"DUPLICATE",
        b"WRONG-CURSOR",
    ],
)
def test_a_corrupt_summary_is_rebuilt_from_the_log(tmp_path: Path, stored: bytes) -> None:
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(line("a") + line("b") + b"junk\n" + line("c", "resolved"))
    summary_read(log)
    good = summary_of(log).read_bytes()
    obj = orjson.loads(good)
    damaged = {
        b"CUT": good[: len(good) // 2],
        b"BAD-ENTRY": orjson.dumps({**obj, "open": [{"line": "x", "alert": {}}]}),
        b"DUPLICATE": orjson.dumps({**obj, "open": obj["open"] + obj["open"][:1]}),
        # A valid summary of another file: its fingerprint does not match, so it is not used.
        b"WRONG-CURSOR": orjson.dumps({**obj, "cursor": {**obj["cursor"], "head": "0" * 64}}),
    }
    summary_of(log).write_bytes(damaged.get(stored, stored))
    assert summary_read(log) == full_read(log)
    rebuilt = decode_summary(summary_of(log).read_bytes())
    assert rebuilt is not None and [a.id for a in rebuilt.open] == ["a", "b"]
    assert orjson.loads(summary_of(log).read_bytes())["version"] == VERSION


def test_the_summary_file_counts_the_open_alerts_for_other_readers(tmp_path: Path) -> None:
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(line("a", severity="critical") + line("b", "escalated") + line("c", "resolved"))
    summary_read(log)
    assert orjson.loads(summary_of(log).read_bytes())["counts"] == {
        "status": {"pending": 1, "in-progress": 0, "escalated": 1},
        "severity": {"critical": 1, "warning": 1, "info": 0},
    }


def test_a_torn_last_line_is_reported_but_not_remembered(tmp_path: Path) -> None:
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(line("a") + b'{"id":"b"')
    assert summary_read(log)[1] == [Problem(FILE, 2, INCOMPLETE)]
    stored = load_summary(summary_of(log))
    assert stored is not None and stored.problems == () and stored.cursor.line_count == 1
    append(log, b',"severity":"info"}\n')
    assert [a[0] for a in summary_read(log)[0]] == ["a", "b"]
    assert summary_read(log) == full_read(log)


def test_no_log_no_summary(tmp_path: Path) -> None:
    log = tmp_path / "alerts.jsonl"
    assert summary_read(log) == ([], [])
    assert not summary_of(log).exists()


def test_a_summary_that_cannot_be_saved_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: Path, data: bytes) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("wild.store.alerts_summary.atomic_write", refuse)
    log = tmp_path / "alerts.jsonl"
    log.write_bytes(line("a") + line("b", "resolved"))
    assert summary_read(log) == full_read(log)
    assert not summary_of(log).exists()
