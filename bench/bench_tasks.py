"""Benchmark: parse a 10,000-task tasks.md, parse it again after one checkbox edit (as the
loop does after its own edits, with `reparse`), and apply one set_status edit written atomically.

Run: `python bench/bench_tasks.py`.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from figures import report

from wild.parsers.tasks import parse, reparse, set_status
from wild.store.files import atomic_write, encode

TASKS = 10_000
RUNS = 21


def generate(count: int = TASKS) -> str:
    """A plausible big file: priorities, dependencies, barriers, subtasks and notes."""
    out = ["# Wild Loop Tasks\n", "\n"]
    for n in range(1, count + 1):
        box = "x" if n < count // 2 else " "
        out.append(f"- [{box}] [P{n % 3 + 1}] task-{n:05d}: Step {n} of the long experiment\n")
        if n > 1:
            out.append(f"  - dependsOn: task-{n - 1:05d}\n")
        if n % 10 == 0:
            out.append(f"  - blockedBy: barrier-{n}\n")
            out.append("  - [ ] Load checkpoint files\n")
            out.append("  - [x] Compute metrics\n")
        if n % 50 == 0:
            out.append("  Free note: compare with the baseline run.\n")
    return "".join(out)


def timings_ms(action: Callable[[], object]) -> str:
    """Median and best of RUNS wall-clock runs (best shows the cost on a machine not shared)."""
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return f"{statistics.median(samples):.1f} ms median (best {min(samples):.1f} ms)"


def main() -> None:
    text = generate()
    target = f"task-{TASKS - 1:05d}"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tasks.md"
        atomic_write(path, encode(text))

        def edit() -> None:
            atomic_write(path, encode(set_status(text, target, "complete")))

        lines = text.count("\n")
        parsed = timings_ms(lambda: parse(text))
        print(f"parse {TASKS} tasks ({lines} lines): {parsed}")
        report(
            f"parse {TASKS:,} tasks alone", parsed, "none of its own: part of parse + select", None
        )
        doc = parse(text)
        ticked = set_status(text, target, "complete")
        again = timings_ms(lambda: reparse(doc, ticked))
        print(f"parse again after one checkbox edit (reparse): {again}")
        print(f"set_status + atomic_write: {timings_ms(edit)}")


if __name__ == "__main__":
    main()
