"""`wild --status` tells the truth about the loop (is it still that process?) and shows what
matters: open questions, the current work and its age, the agent's pid, time, cost, tokens."""

from __future__ import annotations

import itertools
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from wild.clock import SystemClock
from wild.commands.init import init_wild
from wild.commands.status import status_data
from wild.commands.status_text import format_status, span
from wild.commands.watch import watch_status
from wild.liveness import Liveness, probe
from wild.parsers import human as human_md
from wild.parsers.process_id import ProcessId
from wild.parsers.state import CurrentWork, LoopState
from wild.paths import WildPaths
from wild.store.state_file import save_state
from wild.wake import SETTLE_MAX_S, SETTLE_QUIET_S
from wild.workspace import load_workspace
from wild.workspace_view import Workspace

NOW = datetime(2026, 2, 8, 12, 0, tzinfo=UTC)
LOOP = ProcessId(4242, "lab-1", 98765, "boot-a", "2026-02-08T11:48:00Z")
AGENT = ProcessId(4300, "lab-1", 99000, "boot-a", "2026-02-08T11:58:58Z")
STATE = LoopState(
    active=True,
    iteration=7,
    started_at="2026-02-08T09:55:00Z",
    prompt="Ship the model",
    current_work=CurrentWork("task", "task-002", "2026-02-08T11:56:48Z", attempt=2),
    total_cost_usd=1.2345,
    total_tokens=52000,
    loop_process=LOOP,
    agent_process=AGENT,
)


def judge(verdicts: dict[int, Liveness]) -> Any:
    return lambda process: verdicts[process.pid]


@pytest.fixture
def paths(tmp_path: Path) -> WildPaths:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    return paths


def status(
    paths: WildPaths, state: LoopState, verdicts: dict[int, Liveness]
) -> tuple[dict[str, Any], list[str]]:
    save_state(paths.state, state)
    written = (NOW - timedelta(minutes=3, seconds=5)).timestamp()  # the loop's last write
    os.utime(paths.state, (written, written))
    data = status_data(load_workspace(paths, NOW), NOW, judge(verdicts))
    return data, format_status(data).splitlines()


def test_a_running_loop_shows_its_pid_agent_work_time_cost_and_tokens(paths: WildPaths) -> None:
    data, lines = status(paths, STATE, {4242: "running", 4300: "running"})
    assert lines[1:5] == [
        "Loop: running (pid 4242, for 12m 00s; iteration 7)",
        "Agent: pid 4300, running for 1m 02s",
        "Work: task task-002 (attempt 2), for 3m 12s",
        "Spent: 2h 05m since 2026-02-08T09:55:00Z, $1.23, 52,000 tokens",
    ]
    assert data["loop"] == {
        "active": True,
        "state": "running",
        "pid": 4242,
        "host": "lab-1",
        "pidReused": False,
        "startedAt": "2026-02-08T11:48:00Z",
        "runningForS": 720,
        "lastSeen": None,
        "lastSeenAgoS": None,
        "iteration": 7,
        "paused": False,
        "goal": "Ship the model",
    }
    assert data["agent"] == {
        "pid": 4300,
        "startedAt": "2026-02-08T11:58:58Z",
        "runningForS": 62,
        "orphaned": False,
    }
    assert data["work"] == {
        "type": "task",
        "id": "task-002",
        "attempt": 2,
        "startedAt": "2026-02-08T11:56:48Z",
        "runningForS": 192,
    }
    assert data["totals"] == {
        "since": "2026-02-08T09:55:00Z",
        "elapsedS": 7500,
        "costUsd": 1.2345,
        "tokens": 52000,
    }


def test_a_killed_loop_is_not_running_since_it_was_last_seen(paths: WildPaths) -> None:
    data, lines = status(paths, STATE, {4242: "gone", 4300: "gone"})
    assert lines[1:4] == [
        "Loop: not running (last seen 2026-02-08T11:56:55Z, 3m 05s ago;"
        " killed or crashed: its pid 4242 is gone; iteration 7)",
        "Work: task task-002 (attempt 2), interrupted; the next loop resumes it",
        # time stops at the last sign of life; cost and tokens stay
        "Spent: 2h 01m since 2026-02-08T09:55:00Z, $1.23, 52,000 tokens",
    ]
    assert data["loop"]["active"] is False
    assert data["loop"]["state"] == "died"
    assert data["loop"]["lastSeen"] == "2026-02-08T11:56:55Z"
    assert data["agent"] is None


def test_a_pid_taken_by_another_process_is_not_the_loop(paths: WildPaths) -> None:
    data, lines = status(paths, STATE, {4242: "reused", 4300: "gone"})
    assert lines[1] == (
        "Loop: not running (last seen 2026-02-08T11:56:55Z, 3m 05s ago;"
        " killed or crashed: its pid 4242 is another process now; iteration 7)"
    )
    assert (data["loop"]["active"], data["loop"]["pidReused"]) == (False, True)


def test_an_agent_left_running_by_a_killed_loop_is_pointed_out(paths: WildPaths) -> None:
    data, lines = status(paths, STATE, {4242: "gone", 4300: "running"})
    assert lines[2] == "Agent: pid 4300 still runs without its loop; stop it with `kill -- -4300`"
    assert data["agent"] == {"pid": 4300, "startedAt": AGENT.started_at, "orphaned": True}


def test_a_loop_on_another_host_is_not_judged_from_here(paths: WildPaths) -> None:
    data, lines = status(paths, STATE, {4242: "elsewhere", 4300: "elsewhere"})
    assert lines[1] == "Loop: running on lab-1 (pid 4242, not checked from here; iteration 7)"
    assert data["loop"]["state"] == "elsewhere"


def test_a_loop_that_ended_shows_when_it_was_last_seen(paths: WildPaths) -> None:
    ended = LoopState(
        iteration=3, started_at="2026-02-08T11:00:00Z", loop_process=LOOP, total_tokens=900
    )
    data, lines = status(paths, ended, {})  # nothing to judge: it said it ended
    assert lines[1:3] == [
        "Loop: not running (last seen 2026-02-08T11:56:55Z, 3m 05s ago; iteration 3)",
        "Spent: 56m 55s since 2026-02-08T11:00:00Z, $0.00, 900 tokens",
    ]
    assert (data["loop"]["state"], data["agent"], data["work"]) == ("stopped", None, None)


def test_an_active_state_without_a_pid_cannot_be_checked(paths: WildPaths) -> None:
    data, lines = status(paths, LoopState(active=True, iteration=2), {})
    assert lines[1] == "Loop: running? (no pid recorded, cannot check; iteration 2)"
    assert data["loop"]["state"] == "unknown"


def test_open_questions_to_the_human_are_listed(paths: WildPaths) -> None:
    text = human_md.append_question(
        paths.human.read_text(),
        timestamp="2026-02-08T11:30:00Z",
        related="alert-001",
        title="Reduce the batch size?",
        body="The job ran out of memory twice.",
    )
    text = human_md.append_question(
        text, timestamp="2026-02-08T11:40:00Z", related=None, title="Which dataset?", body=""
    )
    paths.human.write_text(text)
    data, lines = status(paths, LoopState(), {})
    assert data["questions"] == [
        {
            "key": "2026-02-08T11:30:00Z",
            "related": "alert-001",
            "question": "Reduce the batch size?",
        },
        {"key": "2026-02-08T11:40:00Z", "related": None, "question": "Which dataset?"},
    ]
    at = lines.index("Questions for you (2 open; answer with wild --human-input):")
    assert lines[at + 1 : at + 3] == [
        "  2026-02-08T11:30:00Z (alert-001): Reduce the batch size?",
        "  2026-02-08T11:40:00Z: Which dataset?",
    ]


def test_problems_in_the_files_are_shown_with_file_and_line(paths: WildPaths) -> None:
    paths.tasks.write_text("# Tasks\n- [?] [P2] task-003: odd checkbox\n")
    data, lines = status(paths, LoopState(), {})
    assert len(data["problems"]) == 1
    assert data["problems"][0].startswith(f"{paths.tasks}:2: ")
    assert lines[-2:] == ["Problems (1):", f"  {data['problems'][0]}"]


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0, "0s"), (59, "59s"), (60, "1m 00s"), (3599, "59m 59s"), (3600, "1h 00m"), (90000, "1d 1h")],
)
def test_span_reads_at_a_glance(seconds: int, shown: str) -> None:
    assert span(seconds) == shown


# -- wild --status --watch -----------------------------------------------------------------

REDRAW_WAIT_S = 5.0  # a redraw later than this after its event fails the test


class Screen:
    """`watch_status` run on a thread; every redraw lands here with the moment it happened."""

    def __init__(self, paths: WildPaths, max_updates: int) -> None:
        self.draws: queue.Queue[tuple[float, str]] = queue.Queue()
        self.thread = threading.Thread(
            target=watch_status,
            args=(paths, SystemClock(), self._show),
            kwargs={"max_updates": max_updates},
            daemon=True,  # a watch that never redraws must not hang the test run
        )
        self.thread.start()

    def _show(self, ws: Workspace) -> None:
        self.draws.put((time.monotonic(), format_status(status_data(ws))))

    def next(self) -> tuple[float, str]:
        try:
            return self.draws.get(timeout=REDRAW_WAIT_S)
        except queue.Empty:
            raise AssertionError(f"no redraw within {REDRAW_WAIT_S} s") from None


def test_watch_redraws_when_the_loop_writes_its_state(paths: WildPaths) -> None:
    screen = Screen(paths, max_updates=2)
    assert "Loop: not running (iteration 0)" in screen.next()[1]
    time.sleep(0.2)  # let the observer settle; a write before it watches is not an event
    written = time.monotonic()
    save_state(paths.state, replace(LoopState(), iteration=5))  # atomic: a rename event
    at, text = screen.next()
    assert "(iteration 5)" in text
    assert at - written < REDRAW_WAIT_S
    screen.thread.join(REDRAW_WAIT_S)
    assert not screen.thread.is_alive()


def test_a_burst_of_writes_is_one_redraw(paths: WildPaths) -> None:
    screen = Screen(paths, max_updates=50)
    screen.next()
    time.sleep(0.2)
    began = time.monotonic()
    written = [began]
    for number in range(1, 41):  # a burst: each write comes before the last one settled
        with paths.tasks.open("a") as tasks:
            tasks.write(f"- [ ] [P1] task-{number:03d}: t\n")
        written.append(time.monotonic())
        time.sleep(SETTLE_QUIET_S / 10)
    burst_s = time.monotonic() - began
    texts = [screen.next()[1]]
    time.sleep(4 * SETTLE_MAX_S)
    texts += [screen.draws.get_nowait()[1] for _ in range(screen.draws.qsize())]
    # One redraw per SETTLE_MAX_S of a steady stream, plus the one after it ends; a loaded
    # machine may stall this writer past SETTLE_QUIET_S: such a pause ends a burst, rightly.
    paused = sum(b - a > SETTLE_QUIET_S for a, b in itertools.pairwise(written))
    bound = 1 + int(burst_s / SETTLE_MAX_S) + 1 + paused
    assert len(texts) <= bound, f"{len(texts)} redraws in {burst_s:.2f} s"
    assert "Tasks: 0/40 complete" in texts[-1]


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")
def test_watch_redraws_when_the_loop_process_dies_without_writing(paths: WildPaths) -> None:
    loop = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        recorded = probe(loop.pid, "2026-02-08T11:48:00Z")
        assert recorded is not None
        save_state(paths.state, LoopState(active=True, iteration=2, loop_process=recorded))
        screen = Screen(paths, max_updates=2)
        assert f"Loop: running (pid {loop.pid}, for " in screen.next()[1]
        killed = time.monotonic()
        loop.kill()  # kill -9: no file changes
        at, text = screen.next()
        assert f"killed or crashed: its pid {loop.pid} is gone; iteration 2)" in text
        assert at - killed < REDRAW_WAIT_S
    finally:
        loop.kill()
        loop.wait()
