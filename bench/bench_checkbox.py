"""Benchmark: one checkbox update in a 10,000-task tasks.md through the crash-safe write path.

Run: `python bench/bench_checkbox.py [RUNS] [FOLDER]`. Each update is what the loop does:
`store.update_text` (wild's lock, read, compare-and-swap re-check, temp file + fsync +
os.replace + folder fsync) applying `tasks.set_status`. Target (SPEC §10): ≤ 20 ms.
FOLDER (default: the system temp folder) should sit on the disk `.wild/` lives on, since
fsync costs what that disk costs.
"""

from __future__ import annotations

import math
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from bench_select import tasks_text
from figures import report

from wild.parsers import tasks as tasks_md
from wild.parsers.tasks import TaskStatus
from wild.store.files import encode, read_text, update_text

RUNS = 200
WARMUP = 5


def percentile(samples: list[float], fraction: float) -> float:
    """Nearest-rank percentile: the smallest sample with `fraction` of samples at or below it."""
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else RUNS
    parent = sys.argv[2] if len(sys.argv) > 2 else None
    text = tasks_text()
    target = "task-09999"  # near the end, so the edit cannot stop early
    with tempfile.TemporaryDirectory(dir=parent, prefix="bench-checkbox-") as folder:
        path, lock = Path(folder) / "tasks.md", Path(folder) / ".lock"
        path.write_bytes(encode(text))
        samples: list[float] = []
        status: TaskStatus = "todo"
        for n in range(WARMUP + runs):
            # Alternate, so every update really changes the file and writes it.
            status = "complete" if n % 2 == 0 else "todo"
            start = time.perf_counter()
            update_text(path, partial(tasks_md.set_status, task_id=target, status=status), lock)
            elapsed = (time.perf_counter() - start) * 1000
            if n >= WARMUP:
                samples.append(elapsed)
        final = tasks_md.find(tasks_md.parse(read_text(path)), target)
        assert final is not None and final.status == status
        changed = sum(a != b for a, b in zip(read_text(path), text, strict=True))
        print(f"tasks.md: {text.count(chr(10)):,} lines, {len(text.encode()):,} bytes, in {folder}")
        print(f"characters that differ from the original after {runs} updates: {changed}")
    print(f"one checkbox update (update_text + set_status, fsync included), {runs} runs:")
    print(
        f"  median {statistics.median(samples):.1f} ms, p99 {percentile(samples, 0.99):.1f} ms, "
        f"min {min(samples):.1f} ms, max {max(samples):.1f} ms  (target ≤ 20)"
    )
    median = statistics.median(samples)
    report(
        "one checkbox update in a 10,000-task file, crash-safe",
        f"median {median:.1f} ms, p99 {percentile(samples, 0.99):.1f} ms",
        "≤ 20 ms, median (SPEC §10)",
        median <= 20,
    )


if __name__ == "__main__":
    main()
