"""runs.jsonl compacted to the latest line per id (wild.store.runs_compaction): every run's
latest state kept, lines wild cannot read kept byte for byte, and nothing appended during a
compaction lost (real files, appender processes)."""

from __future__ import annotations

import multiprocessing
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from wild.parsers.lines import Problem
from wild.parsers.runs import Record, RunIndex, RunRecord, SweepRecord, encode_record
from wild.store import offset_read, runs_compaction, runs_log
from wild.store.runs_compaction import (
    MIN_BYTES,
    CompactionReport,
    compact,
    due,
    plan_compaction,
    plan_places,
)
from wild.store.runs_log import KnownLines, RunLog, append_records, read_runs


def queued(run_id: str, sweep: str = "s1") -> RunRecord:
    return RunRecord(run_id, sweep, {"lr": 0.1}, "python train.py --lr=0.1", "queued")


def history(run: RunRecord) -> list[RunRecord]:
    """A run's lines as the supervisor writes them: queued, running, finished."""
    running = replace(run, status="running", job_id="42", started_at="2026-11-27T20:00:00Z")
    return [run, running, replace(running, status="finished", exit_code=0)]


def states(index: RunIndex) -> list[bytes]:
    """Every record's latest line, in the index's order (not where in the file it was)."""
    records: list[Record] = [*index.sweeps.values(), *index.runs.values()]
    return [encode_record(r) for r in records]


def test_the_plan_keeps_each_ids_latest_line_where_its_first_was() -> None:
    sweep = SweepRecord("s1", "s1", {"name": "s1"}, "active", ("s1-001", "s1-002"))
    one, two = history(queued("s1-001")), history(queued("s1-002"))
    garbage = b'{"id": "s1-009", "kind": "run", "status": "bogus"}'
    data = b"".join(
        encode_record(r)
        for r in (sweep, one[0], two[0], one[1], two[1], one[2], replace(sweep, status="done"))
    )
    data += garbage + b"\n" + encode_record(two[2]) + b'{"id": "torn'
    plan = plan_compaction(data)
    assert plan.keep == (
        encode_record(replace(sweep, status="done")).rstrip(b"\n"),
        encode_record(one[2]).rstrip(b"\n"),
        encode_record(two[2]).rstrip(b"\n"),
        garbage,  # not a record wild can read: kept as it is, for a person to mend
    )
    assert plan.dropped == 5
    assert plan.end == len(data) - len(b'{"id": "torn')


def test_compaction_is_due_once_half_the_lines_are_history_of_a_big_file() -> None:
    assert due(MIN_BYTES, 2_000, 1_000)
    assert not due(MIN_BYTES, 1_999, 1_000)
    assert not due(MIN_BYTES - 1, 30_000, 1_000)  # small: not worth a rewrite
    assert due(MIN_BYTES, 2, 0)


def test_compaction_keeps_the_latest_state_of_every_run(tmp_path: Path) -> None:
    path, lock = tmp_path / "runs.jsonl", tmp_path / ".lock"
    runs = [queued(f"s1-{n:03d}") for n in range(50)]
    sweep = SweepRecord("s1", "s1", {"name": "s1"}, "active", tuple(r.id for r in runs))
    append_records(path, [sweep, *runs])
    for run in runs:
        for line in history(run)[1:]:
            append_records(path, [line])
    path.open("ab").write(b"not json at all\n")
    before = read_runs(path)
    report = compact(path, lock)
    after = read_runs(path)
    assert report == CompactionReport(dropped=100, kept_lines=52, carried_lines=0)
    assert states(after.index) == states(before.index)  # in order: the listing's too
    assert [p.message for p in after.problems] == [p.message for p in before.problems]
    assert b"not json at all\n" in path.read_bytes()
    assert compact(path, lock) == CompactionReport(0, 52, 0)  # nothing left to drop


def test_compaction_holds_little_more_than_the_file_and_what_it_keeps(tmp_path: Path) -> None:
    # At 10,000 runs runs.jsonl is tens of MB: the whole file split into lines, and the
    # kept lines copied three times over, made the loop's peak memory grow with the sweep.
    path, lock = tmp_path / "runs.jsonl", tmp_path / ".lock"
    _a_sweep_of_queued_runs(path, 2000)
    size = path.stat().st_size
    report, peak = _compacted_traced(path, lock)
    assert report.dropped == 4000
    kept = path.stat().st_size
    assert peak <= size + 3 * kept


def _append_histories(path: str, worker: int, count: int, go: Any) -> None:
    for i in range(count):
        if i == count // 4:
            go.set()  # the rest is written while compactions run
        for line in history(queued(f"s1-w{worker}-{i:03d}")):
            append_records(Path(path), [replace(line, metrics={"pad": "p" * 300})])


def test_nothing_appended_during_compaction_is_lost(tmp_path: Path) -> None:
    path, lock = tmp_path / "runs.jsonl", tmp_path / ".lock"
    workers, count = 3, 150
    ctx = multiprocessing.get_context("spawn")  # real processes, as the loop and the CLI are
    go = ctx.Event()
    procs = [
        ctx.Process(target=_append_histories, args=(str(path), w, count, go))
        for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    go.wait(60)
    reports: list[CompactionReport] = []
    while any(proc.is_alive() for proc in procs):
        reports.append(compact(path, lock))
    for proc in procs:
        proc.join()
    assert [proc.exitcode for proc in procs] == [0] * workers
    assert sum(r.dropped for r in reports) > 0  # compactions did run among the appends
    log = read_runs(path)
    assert log.problems == []
    expected = {f"s1-w{w}-{i:03d}" for w in range(workers) for i in range(count)}
    assert set(log.index.runs) == expected
    assert {run.status for run in log.index.runs.values()} == {"finished"}
    compact(path, lock)
    assert len([x for x in path.read_bytes().splitlines() if x.strip()]) == len(expected)


def test_compaction_holds_a_place_per_line_kept_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loop compacts runs.jsonl as a 10,000-run sweep goes on: reading the whole file and
    # copying the kept lines into one buffer held the file two or three times over (tens of
    # MB). Now it is read a chunk at a time, each kept line's place is remembered (an int),
    # and the new file is written line by line, each line read again as it is written.
    monkeypatch.setattr(offset_read, "CHUNK_BYTES", 1 << 16)
    path, lock = tmp_path / "runs.jsonl", tmp_path / ".lock"
    _a_sweep_of_queued_runs(path, 2000)
    before = read_runs(path)
    size = path.stat().st_size
    report, peak = _compacted_traced(path, lock)
    assert report == CompactionReport(dropped=4000, kept_lines=2001, carried_lines=0)
    assert states(read_runs(path).index) == states(before.index)
    assert peak * 4 <= size


def _a_sweep_of_queued_runs(path: Path, count: int) -> None:
    """A sweep of `count` queued runs, each with the history of lines a compaction drops."""
    runs = [queued(f"s1-{n:05d}") for n in range(count)]
    sweep = SweepRecord("s1", "s1", {"name": "s1"}, "active", tuple(r.id for r in runs))
    append_records(path, [sweep, *[line for run in runs for line in history(run)]])


def _compacted_traced(path: Path, lock: Path) -> tuple[CompactionReport, int]:
    """The compaction's report and the peak of memory Python allocated while it ran."""
    tracemalloc.start()
    try:
        report = compact(path, lock)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return report, peak


def test_the_plan_keys_each_run_by_its_read_id_not_a_new_string(tmp_path: Path) -> None:
    # The plan keyed each record by a new "r:<id>" string (~70 bytes a run, 10,000 of them
    # held while a 10,000-run sweep's file was planned, beside the loop's own index); the
    # reader interns a run's id (the loop's run folders already have it), so the plan holds
    # an entry and a place per run: ~97 bytes a run at the top, ~156 before.
    from wild.parsers.jsonl import complete_lines

    path = tmp_path / "runs.jsonl"
    runs = [
        RunRecord(f"s1-{n:05d}", "s1", {"i": n}, f"true --i={n}", "queued") for n in range(2000)
    ]
    append_records(path, [SweepRecord("s1", "n", {}, "active", ()), *runs])
    append_records(path, [replace(run, status="running") for run in runs])
    index = read_runs(path).index  # the ids interned, as a loop's index holds them
    lines, _ = complete_lines(path.read_bytes())
    at, placed = 0, []
    for line in lines:
        placed.append((at, line))
        at += len(line) + 1
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        places = plan_places(placed)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(places.kept) == 2001 and places.dropped == 2000 and len(index.runs) == 2000
    assert (peak - start) / 2000 < 128


def _sweep_with_history(path: Path, count: int) -> None:
    runs = [queued(f"s1-{n:04d}") for n in range(count)]
    grid = {"name": "s1", "parameters": {"i": list(range(count))}}
    sweep = SweepRecord("s1", "s1", grid, "active", tuple(r.id for r in runs))
    append_records(path, [sweep, *runs])
    append_records(path, [line for run in runs[::2] for line in history(run)[1:]])
    append_records(path, [replace(sweep, status="done")])


def test_the_loops_compaction_takes_the_sweep_lines_it_read_without_parsing_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loop's compaction parsed every line again, its sweep's too: a 10,000-run sweep's
    # line is ~0.3 MB of ids and grid values, ~1 MiB of objects made and dropped at the
    # compaction (issue 23). The lines the loop's reader read as sweeps' are taken as read.
    path, other = tmp_path / "runs.jsonl", tmp_path / "other" / "runs.jsonl"
    _sweep_with_history(path, 300)
    other.parent.mkdir()
    other.write_bytes(path.read_bytes())
    log = RunLog(path, lean=True)
    log.refresh()
    known = log.known_lines()
    assert known is not None and sorted(known.sweeps.values()) == ["s1", "s1"]
    parsed = _count_parses(monkeypatch)
    report = compact(path, tmp_path / ".lock", known)
    assert len(parsed) == 300 + 150 * 2 and max(parsed) < 1000  # every run line, no sweep's
    parsed.clear()
    assert compact(other, tmp_path / "other" / ".lock") == report  # the same, all parsed
    assert len(parsed) == 300 + 150 * 2 + 2
    assert path.read_bytes() == other.read_bytes()
    assert report.moved is not None and log.follow(report.moved) and log.cursor is not None
    assert log.known_lines() == KnownLines(log.cursor, {0: "s1"})  # its line in the new file


def test_what_the_reader_knows_of_another_file_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file rewritten since the reader read it (in place: the same inode): its lines are
    # all parsed again, whatever the reader knew of the old one.
    path = tmp_path / "runs.jsonl"
    _sweep_with_history(path, 30)
    log = RunLog(path, lean=True)
    log.refresh()
    known = log.known_lines()
    data = path.read_bytes()
    with path.open("r+b") as out:  # a sweep line moved: what was a sweep's offset is a run's
        out.write(data[data.index(b"\n") + 1 :] + data[: data.index(b"\n") + 1])
    parsed = _count_parses(monkeypatch)
    compact(path, tmp_path / ".lock", known)
    assert len(parsed) == 30 + 15 * 2 + 2
    assert read_runs(path).index.sweeps["s1"].status == "active"  # its line now the last
    assert len(read_runs(path).index.runs) == 30


def test_the_plan_holds_8_bytes_per_line_kept(tmp_path: Path) -> None:
    # Each kept line's place was an int object in a list (~40 bytes: ~0.4 MB held through a
    # 10,000-run compaction and its reader's move to the new lines, issue 23); now 8 bytes.
    path = tmp_path / "runs.jsonl"
    _a_sweep_of_queued_runs(path, 2000)
    lines = list(_lines_with_offsets(path.read_bytes()))
    held_by_reader = read_runs(path)  # the run ids, as the loop's reader holds them
    plan_places(lines)  # what is made once is not counted
    tracemalloc.start()
    try:
        places = plan_places(lines)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(places.kept) == 2001 and places.dropped == 4000
    assert held < 12 * len(places.kept) and len(held_by_reader.index.runs) == 2000


def _lines_with_offsets(data: bytes) -> list[tuple[int, bytes]]:
    found, at = [], 0
    for line in data.split(b"\n")[:-1]:
        found.append((at, line))
        at += len(line) + 1
    return found


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each line the compaction parses, as it parses them."""
    parsed: list[int] = []
    real = runs_log.parse_line

    def counted(data: bytes, line_no: int, file: str) -> tuple[Record | None, list[Problem]]:
        parsed.append(len(data))
        return real(data, line_no, file)

    monkeypatch.setattr(runs_compaction, "parse_line", counted)
    return parsed
