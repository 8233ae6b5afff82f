"""The core's speed against open-ralph-wiggum (ORW) and the Python floor, in one run (issue 22).

Run: `python bench/bench_peer.py [ROUNDS] [FIGURE…]`, FIGURE one of `gap`, `launch`,
`list-work`, `status` (default: all four). ORW runs from its source with Bun, both set up
once under the git-ignored `bench/.peers/` (no network is used by this script):

    git clone https://github.com/Th0rgal/open-ralph-wiggum bench/.peers/orw
    npm install --prefix bench/.peers bun

Without them the ORW figures are skipped (said so) and every goal that names the Python floor
is still measured. Figures, each timed alternately with what it is compared to, so a busy
machine slows both sides alike:

- gap between iterations, 20 instant iterations (the agent's last act → the next agent's
  first act): wild ≤ 1.5× ORW without its 1 s sleep between iterations (a copy of ralph.ts
  with that one line removed: `ralph-nosleep.ts`);
- launch → first agent running: ≤ 2× the Python floor (`python -c 'import click, orjson'`
  starting the same agent, choosing nothing); ORW shown;
- `wild --list-work --json`, small project: ≤ 1.3× `python -c 'import click, orjson'`;
  ORW's `--list-tasks` shown. The project as a person lists it: its files last written more
  than 2 s before (the window in which wild trusts no kept summary of a file,
  `wild.clock.RACY_NS`), so the queue kept in `work.cache.json` is used; the
  same command right after an edit of tasks.md (the queue selected afresh) is shown too;
- `wild --status` right after an edit of tasks.md: ≤ 1.5× that floor. The project's files
  settled first, as for `--list-work`: the edit is tasks.md's alone.

Every wild command is a fresh `python -m wild` process; wild is byte-compiled first, as an
install is.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from figures import report

import wild
from wild.clock import RACY_NS
from wild.commands.init import init_wild
from wild.paths import WildPaths

ROUNDS = 7
ITERATIONS = 20
PEERS = Path(__file__).resolve().parent / ".peers"
BUN = PEERS / "node_modules" / ".bin" / "bun"
ORW = PEERS / "orw" / "ralph.ts"
ORW_SLEEP = "await new Promise(r => setTimeout(r, 1000));"
IMPORT = [sys.executable, "-c", "import click, orjson"]
FLOOR = (
    "import click, orjson, subprocess, sys; "
    "subprocess.run(['sh', 'agent.sh'], cwd=sys.argv[1], stdout=subprocess.DEVNULL)"
)
# Both loops' agents: a stamp at the first and at the last act, and the promise wild counts as
# a finished task (ORW reads the same words as no promise of its own and goes on).
AGENT = """#!/bin/sh
date +%s%N >> started
echo '<promise>TASK_COMPLETE</promise>'
date +%s%N >> ended
"""
LIMIT_REACHED = 4  # wild stops at --max-iterations with exit 4: its success here


def run(command: list[str], cwd: Path, *, env: dict[str, str] | None = None) -> float:
    """Wall milliseconds of one run of `command`; it must succeed."""
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode not in (0, LIMIT_REACHED):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode()}")
    return elapsed


def stamps(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()]


def gaps(root: Path) -> list[float]:
    """Milliseconds from each agent's last act to the next agent's first act."""
    started, ended = stamps(root / "started"), stamps(root / "ended")
    return [(nxt - end) / 1e6 for end, nxt in zip(ended, started[1:], strict=False)]


class Projects:
    """Fresh project folders: wild keeps machine-wide totals per project path."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.count = 0

    def folder(self, kind: str) -> Path:
        self.count += 1
        root = self.tmp / f"{kind}-{self.count}"
        root.mkdir()
        (root / "agent.sh").write_text(AGENT)
        (root / "agent.sh").chmod(0o755)
        return root

    def wild(self, tasks: int) -> Path:
        root = self.folder("wild")
        paths = WildPaths(root / ".wild")
        init_wild(paths)
        lines = [f"- [ ] [P1] task-{n:03d}: Step {n}\n" for n in range(1, tasks + 1)]
        paths.tasks.write_text("# Tasks\n\n" + "".join(lines))
        return root

    def orw(self, tasks: int) -> Path:
        root = self.folder("orw")
        (root / ".ralph").mkdir()
        lines = [f"- [ ] Step {n}\n" for n in range(1, tasks + 1)]
        (root / ".ralph" / "ralph-tasks.md").write_text("# Ralph Tasks\n\n" + "".join(lines))
        return root


def wild_loop(root: Path, iterations: int) -> list[str]:
    return [
        sys.executable, "-m", "wild", "bench", "--agent-cmd", "sh agent.sh",
        "--max-iterations", str(iterations), "--dir", str(root / ".wild"),
    ]  # fmt: skip


def orw_loop(root: Path, iterations: int, script: Path) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ, RALPH_OPENCODE_BINARY=str(root / "agent.sh"))
    command = [str(BUN), str(script), "bench", "--max-iterations", str(iterations), "--no-commit"]
    return command, env


def orw_without_sleep(tmp: Path) -> Path | None:
    """ralph.ts with its 1 s pause between iterations removed, or None without ORW here."""
    if not (BUN.exists() and ORW.exists()):
        return None
    source = ORW.read_text()
    if source.count(ORW_SLEEP) != 1:
        raise SystemExit(f"{ORW}: its 1 s sleep between iterations was not found once")
    copy = ORW.with_name("ralph-nosleep.ts")  # beside it, so its own imports resolve
    copy.write_text(source.replace(ORW_SLEEP, "// no sleep: bench_peer.py"))
    return copy


def alternate(rounds: int, *sides: Callable[[], float]) -> list[list[float]]:
    """Each side once per round, in turn; one warm-up round is not counted."""
    found: list[list[float]] = [[] for _ in sides]
    for n in range(rounds + 1):
        for side, samples in zip(sides, found, strict=True):
            value = side()
            if n:
                samples.append(value)
    return found


def gap_figure(projects: Projects, rounds: int, orw: Path | None) -> None:
    wild_gaps: list[float] = []
    orw_gaps: list[float] = []

    def wild_side() -> float:
        root = projects.wild(ITERATIONS + 5)
        run(wild_loop(root, ITERATIONS), root)
        wild_gaps.extend(gaps(root))
        return 0.0

    def orw_side() -> float:
        if orw is None:
            return 0.0
        root = projects.orw(3)
        command, env = orw_loop(root, ITERATIONS, orw)
        run(command, root, env=env)
        orw_gaps.extend(gaps(root))
        return 0.0

    alternate(max(2, rounds // 2), wild_side, orw_side)
    wild_p50 = statistics.median(wild_gaps)
    print(f"gap, {ITERATIONS} instant iterations: wild p50 {wild_p50:.1f} ms ({len(wild_gaps)})")
    if orw is None:
        report(
            f"gap between iterations, {ITERATIONS} instant iterations",
            f"wild p50 {wild_p50:.1f} ms; ORW not set up in bench/.peers/",
            "≤ 1.5× ORW without its 1 s sleep, same run (issue 22)",
            None,
        )
        return
    orw_p50 = statistics.median(orw_gaps)
    report(
        f"gap between iterations, {ITERATIONS} instant iterations",
        f"wild p50 {wild_p50:.1f} ms = {wild_p50 / orw_p50:.2f}× ORW without its sleep "
        f"({orw_p50:.1f} ms)",
        "≤ 1.5× ORW without its 1 s sleep, same run (issue 22)",
        wild_p50 <= 1.5 * orw_p50,
    )


def first_stamp(root: Path) -> int:
    return stamps(root / "started")[0]


def launch_figure(projects: Projects, rounds: int, orw: Path | None) -> None:
    def wild_side() -> float:
        root = projects.wild(1)
        t0 = time.time_ns()
        run(wild_loop(root, 1), root)
        return (first_stamp(root) - t0) / 1e6

    def floor_side() -> float:
        root = projects.folder("floor")
        t0 = time.time_ns()
        run([sys.executable, "-c", FLOOR, str(root)], root)
        return (first_stamp(root) - t0) / 1e6

    def orw_side() -> float:
        if orw is None:
            return 0.0
        root = projects.orw(1)
        command, env = orw_loop(root, 1, orw)
        t0 = time.time_ns()
        run(command, root, env=env)
        return (first_stamp(root) - t0) / 1e6

    def interpreter_side() -> float:
        t0 = time.perf_counter_ns()
        run([sys.executable, "-c", "pass"], projects.tmp)
        return (time.perf_counter_ns() - t0) / 1e6

    launches, floors, orws, starts = alternate(
        rounds, wild_side, floor_side, orw_side, interpreter_side
    )
    launch, floor = statistics.median(launches), statistics.median(floors)
    peer = f"; ORW {statistics.median(orws):.1f} ms" if orw else ""
    # Both sides pay the interpreter's own start, most of it `site` (an environment's .pth
    # files: the system Python here imports certifi and pathlib in its own): where it is
    # slow, the ratio reads lower than in a lean venv. Shown so the reader can tell.
    start = statistics.median(starts)
    report(
        "launch → first agent running",
        f"{launch:.1f} ms median = {launch / floor:.2f}× the Python floor ({floor:.1f} ms){peer};"
        f" `python -c pass` {start:.1f} ms",
        "≤ 2× `python -c 'import click, orjson'` starting the agent, same run (issue 22)",
        launch <= 2 * floor,
    )


def list_work_figure(projects: Projects, rounds: int, orw: Path | None) -> None:
    root = projects.wild(5)
    orw_root = projects.orw(5)
    command = [sys.executable, "-m", "wild", "--list-work", "--json", "--dir", str(root / ".wild")]
    orw_command = [str(BUN), str(orw or ORW), "--list-tasks"]

    def orw_side() -> float:
        return run(orw_command, orw_root) if orw else 0.0

    time.sleep(RACY_NS / 1e9 + 0.1)  # the files settled, as a person finds them
    mine, floors, orws = alternate(
        rounds, lambda: run(command, root), lambda: run(IMPORT, root), orw_side
    )
    value, floor = statistics.median(mine), statistics.median(floors)
    peer = f"; ORW --list-tasks {statistics.median(orws):.1f} ms" if orw else ""
    report(
        "`wild --list-work --json`, small project",
        f"{value:.1f} ms median = {value / floor:.2f}× `import click, orjson` "
        f"({floor:.1f} ms){peer}",
        "≤ 1.3× `python -c 'import click, orjson'`, same run (issue 22)",
        value <= 1.3 * floor,
    )
    edited, floors = alternate(rounds, after_edit(command, root), lambda: run(IMPORT, root))
    value, floor = statistics.median(edited), statistics.median(floors)
    report(
        "`wild --list-work --json` right after an edit",
        f"{value:.1f} ms median = {value / floor:.2f}× `import click, orjson` ({floor:.1f} ms)",
        "shown: the kept queue is selected afresh (no goal of its own)",
        None,
    )


def after_edit(command: list[str], root: Path) -> Callable[[], float]:
    """A timing of `command` right after a task is appended to the project's tasks.md."""
    tasks = root / ".wild" / "tasks.md"

    def edited() -> float:
        with tasks.open("a") as handle:
            handle.write("- [ ] [P3] edit: A note\n")
        return run(command, root)

    return edited


def status_figure(projects: Projects, rounds: int, orw: Path | None = None) -> None:
    root = projects.wild(5)
    command = [sys.executable, "-m", "wild", "--status", "--dir", str(root / ".wild")]
    # The project as a person finds it (every file settled, as for `--list-work`), then an
    # edit of tasks.md before each status: the warm-up round keeps the rest of the status.
    time.sleep(RACY_NS / 1e9 + 0.1)
    mine, floors = alternate(rounds, after_edit(command, root), lambda: run(IMPORT, root))
    value, floor = statistics.median(mine), statistics.median(floors)
    report(
        "`wild --status` right after an edit",
        f"{value:.1f} ms median = {value / floor:.2f}× `import click, orjson` ({floor:.1f} ms)",
        "≤ 1.5× `python -c 'import click, orjson'`, same run (issue 22)",
        value <= 1.5 * floor,
    )


FIGURES: dict[str, Callable[[Projects, int, Path | None], None]] = {
    "gap": gap_figure,
    "launch": launch_figure,
    "list-work": list_work_figure,
    "status": status_figure,
}


def main() -> None:
    package = Path(wild.__file__).parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS
    chosen = sys.argv[2:] or list(FIGURES)
    unknown = [name for name in chosen if name not in FIGURES]
    if unknown:
        raise SystemExit(f"unknown figure(s) {unknown}; choose from {list(FIGURES)}")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder).resolve()
        orw = orw_without_sleep(tmp)
        if orw is None:
            print(f"ORW is not set up under {PEERS}: its figures are skipped (see this docstring)")
        projects = Projects(tmp)
        for name in chosen:
            FIGURES[name](projects, rounds, orw)


if __name__ == "__main__":
    main()
