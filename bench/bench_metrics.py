"""Issue 21's speed goals for metrics: `wild --runs` and `wild --compare` at 1,000 runs of
10,000 logged steps each cost ≤ 1.2× the same command at 10 runs, once each run's summary
is kept (`.wild/metrics.cache.json`); and a live file's refresh reads only what was appended.

Run: `python bench/bench_metrics.py [RUNS] [STEPS]` (defaults 1000 and 10000). Each run's
`metrics.jsonl` holds STEPS lines (`step`, `loss`, `val_loss`); the runs share one file
through hard links (1,000 × 10,000 lines would be 450 MB), which costs the reader the same as
1,000 files: each is stat'ed, opened and parsed on its own. Files and folders are dated an
hour back, settled past the kept summaries' 2 s racy window, as between two looks at a
project. The first command after the sweep reads every file (shown, not gated); the gated
figures are fresh `python -m wild` processes, alternating between the two projects so a busy
machine slows both alike (median of 7).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson
from figures import report, timed_wild

from wild.commands.init import init_wild
from wild.metrics.follow import FileFollower
from wild.metrics.readers import JSONL
from wild.parsers.runs import RunRecord, SweepRecord, run_line, sweep_line
from wild.paths import WildPaths

REPEAT = 7
SWEEP = "s20261127-be4c"


def metrics_file(path: Path, steps: int) -> None:
    with path.open("w") as out:
        for step in range(steps):
            loss, val = 1 / (step + 1), 2 / (step + 1)
            out.write(f'{{"step": {step}, "loss": {loss:.6f}, "val_loss": {val:.6f}}}\n')


def project(root: Path, runs: int, shared: Path) -> WildPaths:
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    records = [
        RunRecord(
            f"{SWEEP}-{n:04d}", SWEEP, {"lr": [0.1, 0.01][n % 2], "seed": n // 2}, "x", "finished",
            exit_code=0, started_at="2026-11-27T10:00:00Z", ended_at="2026-11-27T10:30:00Z",
        )
        for n in range(runs)
    ]  # fmt: skip
    spec = {"name": "bench", "objective": {"metric": "val_loss", "mode": "min"}}
    sweep = SweepRecord(SWEEP, "bench", spec, "done", tuple(r.id for r in records))
    lines = [sweep_line(sweep), *(run_line(r) for r in records)]
    paths.runs_log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    past = time.time() - 3600
    for record in records:
        folder = paths.run_dir(record.id)
        folder.mkdir(parents=True)
        os.link(shared, folder / "metrics.jsonl")
        os.utime(folder, (past, past))
    os.utime(paths.runs, (past, past))
    os.utime(paths.runs_log, (past, past))
    return paths


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        shared = base / "metrics.jsonl"
        metrics_file(shared, steps)
        past = time.time() - 3600
        os.utime(shared, (past, past))
        small = project(base / "small", 10, shared)
        big = project(base / "big", runs, shared)
        first = timed_wild(big.root, "--runs")
        report(
            f"first `wild --runs` at {runs} runs × {steps} steps (reads every file)",
            f"{first:.1f} s",
            "none: shown",
            None,
        )
        timed_wild(small.root, "--runs")
        for command in (["--runs"], ["--compare", SWEEP]):
            at_small: list[float] = []
            at_big: list[float] = []
            for _ in range(REPEAT):
                at_small.append(timed_wild(small.root, *command))
                at_big.append(timed_wild(big.root, *command))
            ratio = statistics.median(at_big) / statistics.median(at_small)
            report(
                f"`wild {' '.join(command[:1])}` at {runs} runs × {steps} steps vs 10 runs (kept)",
                f"{statistics.median(at_big) * 1000:.0f} ms vs {statistics.median(at_small) * 1000:.0f} ms = {ratio:.2f}×",  # noqa: E501
                "≤ 1.2× (issue 21)",
                ratio <= 1.2,
            )
        live = base / "live.jsonl"
        metrics_file(live, steps)
        follower = FileFollower(str(live), JSONL)
        start = time.perf_counter()
        follower.read()
        full = time.perf_counter() - start
        appended = []
        for step in range(steps, steps + 20):
            with live.open("a") as out:
                out.write(f'{{"step": {step}, "loss": 0.001}}\n')
            start = time.perf_counter()
            follower.read()
            appended.append(time.perf_counter() - start)
        per = statistics.median(appended)
        report(
            f"a live metrics.jsonl of {steps} lines: one appended line read",
            f"{per * 1e6:.0f} µs vs {full * 1000:.0f} ms for the whole file ({full / per:.0f}×)",
            "O(appended): ≥ 100× faster than a full read",
            full / per >= 100,
        )


if __name__ == "__main__":
    main()
