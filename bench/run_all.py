"""Run every `bench/bench_*.py` one after another, each capped in time, and gate on the figures.

Run: `python bench/run_all.py [--timeout SECONDS] [NAME ...]` (NAME: `bench_alerts` or
`alerts`, to run only some). Scripts run one at a time, in their own process group, so they
do not skew each other's timings and a runaway one is killed with all its children.

Each script reports its figures (`bench/figures.py`): what it measured, the goal (SPEC §10's
targets and issue 8's table) and whether the goal is met. The exit status is 1 when any
figure misses its goal, when a script fails, or when a script reports no figure at all
(a figure nobody measured is not a figure met); 0 only when every goal is met. A script that
cannot measure on this machine (`bench_dashboard` without a browser or the test extras) exits
77 saying what to install: it is listed as skipped, at the end too, and fails nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from figures import SKIPPED, Figure, parse_figures, skip_reason

from wild.process import run_captured

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
DEFAULT_TIMEOUT_S = 1200.0  # bench_alerts builds a 1,000,000-line log: minutes, not hours


@dataclass(frozen=True)
class Outcome:
    """How one benchmark script ended."""

    name: str
    status: str  # "ok", "skipped", "exit N" or "timed out"
    seconds: float
    output: str
    figures: tuple[Figure, ...]


def scripts(names: list[str]) -> list[Path]:
    """The bench scripts to run, in name order; `names` may omit the `bench_` prefix."""
    found = sorted(BENCH_DIR.glob("bench_*.py"))
    if not names:
        return found
    wanted = {name if name.startswith("bench_") else f"bench_{name}" for name in names}
    wanted = {name.removesuffix(".py") for name in wanted}
    unknown = wanted - {path.stem for path in found}
    if unknown:
        known = ", ".join(path.stem for path in found)
        raise SystemExit(f"no benchmark named {', '.join(sorted(unknown))}; known: {known}")
    return [path for path in found if path.stem in wanted]


def run(script: Path, timeout_s: float) -> Outcome:
    # The scripts import this checkout's `wild`, even if another copy is installed.
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
    }
    result = run_captured([sys.executable, str(script)], timeout_s=timeout_s, cwd=ROOT, env=env)
    if result.timed_out:
        status = "timed out"
    elif result.exit_code == 0:
        status = "ok"
    elif result.exit_code == SKIPPED:  # it cannot measure here, and said what to install
        status = "skipped"
    else:
        status = f"exit {result.exit_code}"
    figures = tuple(parse_figures(result.output))
    return Outcome(script.stem, status, result.duration_s, result.output, figures)


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}, load average {load}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds each script may take (default {DEFAULT_TIMEOUT_S:.0f})",
    )
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')} on {machine()}", flush=True)
    outcomes = []
    for script in scripts(args.names):
        print(f"\n## {script.stem}", flush=True)
        outcome = run(script, args.timeout)
        print(outcome.output.rstrip(), flush=True)
        outcomes.append(outcome)
    return summarize(outcomes)


def _verdict(ok: bool | None) -> str:
    return {True: "ok", False: "MISSED", None: "info"}[ok]


def summarize(outcomes: list[Outcome]) -> int:
    """Print every figure and each script's end; 1 when anything missed or failed."""
    print("\n## figures")
    rows = [(o.name, f) for o in outcomes for f in o.figures]
    for name, f in rows:
        print(f"{_verdict(f.ok):<6}  {f.figure}: {f.value} (goal: {f.goal}) [{name}]")
    print("\n## scripts")
    width = max((len(o.name) for o in outcomes), default=5)
    for outcome in outcomes:
        print(f"{outcome.name:<{width}}  {outcome.status:<9}  {outcome.seconds:7.1f} s")
    missed = [f.figure for _, f in rows if f.ok is False]
    failed = [o.name for o in outcomes if o.status not in ("ok", "skipped")]
    skipped = [f"{o.name} ({skip_reason(o.output)})" for o in outcomes if o.status == "skipped"]
    silent = [o.name for o in outcomes if o.status == "ok" and not o.figures]
    for what, names in (
        ("figures missed their goal", missed),
        ("scripts failed", failed),
        ("scripts reported no figure", silent),
        ("scripts skipped, their figures not measured", skipped),
    ):
        if names:
            print(f"\n{len(names)} {what}: {'; '.join(names)}")
    if missed or failed or silent:
        return 1
    print(f"\nall {sum(1 for _, f in rows if f.ok)} figures with a goal met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
