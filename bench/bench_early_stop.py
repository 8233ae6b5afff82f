"""Issue 23's goal for early stopping: a decision costs O(new metric lines), not a re-read of
every run's history. One `EarlyStopping` (as `wild --sweep FILE --run` holds it) checks a
sweep of RUNS running runs whose `metrics.jsonl` already hold SHORT or LONG lines each; before
each check every run logs 5 more lines. The check's cost at LONG lines over its cost at SHORT
lines is the figure: flat means the history is not read again.

Run: `python bench/bench_early_stop.py [RUNS] [SHORT] [LONG]` (defaults 16, 1000, 50000).
The two projects are checked in turn (median of 30 checks each), so a busy machine slows
both alike.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from figures import report

from wild.commands.init import init_wild
from wild.parsers.runs import RunRecord, SweepRecord
from wild.paths import WildPaths
from wild.runs.early_stopping import EarlyStopping
from wild.store.runs_log import append_records, read_runs

CHECKS = 30
NEW_LINES = 5
SPEC = {
    "name": "bench",
    "base_command": "python train.py",
    "parameters": {"seed": [0]},
    "objective": {"metric": "loss", "mode": "min"},
    "early_stop": {"rule": "median", "min_steps": 10, "grace_runs": 3},
}


def project(root: Path, runs: int, lines: int) -> WildPaths:
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    ids = tuple(f"s1-{n:03d}" for n in range(runs))
    records = [RunRecord(run_id, "s1", {"seed": n}, "x", "running") for n, run_id in enumerate(ids)]
    append_records(paths.runs_log, [SweepRecord("s1", "bench", SPEC, "active", ids), *records])
    for run_id in ids:
        folder = paths.run_dir(run_id)
        folder.mkdir(parents=True)
        log(folder / "metrics.jsonl", 0, lines)
    return paths


def log(path: Path, start: int, count: int) -> None:
    with path.open("a") as out:
        out.writelines(
            f'{{"step": {step}, "loss": {1 / (step + 1):.6f}}}\n'
            for step in range(start, start + count)
        )


def checks(paths: WildPaths, stopping: EarlyStopping, at: int) -> float:
    """One check after every run logged NEW_LINES more lines from step `at`; its seconds."""
    index = read_runs(paths.runs_log).index
    for run_id in index.runs:
        log(paths.run_dir(run_id) / "metrics.jsonl", at, NEW_LINES)
    start = time.perf_counter()
    stops = stopping.decide(index)
    took = time.perf_counter() - start
    assert stops == [], stops  # equal curves: nothing to stop, every run checked each time
    return took


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    short = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    long = int(sys.argv[3]) if len(sys.argv) > 3 else 50_000
    with tempfile.TemporaryDirectory() as tmp:
        small = project(Path(tmp) / "short", runs, short)
        big = project(Path(tmp) / "long", runs, long)
        watch_small, watch_big = EarlyStopping(small), EarlyStopping(big)
        start = time.perf_counter()
        watch_big.decide(read_runs(big.runs_log).index)
        first = time.perf_counter() - start
        watch_small.decide(read_runs(small.runs_log).index)
        report(
            f"first check of {runs} runs × {long} lines (reads every file)",
            f"{first:.2f} s",
            "none: shown",
            None,
        )
        at_small, at_big = [], []
        for n in range(CHECKS):
            at_small.append(checks(small, watch_small, short + n * NEW_LINES))
            at_big.append(checks(big, watch_big, long + n * NEW_LINES))
        ratio = statistics.median(at_big) / statistics.median(at_small)
        report(
            f"a check of {runs} runs, {NEW_LINES} new lines each: {long} vs {short} lines before",
            f"{statistics.median(at_big) * 1000:.2f} ms vs "
            f"{statistics.median(at_small) * 1000:.2f} ms = {ratio:.2f}×",
            "O(new lines): ≤ 1.5× (issue 23)",
            ratio <= 1.5,
        )


if __name__ == "__main__":
    main()
