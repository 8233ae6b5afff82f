"""Kept summaries: used again while a run's files stand, read again when one changes, a
file comes, or the sweep's objective differs."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from wild.metrics import kept, kept_views
from wild.metrics.follow import RunMetrics
from wild.parsers.runs import RunIndex, RunRecord, SweepRecord
from wild.paths import WildPaths

LATER = lambda: time.time_ns() + 10**12  # noqa: E731  (the files are long settled by then)


def _index(objective: str = "loss") -> RunIndex:
    spec = {"objective": {"metric": objective, "mode": "min"}}
    run = RunRecord("s1-000", "s1", {}, "true", "finished")
    return RunIndex(
        runs={run.id: run},
        sweeps={"s1": SweepRecord("s1", "s1", spec, "done", (run.id,))},
    )


def test_a_kept_summary_is_used_until_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = WildPaths(tmp_path / ".wild")
    folder = paths.run_dir("s1-000")
    folder.mkdir(parents=True)
    (folder / "metrics.jsonl").write_text('{"step": 1, "loss": 2.0}\n{"step": 2, "loss": 1.0}\n')
    reads: list[str] = []
    real = RunMetrics.refresh

    def counting(self: RunMetrics) -> object:
        reads.append("read")
        return real(self)

    monkeypatch.setattr(RunMetrics, "refresh", counting)
    index = _index()
    runs = list(index.runs.values())
    first = kept.summaries(paths, index, runs, LATER)["s1-000"]
    assert (first.best, first.best_step, len(reads)) == (1.0, 2, 1)
    again = kept.summaries(paths, index, runs)["s1-000"]
    assert again == first and len(reads) == 1  # kept: no file read
    with (folder / "metrics.jsonl").open("a") as out:
        out.write('{"step": 3, "loss": NaN}\n')
    third = kept.summaries(paths, index, runs, LATER)["s1-000"]
    assert third.diverged and len(reads) == 2
    nested = folder / "logs" / "version_0"
    nested.mkdir(parents=True)
    kept.summaries(paths, index, runs, LATER)  # the new folder is read once
    (nested / "metrics.csv").write_text("step,val_loss\n3,0.5\n")
    fourth = kept.summaries(paths, index, runs, LATER)["s1-000"]
    assert fourth.last["val_loss"] == 0.5
    other = _index(objective="val_loss")
    fifth = kept.summaries(paths, other, runs, LATER)["s1-000"]
    assert (fifth.metric, fifth.best) == ("val_loss", 0.5)


def test_a_file_changed_just_before_it_was_read_is_read_again(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    folder = paths.run_dir("s1-000")
    folder.mkdir(parents=True)
    (folder / "metrics.jsonl").write_text('{"step": 1, "loss": 2.0}\n')
    index = _index()
    runs = list(index.runs.values())
    kept.summaries(paths, index, runs)  # taken now: the file is not settled yet
    # Same size, same second: a same-tick rewrite the signature cannot see.
    (folder / "metrics.jsonl").write_text('{"step": 1, "loss": 3.0}\n')
    assert kept.summaries(paths, index, runs)["s1-000"].last["loss"] == 3.0


def test_a_damaged_cache_is_no_cache(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    paths.run_dir("s1-000").mkdir(parents=True)
    (paths.run_dir("s1-000") / "metrics.json").write_text('{"loss": 0.25}')
    paths.metrics_cache.write_text('{"format": 1, "wild": "x", "runs": {"s1-000": 5}}')
    index = _index()
    assert kept.summaries(paths, index, list(index.runs.values()))["s1-000"].value == 0.25


def test_the_cache_is_written_an_entry_at_a_time_and_reads_back_whole(tmp_path: Path) -> None:
    # At the end of a 10,000-run `wild --sweep FILE --run` the cache's whole text, encoded at
    # once beside its entries, was the top of the loop's memory: it is written in parts.
    paths = WildPaths(tmp_path / ".wild")
    paths.root.mkdir()
    entry = {"key": "k" * 200, "inputs": [["/p" * 100, [1, 2, 3]]], "takenNs": 1, "summary": {}}
    runs = {f"s1-{n:05d}": {**entry, "takenNs": n} for n in range(2000)}
    views = {"runs": {"text": "t" * 100, "takenNs": 5}}
    kept_views.save_cache(paths, {"runs": runs, "views": views})  # warm: its imports
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        kept_views.save_cache(paths, {"runs": runs, "views": views})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept_views.load_cache(paths) == {"runs": runs, "views": views}
    assert (peak - start) * 10 < paths.metrics_cache.stat().st_size


def _a_finished_sweep_of_2000_runs(tmp_path: Path) -> tuple[WildPaths, list[RunRecord], RunIndex]:
    """A sweep of 2,000 finished runs that logged nothing, its summaries' imports warm and no
    metrics cache yet: what the final table reads afresh."""
    paths = WildPaths(tmp_path / ".wild")
    runs = [RunRecord(f"s1-{n:05d}", "s1", {"i": n}, "true", "finished") for n in range(2000)]
    for run in runs:
        paths.run_dir(run.id).mkdir(parents=True)
    spec = {"objective": {"metric": "loss", "mode": "min"}}
    ids = tuple(run.id for run in runs)
    index = RunIndex(
        runs={run.id: run for run in runs},
        sweeps={"s1": SweepRecord("s1", "s1", spec, "done", ids)},
    )
    kept.summaries(paths, index, runs[:5])  # warm: its imports
    paths.metrics_cache.unlink()
    return paths, runs, index


def test_fresh_summaries_wait_for_the_write_as_their_text_not_their_objects(
    tmp_path: Path,
) -> None:
    # The final table of a 10,000-run sweep reads every run's summary afresh: each fresh
    # entry's objects (key, inputs, signatures, encoded summary) held until the one write
    # were about twice the summaries themselves. They wait as their JSON text.
    paths, runs, index = _a_finished_sweep_of_2000_runs(tmp_path)
    ids = tuple(index.runs)
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        found = kept.summaries(paths, index, runs)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(found) == 2000 and found["s1-01999"].last == {}
    assert peak - start < 3.5 * (held - start)  # 4.4× before, 2.5× after
    again = kept_views.load_cache(paths)["runs"]
    assert again.keys() == set(ids)  # each entry written, and read back as it was found
    assert kept.decode(again["s1-00007"]["summary"]) == found["s1-00007"]


def test_fresh_entries_wait_for_the_write_in_a_scratch_file_not_in_memory(
    tmp_path: Path,
) -> None:
    # The final table of a 10,000-run sweep held each fresh entry's JSON text (~0.4 KB a run)
    # until the cache's one write: above what the summaries themselves hold, most of the
    # table's memory. They wait in an unnamed scratch file, read back as the write reaches them.
    paths, runs, index = _a_finished_sweep_of_2000_runs(tmp_path)
    ids = tuple(index.runs)
    tracemalloc.start()
    try:
        found = kept.summaries(paths, index, runs)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - held < paths.metrics_cache.stat().st_size / 2  # 1.3× the file before
    again = kept_views.load_cache(paths)["runs"]
    assert again.keys() == set(ids)  # each entry written, and read back as it was found
    assert kept.decode(again["s1-01999"]["summary"]) == found["s1-01999"]
