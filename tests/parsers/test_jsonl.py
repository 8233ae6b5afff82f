"""Splitting JSON lines: complete lines, and the torn tail a writer may still be finishing."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers import webhook_seen
from wild.parsers.alerts import parse_entry
from wild.parsers.events_log import parse_events
from wild.parsers.jsonl import loads, split_complete_lines, trailing_object_start
from wild.parsers.metric_formats import JsonLinesDecoder
from wild.parsers.runs import parse_record


@pytest.mark.parametrize(
    ("data", "lines", "covered"),
    [
        (b"", [], 0),
        (b"partial", [], 0),
        (b"a\n", [b"a"], 2),
        (b"a\nb\n", [b"a", b"b"], 4),
        (b"a\n\nb", [b"a", b""], 3),
        (b"a\r\nb\n", [b"a\r", b"b"], 5),
    ],
)
def test_split_complete_lines(data: bytes, lines: list[bytes], covered: int) -> None:
    assert split_complete_lines(data) == (lines, covered)


no_newline = st.binary().map(lambda b: b.replace(b"\n", b""))


@given(st.lists(no_newline, max_size=6), no_newline)
def test_split_keeps_whole_lines_and_leaves_the_tail(lines: list[bytes], tail: bytes) -> None:
    data = b"".join(line + b"\n" for line in lines) + tail
    got, covered = split_complete_lines(data)
    assert got == lines
    assert data[covered:] == tail


@pytest.mark.parametrize(
    ("line", "start"),
    [
        (b'{"sev{"id":"a"}', 5),
        (b'{"id":"a"}', 0),
        (b'{"a":1}{"id":"b"}\r', 7),
        (b'x{"a":{"b":[1,{"c":2}]}}  ', 1),
        (b'{"d":"\\\\"}', 0),  # an escaped backslash ends the string
        (b'{"d":"\\"}"}', 0),  # an escaped quote does not
        (b'{"d":"a}"}', 0),  # a brace inside a string is text
        (b'{"id":"a"', None),
        (b'{"id":"a"}x', None),
        (b'[{"id":"a"}]', None),
        (b'{"a":1}]', None),
        (b"", None),
        (b"x{" + b"[" * 1000 + b"]" * 1000 + b"}", 1),
        (b"x{" + b"[" * 1100 + b"]" * 1100 + b"}", None),  # deeper than orjson parses
    ],
)
def test_trailing_object_start(line: bytes, start: int | None) -> None:
    assert trailing_object_start(line, 1 << 20) == start


def test_trailing_object_start_looks_back_only_as_far_as_it_is_told() -> None:
    line = b'{"sev' + b'{"id":"a"}'
    assert trailing_object_start(line, 10) == 5
    assert trailing_object_start(line, 9) is None


# A line Python's json.dumps writes for a diverging loss; orjson refuses it.
NAN_LINE = b'{"step": 3, "loss": NaN, "id": "r1", "key": "k", "until": NaN, "command": "stop"}'


def test_nan_is_read_in_metric_logs_and_is_no_record_in_wilds_own_files() -> None:
    """The one decoder, `loads`, and every JSON-lines reader through it: a metric log's NaN is
    a value (a diverged run); in wild's own files such a line is not valid JSON, the same in
    each (a NaN cost could never reach a spending cap)."""
    assert math.isnan(loads(NAN_LINE, non_finite=True)["loss"])
    with pytest.raises(ValueError):
        loads(NAN_LINE)
    decoded = JsonLinesDecoder().feed(NAN_LINE + b"\n")
    assert {s.key: math.isnan(s.value) for s in decoded.samples} == {"loss": True, "until": True}
    events, problems = parse_events(NAN_LINE + b"\n", "events.log")
    assert events == [] and [p.message for p in problems] == ["not valid JSON; skipped"]
    record, problem = parse_record(NAN_LINE, 1)
    assert record is None and problem is not None and problem.message.startswith("not valid JSON")
    alert, alert_problems = parse_entry(NAN_LINE, 1)
    assert alert is None and "not valid JSON" in alert_problems[0].message
    assert webhook_seen.parse(NAN_LINE + b"\n") == {}
