"""Slurm at scale: 1,000 runs against a counting stand-in, 100 real jobs on a real Slurm.

Run: `python bench/slurm_scale.py [--runs 1000] [--real 100]` (`--real 0` skips the real
cluster; it needs root and `slurmctld slurmd slurm-client munge` installed). Not run by
run_all.py: the real part starts its own Slurm.

1. The stand-in (tests/slurm/fake_slurm.py: sbatch/squeue/scancel on PATH, each call
   counted) is the one measurement where the real controller is too slow on 2 cores. All runs
   are submitted, then jobs end in waves: most write their exit marker as the wrapper does,
   some leave the queue without one (lost). Every status cycle is one `backend.poll` over all
   active runs with the clock moved on by the poll interval. Figures: completions noticed,
   squeue calls per cycle, the cost of one cycle at 1,000 active runs.
2. The real cluster (tests/slurm_harness.py): submit the jobs (`sleep 1` each) and poll once
   per second until every marker is seen. Figures: time from the first sbatch to all ends
   noticed, squeue calls per cycle (counted by a wrapper on PATH around the real squeue).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the stand-in and the harness live in tests/

from figures import report  # noqa: E402

from tests.barriers.conftest import FakeClock  # noqa: E402
from tests.slurm import fake_slurm  # noqa: E402
from tests.slurm.records import run_record, submitted  # noqa: E402
from tests.slurm_harness import running_slurm, slurm_missing  # noqa: E402
from wild.parsers.runs import RunRecord  # noqa: E402
from wild.paths import WildPaths  # noqa: E402
from wild.runs.backend import BackendContext  # noqa: E402
from wild.runs.slurm import SlurmBackend  # noqa: E402

TAG = "wild-bench"
LOST_SHARE = 0.05  # of the jobs that end in a wave, this share vanishes without a marker
WAVE = 0.2  # of the running jobs, this share ends in each cycle
REAL_DEADLINE_S = 600.0


def _marker(paths: WildPaths, run: RunRecord) -> None:
    (paths.run_dir(run.id) / "exit").write_text(
        f'{{"run": "{run.id}", "attempt": 1, "exit_code": 0}}\n'
    )


def _write_queue(state: Path, rows: dict[str, tuple[str, str]]) -> None:
    text = "".join(f"{job}|{st}|node1|{name}\n" for job, (st, name) in rows.items())
    (state / "queue").write_text(text)


def counted(count: int, folder: Path) -> None:
    """1,000 runs against the counting stand-in."""
    os.environ.update(fake_slurm.install(folder / "bin", folder / "slurm"))
    state = folder / "slurm"
    paths = WildPaths(folder / "project" / ".wild")
    paths.runs.mkdir(parents=True)
    clock = FakeClock()
    backend = SlurmBackend(BackendContext(paths, TAG, {}), clock=clock)
    started = time.monotonic()
    active = [
        submitted(run, backend.submit(run, {}).job_id)
        for run in (run_record(f"s1-{n:04d}", "true") for n in range(count))
    ]
    submit_s = time.monotonic() - started
    rows = {str(run.job_id): ("RUNNING", f"{TAG}.{run.id}") for run in active}
    _write_queue(state, rows)
    rng = random.Random(7)
    lost: set[str] = set()
    noticed: dict[str, str] = {}
    per_cycle: list[int] = []
    cost_ms: list[float] = []
    while active:
        running = [run for run in active if run.id not in lost and rows.get(str(run.job_id))]
        for run in rng.sample(running, max(1, int(len(running) * WAVE)) if running else 0):
            if rng.random() < LOST_SHARE:
                lost.add(run.id)  # gone from the queue, no marker: lost after the grace
            else:
                _marker(paths, run)
            rows.pop(str(run.job_id))
        _write_queue(state, rows)
        before = len(fake_slurm.calls(state, "squeue"))
        tick = time.perf_counter()
        seen = backend.poll(active)
        cost_ms.append((time.perf_counter() - tick) * 1000)
        per_cycle.append(len(fake_slurm.calls(state, "squeue")) - before)
        for run_id, observed in seen.items():
            if observed.liveness in ("ended", "gone"):
                noticed[run_id] = observed.liveness
        active = [run for run in active if run.id not in noticed]
        clock.advance(backend.poll_interval_s)
    ended = sum(1 for how in noticed.values() if how == "ended")
    gone = sum(1 for how in noticed.values() if how == "gone")
    print(
        f"stand-in: {count} runs submitted in {submit_s:.1f}s ({len(per_cycle)} cycles); "
        f"noticed {ended} ended + {gone} lost (lost injected: {len(lost)}); "
        f"squeue calls per cycle {set(per_cycle)}; cycle cost p50 "
        f"{statistics.median(cost_ms):.1f} ms, max {max(cost_ms):.1f} ms (first, "
        f"{count} active: {cost_ms[0]:.1f} ms)"
    )
    all_seen = len(noticed) == count and gone == len(lost)
    report(
        f"slurm stand-in: {count} runs, completions noticed",
        f"{len(noticed)}/{count} ({gone} lost as injected)",
        "every one",
        all_seen,
    )
    report(
        f"slurm stand-in: squeue calls per status cycle ({count} runs)",
        f"at most {max(per_cycle)} (0 once every active run has its marker)",
        "1",
        max(per_cycle) <= 1,
    )
    report(
        f"slurm stand-in: one status cycle with {count} active runs",
        f"{cost_ms[0]:.1f} ms (p50 over all cycles {statistics.median(cost_ms):.1f} ms)",
        "",
        None,
    )


SQUEUE_COUNTER = """#!/bin/sh
echo x >> {log}
exec {squeue} "$@"
"""


def real(count: int, folder: Path) -> None:
    """`count` real jobs on the single-node Slurm: time until all their ends are noticed."""
    squeue = shutil.which("squeue")
    assert squeue is not None
    counter_bin = folder / "bin"
    counter_bin.mkdir(parents=True)
    log = folder / "squeue.calls"
    log.touch()
    (counter_bin / "squeue").write_text(SQUEUE_COUNTER.format(log=log, squeue=squeue))
    (counter_bin / "squeue").chmod(0o755)
    paths = WildPaths(folder / "project" / ".wild")
    paths.runs.mkdir(parents=True)
    with running_slurm(cpus=16) as cluster:
        os.environ.update(SLURM_CONF=str(cluster.conf))
        os.environ["PATH"] = f"{counter_bin}{os.pathsep}{os.environ['PATH']}"
        backend = SlurmBackend(BackendContext(paths, TAG, {}))
        started = time.monotonic()
        active = [
            submitted(run, backend.submit(run, {}).job_id)
            for run in (run_record(f"s1-{n:03d}", "sleep 1") for n in range(count))
        ]
        submit_s = time.monotonic() - started
        cycles, per_cycle = 0, []
        deadline = started + REAL_DEADLINE_S
        while active and time.monotonic() < deadline:
            time.sleep(1.0)
            before = len(log.read_text().splitlines())
            seen = backend.poll(active)
            per_cycle.append(len(log.read_text().splitlines()) - before)
            cycles += 1
            active = [run for run in active if seen[run.id].liveness != "ended"]
            assert all(seen[run.id].liveness == "running" for run in active), seen
        total_s = time.monotonic() - started
    print(
        f"real Slurm: {count} jobs (sleep 1, 16 job slots on 2 cores): submitted in "
        f"{submit_s:.1f}s, all ends noticed {total_s:.1f}s after the first sbatch; "
        f"{cycles} cycles, squeue calls per cycle {set(per_cycle)}"
    )
    report(
        f"slurm real: {count} jobs, first sbatch → all ends noticed",
        f"{total_s:.1f} s (submit {submit_s:.1f} s)",
        "every one noticed",
        not active,
    )
    report(
        f"slurm real: squeue calls per status cycle ({count} jobs)",
        str(max(per_cycle, default=0)),
        "1",
        max(per_cycle, default=0) <= 1,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--real", type=int, default=100)
    args = parser.parse_args()
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="wbench.") as scratch:
        if args.runs:
            counted(args.runs, Path(scratch) / "counted")
        os.environ.clear()
        os.environ.update(saved)
        if args.real:
            missing = slurm_missing()
            if missing is not None:
                print(f"real Slurm skipped: {missing}")
                return
            real(args.real, Path(scratch) / "real")


if __name__ == "__main__":
    main()
