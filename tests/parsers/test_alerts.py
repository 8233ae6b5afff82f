"""alerts.jsonl as text: parsing lines, building records, the latest state per id."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.parsers.alert_samples import SEED, ids, line
from wild.errors import WildError
from wild.parsers.alerts import (
    INCOMPLETE,
    AlertIndex,
    encode_alert,
    make_alert,
    new_alert_id,
    parse_entry,
    status_update,
)
from wild.parsers.alerts_file import parse_appended, plan_compaction
from wild.parsers.lines import Problem

NOW = datetime(2026, 2, 8, 10, 45, 23, tzinfo=UTC)

# ---------------------------------------------------------------------------------- parsing


def test_the_seed_example_parses_to_the_latest_state_per_id() -> None:
    result = parse_appended(SEED, 0)
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
    later, _ = parse_entry(line("a", "resolved", timestamp="2030-01-01T00:00:00Z"), 1)
    earlier, _ = parse_entry(line("a", "pending", timestamp="2020-01-01T00:00:00Z"), 2)
    assert later is not None and earlier is not None
    assert ids(AlertIndex([later, earlier]).active()) == [("a", "pending", 2)]


def test_a_reopened_alert_goes_last_like_a_new_one() -> None:
    data = line("a") + line("b") + line("a", "resolved") + line("a", "escalated") + line("b")
    index = AlertIndex(parse_appended(data, 0).entries)
    assert ids(index.all()) == [("b", "pending", 5), ("a", "escalated", 4)]
    still = AlertIndex(parse_appended(line("a") + line("b") + line("a", "in-progress"), 0).entries)
    assert ids(still.all()) == [("a", "in-progress", 3), ("b", "pending", 2)]


def test_choices_and_escalation_time_are_read() -> None:
    data = line(
        "a", "escalated", choices=["Ignore", "Stop Job"], escalatedAt="2026-02-08T11:00:00Z"
    )
    alert, _ = parse_entry(data, 7)
    assert alert is not None
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
    assert parse_entry(data, 12) == (None, (Problem("alerts.jsonl", 12, message),))


def test_long_bad_lines_are_cut_in_the_report() -> None:
    message = "not valid JSON, skipped; fix or delete the line: " + "x" * 200 + "…"
    assert parse_entry(b"x" * 500, 1, file="a.jsonl") == (None, (Problem("a.jsonl", 1, message),))


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
    parsed, _ = parse_entry(encode_alert(first), 3)
    assert parsed is not None
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


@given(st.lists(st.binary(max_size=40), max_size=8), st.integers(min_value=0, max_value=400))
def test_parsing_in_two_steps_equals_parsing_once(chunks: list[bytes], cut: int) -> None:
    content = b"\n".join(chunks) + b'\n{"id":"a"}\n{"id":"b"'
    first = parse_appended(content[:cut], 0)
    second = parse_appended(content[first.consumed :], first.lines)
    whole = parse_appended(content, 0)
    seen = [(a.line, dict(a.raw)) for a in first.entries + second.entries]
    assert seen == [(a.line, dict(a.raw)) for a in whole.entries]
    assert (first.consumed + second.consumed, second.lines + first.lines) == (
        whole.consumed,
        whole.lines,
    )
    assert second.problems[-1] == Problem("alerts.jsonl", whole.lines + 1, INCOMPLETE)


def test_compaction_plan_moves_every_line_of_resolved_alerts_and_keeps_the_rest() -> None:
    data = SEED + b"junk\n" + line("c") + b"\n" + line("c", "resolved") + b'{"id":"d"'
    plan = plan_compaction(data)
    seed = SEED.splitlines()
    assert plan.archive == (
        seed[0],
        seed[2],
        seed[3],
        line("c").rstrip(),
        line("c", "resolved").rstrip(),
    )
    assert plan.keep == (seed[1], b"junk", b"")
    assert (plan.archived_ids, plan.end) == (2, len(data) - len(b'{"id":"d"'))
