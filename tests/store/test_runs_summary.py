"""`.wild/runs.summary.json` (wild.store.runs_summary): what `wild --status` needs of
runs.jsonl, kept and brought up to date in O(appended); it always agrees with a full read."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from wild.commands.init import init_wild
from wild.commands.status import read_files_part, research_json
from wild.parsers.lines import Problem
from wild.parsers.runs import Record, RunIndex, RunRecord, SweepRecord, encode_record
from wild.paths import WildPaths
from wild.store import runs_log
from wild.store.runs_compaction import compact
from wild.store.runs_log import append_records, read_runs
from wild.store.runs_summary import read_summary
from wild.workspace import load_workspace

NOW = datetime(2026, 11, 27, 21, 0, tzinfo=UTC)


def queued(n: int, sweep: str = "s1") -> RunRecord:
    return RunRecord(f"{sweep}-{n:03d}", sweep, {"seed": n}, f"python t.py --seed={n}", "queued")


def write_history(path: Path, runs: int, ended: int) -> list[RunRecord]:
    """A sweep of `runs` queued runs; the first `ended` run and end (every 7th failed)."""
    records = [queued(n) for n in range(runs)]
    sweep = SweepRecord("s1", "s1", {"name": "s1"}, "active", tuple(r.id for r in records))
    append_records(path, [sweep, *records])
    for run in records[:ended]:
        running = replace(run, status="running", job_id="7")
        append_records(path, [running])
        failed = int(run.id[-3:]) % 7 == 0
        end = replace(running, status="failed" if failed else "finished", exit_code=int(failed))
        append_records(path, [end])
    return records


def agrees(path: Path, summary_path: Path) -> None:
    """The summary says what a full read of runs.jsonl says."""
    summary, problems = read_summary(path, summary_path)
    full = read_runs(path)
    index: RunIndex = full.index
    assert summary.statuses == {r.id: r.status for r in index.runs.values()}
    assert list(summary.statuses) == list(index.runs)  # in the same order
    open_runs = [r for r in index.runs.values() if not r.terminal]
    assert [encode_record(r) for r in summary.open_index().runs.values()] == [
        encode_record(r) for r in open_runs
    ]
    assert [encode_record(s) for s in summary.sweeps.values()] == [
        encode_record(s) for s in index.sweeps.values()
    ]
    assert [str(p) for p in problems] == [str(p) for p in full.problems]


def test_the_summary_agrees_with_a_full_read_as_the_file_grows(tmp_path: Path) -> None:
    path, kept = tmp_path / "runs.jsonl", tmp_path / "runs.summary.json"
    records = write_history(path, 30, 12)
    path.open("ab").write(b"not json\n")
    agrees(path, kept)
    assert kept.exists()
    for run in records[12:20]:  # more of them end, one is rerun, a new sweep starts
        append_records(path, [replace(run, status="stopped", reason="stop_sweep")])
    append_records(path, [replace(records[0], status="queued", attempt=2)])
    write_history(path, 0, 0)
    append_records(path, [queued(1, "s2")])
    agrees(path, kept)
    path.open("ab").write(b'{"id": "torn')  # a writer's line still being written
    agrees(path, kept)


def test_a_read_after_an_append_parses_only_the_appended_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, kept = tmp_path / "runs.jsonl", tmp_path / "runs.summary.json"
    records = write_history(path, 200, 150)
    read_summary(path, kept)
    parsed: list[bytes] = []
    real = runs_log.parse_line

    def counting(data: bytes, line_no: int, file: str) -> tuple[Record | None, list[Problem]]:
        parsed.append(data)
        return real(data, line_no, file)

    monkeypatch.setattr(runs_log, "parse_line", counting)
    append_records(path, [replace(records[160], status="running")])
    summary, _ = read_summary(path, kept)
    assert len(parsed) == 1
    assert summary.statuses[records[160].id] == "running"


def test_a_compacted_or_damaged_summary_file_is_read_afresh(tmp_path: Path) -> None:
    path, kept = tmp_path / "runs.jsonl", tmp_path / "runs.summary.json"
    write_history(path, 40, 25)
    agrees(path, kept)
    compact(path, tmp_path / ".lock")
    agrees(path, kept)
    kept.write_bytes(b'{"version": 1, "cursor": ')
    agrees(path, kept)
    kept.write_bytes(kept.read_bytes().replace(b'"running"', b'"sprinting"'))
    agrees(path, kept)


def test_status_counts_and_stage_from_the_summary_match_a_full_workspace(
    tmp_path: Path,
) -> None:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    records = write_history(paths.runs_log, 20, 15)
    files, _, _ = read_files_part(paths, NOW)
    assert files["research"] == research_json(load_workspace(paths, NOW))
    assert files["research"]["stage"] == "running"
    assert files["research"]["runs"] == {
        "queued": 5,
        "running": 0,
        "finished": 12,
        "failed": 3,
        "stopped": 0,
    }
    for run in records[15:]:  # the rest end: every run of the sweep has ended
        append_records(paths.runs_log, [replace(run, status="finished", exit_code=0)])
    files, _, _ = read_files_part(paths, NOW)
    assert files["research"] == research_json(load_workspace(paths, NOW))
    assert files["research"]["stage"] == "exploring"
    assert files["research"]["runs"]["finished"] == 17
