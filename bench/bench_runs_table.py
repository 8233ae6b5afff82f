"""Issue 23's scale goal for the run listings: `wild --runs`, `wild --runs --json` and
`wild --status` at 10,000 runs cost ≤ 1.2× the same command at 10 runs, settled and right
after a run's line was appended.

Run: `python bench/bench_runs_table.py [RUNS [FLAG…]]` (default 10000, all three commands;
`10000 --runs --json` times that command alone). Each project's runs.jsonl is
written through the real writer (`wild.store.runs_log.append_records`), as a loop writes it:
the sweep and its queued runs in one append, then each run's `running` and `finished` lines
one append each, so the file holds three lines per run (its history); then it is compacted
to one line per run, as the loop does once most of it is history. Each run has its folder.
The figures are fresh `python -m wild` processes, alternating between the 10-run and the big
project so a busy machine slows both alike (median of REPEAT):

- settled: nothing changed since the last command (files dated an hour back);
- after an append: one run's `finished` line appended just before the command, as while a
  sweep goes on: the command must not re-read every run.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from figures import report, timed_wild

from wild.commands.init import init_wild
from wild.parsers.runs import RunRecord, SweepRecord
from wild.paths import WildPaths
from wild.store import runs_compaction
from wild.store.runs_log import append_records

REPEAT = 7
SWEEP = "s20261127-be4c"


def project(root: Path, runs: int) -> WildPaths:
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    queued = [
        RunRecord(
            f"{SWEEP}-{n:05d}", SWEEP, {"lr": [0.1, 0.01][n % 2], "seed": n // 2},
            f"python train.py --lr={[0.1, 0.01][n % 2]} --seed={n // 2}", "queued",
            queued_at="2026-11-27T10:00:00Z",
        )
        for n in range(runs)
    ]  # fmt: skip
    spec = {"name": "bench", "base_command": "python train.py", "parameters": {"lr": [0.1]}}
    sweep = SweepRecord(SWEEP, "bench", spec, "active", tuple(r.id for r in queued))
    append_records(paths.runs_log, [sweep, *queued])
    for run in queued:
        running = replace(run, status="running", job_id="4242", started_at="2026-11-27T10:00:01Z")
        append_records(paths.runs_log, [running])
        finished = replace(running, status="finished", exit_code=0, ended_at="2026-11-27T10:30Z")
        append_records(paths.runs_log, [finished])
        paths.run_dir(run.id).mkdir(parents=True)
    append_records(paths.runs_log, [replace(sweep, status="done")])
    lines = 3 * runs + 2
    if runs_compaction.due(paths.runs_log.stat().st_size, lines, runs + 1):
        runs_compaction.compact(paths.runs_log, paths.lock)  # as the loop does once due
    settle(paths)
    return paths


def settle(paths: WildPaths) -> None:
    """Every file and folder dated an hour back, past the kept views' 2 s racy window."""
    past = time.time() - 3600
    for folder, _dirs, names in os.walk(paths.root):
        for name in names:
            os.utime(os.path.join(folder, name), (past, past))
        os.utime(folder, (past, past))


def touch_one(paths: WildPaths, n: int) -> None:
    """A line appended for one run (a finished run's line again, as a rerun's end writes)."""
    run = RunRecord(
        f"{SWEEP}-{n:05d}", SWEEP, {"lr": 0.1, "seed": n}, "python train.py", "finished",
        exit_code=0, started_at="2026-11-27T10:00:01Z", ended_at="2026-11-27T10:31Z",
    )  # fmt: skip
    append_records(paths.runs_log, [run])


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        small, big = project(base / "small", 10), project(base / "big", runs)
        size = big.runs_log.stat().st_size
        print(f"runs.jsonl: {size / 1e6:.1f} MB at {runs} runs, compacted", flush=True)
        commands = (
            [sys.argv[2:]]
            if len(sys.argv) > 2
            else [["--runs"], ["--runs", "--json"], ["--status"]]
        )
        for command in commands:
            name = " ".join(command)
            first = timed_wild(big.root, *command)
            report(f"first `wild {name}` at {runs} runs", f"{first * 1000:.0f} ms", "none", None)
            timed_wild(small.root, *command)
            for case in ("settled", "after an append"):
                at_small: list[float] = []
                at_big: list[float] = []
                for n in range(REPEAT):
                    for paths, into in ((small, at_small), (big, at_big)):
                        if case != "settled":
                            touch_one(paths, n % 10)
                        into.append(timed_wild(paths.root, *command))
                ratio = statistics.median(at_big) / statistics.median(at_small)
                report(
                    f"`wild {name}` at {runs} runs vs 10 runs, {case}",
                    f"{statistics.median(at_big) * 1000:.0f} ms vs "
                    f"{statistics.median(at_small) * 1000:.0f} ms = {ratio:.2f}×",
                    "≤ 1.2× (issue 23)",
                    ratio <= 1.2,
                )


if __name__ == "__main__":
    main()
