"""A writer that dies mid-line leaves a fragment; the next writer's alert glued onto it is read."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.parsers.alert_samples import ids, line
from wild.parsers.alerts import parse_entry
from wild.parsers.alerts_file import parse_appended
from wild.parsers.lines import Problem

CRITICAL = b'{"id":"oom-7","severity":"critical","description":"GPU memory exhausted"}'


def test_an_alert_glued_onto_a_dead_writers_fragment_is_read() -> None:
    alert, problems = parse_entry(b'{"sev' + CRITICAL, 3)
    assert alert is not None
    assert (alert.id, alert.severity, alert.line) == ("oom-7", "critical", 3)
    assert dict(alert.raw) == orjson.loads(CRITICAL)
    assert problems == (
        Problem(
            "alerts.jsonl",
            3,
            "a writer's unfinished line, skipped; the line appended after it was read: {\"sev",
        ),
    )


@pytest.mark.parametrize(
    "fragment",
    [
        b"{",
        b'{"id":"dead","description":"half a {',  # cut inside a string holding a brace
        b'{"id":"dead","d":"ends in a backslash \\',
        b'{"id":"dead","context":{"a":[1,',
        b'{"id":"done-but-no-newline"}',
        b"\xff\xfe not even UTF-8",
        b'"',
    ],
)
def test_whatever_the_fragment_holds_the_alert_after_it_is_read(fragment: bytes) -> None:
    alert, problems = parse_entry(fragment + CRITICAL + b"\r", 1)
    assert alert is not None and dict(alert.raw) == orjson.loads(CRITICAL)
    assert [p.message.split(";")[0] for p in problems] == ["a writer's unfinished line, skipped"]


def test_a_line_that_ends_in_no_alert_is_reported_whole() -> None:
    for data in (b'{"sev{"no":"id"}', b'{"sev{}', b'{"sev{"id":"a"'):
        assert parse_entry(data, 1) == (
            None,
            (
                Problem(
                    "alerts.jsonl",
                    1,
                    f"not valid JSON, skipped; fix or delete the line: {data.decode()}",
                ),
            ),
        )


def test_the_file_reader_reads_the_recovered_alert_once_in_its_place() -> None:
    data = line("a") + b'{"id":"b","sev' + line("c") + line("d")
    result = parse_appended(data, 0)
    assert ids(result.entries) == [("a", "pending", 1), ("c", "pending", 2), ("d", "pending", 3)]
    assert [p.line for p in result.problems] == [2]


# JSON text inside strings is where a careless recovery would find alerts that were never raised.
json_like = st.sampled_from(
    ['{"id":"fake","severity":"critical"}', "{", "}", '"', "\\", '\\"', "{}", '"}', ":{"]
)
text = st.lists(json_like | st.text(max_size=6), max_size=6).map("".join)
keys = st.sampled_from(["description", "source", "type", "x", "note"])
values = (
    text
    | st.integers(-(2**63), 2**63 - 1)
    | st.lists(text, max_size=3)
    | st.dictionaries(keys, text | st.lists(text, max_size=2), max_size=3)
)


@st.composite
def alert_objects(draw: st.DrawFn) -> dict[str, Any]:
    """Alert objects whose strings hold JSON-looking text (nested objects carry no "id")."""
    obj: dict[str, Any] = {"id": draw(text.filter(lambda t: bool(t.strip())))}
    obj.update(draw(st.dictionaries(keys, values, max_size=4)))
    return obj


no_newline = st.binary(max_size=60).map(lambda b: b.replace(b"\n", b""))


@st.composite
def fragments(draw: st.DrawFn) -> bytes:
    """What a dead writer leaves: any bytes, or a cut-off alert line (the usual case)."""
    cut_line = orjson.dumps(draw(alert_objects()))
    cut = cut_line[: draw(st.integers(0, len(cut_line) - 1))]
    return draw(st.sampled_from([cut, draw(no_newline), draw(no_newline) + cut]))


@given(fragments(), alert_objects())
def test_any_alert_after_any_fragment_is_recovered_exactly_once(
    fragment: bytes, obj: dict[str, Any]
) -> None:
    alert, _ = parse_entry(fragment + orjson.dumps(obj), 1)
    assert alert is not None and dict(alert.raw) == obj
    before, after = line("before"), line("after")
    data = before + fragment + orjson.dumps(obj) + b"\n" + after
    assert [a.raw for a in parse_appended(data, 0).entries] == [
        orjson.loads(before),
        obj,
        orjson.loads(after),
    ]


@given(alert_objects(), st.data())
def test_a_cut_off_alert_line_never_reads_as_an_alert(
    obj: dict[str, Any], data: st.DataObject
) -> None:
    whole = orjson.dumps(obj)
    cut = data.draw(st.integers(0, len(whole) - 1))
    alert, problems = parse_entry(whole[:cut], 1)
    assert alert is None and len(problems) == 1
