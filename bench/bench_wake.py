"""Wake latency: another process appends an alert or rename-saves human.md → the loop wakes.

Run: `python bench/bench_wake.py [TRIALS]`. The writer is a separate, long-lived process that
takes `time.monotonic_ns()` (CLOCK_MONOTONIC, shared by all processes on the host) just before
it writes and puts it inside what it writes, so the watcher needs no side channel.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures import report

from wild.store.self_writes import SelfWrites
from wild.wake import TIMEOUT, FolderWatcher, Waker, WakeReason

CASES = (("append", "append to alerts.jsonl"), ("save", "rename-save human.md"))
WARMUP = 10
SPACING_S = 0.01  # quiet time between trials; also drains any trailing event

# Reads one command a line: "append" or "save"; each writes a fresh t0 into the file.
WRITER = r"""
import os, sys, time
root = sys.argv[1]
alerts = os.path.join(root, "alerts.jsonl")
human = os.path.join(root, "human.md")
for n, line in enumerate(sys.stdin):
    t0 = time.monotonic_ns()
    if line.strip() == "append":
        fd = os.open(alerts, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, b'{"t0": %d}\n' % t0)
        os.close(fd)
    else:
        tmp = os.path.join(root, ".human.md.%d.tmp" % n)
        with open(tmp, "wb") as handle:
            handle.write(b"## t0 %d\nplease look at run 3\n" % t0)
        os.replace(tmp, human)
"""


def _t0_of(kind: str, root: Path) -> int:
    if kind == "append":
        last = (root / "alerts.jsonl").read_bytes().splitlines()[-1]
        return int(last.split(b":")[1].strip(b" }"))
    return int((root / "human.md").read_bytes().split()[2])


def _drain(watcher: FolderWatcher) -> None:
    while watcher.wait_for_work(timeout=SPACING_S) != [TIMEOUT]:
        pass


def measure(kind: str, trials: int, root: Path, watcher: FolderWatcher) -> list[float]:
    """Latencies in ms of `trials` writes of one kind, warm-up dropped."""
    expected = WakeReason("file", str(root / ("alerts.jsonl" if kind == "append" else "human.md")))
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root)], stdin=subprocess.PIPE, text=True, bufsize=1
    )
    assert writer.stdin is not None
    latencies: list[float] = []
    try:
        for _ in range(trials + WARMUP):
            _drain(watcher)
            writer.stdin.write(kind + "\n")
            reasons = watcher.wait_for_work(timeout=5.0)
            woke = time.monotonic_ns()
            if expected not in reasons:
                raise SystemExit(f"{kind}: expected {expected}, woke with {reasons}")
            latencies.append((woke - _t0_of(kind, root)) / 1e6)
    finally:
        writer.stdin.close()
        writer.wait()
    return latencies[WARMUP:]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve() / ".wild"
        root.mkdir()
        for name in ("tasks.md", "alerts.jsonl", "human.md", "barriers.md"):
            (root / name).write_bytes(b"")
        with FolderWatcher(root, Waker(), SelfWrites()) as watcher:
            print(f"wake latency, writer process → wait_for_work returns ({trials} trials each)")
            print(f"{'case':<28}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}")
            for kind, label in CASES:
                got = measure(kind, trials, root, watcher)
                p50, p99 = statistics.median(got), _percentile(got, 0.99)
                print(
                    f"{label:<28}{p50:>9.3f}{_percentile(got, 0.9):>9.3f}"
                    f"{p99:>9.3f}{max(got):>9.3f}"
                )
                report(
                    f"wake latency: {label} → loop awake",
                    f"p50 {p50:.2f} ms, p99 {p99:.2f} ms",
                    "p50 ≤ 5 ms, p99 ≤ 20 ms (SPEC §10)",
                    p50 <= 5 and p99 <= 20,
                )


if __name__ == "__main__":
    main()
