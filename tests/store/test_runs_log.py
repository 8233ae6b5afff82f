"""runs.jsonl: appended records read back whole and incrementally; bad lines reported."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from wild.parsers.alerts import INCOMPLETE
from wild.parsers.lines import Problem
from wild.parsers.runs import RunRecord, SweepRecord, encode_record
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
