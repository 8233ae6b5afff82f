"""Idle cost: the folder watcher plus a blocked `wait_for_work`, with 100 waiting barriers on file.

Run: `python bench/bench_idle.py [SECONDS]` (default 20). CPU time comes from
`getrusage(RUSAGE_SELF)`, which covers every thread (the observer's included); the wake-up
count comes from the Waker, and voluntary context switches show any hidden tick.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

from figures import report

from wild.store.self_writes import SelfWrites
from wild.wake import TIMEOUT, FolderWatcher, Waker

BARRIERS = 100


def barriers_md(count: int) -> str:
    """`count` command-check barriers, all checked just now with a 60 s interval: none due."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    blocks = [
        f"## [WAITING] barrier-{n:03d}\n"
        "- Type: command-check\n"
        f"- Check: test -f results/run-{n:03d}.done\n"
        "- Interval: 60s\n"
        f"- Created: {now}\n"
        f"- Last check: {now}\n"
        '- Result: "not yet"\n'
        f"- Blocks: task-{n:03d}\n"
        for n in range(count)
    ]
    return "# Wild Loop Barriers\n\n" + "\n".join(blocks)


def _cpu_s(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".wild"
        root.mkdir()
        (root / "barriers.md").write_text(barriers_md(BARRIERS))
        for name in ("tasks.md", "alerts.jsonl", "human.md"):
            (root / name).write_bytes(b"")
        waker = Waker()
        with FolderWatcher(root, waker, SelfWrites()) as watcher:
            time.sleep(0.5)  # let start-up work settle outside the measured window
            before, wall0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
            reasons = watcher.wait_for_work(timeout=seconds)
            after, wall = resource.getrusage(resource.RUSAGE_SELF), time.monotonic() - wall0
    if reasons != [TIMEOUT]:
        raise SystemExit(f"woke during the idle window: {reasons}")
    cpu = _cpu_s(after) - _cpu_s(before)
    switches = after.ru_nvcsw - before.ru_nvcsw
    print(f"idle {wall:.1f} s: watcher + wait_for_work, {BARRIERS} waiting barriers (60 s)")
    print(f"CPU            {cpu * 1000:.2f} ms = {100 * cpu / wall:.4f} % of a core")
    print(f"CPU per hour   {3600 * cpu / wall:.2f} s")
    print(f"wake-ups       {waker.wakeups} (events {waker.received}, sleeps {waker.sleeps})")
    print(f"vol. switches  {switches} ({switches / wall:.2f}/s, all threads)")
    share = 100 * cpu / wall
    report(
        f"idle CPU, {BARRIERS} waiting barriers (60 s intervals)",
        f"{share:.3f} % of a core over {wall:.0f} s, {waker.wakeups} wake-ups",
        "≤ 0.1 % of a core, no wake-ups (SPEC §10)",
        share <= 0.1 and waker.wakeups == 0,
    )


if __name__ == "__main__":
    main()
