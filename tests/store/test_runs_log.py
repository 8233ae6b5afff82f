"""runs.jsonl: appended records read back whole and incrementally; bad lines reported."""

from __future__ import annotations

import dataclasses
import errno
import os
import tracemalloc
from pathlib import Path

import orjson
import pytest

from wild.parsers.alerts import INCOMPLETE
from wild.parsers.lines import Problem
from wild.parsers.run_table import facts_of, running_runs, sweep_facts
from wild.parsers.runs import RunRecord, SweepRecord, encode_record
from wild.runs.open_runs import OpenRuns
from wild.store import offset_read, runs_log
from wild.store.runs_compaction import compact
from wild.store.runs_log import RunLog, append_records, read_runs

SWEEP = SweepRecord(id="s1", name="n", spec={"name": "n"}, status="active", run_ids=("s1-001",))
RUN = RunRecord(
    id="s1-001", sweep="s1", params={"lr": 1}, resolved_instruction="true", status="queued"
)


def test_records_are_read_back_latest_line_winning(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    append_records(path, [SWEEP, RUN])
    append_records(path, [dataclasses.replace(RUN, status="running")])
    log = read_runs(path)
    assert log.index.runs["s1-001"].status == "running"
    assert log.index.of_sweep("s1")[0].line == 3
    assert log.problems == []


def test_incremental_reads_see_only_new_lines_and_report_bad_ones(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    log = RunLog(path)
    assert log.refresh() == ()
    append_records(path, [SWEEP])
    assert [r.id for r in log.refresh()] == ["s1"]
    with path.open("ab") as f:
        f.write(b"not json\n" + encode_record(RUN)[:20])
    assert log.refresh() == ()
    assert log.problems == [
        Problem(str(path), 2, "not valid JSON, skipped; fix or delete the line"),
        Problem(str(path), 3, INCOMPLETE),
    ]
    with path.open("ab") as f:
        f.write(encode_record(RUN)[20:])
    assert [r.id for r in log.refresh()] == ["s1-001"]
    assert log.problems == [
        Problem(str(path), 2, "not valid JSON, skipped; fix or delete the line")
    ]


def test_a_fragment_with_a_whole_line_glued_on_keeps_the_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b'{"kind": "ru' + encode_record(RUN))
    log = read_runs(path)
    assert list(log.index.runs) == ["s1-001"]
    assert log.problems == [Problem(str(path), 1, "a writer's unfinished line, skipped")]


def test_a_replaced_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    append_records(path, [SWEEP, RUN])
    log = read_runs(path)
    replacement = tmp_path / "new"
    append_records(replacement, [SWEEP])
    replacement.replace(path)
    log.refresh()
    assert (list(log.index.sweeps), list(log.index.runs)) == (["s1"], [])


def _queued_runs(count: int) -> list[RunRecord]:
    """A sweep's queued runs as wild writes them: each with its program and signature."""
    return [
        dataclasses.replace(
            RUN,
            id=f"s1-{n:05d}",
            params={"i": n},
            resolved_instruction=f"sh -c 'echo \"$WILD_RUN_ID\" >> spawns' --i={n}",
            raw={"command": "sh -c 'echo \"$WILD_RUN_ID\" >> spawns'", "signature": f"{n:064x}"},
        )
        for n in range(count)
    ]


def test_a_sweeps_lines_are_appended_holding_little_more_than_their_bytes(
    tmp_path: Path,
) -> None:
    # A 10,000-run sweep is one append: its encoded lines were kept in a list before the
    # join, each holding a ~4 KiB buffer for ~600 bytes of text (60 MB for 6 MB written);
    # then one buffer, copied into bytes for the write (2x the bytes).
    path, runs = tmp_path / "runs.jsonl", _queued_runs(2000)
    tracemalloc.start()
    try:
        append_records(path, [SWEEP, *runs])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 1.5 * path.stat().st_size
    assert len(read_runs(path).index.runs) == 2000


def test_a_big_append_is_one_write_of_parts_never_one_grown_buffer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One buffer grown to a 10,000-run sweep's ~6 MB of lines may be copied as it grows
    # (the loop's RSS rose ~2x the bytes while recording): the lines go into parts of about
    # APPEND_PART bytes, written by one `os.writev` (as atomic as one write on O_APPEND).
    monkeypatch.setattr(runs_log, "APPEND_PART", 16 << 10)
    writes: list[list[int]] = []
    real_write, real_writev = os.write, os.writev

    def write(fd: int, data: bytes) -> int:
        writes.append([len(data)])
        return real_write(fd, data)

    def writev(fd: int, parts: list[bytes]) -> int:
        writes.append([len(part) for part in parts])
        return real_writev(fd, parts)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "writev", writev)
    path, runs = tmp_path / "runs.jsonl", _queued_runs(500)
    append_records(path, [SWEEP, *runs])
    monkeypatch.setattr(os, "write", real_write)
    monkeypatch.setattr(os, "writev", real_writev)
    assert len(writes) == 1  # the one append: a sweep and its runs land together
    longest = max(len(encode_record(run)) for run in runs)
    assert len(writes[0]) > 10 and max(writes[0]) <= (16 << 10) + longest
    assert path.read_bytes() == encode_record(SWEEP) + b"".join(map(encode_record, runs))
    assert len(read_runs(path).index.runs) == 500


def test_runs_read_back_share_what_repeats_and_copy_nothing(tmp_path: Path) -> None:
    # The loop's index holds every run of a sweep: a record costs less than the line's
    # object it is read from (its repeating strings are one each, no field is copied).
    path = tmp_path / "runs.jsonl"
    append_records(path, [SWEEP, *_queued_runs(2000)])
    lines = path.read_bytes().splitlines()[1:]
    tracemalloc.start()
    try:
        objects = [orjson.loads(line) for line in lines]
        as_objects, _ = tracemalloc.get_traced_memory()
        del objects
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        index = read_runs(path).index
        as_index = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    first, second = index.runs["s1-00000"], index.runs["s1-00001"]
    assert first.sweep is second.sweep and first.status is second.status
    assert first.raw["command"] is second.raw["command"]
    assert dict(first.params) == {"i": 0} and first.raw["params"] == {"i": 0}
    assert as_index < as_objects


def test_a_runs_id_is_one_string_whichever_line_or_sweep_names_it(tmp_path: Path) -> None:
    # The loop's lean index keys every run by its id, its sweep's record lists every id, and
    # each read from the start (after each compaction) made them again: one string per line
    # read (~65 bytes a run, twice or more at 10,000 runs), now one per run.
    path = tmp_path / "runs.jsonl"
    runs = _queued_runs(3)
    sweep = dataclasses.replace(SWEEP, run_ids=tuple(run.id for run in runs))
    append_records(path, [sweep, *runs])
    append_records(path, [dataclasses.replace(runs[1], status="running")])
    first = read_runs(path).index
    again = read_runs(path).index
    ids = [run_id for run_id in first.runs]
    assert [r.id for r in again.runs.values()] == ids
    assert all(a is b for a, b in zip(ids, [r.id for r in again.runs.values()], strict=True))
    assert all(a is b for a, b in zip(ids, first.sweeps["s1"].run_ids, strict=True))
    assert all(a is b for a, b in zip(ids, again.sweeps["s1"].run_ids, strict=True))


def test_a_compacted_file_is_read_again_without_the_old_index_beside_the_new(
    tmp_path: Path,
) -> None:
    # After each compaction the loop reads runs.jsonl again from its start: holding the old
    # index (the whole sweep's records) while the new one was built doubled its memory.
    path = tmp_path / "runs.jsonl"
    runs = _queued_runs(2000)
    append_records(path, [SWEEP, *runs])
    append_records(path, [dataclasses.replace(run, status="running") for run in runs])
    tracemalloc.start()
    try:
        log = read_runs(path)
        assert compact(path, tmp_path / ".lock").dropped == 2000
        tracemalloc.reset_peak()
        log.refresh()
        _, again = tracemalloc.get_traced_memory()
        assert len(log.index.runs) == 2000 and log.problems == []
        del log
        tracemalloc.reset_peak()
        alone = read_runs(path)
        _, first = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert alone.index.runs["s1-00000"].status == "running"
    assert again <= 1.25 * first


def test_a_whole_read_holds_the_file_once_beside_its_records(tmp_path: Path) -> None:
    # The loop's first read of a 10,000-run sweep, and each read after a compaction, is the
    # whole file: split at once, its lines were a second copy of it beside the bytes read.
    path = tmp_path / "runs.jsonl"
    append_records(path, [SWEEP, *_queued_runs(2000)])
    size = path.stat().st_size
    tracemalloc.start()
    try:
        log = read_runs(path)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(log.index.runs) == 2000 and log.cursor is not None
    assert log.cursor.line_count == 2001 and log.cursor.offset == size
    assert peak - kept <= 1.5 * size


def test_a_lean_log_holds_a_place_per_run_not_its_record(tmp_path: Path) -> None:
    # The loop's index of a 10,000-run sweep held every run's record (~1.6 KB queued, 2.5 KB
    # ended): the supervisor's lean log keeps the running runs' records and, for the others,
    # where their line is, reading it again when a record is asked for.
    path = tmp_path / "runs.jsonl"
    runs = _queued_runs(2000)
    append_records(path, [SWEEP, *runs])
    append_records(path, [dataclasses.replace(runs[0], status="running")])
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        plain = read_runs(path)
        as_records = tracemalloc.get_traced_memory()[0] - start
        start, _ = tracemalloc.get_traced_memory()
        lean = RunLog(path, lean=True)
        lean.refresh()
        as_places = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert as_places * 5 <= as_records
    assert len(lean.index.runs) == len(plain.index.runs) == 2000
    for run_id in ("s1-00000", "s1-00001", "s1-01999"):
        assert lean.index.runs[run_id] == plain.index.runs[run_id]
        assert lean.index.runs[run_id].raw == plain.index.runs[run_id].raw
        assert lean.index.runs[run_id].line == plain.index.runs[run_id].line
    assert [r.id for r in running_runs(lean.index)] == ["s1-00000"]
    assert sweep_facts(lean.index, "s1") == facts_of(list(plain.index.runs.values()))


def test_a_lean_log_reads_each_run_from_the_file_as_it_is_now(tmp_path: Path) -> None:
    # Its places are byte offsets: after a compaction (or any replacement) the file is read
    # again from its start, and a record asked for before that is found all the same.
    path = tmp_path / "runs.jsonl"
    runs = _queued_runs(50)
    append_records(path, [SWEEP, *runs])
    append_records(path, [dataclasses.replace(run, status="running") for run in runs[:40]])
    lean = RunLog(path, lean=True)
    lean.refresh()
    assert compact(path, tmp_path / ".lock").dropped == 40
    ended = dataclasses.replace(runs[3], status="finished", exit_code=0)
    append_records(path, [ended])
    assert lean.index.runs["s1-00003"].status == "running"  # as of the last read
    assert lean.index.runs.get("s1-00044") == dataclasses.replace(runs[44], line=46)
    lean.refresh()
    assert dataclasses.replace(lean.index.runs["s1-00003"], line=0) == ended
    assert dataclasses.replace(lean.index.runs["s1-00044"], line=0) == runs[44]
    assert lean.problems == []
    counts = sweep_facts(lean.index, "s1").counts
    assert (counts["queued"], counts["running"], counts["finished"]) == (10, 39, 1)


def _lean_after_compaction(tmp_path: Path, count: int) -> tuple[Path, RunLog, OpenRuns]:
    """A lean log with open runs that has read `count` queued runs, half of them running,
    and the file compacted since (its next refresh reads it from the start)."""
    path = tmp_path / "runs.jsonl"
    runs = _queued_runs(count)
    append_records(path, [SWEEP, *runs])
    append_records(path, [dataclasses.replace(run, status="running") for run in runs[::2]])
    open_runs = OpenRuns()
    log = RunLog(path, lean=True, listener=open_runs)
    log.refresh()
    assert compact(path, tmp_path / ".lock").dropped == count // 2
    return path, log, open_runs


def test_a_lean_log_reads_a_compacted_file_a_chunk_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After each compaction the loop reads runs.jsonl again from its start: the whole file's
    # bytes were held while they were parsed (megabytes at 10,000 runs, the loop's peak).
    monkeypatch.setattr(offset_read, "CHUNK_BYTES", 64 << 10)
    path, log, open_runs = _lean_after_compaction(tmp_path, 2000)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        log.refresh()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - held < size / 4  # 1.01× the file's size before, 0.13× after
    assert log.problems == [] and log.cursor is not None
    assert (log.cursor.offset, log.cursor.line_count) == (size, 2001)
    assert len(log.index.runs) == 2000 and len(open_runs.running) == 1000
    assert list(open_runs.queued_ids())[:2] == ["s1-00001", "s1-00003"]
    assert log.index.runs["s1-01999"].line == 2001  # read again from its line in the new file
    append_records(path, [dataclasses.replace(_queued_runs(2)[1], status="finished")])
    log.refresh()
    assert log.index.runs["s1-00001"].status == "finished" and len(open_runs.queued) == 999


def test_a_lean_read_from_the_start_that_fails_midway_keeps_what_it_knew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file that cannot be read keeps the index: read in chunks, a read can fail after the
    # parse began, so the new table and open runs are made apart and put in place at the end.
    monkeypatch.setattr(offset_read, "CHUNK_BYTES", 4096)
    path, log, open_runs = _lean_after_compaction(tmp_path, 200)
    before = (dict(open_runs.running), dict(open_runs.queued), log.index.runs["s1-00150"])
    real, reads = os.pread, [0]

    def failing(fd: int, size: int, at: int) -> bytes:
        reads[0] += 1
        if reads[0] == 3:  # the third chunk of the new file
            raise OSError(errno.EIO, "Input/output error")
        return real(fd, size, at)

    monkeypatch.setattr(os, "pread", failing)
    log.refresh()
    monkeypatch.setattr(os, "pread", real)
    assert (dict(open_runs.running), dict(open_runs.queued)) == before[:2]
    assert len(log.index.runs) == 200 and log.index.runs["s1-00150"] == before[2]
    assert [(p.file, p.line) for p in log.problems] == [(str(path), 1)], log.problems
    assert "Input/output error" in log.problems[0].message
    log.refresh()  # the next read succeeds, from the start
    assert log.problems == [] and len(open_runs.running) == 100
    assert log.index.runs["s1-00150"].line == 152  # its place in the compacted file


def test_a_sweep_read_again_as_it_was_is_the_record_held_at_its_new_line(tmp_path: Path) -> None:
    # After a compaction the lean log reads runs.jsonl from its start, beside what it holds: a
    # sweep's spec, line object and run ids were made twice (a 10,000-point grid's ~0.5 MB,
    # at the loop's peak, issue 23). A sweep line as it was is the record held; a changed one
    # is read as it is now.
    path = tmp_path / "runs.jsonl"
    early = dataclasses.replace(RUN, id="s0-001", sweep="s0")
    append_records(path, [early, dataclasses.replace(early, status="running")])
    runs = _queued_runs(300)
    grid = {"name": "n", "parameters": {"i": list(range(300))}}
    big = SweepRecord("s1", "n", grid, "active", tuple(run.id for run in runs))
    other = SweepRecord("s2", "m", {"name": "m"}, "active")
    append_records(path, [big, other, *runs])
    log = RunLog(path, lean=True)
    log.refresh()
    held = log.index.sweeps["s1"]
    assert held.line == 3
    assert compact(path, tmp_path / ".lock").dropped == 1  # the sweep's line is now line 2
    append_records(path, [dataclasses.replace(other, status="done")])
    log.refresh()
    again = log.index.sweeps["s1"]
    assert again.line == 2 and again == dataclasses.replace(held, line=2)
    assert again.spec is held.spec and again.raw is held.raw and again.run_ids is held.run_ids
    assert log.index.sweeps["s2"].status == "done"


def _history_file(tmp_path: Path) -> tuple[Path, list[RunRecord]]:
    """runs.jsonl of two sweeps whose runs moved on (rerun, running, finished), so that a
    compaction moves every kept line: the first sweep's line updated after its runs."""
    path = tmp_path / "runs.jsonl"
    runs = _queued_runs(40)
    other = SweepRecord("s2", "m", {"name": "m"}, "active", ("s2-001",))
    append_records(path, [SWEEP, *runs[:20], other, dataclasses.replace(RUN, id="s2-001")])
    append_records(path, runs[20:])
    append_records(path, [dataclasses.replace(run, status="running") for run in runs[::3]])
    append_records(path, [dataclasses.replace(run, status="finished") for run in runs[::6]])
    append_records(path, [dataclasses.replace(runs[6], status="queued", attempt=2)])  # a rerun
    append_records(path, [dataclasses.replace(SWEEP, status="done")])
    return path, runs


def _held(log: RunLog, open_runs: OpenRuns) -> tuple[object, ...]:
    """Everything a lean log and its open runs hold, as a read of the file would make it."""
    runs = {run_id: log.index.runs[run_id] for run_id in log.index.runs}
    return (
        list(runs.items()), list(log.index.sweeps.items()), list(open_runs.queued_ids()),
        list(open_runs.running), sweep_facts(log.index, "s1"), log.cursor, log.problems,
    )  # fmt: skip


def test_a_lean_log_follows_its_own_compaction_to_the_new_lines_without_reading_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After its own compaction the loop read runs.jsonl again from its start, a second table
    # and open runs beside the held ones and every line parsed again: the peak of a
    # 10,000-run sweep's loop (issue 23). The compaction says where each line went instead.
    path, runs = _history_file(tmp_path)
    open_runs = OpenRuns()
    log = RunLog(path, lean=True, listener=open_runs)
    log.refresh()
    report = compact(path, tmp_path / ".lock")
    assert report.dropped > 0 and report.moved is not None
    parsed: list[int] = []
    real = runs_log.parse_line

    def counted(data: bytes, line_no: int, file: str) -> tuple[object, list[Problem]]:
        parsed.append(line_no)
        return real(data, line_no, file)

    monkeypatch.setattr(runs_log, "parse_line", counted)
    assert log.follow(report.moved)
    log.refresh()
    assert parsed == []  # not one line read again (before: every line of the new file)
    monkeypatch.setattr(runs_log, "parse_line", real)
    fresh_runs = OpenRuns()
    fresh = RunLog(path, lean=True, listener=fresh_runs)
    fresh.refresh()
    assert _held(log, open_runs) == _held(fresh, fresh_runs)
    assert log.index.sweeps["s1"].line == 1 and log.index.runs["s1-00006"].attempt == 2
    # Lines appended after the compaction are read on from there.
    append_records(path, [dataclasses.replace(runs[1], status="running")])
    log.refresh()
    fresh.refresh()
    assert parsed == [] and _held(log, open_runs) == _held(fresh, fresh_runs)
    assert "s1-00001" in open_runs.running


def test_a_lean_log_that_cannot_follow_a_compaction_reads_the_new_file_from_its_start(
    tmp_path: Path,
) -> None:
    # Another file than the one read (a line appended before the compaction, a damaged
    # line, another process's compaction): nothing moves, and the next refresh reads the new
    # file from its start, as before.
    path, runs = _history_file(tmp_path)
    for damage in ("behind", "damaged", "twice"):
        folder = tmp_path / damage
        folder.mkdir()
        moved_path = folder / "runs.jsonl"
        moved_path.write_bytes(path.read_bytes())
        open_runs = OpenRuns()
        log = RunLog(moved_path, lean=True, listener=open_runs)
        if damage == "damaged":
            with moved_path.open("ab") as out:
                out.write(b"not json at all\n")
        log.refresh()
        if damage == "behind":
            append_records(moved_path, [dataclasses.replace(runs[2], status="failed")])
        report = compact(moved_path, folder / ".lock")
        if damage == "twice":  # compacted again by someone else: the first move is stale
            append_records(moved_path, [dataclasses.replace(runs[1], status="running")] * 2)
            assert compact(moved_path, folder / ".lock").dropped == 2
        assert report.moved is not None
        before = _held(log, open_runs)
        if damage == "twice":
            assert log.follow(report.moved)  # it follows the first; the refresh sees the second
        else:
            assert not log.follow(report.moved)
            assert _held(log, open_runs) == before  # nothing moved
        log.refresh()
        fresh_runs = OpenRuns()
        fresh = RunLog(moved_path, lean=True, listener=fresh_runs)
        fresh.refresh()
        assert _held(log, open_runs) == _held(fresh, fresh_runs), damage
