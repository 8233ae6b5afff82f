"""The runs summary as data (wild.parsers.runs_summary): it round-trips, and garbage or a
summary wild cannot trust is None (the reader then reads runs.jsonl whole), never a crash."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.alerts_file import AlertCursor
from wild.parsers.lines import Problem
from wild.parsers.runs import RunRecord, RunStatus, SweepRecord
from wild.parsers.runs_summary import advance, decode_summary, empty, encode_summary

CURSOR = AlertCursor(1, 2, 300, 4, "h", "t")


def run(n: int, status: RunStatus = "queued") -> RunRecord:
    return RunRecord(f"s1-{n:03d}", "s1", {"seed": n}, "python t.py", status)


def test_advance_keeps_open_runs_statuses_and_problems_and_round_trips() -> None:
    sweep = SweepRecord("s1", "s1", {"name": "s1"}, "active", ("s1-000", "s1-001"))
    summary = advance(
        empty(CURSOR),
        [sweep, run(0), run(1), run(0, "running"), run(1, "failed")],
        [Problem("runs.jsonl", 3, "not valid JSON, skipped")],
        CURSOR,
    )
    assert dict(summary.statuses) == {"s1-000": "running", "s1-001": "failed"}
    assert list(summary.open) == ["s1-000"]
    assert summary.problems == ((3, "not valid JSON, skipped"),)
    back = decode_summary(encode_summary(summary))
    assert back is not None
    assert back.cursor == CURSOR
    assert dict(back.statuses) == dict(summary.statuses)
    assert [r.status for r in back.open.values()] == ["running"]
    assert list(back.sweeps) == ["s1"]
    assert back.problems == summary.problems
    assert [s.terminal for s in back.states().values()] == [False, True]


def test_a_summary_of_another_version_or_with_an_unknown_status_is_not_trusted() -> None:
    data = orjson.loads(encode_summary(advance(empty(CURSOR), [run(0)], [], CURSOR)))
    assert decode_summary(orjson.dumps({**data, "version": 0})) is None
    assert decode_summary(orjson.dumps({**data, "statuses": {"s1-000": "sprinting"}})) is None
    assert decode_summary(orjson.dumps({**data, "records": ["{"]})) is None
    assert decode_summary(orjson.dumps({**data, "problems": [[1]]})) is None


@given(st.binary(max_size=300))
def test_garbage_is_no_summary_and_never_raises(data: bytes) -> None:
    decode_summary(data)


@given(
    st.dictionaries(
        st.sampled_from(["version", "cursor", "statuses", "records", "problems"]),
        st.recursive(
            st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=5), inner, max_size=3)
            ),
            max_leaves=8,
        ),
    )
)
def test_wrong_typed_fields_are_no_summary_and_never_raise(obj: dict[str, object]) -> None:
    decode_summary(orjson.dumps({"version": 1, **obj}))
