"""Benchmark: 1,000 runs of a tiny job through the run supervisor and the local backend.

Run from the repository root: `PYTHONPATH=. python bench/bench_runs_local.py [runs] [slots]`.
Each size runs in a child process of its own (so its peak RSS is its own): N runs of
`echo "$WILD_RUN_ID" >> spawns` with 4 slots, the supervisor stepped only when an exit
marker's file event (the loop's FolderWatcher, watching run folders) wakes it. Target (§5):
every completion noticed, none started twice, the loop's memory and its cost per step flat
from 100 to 1,000 runs (ratio ≤ 1.5).
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from collections import Counter
from pathlib import Path

from figures import report
from sizes import two_sizes

from wild.clock import SystemClock
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.runs import signing
from wild.runs.backend import BackendContext
from wild.runs.local import LocalBackend
from wild.runs.supervisor import RunSupervisor
from wild.store.events_log import EventLog
from wild.store.runs_log import append_records
from wild.store.self_writes import SelfWrites
from wild.wake import FolderWatcher, Waker

SIZES = (100, 1000)
SLOTS = 4
QUIET_S = 5.0  # a wait this long with no marker event means one was missed: counted


def one_size(runs: int, slots: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / ".wild"
        root.mkdir()
        paths = WildPaths(root)
        spawns = Path(folder) / "spawns"
        os.environ["XDG_CONFIG_HOME"] = folder  # the run-signing key: not the user's
        key = signing.load_key()
        for number in range(runs):
            run = RunRecord(
                id=f"s1-{number:04d}",
                sweep="s1",
                params={"seed": number},
                resolved_instruction=f'echo "$WILD_RUN_ID" >> {spawns}',
                status="queued",
            )
            append_records(paths.runs_log, [signing.sign(key, run)])  # as wild queues it
        clock = SystemClock()
        backend = LocalBackend(BackendContext(paths, "bench", {"run_slots": str(slots)}))
        events = EventLog(paths.events, clock)
        trusted = lambda: lambda _command: True  # noqa: E731  (a trusted policy's gate)
        sup = RunSupervisor(paths, {"local": backend}, clock, events, command_gate=trusted)
        waker = Waker()
        steps, step_s, step_cpu_s, quiet_waits, ended = 0, 0.0, 0.0, 0, 0
        started_at = time.perf_counter()
        # The loop's own watcher, which wakes on `runs/<id>/exit` markers (and .wild/ files).
        with FolderWatcher(root, waker, SelfWrites(), watch_runs=True):
            while True:
                begin, begin_cpu = time.perf_counter(), time.process_time()
                result = sup.step()
                step_s += time.perf_counter() - begin
                step_cpu_s += time.process_time() - begin_cpu
                steps += 1
                ended += len(result.ended)
                if not sup.busy():
                    break
                if waker.wait(QUIET_S) == []:
                    quiet_waits += 1
        wall_s = time.perf_counter() - started_at
        statuses = Counter(run.status for run in sup.index.runs.values())
        counts = Counter(spawns.read_text().split())
    return {
        "runs": runs,
        "finished": statuses["finished"],
        "ended_seen": ended,
        "started_twice": sum(1 for n in counts.values() if n > 1),
        "never_started": runs - len(counts),
        "steps": steps,
        "step_ms": 1000 * step_s / steps,
        "step_cpu_ms": 1000 * step_cpu_s / steps,
        "per_run_ms": 1000 * step_s / runs,
        "wall_s": wall_s,
        "quiet_waits": quiet_waits,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    sized = two_sizes(__file__, one_size, SIZES, SLOTS)
    if sized is None:
        return
    big, small_n, slots = sized.big, sized.small_n, sized.slots
    small, large = sized.small, sized.large
    for figures in (small, large):
        print(
            f"{int(figures['runs'])} runs, {slots} slots: {figures['wall_s']:.1f} s wall, "
            f"{int(figures['steps'])} steps at {figures['step_ms']:.2f} ms "
            f"({figures['step_cpu_ms']:.2f} ms CPU) "
            f"({figures['per_run_ms']:.2f} ms of supervisor time per run), "
            f"peak RSS {figures['peak_rss_mb']:.1f} MB, {int(figures['quiet_waits'])} quiet waits"
        )
    complete = (
        large["finished"] == large["runs"] == large["ended_seen"]
        and large["started_twice"] == 0
        and large["never_started"] == 0
    )
    report(
        f"{big} tiny runs, {slots} slots: completions noticed, none started twice",
        f"{int(large['finished'])}/{big} finished and noticed, "
        f"{int(large['started_twice'])} started twice, {int(large['quiet_waits'])} missed wakes",
        "all noticed, 0 twice, 0 missed wakes",
        complete and large["quiet_waits"] == 0,
    )
    step_ratio = large["step_ms"] / small["step_ms"]
    report(
        f"supervisor step time (wall, with fsyncs and spawns), {big} vs {small_n} runs",
        f"{large['step_ms']:.2f} ms vs {small['step_ms']:.2f} ms = {step_ratio:.2f}x",
        "flat: ≤ 1.5x",
        step_ratio <= 1.5,
    )
    cpu_ratio = large["step_cpu_ms"] / small["step_cpu_ms"]
    report(
        f"supervisor step CPU, {big} vs {small_n} runs",
        f"{large['step_cpu_ms']:.2f} ms vs {small['step_cpu_ms']:.2f} ms = {cpu_ratio:.2f}x",
        "flat: ≤ 1.5x",
        cpu_ratio <= 1.5,
    )
    rss_ratio = large["peak_rss_mb"] / small["peak_rss_mb"]
    report(
        f"supervisor peak RSS, {big} vs {small_n} runs",
        f"{large['peak_rss_mb']:.1f} MB vs {small['peak_rss_mb']:.1f} MB = {rss_ratio:.2f}x",
        "flat: ≤ 1.5x",
        rss_ratio <= 1.5,
    )


if __name__ == "__main__":
    main()
