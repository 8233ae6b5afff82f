"""The open runs a supervisor keeps by status, and what a step looks at: only as much of the
queue as the backend takes, so a step's cost does not grow with the sweep."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.runs.helpers import drive, local, project, queue, supervisor
from wild.parsers.runs import RunIndex, RunRecord
from wild.runs import signing
from wild.runs.open_runs import OpenRuns
from wild.store.runs_log import append_records


def run(run_id: str, status: str, *, sweep: str = "s1", backend: str = "local") -> RunRecord:
    return RunRecord(
        id=run_id,
        sweep=sweep,
        params={},
        resolved_instruction=f"echo {sweep}",  # one program per sweep
        status=status,  # type: ignore[arg-type]
        backend=backend,
    )


def fed(index: RunIndex, tracker: OpenRuns, *records: RunRecord) -> None:
    index.apply(records)
    for record in records:
        tracker.record(record)


def test_open_runs_follow_the_records_by_status_in_queue_order() -> None:
    index, tracker = RunIndex(), OpenRuns()
    fed(index, tracker, *(run(f"r{n}", "queued") for n in range(4)))
    fed(index, tracker, run("r0", "running"), run("r1", "running"), run("r0", "finished"))
    assert list(tracker.queued_ids()) == ["r2", "r3"]
    assert list(tracker.running) == ["r1"]
    # A rerun of r0 goes back to its place in the queue, as `decide.waiting` orders it.
    fed(index, tracker, run("r0", "queued"))
    assert list(tracker.queued_ids()) == ["r0", "r2", "r3"]
    assert [r.id for r in index.runs.values() if r.status == "queued"] == ["r0", "r2", "r3"]
    fed(index, tracker, run("r1", "failed"), run("r2", "stopped"), run("r3", "running"))
    assert list(tracker.queued_ids()) == ["r0"] and list(tracker.running) == ["r3"]
    assert tracker.backends == {"local": 1} and bool(tracker)


def test_open_runs_count_the_queue_by_backend_and_program() -> None:
    index, tracker = RunIndex(), OpenRuns()
    fed(index, tracker, run("a1", "queued", sweep="a"), run("a2", "queued", sweep="a"))
    fed(index, tracker, run("b1", "queued", sweep="b", backend="slurm"))
    assert tracker.backends == {"local": 2, "slurm": 1}
    assert {sweep: list(ids) for (sweep, _cmd), ids in tracker.programs.items()} == {
        "a": ["a1", "a2"],
        "b": ["b1"],
    }
    fed(index, tracker, run("a1", "running"), run("b1", "finished"), run("a2", "stopped"))
    assert tracker.backends == {} and tracker.programs == {}
    fed(index, tracker, run("a1", "finished"))
    assert not tracker


def test_a_new_index_is_followed_from_its_start() -> None:
    index, tracker = RunIndex(), OpenRuns()
    fed(index, tracker, run("r0", "queued"))
    tracker.reset()  # the file was read again from the start (replaced, compacted)
    fed(RunIndex(), tracker, run("r0", "running"), run("r1", "queued"))
    assert list(tracker.running) == ["r0"] and list(tracker.queued_ids()) == ["r1"]


def test_a_step_with_a_full_pool_looks_at_one_queued_run_not_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path)
    queue(paths, "sleep 0.2", 40)
    checked: list[str] = []
    written_by_wild = signing.written_by_wild

    def counted(key: bytes, record: RunRecord) -> bool:
        checked.append(record.id)
        return written_by_wild(key, record)

    monkeypatch.setattr(signing, "written_by_wild", counted)
    backend = local(paths, slots=2)
    sup = supervisor(paths, backend)
    assert len(sup.step().started) == 2
    checked.clear()
    for _ in range(5):  # the pool is full: each step takes one look at the queue's head
        assert sup.step().started == ()
    assert len(checked) <= 1  # that head's line is checked once, then remembered
    drive(sup, backend)
    assert {r.status for r in sup.index.runs.values()} == {"finished"}
    assert len(checked) <= 40  # each line's signature checked once in all


def test_a_changed_line_is_checked_again(tmp_path: Path) -> None:
    """A line someone replaced after wild signed it (a new line for the same id) is judged
    on its own: the verdict is remembered per line, not per run id."""
    paths = project(tmp_path)
    ids = queue(paths, "true", 1)
    backend = local(paths, slots=1)
    sup = supervisor(paths, backend)
    index = sup.index
    forged = replace(index.runs[ids[0]], resolved_instruction="touch PWNED")
    append_records(paths.runs_log, [forged])
    result = sup.step()
    assert result.started == ()
    assert sup.index.runs[ids[0]].status == "failed"
    assert not (paths.project / "PWNED").exists()


def test_the_runs_seen_cost_their_place_in_one_dict_not_an_int_each() -> None:
    # The queue's order (a rerun goes back to its place) kept an int per run ever seen, for
    # the whole sweep, and twice while a compacted runs.jsonl was read again (issue 23: flat
    # with the sweep's size). The order of a dict's keys is that place.
    import tracemalloc

    ended = [run(f"s1-{n:05d}", "finished") for n in range(5000)]
    tracker = OpenRuns()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for record in ended:
            tracker.record(record)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 30 * len(ended)  # ~47 bytes a run before, ~21 after
