"""Low disk under `.wild/`: the pure decision on statvfs figures, the once-per-spell watch on
the real disk, and the real loop saying it (one line, one alert) while its agent runs."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.test_loop import TASK, project, run, say, script
from wild.loop.disk_space import DEFAULT_MIN_FREE, MIN_FREE_ENV, DiskSpace, DiskWatch, low_disk
from wild.loop.disk_space import min_free as min_free_of

HUGE = str(10**18)  # more than any disk has free: the real disk is "low"


def test_low_is_below_the_threshold_and_says_what_to_do(tmp_path: Path) -> None:
    assert low_disk(DiskSpace(free=2_000_000_000, total=10**11), tmp_path, 10**9) is None
    said = low_disk(DiskSpace(free=300_000_000, total=10**11), tmp_path, 10**9)
    assert said == (
        f"{tmp_path}: only 300 MB free on its disk (of 100000 MB; WILD_MIN_FREE_BYTES asks for"
        " 1000 MB): wild's logs, state and runs may soon fail to be written. Free some space;"
        " a flooding log in logs/ or runs/ is capped at WILD_MAX_LOG_BYTES each"
    )


@pytest.mark.parametrize(
    ("value", "threshold"), [("", DEFAULT_MIN_FREE), ("x", DEFAULT_MIN_FREE), ("5_000", 5000)]
)
def test_the_threshold_comes_from_the_environment(value: str, threshold: int) -> None:
    assert min_free_of({MIN_FREE_ENV: value}) == threshold


def test_the_watch_says_it_once_per_low_spell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines: list[str] = []
    alerts: list[str] = []
    watch = DiskWatch(tmp_path, lines.append, alerts.append)
    monkeypatch.setenv(MIN_FREE_ENV, HUGE)
    watch.check()
    watch.check()
    monkeypatch.setenv(MIN_FREE_ENV, "0")  # room again
    watch.check()
    monkeypatch.setenv(MIN_FREE_ENV, HUGE)
    watch.check()
    assert len(lines) == len(alerts) == 2
    assert lines[0] == f"⚠️  {alerts[0]}" and f"{tmp_path}: only " in alerts[0]


def test_the_loop_warns_while_its_agent_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    resolved = "<promise>ALERT_RESOLVED</promise>"  # the agent may free space: it is asked
    script(monkeypatch, tmp_path, [{"sleep": 0.5}, *say(TASK)], say(resolved))
    monkeypatch.setenv(MIN_FREE_ENV, HUGE)
    result, out = run(paths, heartbeat_s=0.05, max_iterations=3)
    assert result.reason == "complete", out
    assert len([line for line in out if line.startswith("⚠️") and "MB free on its" in line]) == 1, (
        out
    )
    raised = [orjson.loads(line) for line in paths.alerts.read_bytes().splitlines()]
    assert len({a["id"] for a in raised if a.get("type") == "disk-low"}) == 1
