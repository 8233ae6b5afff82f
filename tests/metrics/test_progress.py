"""A long sweep's progress in the loop's terminal: one line per sweep (done/total, running,
failed, ETA), redrawn in place on a TTY and printed as plain lines otherwise."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import UTC, datetime

from wild.loop.research_step import sweep_eta_s
from wild.output import Console
from wild.parsers.runs import RunRecord, RunStatus

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def _run(n: int, status: RunStatus, start: str | None = None, end: str | None = None) -> RunRecord:
    run = RunRecord(f"s1-00{n}", "s1", {}, "true", status)
    return replace(run, started_at=start, ended_at=end)


def test_sweep_eta_from_finished_runs_and_what_runs_now() -> None:
    runs = [
        _run(1, "finished", "2026-11-27T11:00:00Z", "2026-11-27T11:10:00Z"),
        _run(2, "finished", "2026-11-27T11:10:00Z", "2026-11-27T11:20:00Z"),
        _run(3, "running", "2026-11-27T11:56:00Z"),
        _run(4, "running", "2026-11-27T11:58:00Z"),
        _run(5, "queued"),
        _run(6, "queued"),
        _run(7, "queued"),
    ]
    # A run takes 10 minutes: the running ones need up to 8 more; 3 queued, 2 at once: 2 waves.
    assert sweep_eta_s(runs, NOW) == 8 * 60 + 2 * 600
    assert sweep_eta_s(runs[2:], NOW) is None  # nothing finished yet: no estimate


def test_status_lines_are_redrawn_in_place_on_a_tty_one_per_sweep() -> None:
    screen = io.StringIO()
    printed: list[str] = []
    console = Console(printed.append, screen, tty=True)
    console.status("🏃 sweep s1: 1/4 done")
    console.status("🏃 sweep s2: 0/2 done")
    console.status("🏃 sweep s1: 2/4 done")
    assert screen.getvalue() == (
        "\x1b[2K🏃 sweep s1: 1/4 done"
        "\r\x1b[2K🏃 sweep s1: 1/4 done\n\x1b[2K🏃 sweep s2: 0/2 done"
        "\r\x1b[1A\x1b[2K🏃 sweep s1: 2/4 done\n\x1b[2K🏃 sweep s2: 0/2 done"
    )
    console("🤖 Iteration 3")
    assert screen.getvalue().endswith("\n") and printed == ["🤖 Iteration 3"]


def test_status_lines_are_plain_lines_when_not_a_tty() -> None:
    screen = io.StringIO()
    printed: list[str] = []
    console = Console(printed.append, screen, tty=False)
    console.status("🏃 sweep s1: 1/4 done")
    console.status("🏃 sweep s1: 2/4 done")
    assert printed == ["🏃 sweep s1: 1/4 done", "🏃 sweep s1: 2/4 done"] and not screen.getvalue()
