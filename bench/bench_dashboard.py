"""The dashboard in a real headless Chromium: page load at full scale, and push latency.

Run: `python bench/bench_dashboard.py [TRIALS]` (needs `chromium` and `chromium-driver`).

Page load: a project with 10,000 tasks, 1,000 runs (100 metric lines each) and 100,000 alerts
(200 open) and 1,000 iterations; the browser's first paint and the moment the page first
shows the files (a `performance.mark` in app.js), both from navigation start.

Push latency: another process appends an alert to alerts.jsonl; a MutationObserver in the
page stamps `Date.now()` when its text appears, and the writer stamped `time.time()` just
before writing (one host, one wall clock, millisecond resolution). Measured on a small
project and at full scale: each change makes the page read the files again.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dashboard_project import make_full_project
from figures import report, skip

from wild.clock import SystemClock
from wild.paths import WildPaths
from wild.serve.server import Dashboard

WRITER = r"""
import sys, time
from datetime import UTC, datetime
from pathlib import Path
from wild.commands import edits
from wild.paths import WildPaths
paths = WildPaths(Path(sys.argv[1]))
for line in sys.stdin:
    marker = line.strip()
    stamp = time.time()
    edits.raise_alert(paths, severity="critical", source="bench", alert_type="push",
                      description=f"{marker} {stamp!r}", context={}, choices=(),
                      now=datetime.now(UTC))
    print("ok", flush=True)
"""

OBSERVE = """
window.__seen = {};
new MutationObserver(() => {
  for (const node of document.querySelectorAll('#alerts .alert-desc')) {
    const m = node.textContent.match(/^(push-\\d+) /);
    if (m && !(m[1] in window.__seen)) window.__seen[m[1]] = Date.now();
  }
}).observe(document.getElementById('alerts'), {childList: true, subtree: true});
"""


def wait_until(driver: Any, what: str, ready: Callable[[Any], Any]) -> Any:
    """The tests' browser wait, imported once `main` found the test extras installed."""
    from tests.serve.browser import wait_until as wait

    return wait(driver, what, ready)


def _open(driver: Any, board: Dashboard) -> dict[str, float]:
    driver.get(board.url)
    wait_until(
        driver,
        "the first data",
        lambda d: d.execute_script(
            "return performance.getEntriesByName('wild-first-data').length > 0"
        ),
    )
    return dict(
        driver.execute_script("""
        const paint = performance.getEntriesByName('first-contentful-paint')[0];
        return {paint: paint ? paint.startTime : null,
                data: performance.getEntriesByName('wild-first-data')[0].startTime};""")
    )


def page_load(driver: Any, board: Dashboard, trials: int) -> None:
    _open(driver, board)  # the token becomes a cookie; caches warm
    paints, datas = [], []
    for _ in range(trials):
        driver.get(f"http://127.0.0.1:{board.port}/")
        wait_until(
            driver,
            "the first data",
            lambda d: d.execute_script(
                "return performance.getEntriesByName('wild-first-data').length > 0"
            ),
        )
        found = driver.execute_script("""
            const paint = performance.getEntriesByName('first-contentful-paint')[0];
            return [paint ? paint.startTime : null,
                    performance.getEntriesByName('wild-first-data')[0].startTime];""")
        paints.append(found[0])
        datas.append(found[1])
    paint, data = statistics.median(paints), statistics.median(datas)
    print(f"page load, full scale: first paint {paints}, files shown {datas}")
    report(
        "dashboard page load (10k tasks, 1k runs, 100k alerts): first paint",
        f"median {paint:.0f} ms",
        "≤ 300 ms (SPEC §10)",
        paint <= 300,
    )
    report(
        "dashboard page load (10k tasks, 1k runs, 100k alerts): files shown",
        f"median {data:.0f} ms",
        "none (information)",
        None,
    )


def _seen(marker: str) -> Callable[[Any], Any]:
    """When the page's observer saw `marker` (Date.now() in ms), or None yet."""
    script = f"return window.__seen['{marker}'] || null"
    return lambda d: d.execute_script(script)


def push_latency(driver: Any, board: Dashboard, paths: WildPaths, trials: int, label: str) -> None:
    _open(driver, board)
    driver.execute_script(OBSERVE)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(paths.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None and writer.stdout is not None
    latencies = []
    try:
        for n in range(trials):
            marker = f"push-{n}"
            writer.stdin.write(marker + "\n")
            writer.stdin.flush()
            if writer.stdout.readline() != "ok\n":
                raise SystemExit(f"the writer failed (exit {writer.wait()})")
            seen = wait_until(driver, marker, _seen(marker))
            text = paths.alerts.read_bytes().rsplit(marker.encode() + b" ", 1)[1]
            stamp = float(text.split(b'"', 1)[0])
            latencies.append(seen - stamp * 1000)
            time.sleep(0.05)  # let the page settle between trials
    finally:
        writer.stdin.close()
        writer.wait()
    latencies.sort()
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))]
    print(f"push latency, {label}: {[round(x) for x in latencies]}")
    report(
        f"dashboard push: alert appended → shown in the page ({label})",
        f"p50 {p50:.0f} ms, p99 {p99:.0f} ms",
        "p50 ≤ 100 ms, p99 ≤ 500 ms (SPEC §10)",
        p50 <= 100 and p99 <= 500,
    )


def browser_missing() -> str | None:
    """Why the browser cannot be driven here (what to install), or None."""
    try:  # the browser helpers live with the tests, which need the test extras (pytest)
        from tests.serve.browser import missing
    except ImportError as error:
        return f"{error.name or error} is not installed: pip install -e '.[test]'"
    return missing()


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    reason = browser_missing()
    if reason is not None:
        skip(reason)
    from tests.serve.browser import chrome  # the test extras: checked above

    with tempfile.TemporaryDirectory() as tmp:
        small = make_full_project(
            Path(tmp) / "small", tasks=20, runs=4, alerts=20, open_alerts=5, iterations=10
        )
        full = make_full_project(Path(tmp) / "full")
        driver = chrome()
        try:
            with Dashboard(small, SystemClock(), port=0) as board:
                push_latency(driver, board, small, trials, "small project")
            with Dashboard(full, SystemClock(), port=0) as board:
                page_load(driver, board, max(5, trials // 3))
                push_latency(driver, board, full, max(10, trials // 2), "full scale")
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
