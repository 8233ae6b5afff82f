"""Benchmark: read new alerts after one append to a 1,000,000-line alerts.jsonl vs a full reload.

Run from the repository root: `PYTHONPATH=. python bench/bench_alerts.py [lines]`.
Target (SPEC §10): incremental ≤ 1 ms and ≥ 1000× faster than a full reload.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson
from figures import report

from wild.parsers.alerts import AlertIndex, make_alert
from wild.parsers.alerts_file import AlertCursor
from wild.store.alerts_log import append_alert, read_new

LINES = 1_000_000
FULL_RUNS = 3
INCREMENTAL_RUNS = 201
NOW = datetime(2026, 2, 8, 10, 45, 23, tzinfo=UTC)


def generate(path: Path, count: int) -> None:
    """Seed-shaped lines: every alert is raised, then most are worked on and resolved."""
    template = (
        '{{"id":"alert-{n:07d}","timestamp":"2026-02-08T10:45:23Z","severity":"{sev}",'
        '"source":"training-job-{job}","type":"OOM","description":"GPU memory exhausted '
        '(24GB/24GB) during batch {n}","status":"{status}","context":{{"batch_size":64,'
        '"model":"llama-7b","gpu":"A100-40GB"}}}}\n'
    )
    severities = ("critical", "warning", "info")
    statuses = ("pending", "in-progress", "resolved")
    with path.open("w", encoding="utf-8") as out:
        batch = []
        for i in range(count):
            n, step = divmod(i, 3)
            status = statuses[step] if n % 5 else "pending"
            batch.append(template.format(n=n, sev=severities[n % 3], job=n % 97, status=status))
            if len(batch) == 10_000:
                out.write("".join(batch))
                batch.clear()
        out.write("".join(batch))


def full_reload_s(path: Path) -> float:
    samples = []
    for _ in range(FULL_RUNS):
        start = time.perf_counter()
        AlertIndex(read_new(path, None).entries).active()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def incremental_s(path: Path) -> tuple[float, float]:
    """Median (append + read, read alone) from a cursor stored as state.json would hold it."""
    stored = orjson.dumps(read_new(path, None).cursor.to_json())
    both, reads = [], []
    for n in range(INCREMENTAL_RUNS):
        record = make_alert(
            now=NOW, severity="warning", source="bench", type="tick", description=f"append {n}"
        )
        start = time.perf_counter()
        append_alert(path, record)
        middle = time.perf_counter()
        result = read_new(path, AlertCursor.from_json(orjson.loads(stored)))
        end = time.perf_counter()
        assert len(result.entries) == 1 and not result.reset and not result.problems
        stored = orjson.dumps(result.cursor.to_json())
        both.append(end - start)
        reads.append(end - middle)
    return statistics.median(both), statistics.median(reads)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else LINES
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "alerts.jsonl"
        generate(path, count)
        size_mb = path.stat().st_size / 1e6
        full = full_reload_s(path)
        both, read = incremental_s(path)
    print(f"alerts.jsonl: {count:,} lines, {size_mb:.0f} MB")
    print(f"full reload (read_new from 0 + index): {full * 1000:.0f} ms median of {FULL_RUNS}")
    print(f"incremental read_new after 1 append: {read * 1000:.3f} ms median of {INCREMENTAL_RUNS}")
    print(f"append + incremental read_new:       {both * 1000:.3f} ms median")
    print(
        f"ratio full / incremental read: {full / read:,.0f}x; full / (append + read): "
        f"{full / both:,.0f}x"
    )
    report(
        f"read new alerts after 1 append to a {count:,}-line log",
        f"{read * 1000:.3f} ms median",
        "≤ 1 ms (SPEC §10)",
        read <= 0.001,
    )
    report(
        "… against a full reload in the same run",
        f"{full / read:,.0f}× (full reload {full * 1000:.0f} ms)",
        "≥ 1000× (SPEC §10)",
        full / read >= 1000,
    )


if __name__ == "__main__":
    main()
