"""The loop end to end: wake latency from another process, and overhead per iteration at scale.

Run: `python bench/bench_loop.py [TRIALS] [ITERATIONS]`. Targets (SPEC §10): wake latency
p50 ≤ 5 ms / p99 ≤ 20 ms; loop overhead per iteration ≤ 50 ms at 10k tasks / 100k alerts /
1k barriers.

1. Wake latency: a real `python -m wild "GOAL" --agent-cmd …` waits on a manual barrier; this
   process appends an alert (one O_APPEND write, `time.time_ns()` just before) and the agent,
   a `sh -c` one-liner, records `date +%s%N` as its first act. The figure is append → agent
   running: the watcher, the wake, loading and selecting, the alert's in-progress line, the
   prompt, state.json (fsync), and fork/exec of the agent (sh and date included, a few ms).
   events.log's `wake` and `agent-start` stamps split it into stages.
2. Overhead: an in-process `Loop` whose runner returns a finished run at once, over a
   `.wild/` with 10,000 tasks (4,000 done, 1,000 waiting on barriers), 100,000 resolved
   alerts and 1,000 barriers. The figure is the time between one agent run's end and the
   next one's start: recording the run, the task's checkbox, state.json, events.log, reading
   every file again, selecting, marking the next task in progress, writing its prompt.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson
from figures import report

from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest
from wild.agents.signals import parse_signals
from wild.clock import parse_time
from wild.commands.init import init_wild
from wild.loop import Loop, LoopOptions
from wild.parsers.alerts import make_alert, status_update
from wild.paths import WildPaths
from wild.store.events_log import read_events

TASKS = 10_000
ALERTS = 100_000
BARRIERS = 1_000
SETTLE_S = 0.2  # after each trial, let the loop finish the alert and go back to sleep
WARMUP = 5  # first trials warm caches up and are not counted
T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)

AGENT = """echo "$WILD_WORK_ID $(date +%s%N)" >> stamps
echo '<promise>ALERT_RESOLVED</promise>'
"""


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _row(label: str, values: list[float]) -> str:
    return (
        f"{label:<34}{statistics.median(values):>9.2f}{_percentile(values, 0.9):>9.2f}"
        f"{_percentile(values, 0.99):>9.2f}{max(values):>9.2f}"
    )


def _append(path: Path, record: dict[str, object]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, orjson.dumps(record) + b"\n")
    finally:
        os.close(fd)


def _ms_of(ts: str) -> int:
    """An events.log `ts` (millisecond ISO) as epoch milliseconds."""
    moment = parse_time(ts)
    assert moment is not None
    return round(moment.timestamp() * 1000)


def _stages(events_log: Path, t0s: dict[str, int]) -> tuple[list[float], list[float]]:
    """Per trial, append → loop awake and append → work selected (agent-start event), in ms.

    events.log stamps are whole milliseconds, so these two are ±1 ms.
    """
    events, _ = read_events(events_log)
    woke: list[float] = []
    selected: list[float] = []
    for alert_id, t0 in t0s.items():
        t0_ms = t0 / 1e6
        start = next(e for e in events if e["kind"] == "agent-start" and e["work_id"] == alert_id)
        wake = [e for e in events if e["kind"] == "wake" and _ms_of(e["ts"]) >= int(t0_ms)]
        woke.append(_ms_of(wake[0]["ts"]) - t0_ms)
        selected.append(_ms_of(start["ts"]) - t0_ms)
    return woke, selected


def _agent_started(project: Path, alert_id: str) -> int:
    """The agent's `date +%s%N` for this alert, once it has written it."""
    stamps = project / "stamps"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = stamps.read_text().splitlines() if stamps.exists() else []
        if lines and lines[-1].startswith(f"{alert_id} "):
            return int(lines[-1].split()[1])
        time.sleep(0.001)
    output = (project / "loop.out").read_text()
    raise SystemExit(f"no agent run for {alert_id}; the loop said:\n{output}")


def wake_latency(trials: int) -> tuple[list[float], list[float], list[float]]:
    """Milliseconds from an alert appended by this process to the loop awake, the work
    selected, and the agent running for it."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp).resolve()
        paths = WildPaths(project / ".wild")
        init_wild(paths)
        paths.tasks.write_text("# Tasks\n\n- [ ] [P1] task-001: Train\n  - blockedBy: gate\n")
        paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")
        agent = project / "agent.sh"
        agent.write_text(AGENT)
        with (project / "loop.out").open("wb") as out:
            loop = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "wild",
                    "bench",
                    "--agent-cmd",
                    f"sh {agent}",
                    "--dir",
                    str(paths.root),
                ],
                cwd=project,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            try:
                time.sleep(1.0)  # start-up
                latencies = []
                t0s: dict[str, int] = {}
                for n in range(trials + 5):
                    alert_id = f"alert-{n}"
                    record = make_alert(
                        now=T0,
                        severity="info",
                        source="bench",
                        type="t",
                        description="wake",
                        alert_id=alert_id,
                    )
                    t0 = time.time_ns()
                    _append(paths.alerts, record)
                    started = _agent_started(project, alert_id)
                    if n >= WARMUP:
                        latencies.append((started - t0) / 1e6)
                        t0s[alert_id] = t0
                    time.sleep(SETTLE_S)
            finally:
                loop.terminate()
                loop.wait()
            woke, selected = _stages(paths.events, t0s)
    return woke, selected, latencies


def _big_project(root: Path) -> WildPaths:
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    lines = ["# Wild Loop Tasks\n\n"]
    for n in range(1, TASKS + 1):
        box = "x" if n <= TASKS * 4 // 10 else " "
        lines.append(f"- [{box}] [P{n % 3 + 1}] task-{n:05d}: Step {n} of the experiment\n")
        if n % 10 == 5 and box == " ":
            lines.append(f"  - blockedBy: barrier-{n // 10 % BARRIERS:04d}\n")
    paths.tasks.write_text("".join(lines))
    blocks = ["# Wild Loop Barriers\n"]
    for n in range(BARRIERS):
        status = "SATISFIED" if n % 3 == 0 else "WAITING"
        blocks.append(f"\n## [{status}] barrier-{n:04d}\n- Type: manual\n- Interval: 60s\n")
    paths.barriers.write_text("".join(blocks))
    with paths.alerts.open("wb") as handle:
        for n in range(ALERTS // 2):
            record = make_alert(
                now=T0,
                severity="warning",
                source="job",
                type="t",
                description=f"run {n} slowed down",
                alert_id=f"alert-{n:06d}",
            )
            handle.write(orjson.dumps(record) + b"\n")
            handle.write(orjson.dumps(status_update(record, "resolved", T0)) + b"\n")
    return paths


class _InstantAgent:
    """A runner that finishes each task at once and notes when the loop called it: by its
    promise, or (`ticks`) by ticking the task's box in tasks.md itself, as agents often do."""

    def __init__(self, *, ticks: bool = False) -> None:
        self.calls: list[tuple[float, float]] = []
        self.ticks = ticks

    def __call__(self, request: AgentRequest) -> AgentRun:
        start = time.perf_counter()
        said = "<promise>TASK_COMPLETE</promise>"
        if self.ticks:
            tasks = Path(request.env["WILD_DIR"]) / "tasks.md"
            mark = f"] {request.env['WILD_WORK_ID']}:"
            text = tasks.read_text()
            at = text.index(mark)
            line = text.rfind("\n", 0, at) + 1
            tasks.write_text(text[:line] + text[line:at].replace("[/]", "[x]", 1) + text[at:])
            said = "Done; ticked the box."
        run = AgentRun(
            exit_code=0,
            timed_out=False,
            cancelled=False,
            duration_s=0.0,
            final_text=said,
            signals=parse_signals(said),
            cost_usd=None,
            input_tokens=None,
            output_tokens=None,
            rate_limited=False,
            rate_limit_reset=None,
            log_path=request.log_path,
            output_bytes=0,
        )
        self.calls.append((start, time.perf_counter()))
        return run


def overhead(iterations: int, *, ticks: bool = False) -> tuple[list[float], float]:
    """Milliseconds between agent runs, and the first iteration's start-up (100k alerts read)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = _big_project(Path(tmp))
        agent = _InstantAgent(ticks=ticks)
        options = LoopOptions(
            goal="bench",
            agent="custom",
            agent_cmd="true",
            max_iterations=iterations + 1,
            safety_rescan_s=3600.0,
        )
        started = time.perf_counter()
        Loop(paths, options, runner=agent, out=lambda _line: None).run()
    gaps = [(agent.calls[i + 1][0] - agent.calls[i][1]) * 1000 for i in range(iterations)]
    return gaps, (agent.calls[0][0] - started) * 1000


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    header = f"{'':<34}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}"
    print(f"wake latency: alert appended by another process → agent running ({trials} trials)")
    print(header)
    woke, selected, started = wake_latency(trials)
    print(_row("append → loop awake (±1 ms)", woke))
    print(_row("append → work selected (±1 ms)", selected))
    print(_row("append → agent process running", started))
    p50, p99 = statistics.median(selected), _percentile(selected, 0.99)
    report(
        "wake latency end to end: alert appended → work selected",
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms (agent running: p50 "
        f"{statistics.median(started):.1f} ms)",
        "p50 ≤ 5 ms, p99 ≤ 20 ms (SPEC §10)",
        p50 <= 5 and p99 <= 20,
    )
    print(
        f"\nloop overhead per iteration, {TASKS:,} tasks / {ALERTS:,} alerts / "
        f"{BARRIERS:,} barriers ({iterations} iterations)"
    )
    gaps, startup = overhead(iterations)
    print(header)
    print(_row("between agent runs", gaps))
    print(f"start-up to the first agent run (reads all {ALERTS:,} alerts): {startup:.0f} ms")
    p50 = statistics.median(gaps)
    report(
        f"loop overhead per iteration, {TASKS // 1000}k tasks / {ALERTS // 1000}k alerts / "
        f"{BARRIERS // 1000}k barriers",
        f"p50 {p50:.1f} ms, max {max(gaps):.1f} ms",
        "≤ 50 ms, p50 (SPEC §10; issue 8)",
        p50 <= 50,
    )
    ticked, _ = overhead(iterations, ticks=True)
    print(_row("between runs, the agent ticks its box", ticked))
    ratio = statistics.median(ticked) / p50
    report(
        "an agent ticking its own task (10k tasks): gap between iterations",
        f"p50 {statistics.median(ticked):.1f} ms = {ratio:.2f}× the gap after a promise",
        "no extra re-parse: ≤ 1.25× the gap after a promise, same run (issue 8)",
        ratio <= 1.25,
    )


if __name__ == "__main__":
    main()
