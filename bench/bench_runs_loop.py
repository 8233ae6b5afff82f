"""The whole loop over a sweep of N tiny runs on the local backend: every end noticed, none
started twice, and the loop's memory and its cost per run event flat from 100 to 1,000 runs.

`PYTHONPATH=. python bench/bench_runs_loop.py [runs] [slots]`. Each size runs in a child
process of its own (its peak RSS is its own). The loop runs in-process with the real folder
watcher and the real local backend; only the agent is a function: it launches the sweep
when it plans, and says COMPLETE to the analysis and to the last planning look. The loop's
CPU time (the process's, minus nothing: runs are other processes) is divided by the runs.
"""

from __future__ import annotations

import resource
import tempfile
import time
from collections import Counter
from pathlib import Path

from figures import report
from sizes import two_sizes

from tests.runs.research_support import Agent, project, run_loop, runs_by_id, sweep_tag
from wild.store.events_log import read_events

SIZES = (100, 1000)
SLOTS = 4


def one_size(runs: int, slots: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        paths = project(Path(folder), {})
        spawns = Path(folder) / "spawns"
        spec = {
            "name": "scale",
            "base_command": f'echo "$WILD_RUN_ID" >> {spawns}; true',
            "parameters": {"seed": list(range(runs))},
            "max_runs": runs,
        }

        def reply(kind: str, work: str, prompt: str) -> str:
            if kind == "planning" and not paths.runs_log.exists():
                return sweep_tag(spec)
            return "<promise>COMPLETE</promise>\n"

        started, cpu = time.perf_counter(), time.process_time()
        result = run_loop(paths, Agent(reply), slots=slots, max_time_s=1800.0)
        wall_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu
        events = read_events(paths.events)[0]
        statuses = Counter(str(r["status"]) for r in runs_by_id(paths).values())
        starts = Counter(spawns.read_text().split())
        wakes = sum(e["kind"] == "wake" and "run" in e.get("reasons", []) for e in events)
        return {
            "runs": runs,
            "complete": float(result.reason == "complete"),
            "finished": statuses["finished"],
            "ended_events": sum(e["kind"] == "run-ended" for e in events),
            "started_twice": sum(1 for n in starts.values() if n > 1),
            "never_started": runs - len(starts),
            "run_wakes": wakes,
            "wall_s": wall_s,
            "cpu_ms_per_run": 1000 * cpu_s / runs,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }


def main() -> None:
    sized = two_sizes(__file__, one_size, SIZES, SLOTS)
    if sized is None:
        return
    big, small_n, slots = sized.big, sized.small_n, sized.slots
    small, large = sized.small, sized.large
    for f in (small, large):
        print(
            f"{int(f['runs'])} runs, {slots} slots: {f['wall_s']:.1f} s, "
            f"{f['cpu_ms_per_run']:.2f} ms loop CPU per run, {int(f['run_wakes'])} run wakes, "
            f"peak RSS {f['peak_rss_mb']:.1f} MB"
        )
    whole = (
        large["complete"] == 1.0
        and large["finished"] == large["ended_events"] == big
        and large["started_twice"] == large["never_started"] == 0
    )
    report(
        f"the loop over a {big}-run sweep, {slots} slots: ends noticed, none started twice",
        f"{int(large['finished'])}/{big} finished, {int(large['ended_events'])} end events, "
        f"{int(large['started_twice'])} started twice, loop ended "
        + ("complete" if large["complete"] == 1.0 else "otherwise"),
        "all, 0 twice, complete",
        whole,
    )
    ratio = large["cpu_ms_per_run"] / small["cpu_ms_per_run"]
    report(
        f"loop CPU per run event, {big} vs {small_n} runs",
        f"{large['cpu_ms_per_run']:.2f} ms vs {small['cpu_ms_per_run']:.2f} ms = {ratio:.2f}x",
        "flat: ≤ 1.5x",
        ratio <= 1.5,
    )
    memory = large["peak_rss_mb"] / small["peak_rss_mb"]
    report(
        f"loop peak RSS, {big} vs {small_n} runs",
        f"{large['peak_rss_mb']:.1f} MB vs {small['peak_rss_mb']:.1f} MB = {memory:.2f}x",
        "flat: ≤ 1.5x",
        memory <= 1.5,
    )


if __name__ == "__main__":
    main()
