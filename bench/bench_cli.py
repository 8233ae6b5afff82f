"""What a user feels: `wild --status` fresh and at 100k alerts, launch → agent, exit at 10k tasks.

Run: `python bench/bench_cli.py [RUNS]`. Goals (issue 8's table):
- fresh `wild --status`, small project: ≤ 1.2× `python3 -c 'import click, orjson'` timed in
  the same run (wild's own libraries and little more);
- `wild --status` with 100,000 alerts: within 10 % of the small project's time, and memory
  flat (peak RSS within 10 % too), once the alerts summary exists; the first status after
  the log grew reads the new lines once (shown, not gated);
- both of those with the project's files settled (older than the status cache's 2 s racy
  window, as between two looks at a project), so `--status` shows its kept parts; and
  right after a change (tasks.md edited: shown, not gated; one alert appended to the 100,000:
  within 10 % of the small project after an edit, memory flat), so it reads the files;
- launch → first agent running: ≤ 2× the Python floor timed in the same rounds (issue 22:
  `python -c 'import click, orjson'` starting the same agent); open-ralph-wiggum's own figure
  is timed beside it by `bench_peer.py`;
- exit at 10k tasks: the agent's last act → the `wild` process gone, ≤ 100 ms.

Every command is a fresh `python -m wild` process (no `wild` launcher script, whose own
start-up differs between installs); timings alternate between the two sides of a ratio so a
busy machine slows both alike. Peak RSS is the child's, from wait4().
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import orjson
from figures import report

import wild
from wild.clock import RACY_NS
from wild.commands.init import init_wild
from wild.parsers.alerts import make_alert, status_update
from wild.paths import WildPaths

RUNS = 21
ALERTS = 100_000
OPEN_ALERTS = 5
TASKS = 10_000
T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)
IMPORT = [sys.executable, "-c", "import click, orjson"]

AGENT = """date +%s%N > started
echo '<promise>TASK_COMPLETE</promise>'
date +%s%N > ended
"""


# The loop stops at --max-iterations with exit 4 (a limit reached): that is its success here.
LIMIT_REACHED = 4


def timed(command: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, int]:
    """Wall milliseconds and peak RSS (KiB) of one run of `command`, which must exit `ok`."""
    start = time.perf_counter()
    child = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read().decode() if child.stderr else ""
    if child.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} failed ({child.returncode}): {stderr}")
    return elapsed, usage.ru_maxrss


def status_command(paths: WildPaths) -> list[str]:
    return [sys.executable, "-m", "wild", "--status", "--dir", str(paths.root)]


def alternate(runs: int, *sides: Callable[[], tuple[float, int]]) -> list[list[tuple[float, int]]]:
    """Run each side once per round, in turn; one warm-up round is not counted."""
    found: list[list[tuple[float, int]]] = [[] for _ in sides]
    for n in range(runs + 1):
        for side, samples in zip(sides, found, strict=True):
            sample = side()
            if n:
                samples.append(sample)
    return found


def ms(samples: list[tuple[float, int]]) -> float:
    return statistics.median(s[0] for s in samples)


def rss_mib(samples: list[tuple[float, int]]) -> float:
    return max(s[1] for s in samples) / 1024


def big_alerts_log(path: Path) -> None:
    """100,000 lines: 50,000 alerts raised then resolved, plus a few still open."""
    with path.open("wb") as handle:
        for n in range((ALERTS - OPEN_ALERTS) // 2):
            record = make_alert(
                now=T0, severity="warning", source="job", type="t",
                description=f"run {n} slowed down", alert_id=f"alert-{n:06d}",
            )  # fmt: skip
            handle.write(orjson.dumps(record) + b"\n")
            handle.write(orjson.dumps(status_update(record, "resolved", T0)) + b"\n")
        for n in range(OPEN_ALERTS):
            record = make_alert(
                now=T0, severity="critical", source="job", type="t",
                description=f"job {n} crashed", alert_id=f"open-{n}",
            )  # fmt: skip
            handle.write(orjson.dumps(record) + b"\n")


def project(root: Path, tasks: str = "") -> WildPaths:
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    if tasks:
        paths.tasks.write_text(tasks)
    (root / "agent.sh").write_text(AGENT)
    return paths


def settle() -> None:
    """Let every file just written grow older than the status cache's racy window, as a
    project's files are between two looks at it (`wild.clock.RACY_NS`)."""
    time.sleep(RACY_NS / 1e9 + 0.1)


def touch_tasks(paths: WildPaths) -> None:
    """A human's edit: tasks.md gains a line (the next status must read it again)."""
    with paths.tasks.open("a") as handle:
        handle.write("- [ ] [P3] edit: A note\n")


def append_alert(paths: WildPaths, n: list[int]) -> None:
    """A job's alert appended to the 100,000-line log."""
    n[0] += 1
    record = make_alert(
        now=T0, severity="info", source="job", type="t",
        description="checkpoint", alert_id=f"more-{n[0]:06d}",
    )  # fmt: skip
    with paths.alerts.open("ab") as handle:
        handle.write(orjson.dumps(record) + b"\n")


def status_figures(tmp: Path, runs: int) -> None:
    small = project(tmp / "small")
    big = project(tmp / "big")
    big_alerts_log(big.alerts)
    cold, _ = timed(status_command(big), tmp)  # builds the summary: reads every line once
    settle()
    (imports, small_runs) = alternate(
        runs, lambda: timed(IMPORT, tmp), lambda: timed(status_command(small), tmp)
    )
    small_again, big_runs = alternate(
        runs, lambda: timed(status_command(small), tmp), lambda: timed(status_command(big), tmp)
    )
    appended = [0]

    def small_changed() -> tuple[float, int]:
        touch_tasks(small)
        return timed(status_command(small), tmp)

    def big_changed() -> tuple[float, int]:
        append_alert(big, appended)
        return timed(status_command(big), tmp)

    imports_again, changed_runs = alternate(runs, lambda: timed(IMPORT, tmp), small_changed)
    small_edit, big_edit = alternate(runs, small_changed, big_changed)
    print(f"python -c 'import click, orjson': {ms(imports):.1f} ms, {rss_mib(imports):.1f} MiB")
    print(
        f"wild --status, small project:     {ms(small_runs):.1f} ms, {rss_mib(small_runs):.1f} MiB"
    )
    print(f"wild --status, {ALERTS:,} alerts:   {ms(big_runs):.1f} ms, {rss_mib(big_runs):.1f} MiB")
    print(f"  (small project in the same rounds: {ms(small_again):.1f} ms)")
    print(f"wild --status right after tasks.md changed: {ms(changed_runs):.1f} ms")
    print(f"  (import in the same rounds: {ms(imports_again):.1f} ms)")
    print(f"wild --status right after 1 alert appended to {ALERTS:,}: {ms(big_edit):.1f} ms")
    print(f"  (small project after an edit, same rounds: {ms(small_edit):.1f} ms)")
    print(f"first wild --status after the log grew by {ALERTS:,} lines: {cold:.0f} ms")
    ratio = ms(small_runs) / ms(imports)
    report(
        "fresh `wild --status`, small project",
        f"{ms(small_runs):.1f} ms = {ratio:.2f}× `import click, orjson` ({ms(imports):.1f} ms)",
        "≤ 1.2× `python3 -c 'import click, orjson'` in the same run (issue 8)",
        ratio <= 1.2,
    )
    slower = ms(big_runs) / ms(small_again)
    memory = rss_mib(big_runs) / rss_mib(small_again)
    report(
        f"`wild --status` with {ALERTS // 1000}k alerts",
        f"{ms(big_runs):.1f} ms = {slower:.2f}× the small project; peak RSS "
        f"{rss_mib(big_runs):.1f} MiB = {memory:.2f}×",
        "within 10 % of the small project, memory flat (≤ 1.1×) (issue 8)",
        slower <= 1.1 and memory <= 1.1,
    )
    changed = ms(changed_runs) / ms(imports_again)
    report(
        "fresh `wild --status` right after a file changed (it reads the files again)",
        f"{ms(changed_runs):.1f} ms = {changed:.2f}× `import click, orjson`",
        "none: shown so the cost of a change is not hidden by the cache",
        None,
    )
    edit_slower = ms(big_edit) / ms(small_edit)
    edit_memory = rss_mib(big_edit) / rss_mib(small_edit)
    report(
        f"`wild --status` right after 1 alert was appended to {ALERTS // 1000}k",
        f"{ms(big_edit):.1f} ms = {edit_slower:.2f}× the small project after an edit; peak RSS "
        f"{rss_mib(big_edit):.1f} MiB = {edit_memory:.2f}×",
        "within 10 % of the small project after an edit, memory flat: O(what changed)",
        edit_slower <= 1.1 and edit_memory <= 1.1,
    )
    report(
        f"first `wild --status` after {ALERTS // 1000}k alerts were appended (summary built)",
        f"{cold:.0f} ms",
        "none: read once, then O(what was appended)",
        None,
    )


def loop_command(paths: WildPaths) -> list[str]:
    return [
        sys.executable, "-m", "wild", "bench", "--agent-cmd", "sh agent.sh",
        "--max-iterations", "1", "--dir", str(paths.root),
    ]  # fmt: skip


def stamp(path: Path) -> int:
    return int(path.read_text().strip())


def launch_ms(tmp: Path, n: int) -> float:
    """`python -m wild GOAL` started → the agent's first act, one task to do."""
    root = tmp / f"launch-{n}"
    paths = project(root, "# Tasks\n\n- [ ] [P1] task-001: Do it\n")
    t0 = time.time_ns()
    timed(loop_command(paths), root, ok=(0, LIMIT_REACHED))
    return (stamp(root / "started") - t0) / 1e6


# The least any Python launcher built on click can do: start, import click and orjson, start
# the agent. No work is chosen, no file read: the floor under `launch_ms` on this machine.
FLOOR = "import click, orjson, subprocess, sys; subprocess.run(['sh', 'agent.sh'], cwd=sys.argv[1])"


def floor_ms(tmp: Path, n: int) -> float:
    """`python -c FLOOR` started → the agent's first act."""
    root = tmp / f"floor-{n}"
    project(root)
    t0 = time.time_ns()
    timed([sys.executable, "-c", FLOOR, str(root)], root)
    return (stamp(root / "started") - t0) / 1e6


def exit_ms(tmp: Path, n: int, tasks: str) -> float:
    """The agent's last act → the loop process gone, at 10,000 tasks."""
    root = tmp / f"exit-{n}"
    paths = project(root, tasks)
    child = subprocess.Popen(
        loop_command(paths), cwd=root, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )
    child.wait()
    gone = time.time_ns()
    if child.returncode not in (0, LIMIT_REACHED):
        raise SystemExit(f"the loop failed ({child.returncode}) in {root}")
    return (gone - stamp(root / "ended")) / 1e6


def ten_thousand_tasks() -> str:
    lines = ["# Tasks\n\n"]
    for n in range(1, TASKS + 1):
        box = "x" if n > 1 and n <= TASKS * 4 // 10 else " "
        lines.append(f"- [{box}] [P{n % 3 + 1}] task-{n:05d}: Step {n} of the experiment\n")
    return "".join(lines)


def loop_figures(tmp: Path, runs: int) -> None:
    launches: list[float] = []
    floors: list[float] = []
    for n in range(runs + 1):  # alternating, so a busy spell slows both alike
        launch_n, floor_n = launch_ms(tmp, n), floor_ms(tmp, n)
        if n:
            launches.append(launch_n)
            floors.append(floor_n)
    tasks = ten_thousand_tasks()
    exits = [exit_ms(tmp, n, tasks) for n in range(runs + 1)][1:]
    print(f"launch → first agent running: {statistics.median(launches):.1f} ms median")
    print(
        f"  (Python + click + orjson → the agent, same rounds: {statistics.median(floors):.1f} ms)"
    )
    print(
        f"exit at {TASKS:,} tasks: {statistics.median(exits):.1f} ms median, max {max(exits):.1f}"
    )
    launch = statistics.median(launches)
    floor = statistics.median(floors)
    report(
        "launch → first agent running",
        f"{launch:.1f} ms median",
        "≤ 2× the floor below, same rounds (issue 22; ORW beside it: bench_peer.py)",
        launch <= 2 * floor,
    )
    report(
        "the floor: `python -c 'import click, orjson'` starting the agent, nothing chosen",
        f"{floor:.1f} ms median; wild's launch is {launch / floor:.2f}× it, "
        f"{launch - floor:.1f} ms more",
        "none: what no Python launcher on click can go below on this machine",
        None,
    )
    exit_p50 = statistics.median(exits)
    report(
        f"exit at {TASKS // 1000}k tasks (agent's last act → process gone)",
        f"{exit_p50:.1f} ms median, max {max(exits):.1f} ms",
        "≤ 100 ms (issue 8)",
        exit_p50 <= 100,
    )


def compile_wild() -> None:
    """Byte-compile wild as an install does: where PYTHONDONTWRITEBYTECODE is set (as on some
    CI machines), every timed process would otherwise compile wild's new modules again."""
    package = Path(wild.__file__).parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)


def main() -> None:
    compile_wild()
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else RUNS
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder).resolve()
        status_figures(tmp, runs)
        loop_figures(tmp, max(5, runs // 2))


if __name__ == "__main__":
    main()
