"""Incremental reads around a dead writer's fragment: every alert after it counted exactly once."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from tests.parsers.alert_samples import line
from wild.parsers.alerts import INCOMPLETE
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.lines import Problem
from wild.store.alerts_log import AlertLog, read_new
from wild.store.alerts_summary import read_open_alerts


def _grow(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def test_a_fragment_then_an_alert_arriving_in_pieces_is_read_once(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    log = AlertLog(path)
    path.write_bytes(line("a") + b'{"id":"dead","sev')  # a job died here
    assert [a.id for a in log.refresh()] == ["a"]
    assert log.problems == (Problem("alerts.jsonl", 2, INCOMPLETE),)
    glued = line("critical-1", severity="critical")
    _grow(path, glued[:20])  # another job's line, still being written
    assert (log.refresh(), log.problems) == ((), (Problem("alerts.jsonl", 2, INCOMPLETE),))
    _grow(path, glued[20:])
    assert [(a.id, a.severity, a.line) for a in log.refresh()] == [("critical-1", "critical", 2)]
    assert [p.message.split(";")[0] for p in log.problems] == [
        "a writer's unfinished line, skipped"
    ]
    _grow(path, line("b"))
    assert [a.id for a in log.refresh()] == ["b"]
    assert [a.id for a in log.index.all()] == ["a", "critical-1", "b"]
    open_alerts, _ = read_open_alerts(path, tmp_path / "summary.json", file="alerts.jsonl")
    assert [a.id for a in open_alerts] == ["a", "critical-1", "b"]


pieces = st.one_of(
    st.builds(lambda n: line(f"alert-{n}"), st.integers(0, 10**6)),
    st.builds(lambda n, cut: line(f"dead-{n}")[:cut], st.integers(0, 10**6), st.integers(0, 20)),
)


@given(st.lists(pieces, min_size=1, max_size=10), st.lists(st.integers(0, 2000), max_size=4))
def test_reading_at_any_moments_counts_each_alert_once(
    written: list[bytes], moments: list[int]
) -> None:
    """Whole lines and dead writers' fragments, read at arbitrary byte counts: the alerts met
    along the way are the alerts of one full read, each once, and the summary agrees."""
    content = b"".join(written)
    with tempfile.TemporaryDirectory() as folder:
        path, summary = Path(folder) / "alerts.jsonl", Path(folder) / "summary.json"
        path.write_bytes(b"")
        seen: list[dict[str, Any]] = []
        cursor: AlertCursor | None = None
        for end in [*sorted(moments), len(content)]:
            _grow(path, content[path.stat().st_size : end])
            result = read_new(path, cursor)
            assert not result.reset
            seen.extend(dict(a.raw) for a in result.entries)
            cursor = result.cursor
            read_open_alerts(path, summary, file="alerts.jsonl")
        whole = read_new(path, None)
        open_alerts, _ = read_open_alerts(path, summary, file="alerts.jsonl")
    expected = [orjson.loads(piece) for piece in written if piece.endswith(b"\n")]
    assert seen == [dict(a.raw) for a in whole.entries] == expected
    assert [a.id for a in open_alerts] == list(dict.fromkeys(obj["id"] for obj in expected))
