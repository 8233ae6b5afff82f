"""alerts.jsonl: tolerant parsing, safe appends, incremental reads and compaction."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import re
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild import store
from wild.errors import WildError
from wild.parsers import alerts
from wild.parsers.alerts import (
    INCOMPLETE,
    Alert,
    AlertCursor,
    AlertIndex,
    AlertLog,
    CompactionReport,
    append_alert,
    compact,
    encode_alert,
    make_alert,
    new_alert_id,
    parse_entry,
    parse_line,
    read_new,
    status_update,
)
from wild.parsers.lines import Problem

NOW = datetime(2026, 2, 8, 10, 45, 23, tzinfo=UTC)
SEED = (
    b'{"id":"alert-001","timestamp":"2026-02-08T10:45:23Z","severity":"critical",'
    b'"source":"training-job-3","type":"OOM","description":"GPU memory exhausted (24GB/24GB) '
    b'during batch 1250","status":"pending","context":{"batch_size":64,"model":"llama-7b",'
    b'"gpu":"A100-40GB"}}\n'
    b'{"id":"alert-002","timestamp":"2026-02-08T10:47:15Z","severity":"warning",'
    b'"source":"training-job-5","type":"divergence","description":"Loss increased from 2.3 to '
    b'15.7 in 10 steps","status":"pending"}\n'
    b'{"id":"alert-001","timestamp":"2026-02-08T10:50:00Z","severity":"critical",'
    b'"source":"training-job-3","type":"OOM","description":"GPU memory exhausted (24GB/24GB) '
    b'during batch 1250","status":"in-progress","context":{"batch_size":64,"model":"llama-7b",'
    b'"gpu":"A100-40GB","attempt":1}}\n'
    b'{"id":"alert-001","timestamp":"2026-02-08T10:55:00Z","severity":"critical",'
    b'"source":"training-job-3","type":"OOM","description":"GPU memory exhausted (24GB/24GB) '
    b'during batch 1250","status":"resolved","context":{"batch_size":32,"solution":"reduced '
    b'batch size to 32"},"resolvedAt":"2026-02-08T10:55:00Z"}\n'
)


def line(alert_id: str, status: str = "pending", **more: Any) -> bytes:
    record = {"id": alert_id, "timestamp": "2026-02-08T10:45:23Z", "severity": "warning"}
    record.update(status=status, **more)
    return orjson.dumps(record) + b"\n"


def ids(entries: tuple[Alert, ...]) -> list[tuple[str, str, int]]:
    return [(a.id, a.status, a.line) for a in entries]


# ---------------------------------------------------------------------------------- parsing


def test_the_seed_example_parses_to_the_latest_state_per_id(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(SEED)
    result = read_new(path, None)
    assert result.problems == ()
    index = AlertIndex(result.entries)
    assert ids(index.all()) == [("alert-001", "resolved", 4), ("alert-002", "pending", 2)]
    assert ids(index.active()) == [("alert-002", "pending", 2)]
    first = index.get("alert-001")
    assert first is not None
    assert (first.severity, first.source, first.type) == ("critical", "training-job-3", "OOM")
    assert first.resolved_at == "2026-02-08T10:55:00Z"
    assert dict(first.context) == {"batch_size": 32, "solution": "reduced batch size to 32"}
    assert first.raw["resolvedAt"] == "2026-02-08T10:55:00Z"
    assert index.get("alert-404") is None


def test_state_follows_file_order_not_timestamps() -> None:
    later = parse_line(line("a", "resolved", timestamp="2030-01-01T00:00:00Z"), 1)
    earlier = parse_line(line("a", "pending", timestamp="2020-01-01T00:00:00Z"), 2)
    assert isinstance(later, Alert) and isinstance(earlier, Alert)
    assert ids(AlertIndex([later, earlier]).active()) == [("a", "pending", 2)]


def test_choices_and_escalation_time_are_read() -> None:
    data = line(
        "a", "escalated", choices=["Ignore", "Stop Job"], escalatedAt="2026-02-08T11:00:00Z"
    )
    alert = parse_line(data, 7)
    assert isinstance(alert, Alert)
    assert alert.choices == ("Ignore", "Stop Job")
    assert alert.escalated_at == "2026-02-08T11:00:00Z"
    assert alert.status == "escalated"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not json\n", "not valid JSON, skipped; fix or delete the line: not json"),
        (b"[1, 2]\r\n", "not a JSON object, skipped; each line must be one alert object: [1, 2]"),
        (b'{"id": ""}', 'no "id", skipped; give the alert a unique string "id": {"id": ""}'),
        (b'{"id": 7}', 'no "id", skipped; give the alert a unique string "id": {"id": 7}'),
        (b"  \n", "empty line, skipped"),
        (b"\xff{}", "not valid JSON, skipped; fix or delete the line: \\xff{}"),
    ],
)
def test_unusable_lines_are_problems_with_their_text(data: bytes, message: str) -> None:
    assert parse_line(data, 12) == Problem("alerts.jsonl", 12, message)


def test_long_bad_lines_are_cut_in_the_report() -> None:
    problem = parse_line(b"x" * 500, 1, file="a.jsonl")
    assert problem == Problem(
        "a.jsonl", 1, "not valid JSON, skipped; fix or delete the line: " + "x" * 200 + "…"
    )


def test_odd_fields_are_reported_but_the_alert_is_used() -> None:
    data = (
        b'{"id":"x","severity":"HIGH","status":"Done","source":3,'
        b'"choices":[1,"a"],"context":[],"resolvedAt":5}'
    )
    alert, problems = parse_entry(data, 4)
    assert alert is not None
    assert (alert.severity, alert.status, alert.source) == ("warning", "pending", "3")
    assert (alert.choices, dict(alert.context), alert.resolved_at) == (("1", "a"), {}, "5")
    assert [str(p) for p in problems] == [
        'alerts.jsonl:4: alert x: unknown severity "HIGH", treated as "warning"; '
        'use "critical", "warning" or "info"',
        'alerts.jsonl:4: alert x: "source" should be a string, used its JSON text 3',
        'alerts.jsonl:4: alert x: unknown status "Done", treated as "pending"; '
        'use "pending", "in-progress", "resolved" or "escalated"',
        'alerts.jsonl:4: alert x: "context" should be an object, ignored',
        'alerts.jsonl:4: alert x: "resolvedAt" should be a string, used its JSON text 5',
        'alerts.jsonl:4: alert x: "choices" should hold only strings, '
        "used the JSON text of the others",
    ]


def test_missing_fields_get_defaults() -> None:
    alert, problems = parse_entry(b'{"id":"x","choices":"no"}', 1)
    assert alert is not None
    assert (alert.timestamp, alert.status, alert.severity, alert.description) == (
        "",
        "pending",
        "warning",
        "",
    )
    assert [p.message for p in problems] == [
        'alert x: no "severity", treated as "warning"; use "critical", "warning" or "info"',
        'alert x: "choices" should be a list of strings, ignored',
    ]


def test_severity_and_status_spellings_are_accepted_silently() -> None:
    alert, problems = parse_entry(b'{"id":"x","severity":" WARN ","status":"In_Progress"}', 1)
    assert alert is not None
    assert (alert.severity, alert.status, problems) == ("warning", "in-progress", ())


scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=8)
json_values = (
    scalars
    | st.floats(allow_nan=False, allow_infinity=False)  # JSON has neither
    | st.lists(scalars, max_size=3)
    | st.dictionaries(st.text(max_size=4), scalars, max_size=3)
)
alert_keys = st.sampled_from(
    ["id", "severity", "status", "context", "choices", "source", "resolvedAt", "x"]
)


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    alert, problems = parse_entry(data, 1)
    assert alert is not None or len(problems) == 1


@given(st.dictionaries(alert_keys, json_values, max_size=6))
def test_arbitrary_objects_never_raise(obj: dict[str, Any]) -> None:
    alert, _ = parse_entry(orjson.dumps(obj), 1)
    if isinstance(obj.get("id"), str) and obj["id"].strip():
        assert alert is not None and alert.raw == obj
    else:
        assert alert is None


@given(st.lists(st.binary(max_size=40), max_size=8), st.integers(min_value=0, max_value=400))
def test_reading_in_two_steps_equals_reading_once(chunks: list[bytes], cut: int) -> None:
    content = b"\n".join(chunks) + b'\n{"id":"a"}\n{"id":"b"'
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "alerts.jsonl"
        path.write_bytes(content[:cut])
        first = read_new(path, None)
        with path.open("ab") as handle:
            handle.write(content[cut:])
        second = read_new(path, first.cursor)
        whole = read_new(path, None)
    assert not second.reset
    seen = [(a.line, dict(a.raw)) for a in first.entries + second.entries]
    assert seen == [(a.line, dict(a.raw)) for a in whole.entries]
    assert second.cursor == whole.cursor
    assert second.problems[-1] == Problem("alerts.jsonl", whole.cursor.line_count + 1, INCOMPLETE)


# ---------------------------------------------------------------------------------- writing


def test_make_alert_and_status_updates_follow_the_seed() -> None:
    record = make_alert(
        now=NOW,
        severity="critical",
        source="training-job-3",
        type="OOM",
        description="GPU memory exhausted",
        context={"batch_size": 64},
        choices=["Ignore", "Stop Job"],
        alert_id="alert-001",
    )
    assert record == {
        "id": "alert-001",
        "timestamp": "2026-02-08T10:45:23Z",
        "severity": "critical",
        "source": "training-job-3",
        "type": "OOM",
        "description": "GPU memory exhausted",
        "status": "pending",
        "context": {"batch_size": 64},
        "choices": ["Ignore", "Stop Job"],
    }
    later = datetime(2026, 2, 8, 10, 50, tzinfo=UTC)
    first = status_update(record, "in-progress", later)
    assert first["context"] == {"batch_size": 64, "attempt": 1}
    assert first["timestamp"] == "2026-02-08T10:50:00Z"
    parsed = parse_line(encode_alert(first), 3)
    assert isinstance(parsed, Alert)
    assert status_update(parsed, "in-progress", later)["context"]["attempt"] == 2
    assert record["context"] == {"batch_size": 64}  # the input is not changed

    resolved = status_update(first, "resolved", later, context={"solution": "batch 32"})
    assert resolved["resolvedAt"] == "2026-02-08T10:50:00Z"
    assert resolved["context"] == {"solution": "batch 32"}
    escalated = status_update(resolved, "escalated", later)
    assert escalated["escalatedAt"] == "2026-02-08T10:50:00Z"
    assert "resolvedAt" not in escalated


def test_builders_refuse_unknown_names() -> None:
    with pytest.raises(WildError) as caught:
        status_update({"id": "a"}, "done", NOW)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "unknown alert status 'done'; use pending, in-progress, resolved or escalated"
    )
    with pytest.raises(
        WildError, match=r"^unknown severity 'high'; use critical, warning or info$"
    ):
        make_alert(now=NOW, severity="high", source="s", type="t", description="d")  # type: ignore[arg-type]


def test_new_alert_id_is_time_and_random_hex() -> None:
    alert_id = new_alert_id(datetime(2026, 2, 8, 11, 45, 23, tzinfo=UTC))
    assert re.fullmatch(r"alert-20260208-114523-[0-9a-f]{4}", alert_id)
    assert make_alert(now=NOW, severity="info", source="s", type="t", description="d")[
        "id"
    ].startswith("alert-20260208-104523-")


def test_encode_is_one_line_and_refuses_what_no_reader_could_use() -> None:
    data = encode_alert({"id": "a", "description": "two\nlines", "context": {"k": (1, 2)}})
    assert data == b'{"id":"a","description":"two\\nlines","context":{"k":[1,2]}}\n'
    with pytest.raises(WildError) as caught:
        encode_alert({"id": "a", "context": "x" * (1 << 20)})
    assert str(caught.value) == (
        "alert a: the line would be 1048600 bytes, over the 1048576-byte limit; "
        "put large output in a file and name it in the context"
    )
    with pytest.raises(WildError, match=r'^an alert needs a non-empty string "id"; '):
        encode_alert({"severity": "info"})
    with pytest.raises(WildError) as caught:
        encode_alert({"id": "a", "context": {"when": object()}})
    assert str(caught.value) == (
        "alert a: cannot be written as JSON (Type is not JSON serializable: object); "
        "use strings, numbers, booleans, lists and objects"
    )


def test_append_creates_the_file_and_seals_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    append_alert(path, {"id": "a", "severity": "info"})
    with path.open("ab") as handle:
        handle.write(b'{"id":"torn","desc')  # a writer died here
    append_alert(path, {"id": "b", "severity": "info"})
    assert path.read_bytes() == (
        b'{"id":"a","severity":"info"}\n{"id":"torn","desc\n{"id":"b","severity":"info"}\n'
    )
    result = read_new(path, None)
    assert ids(result.entries) == [("a", "pending", 1), ("b", "pending", 3)]
    assert [str(p) for p in result.problems] == [
        'alerts.jsonl:2: not valid JSON, skipped; fix or delete the line: {"id":"torn","desc'
    ]


def test_append_to_a_missing_folder_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "alerts.jsonl"
    with pytest.raises(WildError) as caught:
        append_alert(path, {"id": "a"})
    assert str(caught.value) == (
        f"{path}: cannot append the alert (No such file or directory); "
        "check that the folder exists and is writable"
    )


def _append_many(path: str, worker: int, count: int, pad: int, start: Any) -> None:
    start.wait()
    for i in range(count):
        pad_text = chr(97 + worker) * pad
        append_alert(
            path, {"id": f"w{worker}-{i}", "severity": "info", "context": {"pad": pad_text}}
        )


def test_concurrent_appenders_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    workers, count, pad = 4, 200, 6000  # lines above 4 KiB (PIPE_BUF) on purpose
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(workers)
    procs = [
        ctx.Process(target=_append_many, args=(str(path), w, count, pad, start))
        for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    assert [proc.exitcode for proc in procs] == [0] * workers
    result = read_new(path, None)
    assert result.problems == ()
    assert len(result.entries) == workers * count
    for worker in range(workers):
        mine = [a for a in result.entries if a.id.startswith(f"w{worker}-")]
        assert [a.id for a in mine] == [f"w{worker}-{i}" for i in range(count)]
        assert {a.context["pad"] for a in mine} == {chr(97 + worker) * pad}


# ---------------------------------------------------------------------------------- reading


def test_a_torn_last_line_waits_until_it_is_finished(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + b'{"id":"b","severity":"info","sta')
    first = read_new(path, None)
    assert ids(first.entries) == [("a", "pending", 1)]
    assert first.problems == (Problem("alerts.jsonl", 2, INCOMPLETE),)
    assert str(first.problems[0]) == (
        "alerts.jsonl:2: incomplete last line, waiting for the writer to finish it"
    )
    assert (first.cursor.offset, first.cursor.line_count) == (len(line("a")), 1)
    again = read_new(path, first.cursor)
    assert (again.entries, again.problems, again.cursor) == ((), first.problems, first.cursor)
    with path.open("ab") as handle:
        handle.write(b'tus":"resolved"}\n')
    done = read_new(path, again.cursor)
    assert (ids(done.entries), done.problems, done.reset) == ([("b", "resolved", 2)], (), False)
    assert done.cursor.offset == path.stat().st_size


def test_incremental_reads_return_only_new_lines(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + b"oops\n")
    first = read_new(path, None)
    assert first.problems == (
        Problem("alerts.jsonl", 2, "not valid JSON, skipped; fix or delete the line: oops"),
    )
    with path.open("ab") as handle:
        handle.write(line("b") + b"\n" + line("a", "resolved"))
    second = read_new(path, first.cursor)
    assert ids(second.entries) == [("b", "pending", 3), ("a", "resolved", 5)]
    assert (second.problems, second.reset) == ((), False)
    assert second.cursor.offset == path.stat().st_size
    assert second.cursor.line_count == 5
    assert read_new(path, second.cursor).entries == ()


def test_truncation_is_a_reset(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + line("b"))
    cursor = read_new(path, None).cursor
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(line("c"))
    result = read_new(path, cursor)
    assert (ids(result.entries), result.reset) == ([("c", "pending", 1)], True)


def test_replacement_by_rename_is_a_reset(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a"))
    cursor = read_new(path, None).cursor
    other = tmp_path / "other.jsonl"
    other.write_bytes(line("a") + line("b"))  # same head, longer: only the inode differs
    os.replace(other, path)
    result = read_new(path, cursor)
    assert (ids(result.entries), result.reset) == ([("a", "pending", 1), ("b", "pending", 2)], True)


def test_an_in_place_rewrite_of_the_same_inode_is_a_reset(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + line("b"))
    cursor = read_new(path, None).cursor
    path.write_bytes(line("x") + line("y") + line("z"))  # same inode, grown, new head
    result = read_new(path, cursor)
    assert (len(result.entries), result.reset) == (3, True)


def test_a_rewrite_that_keeps_the_head_is_caught_by_the_tail(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + line("b", "pending"))
    cursor = read_new(path, None).cursor
    path.write_bytes(line("a") + line("b", "pendinG") + line("d"))  # an edit near the cursor
    result = read_new(path, cursor)
    assert (len(result.entries), result.reset) == (3, True)


def test_a_missing_file_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    empty = read_new(path, None)
    assert (empty.entries, empty.problems, empty.reset, empty.cursor.offset) == ((), (), False, 0)
    path.write_bytes(line("a"))
    cursor = read_new(path, empty.cursor).cursor
    path.unlink()
    assert read_new(path, cursor).reset is True


def test_cursor_survives_state_json(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a"))
    cursor = read_new(path, None).cursor
    stored = orjson.loads(orjson.dumps({"alertsFilePosition": cursor.to_json()}))
    assert set(stored["alertsFilePosition"]) == {
        "dev",
        "ino",
        "offset",
        "lineCount",
        "head",
        "tail",
    }
    assert AlertCursor.from_json(stored["alertsFilePosition"]) == cursor
    assert AlertCursor.from_json(4096) is None  # the seed's bare offset names no file
    assert AlertCursor.from_json({**cursor.to_json(), "offset": -1}) is None
    assert AlertCursor.from_json({**cursor.to_json(), "offset": True}) is None
    assert AlertCursor.from_json({**cursor.to_json(), "head": None}) is None


def test_alert_log_reports_changes_and_problems(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + b"junk\n")
    log = AlertLog(path)
    assert ids(log.refresh()) == [("a", "pending", 1)]
    with path.open("ab") as handle:
        handle.write(line("b") + line("a", "in-progress") + b'{"id":')
    assert ids(log.refresh()) == [("b", "pending", 3), ("a", "in-progress", 4)]
    assert [str(p) for p in log.problems] == [
        "alerts.jsonl:2: not valid JSON, skipped; fix or delete the line: junk",
        f"alerts.jsonl:5: {INCOMPLETE}",
    ]
    assert ids(log.index.active()) == [("a", "in-progress", 4), ("b", "pending", 3)]
    assert log.refresh() == ()


def test_alert_log_resumes_from_a_stored_cursor(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + line("b"))
    stored = AlertCursor.from_json(read_new(path, None).cursor.to_json())
    with path.open("ab") as handle:
        handle.write(line("c") + line("a", "resolved"))
    log = AlertLog(path, since=stored)
    assert ids(log.refresh()) == [("a", "resolved", 4), ("c", "pending", 3)]
    assert ids(log.index.active()) == [("b", "pending", 2), ("c", "pending", 3)]
    path.write_bytes(line("z"))  # a different file: everything in it is news
    assert ids(AlertLog(path, since=stored).refresh()) == [("z", "pending", 1)]


# ------------------------------------------------------------------------------ compaction


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def test_compaction_moves_resolved_alerts_and_readers_reset(tmp_path: Path) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(SEED + b"junk\n" + line("c") + line("c", "resolved") + line("d"))
    log = AlertLog(path)
    log.refresh()
    before = log.index.active()
    report = compact(path, archive, lock)
    assert report == CompactionReport(2, 5, 0, 3, 0)
    seed = SEED.splitlines(keepends=True)
    assert lines_of(archive) == [seed[0], seed[2], seed[3], line("c"), line("c", "resolved")]
    assert lines_of(path) == [seed[1], b"junk\n", line("d")]
    assert log.refresh() == ()  # same alerts, so nothing changed for the loop
    assert [dict(a.raw) for a in log.index.active()] == [dict(a.raw) for a in before]
    assert read_new(path, log.cursor).reset is False
    assert compact(path, archive, lock) == CompactionReport(0, 0, 0, 3, 0)


def test_an_existing_cursor_resets_after_compaction(tmp_path: Path) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(line("a") + line("b") + line("b", "resolved"))
    cursor = read_new(path, None).cursor
    compact(path, archive, lock)
    result = read_new(path, cursor)
    assert (ids(result.entries), result.reset) == ([("a", "pending", 1)], True)


def test_a_crash_between_archive_and_rewrite_loses_and_duplicates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    archive.write_bytes(line("old", "resolved"))
    path.write_bytes(line("a") + line("b") + line("a", "resolved"))
    real_write = store.atomic_write

    def crash(target: Path, data: bytes) -> None:
        raise RuntimeError("killed")

    monkeypatch.setattr(store, "atomic_write", crash)
    with pytest.raises(RuntimeError):
        compact(path, archive, lock)
    assert lines_of(archive) == [line("old", "resolved"), line("a"), line("a", "resolved")]
    monkeypatch.setattr(store, "atomic_write", real_write)
    with path.open("ab") as handle:
        handle.write(line("b", "resolved") + line("c"))
    assert compact(path, archive, lock) == CompactionReport(2, 2, 2, 1, 0)
    assert lines_of(archive) == [
        line("old", "resolved"),
        line("a"),
        line("a", "resolved"),
        line("b"),
        line("b", "resolved"),
    ]
    assert lines_of(path) == [line("c")]


def test_a_torn_archive_tail_is_sealed_and_completed(tmp_path: Path) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(line("a") + line("a", "resolved"))
    archive.write_bytes(line("a") + line("a", "resolved")[:9])  # died while appending
    assert compact(path, archive, lock) == CompactionReport(1, 1, 1, 0, 0)
    assert lines_of(archive) == [
        line("a"),
        line("a", "resolved")[:9] + b"\n",
        line("a", "resolved"),
    ]
    assert path.read_bytes() == b""


def _run_first(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, first: Callable[[], None]
) -> None:
    real = getattr(owner, name)

    def wrapper(*args: Any) -> Any:
        first()
        return real(*args)

    monkeypatch.setattr(owner, name, wrapper)


def test_lines_appended_during_compaction_are_carried_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(line("a") + line("a", "resolved") + line("b") + b'{"id":"c",')

    def job_appends_without_any_lock() -> None:
        with path.open("ab") as handle:  # also finishes the torn line
            handle.write(b'"status":"pending"}\n' + line("d"))

    def shell_appends_to_the_old_file() -> None:
        with path.open("ab") as handle:
            handle.write(line("e"))

    # one append lands after our read, the other after the final pre-rename read
    _run_first(monkeypatch, alerts, "_append_archive", job_appends_without_any_lock)
    _run_first(monkeypatch, store, "atomic_write", shell_appends_to_the_old_file)
    assert compact(path, archive, lock) == CompactionReport(1, 2, 0, 4, 3)
    assert lines_of(path) == [
        line("b"),
        b'{"id":"c","status":"pending"}\n',
        line("d"),
        line("e"),
    ]
    assert lines_of(archive) == [line("a"), line("a", "resolved")]


def _someone_waits_for_a_flock_on(path: Path) -> bool:
    inode = f":{path.stat().st_ino} "
    text = Path("/proc/locks").read_text()
    return any("-> FLOCK" in entry and inode in entry for entry in text.splitlines())


def test_compaction_waits_for_an_append_under_way(tmp_path: Path) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(line("a") + line("a", "resolved"))
    appender = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(appender, fcntl.LOCK_SH)  # an append_alert between lock and write
    reports: list[CompactionReport] = []
    compactor = threading.Thread(target=lambda: reports.append(compact(path, archive, lock)))
    compactor.start()
    while compactor.is_alive() and not _someone_waits_for_a_flock_on(path):
        time.sleep(0.001)
    waited = _someone_waits_for_a_flock_on(path)
    os.write(appender, line("b"))
    os.close(appender)
    compactor.join()
    assert waited
    assert reports == [CompactionReport(1, 2, 0, 1, 1)]
    assert lines_of(path) == [line("b")]


def _append_and_resolve(path: str, worker: int, count: int, go: Any) -> None:
    for i in range(count):
        if i == count // 2:
            go.wait()  # the second half is written while compaction runs
        alert_id = f"w{worker}-{i}"
        append_alert(path, {"id": alert_id, "status": "pending", "pad": "p" * 700})
        final = "in-progress" if i % 10 == 0 else "resolved"
        append_alert(path, {"id": alert_id, "status": final})


def test_compaction_with_concurrent_appenders_loses_and_duplicates_nothing(
    tmp_path: Path,
) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    workers, count = 4, 100  # 200 lines per worker
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()
    procs = [
        ctx.Process(target=_append_and_resolve, args=(str(path), w, count, go))
        for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    reports: list[CompactionReport] = []
    while any(proc.is_alive() for proc in procs):
        reports.append(compact(path, archive, lock))
        if any(r.archived_lines for r in reports):
            go.set()
    for proc in procs:
        proc.join()
    assert [proc.exitcode for proc in procs] == [0] * workers
    reports.append(compact(path, archive, lock))

    written = Counter(
        encode_alert(record)
        for w in range(workers)
        for i in range(count)
        for record in (
            {"id": f"w{w}-{i}", "status": "pending", "pad": "p" * 700},
            {"id": f"w{w}-{i}", "status": "in-progress" if i % 10 == 0 else "resolved"},
        )
    )
    archived = [x for x in lines_of(archive) if x.strip()]  # sealing may add blank lines
    assert Counter([x for x in lines_of(path) if x.strip()] + archived) == written
    assert sum(r.archived_lines for r in reports) == len(archived)
    active = AlertIndex(read_new(path, None).entries).active()
    assert sorted(a.id for a in active) == sorted(
        f"w{w}-{i}" for w in range(workers) for i in range(0, count, 10)
    )
