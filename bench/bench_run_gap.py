"""Benchmark: how long one slot stands idle between runs, through the public CLI.

Run from the repository root: `PYTHONPATH=. python bench/bench_run_gap.py [RUNS] [HOLD_S]`
(default 40, 0). A sweep of RUNS instant runs (each lasting HOLD_S more seconds after its
start: real runs have their wrapper launcher idle when they end) on ONE slot
(`wild --sweep FILE --run --run-slots 1`): each run writes its id and the time its shell
started (`date +%s%N`) and ends. The gap of run k+1
is its start minus the modification time of run k's exit marker (written, then fsynced and
renamed into place by the wrapper: the gap counts that fsync too). The baseline, in the
same run: a plain Python loop running the same shell command one after another, the gap
measured from the moment `wait` returned to the next start. Goal (issue 23 item 7): a p50
gap ≤ 20 ms (on an H200 it was 158 ms before the wrapper stopped importing argparse and
ctypes, and the supervisor made claims a group commit).
"""

from __future__ import annotations

import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_sweep_scale import project
from figures import report

RUNS = 40
STAMP = 'echo "$WILD_RUN_ID $(date +%s%N)" >> {starts}'


def shell(starts: Path, hold_s: float) -> str:
    return STAMP.format(starts=starts) + (f"; sleep {hold_s:g}" if hold_s > 0 else "")


def wild_gaps(runs: int, hold_s: float) -> tuple[list[float], list[float]]:
    """Each gap, and the part of it until the next run's pid file was written: by the wrapper
    launcher just after it forked the run's wrapper, before it lets it run (wild.runs.launcher),
    so this part is the loop's wake and step, and the fork."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        os.environ["XDG_CONFIG_HOME"] = name  # the signing key and approvals: not the user's
        starts = folder / "starts"
        root = project(folder, runs, shell(starts, hold_s))
        argv = [sys.executable, "-m", "wild", "--sweep", "sweep.json", "--run", "--run-slots", "1"]
        subprocess.run(argv, cwd=root, capture_output=True, check=False)
        started = {}
        for line in starts.read_text().splitlines():
            run_id, stamp = line.split()
            started[run_id] = int(stamp) / 1e9
        runs_dir = root / ".wild" / "runs"
        ended = {p.name: (p / "exit").stat().st_mtime_ns / 1e9 for p in runs_dir.iterdir()}
        begun = {p.name: (p / "pid").stat().st_mtime_ns / 1e9 for p in runs_dir.iterdir()}
        order = sorted(started, key=started.__getitem__)
        pairs = list(itertools.pairwise(order))
        gaps = [1000 * (started[after] - ended[before]) for before, after in pairs]
        to_pid = [1000 * (begun[after] - ended[before]) for before, after in pairs]
        return gaps, to_pid


def loop_gaps(runs: int, hold_s: float) -> list[float]:
    with tempfile.TemporaryDirectory() as name:
        starts = Path(name) / "starts"
        command = shell(starts, hold_s)
        ended = {}
        for number in range(runs):
            env = {**os.environ, "WILD_RUN_ID": f"r{number}"}
            subprocess.run(["sh", "-c", command], env=env, check=True)
            ended[f"r{number}"] = time.time()
        started = {}
        for line in starts.read_text().splitlines():
            run_id, stamp = line.split()
            started[run_id] = int(stamp) / 1e9
        return [1000 * (started[f"r{k + 1}"] - ended[f"r{k}"]) for k in range(runs - 1)]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else RUNS
    hold_s = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    (wild, to_pid), loop = wild_gaps(runs, hold_s), loop_gaps(runs, hold_s)
    wild_p50, loop_p50 = statistics.median(wild), statistics.median(loop)
    python = []
    for _ in range(9):  # a bare interpreter's start, here and now, for scale
        begin = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        python.append(1000 * (time.perf_counter() - begin))
    print(
        f"{runs} runs (each {hold_s:g} s after its start) on one slot: gap from an exit marker "
        f"to the next run's start p50 {wild_p50:.1f} ms (min {min(wild):.1f}, max "
        f"{max(wild):.1f}); of it, until the next run's pid was written p50 "
        f"{statistics.median(to_pid):.1f} ms; a plain loop's "
        f"gap from its wait to the next start p50 {loop_p50:.1f} ms; `python -I -S -c pass` "
        f"takes {statistics.median(python):.1f} ms here now"
    )
    report(
        "idle slot between runs: exit marker → next run's process start, p50",
        f"{wild_p50:.1f} ms (a plain loop: {loop_p50:.1f} ms; wild adds {wild_p50 - loop_p50:.1f})",
        "≤ 20 ms",
        wild_p50 <= 20,
    )


if __name__ == "__main__":
    main()
