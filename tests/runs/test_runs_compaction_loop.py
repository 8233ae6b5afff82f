"""The loop compacts runs.jsonl once most of it is history (wild.store.runs_compaction), and
goes on as if nothing happened: every run started once and recorded to its end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runs.research_support import Agent, lines, project, run_loop, runs_by_id, sweep_tag
from wild.paths import WildPaths
from wild.store import runs_compaction
from wild.store.events_log import read_events
from wild.store.runs_log import Parsed, RunLog

pytestmark = pytest.mark.timeout(120)

SWEEP = {"name": "seeds", "base_command": "true", "parameters": {"seed": [0, 1, 2, 3, 4, 5]}}


def test_the_loop_compacts_runs_jsonl_and_every_run_ends_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs_compaction, "MIN_BYTES", 0)  # a small file is due too
    paths = project(tmp_path, {})

    assert run_loop(paths, _planning_a_sweep(paths), slots=2).reason == "complete"
    events = read_events(paths.events)[0]
    compacted = [e for e in events if e["kind"] == "runs-compacted"]
    assert compacted and all(e["dropped"] > 0 for e in compacted)
    runs = runs_by_id(paths)
    assert sorted((r["status"], r["attempt"]) for r in runs.values()) == [("finished", 1)] * 6
    starts = [e["run"] for e in events if e["kind"] == "run-started"]
    assert sorted(starts) == sorted(runs)  # each started exactly once
    # Fewer lines than were written: one per sweep and run, plus what came after the last.
    assert len(lines(paths.runs_log)) < 1 + 6 * 3 + 1


def test_the_loop_follows_its_own_compaction_without_reading_runs_jsonl_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loop's reader read runs.jsonl again from its start after each compaction the loop
    # made itself, into a second table beside the held one: the peak of a 10,000-run sweep's
    # loop (issue 23). The compaction now says where each kept line went.
    monkeypatch.setattr(runs_compaction, "MIN_BYTES", 0)
    starts = []
    real = RunLog._start_over

    def counted(log: RunLog, chunks: Iterator[bytes]) -> Parsed:
        starts.append(log.path)
        return real(log, chunks)

    monkeypatch.setattr(RunLog, "_start_over", counted)
    paths = project(tmp_path, {})

    assert run_loop(paths, _planning_a_sweep(paths), slots=2).reason == "complete"
    events = read_events(paths.events)[0]
    assert [e for e in events if e["kind"] == "runs-compacted"]
    assert starts == [paths.runs_log]  # its first read only (before: one more per compaction)
    runs = runs_by_id(paths)
    assert sorted((r["status"], r["attempt"]) for r in runs.values()) == [("finished", 1)] * 6
    started = [e["run"] for e in events if e["kind"] == "run-started"]
    assert sorted(started) == sorted(runs)  # each started exactly once


def _planning_a_sweep(paths: WildPaths) -> Agent:
    """An agent whose first planning asks for SWEEP and that says it is done otherwise."""

    def reply(kind: str, _work: str, _prompt: str) -> str:
        if kind == "planning" and not paths.runs_log.exists():
            return sweep_tag(SWEEP)
        return "<promise>COMPLETE</promise>\n"

    return Agent(reply)
