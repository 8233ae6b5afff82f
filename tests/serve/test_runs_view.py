"""Runs, sweeps and curves for the page; the stage; the events filter."""

from __future__ import annotations

from pathlib import Path

from tests.serve.sample import make_project
from wild.serve.events_view import EventFilter, events_tail, read_tail
from wild.serve.runs_view import runs_view, thin
from wild.serve.stage import stage_of
from wild.store.runs_log import read_runs


def test_a_runs_curves_keep_finite_points_and_mark_where_it_diverged(tmp_path: Path) -> None:
    # Before, the dashboard dropped NaN and Infinity silently: a diverged run looked healthy.
    paths = make_project(tmp_path, runs=1, iterations=0)
    index = read_runs(paths.runs_log).index
    run = next(iter(index.runs.values()))
    (paths.run_dir(run.id) / "metrics.jsonl").write_bytes(
        b'{"step": 0, "loss": 2.0, "acc": 0.1, "note": "warmup"}\n'
        b"not json\n"
        b'{"step": 1, "loss": 1.5}\n'
        b'{"step": 2, "loss": Infinity, "flag": true}\n'
        b'{"step": 3, "loss": NaN}\n'
    )
    view, problems = runs_view(paths, index, offset=0, limit=1)
    row = view["runs"]["rows"][0]
    assert row["curves"] == {"loss": [(0.0, 2.0), (1.0, 1.5)], "acc": [(0.0, 0.1)]}
    assert row["diverged"] == {"loss": 2.0}
    assert problems == [
        f"{paths.run_dir(run.id) / 'metrics.jsonl'}:2: not valid JSON; line skipped"
    ]


def test_a_long_curve_is_thinned_keeping_both_ends() -> None:
    points = [(float(i), float(i)) for i in range(10_000)]
    kept = thin(points, 400)
    assert len(kept) == 400
    assert kept[0] == points[0] and kept[-1] == points[-1]
    assert thin(points[:5], 400) == points[:5]


def test_runs_view_pages_the_runs_and_counts_by_status(tmp_path: Path) -> None:
    paths = make_project(tmp_path, runs=7, iterations=0)
    log = read_runs(paths.runs_log)
    index, problems = log.index, log.problems
    assert problems == []
    view, _ = runs_view(paths, index, offset=5, limit=4)
    assert [r["id"] for r in view["runs"]["rows"]] == ["s1-005", "s1-006"]
    assert view["runs"]["total"] == 7
    assert set(view["runs"]["rows"][0]["curves"]) == {"loss", "reward"}
    assert view["counts"]["running"] == 3
    assert view["sweeps"][0]["counts"] == {"running": 3, "finished": 2, "failed": 2}


def test_stage() -> None:
    assert stage_of({"paused": True}, {"sweeps": 1, "stage": "running"}) == "paused"
    assert stage_of({"state": "running"}, {"sweeps": 0}) == "working"
    assert stage_of({"state": "stopped"}, {}) == "idle"
    assert stage_of({"state": "running"}, {"sweeps": 2, "stage": "analyzing"}) == "analyzing"


def test_events_tail_searches_and_filters_errors(tmp_path: Path) -> None:
    paths = make_project(tmp_path, runs=0, iterations=4)
    every = events_tail(paths.events, EventFilter())["rows"]
    assert every[0]["kind"] == "agent-end"  # newest first
    errors = events_tail(paths.events, EventFilter(errors=True))["rows"]
    assert [e["kind"] for e in errors] == ["agent-end"]
    assert '"iteration":4' in errors[0]["text"]
    found = events_tail(paths.events, EventFilter(text="TASK-003"))["rows"]
    assert {e["kind"] for e in found} == {"agent-start"}
    assert len(events_tail(paths.events, EventFilter(limit=2))["rows"]) == 2


def test_the_tail_starts_at_a_whole_line(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"first line\nsecond line\nthird\n")
    assert read_tail(path, 15) == b"third\n"
    assert read_tail(tmp_path / "missing", 10) == b""
