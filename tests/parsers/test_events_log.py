"""events.log lines as bytes: what one event encodes to, and tolerant parsing of the log."""

from __future__ import annotations

from pathlib import Path

import pytest

from wild.parsers.events_log import encode_event, parse_events
from wild.parsers.lines import Problem


def test_an_event_is_one_line_with_id_ts_kind_cause_then_its_data() -> None:
    data = {"files": [Path("a.py")], "tags": {"b", "a"}}
    line = encode_event("evt-1", "2026-02-08T10:45:23.120Z", "agent-run", "evt-0", data)
    assert line == (
        b'{"id":"evt-1","ts":"2026-02-08T10:45:23.120Z","kind":"agent-run","cause":"evt-0",'
        b'"files":["a.py"],"tags":["a","b"]}\n'
    )
    with pytest.raises(ValueError, match=r"reserved key\(s\) \['kind'\]"):
        encode_event("evt-2", "t", "x", None, {"kind": "mine"})


def test_parsing_skips_and_reports_torn_and_malformed_lines() -> None:
    data = b'{"id":"evt-1"}\n\nnot json\n[1]\n{"id":"evt-2"}\n{"id":"evt-3","ki'
    events, problems = parse_events(data, "events.log")
    assert events == [{"id": "evt-1"}, {"id": "evt-2"}]
    assert [(p.line, p.message) for p in problems] == [
        (3, "not valid JSON; skipped"),
        (4, "not a JSON object; skipped"),
        (6, "incomplete last line (still being written, or cut off by a crash); skipped"),
    ]
    assert parse_events(b"", "events.log") == ([], [])
    assert all(isinstance(p, Problem) for p in problems)
