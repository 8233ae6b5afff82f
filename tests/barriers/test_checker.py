"""BarrierChecker: due() math, minimal write-back, wake on satisfaction, approvals, idle thread."""

from __future__ import annotations

import errno
import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from tests.barriers.conftest import T0, FakeClock, barrier
from wild.barriers.approval_set import command_hash
from wild.barriers.approvals import approve
from wild.barriers.checker import BarrierChecker, check_all_now
from wild.barriers.checks import CheckResult
from wild.clock import SystemClock
from wild.commands import barrier_cmds
from wild.liveness import probe
from wild.parsers.alerts import AlertIndex
from wild.parsers.barriers import parse
from wild.paths import WildPaths
from wild.store.alerts_log import read_new

NOT_APPROVED = "not run: its command is not approved; run `wild --approve b1` after reading it"


class Wakes:
    """Records wake calls and lets a test wait for one."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.event = threading.Event()

    def __call__(self, barrier_id: str) -> None:
        self.ids.append(barrier_id)
        self.event.set()


def make_checker(
    paths: WildPaths,
    clock: FakeClock | SystemClock,
    wakes: Wakes | None = None,
    *,
    require: bool = False,
    written: list[tuple[Path, bytes]] | None = None,
) -> BarrierChecker:
    sink = written

    def on_written(path: Path, data: bytes) -> None:
        if sink is not None:
            sink.append((path, data))

    return BarrierChecker(
        paths,
        clock=clock,
        wake=wakes if wakes is not None else Wakes(),
        require_approval=lambda: require,
        on_written=on_written,
    )


def wait_until(condition: Callable[[], bool]) -> bool:
    """Poll a condition the background thread will make true; False if it never does."""
    for _ in range(1000):
        if condition():
            return True
        time.sleep(0.01)
    return False


def alert_lines(paths: WildPaths) -> list[dict[str, object]]:
    if not paths.alerts.exists():
        return []
    return [orjson.loads(line) for line in paths.alerts.read_bytes().splitlines()]


# ------------------------------------------------------------------------------- due math


def test_due_follows_each_barriers_interval(paths: WildPaths, clock: FakeClock) -> None:
    checker = make_checker(paths, clock)
    b = barrier(
        "## [WAITING] b1\n- Type: command-check\n- Check: true\n- Interval: 60s\n"
        "- Last check: 2026-02-08T10:00:00Z\n"
    )
    assert checker.due([b], T0 + timedelta(seconds=59)) == []
    assert checker.next_due_in([b], T0 + timedelta(seconds=59)) == 1.0
    assert checker.due([b], T0 + timedelta(seconds=60)) == [b]
    assert checker.next_due_in([b], T0 + timedelta(seconds=60)) == 0.0
    assert checker.due([b], T0 + timedelta(hours=3)) == [b]


def test_default_interval_is_60s(paths: WildPaths, clock: FakeClock) -> None:
    checker = make_checker(paths, clock)
    b = barrier("## [WAITING] b1\n- Type: file-exists\n- File: x\n- Last check: 2026-02-08T10:00Z")
    assert checker.next_due_in([b], T0 + timedelta(seconds=15)) == 45.0


def test_never_checked_is_due_at_once(paths: WildPaths, clock: FakeClock) -> None:
    b = barrier("## [WAITING] b1\n- Type: file-exists\n- File: x\n- Interval: 1h\n")
    assert make_checker(paths, clock).due([b], T0) == [b]


def test_a_last_check_from_the_future_is_due(paths: WildPaths, clock: FakeClock) -> None:
    b = barrier("## [WAITING] b1\n- Type: file-exists\n- File: x\n- Last check: 2030-01-01T00:00Z")
    assert make_checker(paths, clock).due([b], T0) == [b]


def test_only_waiting_checkable_barriers_are_ever_due(paths: WildPaths, clock: FakeClock) -> None:
    doc = parse(
        "## [SATISFIED] a\n- Type: file-exists\n- File: x\n\n"
        "## [FAILED] b\n- Type: command-check\n- Check: true\n\n"
        "## [WAITING] c\n- Type: webhook\n\n"
        "## [WAITING] d\n- Type: manual\n\n"
        "## [WAITING] e\n- Type: slurm-job\n"
    )
    checker = make_checker(paths, clock)
    assert checker.due(doc.barriers, T0) == []
    assert checker.next_due_in(doc.barriers, T0) is None
    assert checker.next_due_in([], T0) is None


def test_next_due_in_is_the_soonest(paths: WildPaths, clock: FakeClock) -> None:
    doc = parse(
        "## [WAITING] a\n- Type: file-exists\n- File: x\n- Interval: 5m\n"
        "- Last check: 2026-02-08T10:00:00Z\n\n"
        "## [WAITING] b\n- Type: file-exists\n- File: x\n- Interval: 90s\n"
        "- Last check: 2026-02-08T09:59:30Z\n"
    )
    assert make_checker(paths, clock).next_due_in(doc.barriers, T0) == 60.0


# --------------------------------------------------------------------------- write-back

BARRIERS = (
    "# Wild Loop Barriers\n"
    "Prose a human wrote,   with trailing spaces   \n"
    "\n"
    "## [WAITING] done-flag\n"
    "- Type: command-check\n"
    "- Check: test -f done.flag\n"
    "- Interval: 60s\n"
    "- Created: 2026-02-08T09:00:00Z\n"
    "- Last check: 2026-02-08T09:00:00Z\n"
    '- Result: "not yet"\n'
    "- Blocks: task-003, task-004\n"
    "\n"
    "<!-- notes kept as they are -->\n"
    "## [WAITING] count\n"
    "*   **Type:** count-based\n"
    "*   **Check:** echo 3\n"
    "*   **Target:** 5\n"
    "\n"
    "## [WAITING] hook\n"
    "- Type: webhook\n"
)

AFTER_FIRST_PASS = (
    "# Wild Loop Barriers\n"
    "Prose a human wrote,   with trailing spaces   \n"
    "\n"
    "## [SATISFIED] done-flag\n"
    "- Type: command-check\n"
    "- Check: test -f done.flag\n"
    "- Interval: 60s\n"
    "- Created: 2026-02-08T09:00:00Z\n"
    "- Last check: 2026-02-08T10:00:00Z\n"
    '- Result: "exit 0"\n'
    "- Blocks: task-003, task-004\n"
    "- Satisfied: 2026-02-08T10:00:00Z\n"
    "\n"
    "<!-- notes kept as they are -->\n"
    "## [WAITING] count\n"
    "*   **Type:** count-based\n"
    "*   **Check:** echo 3\n"
    "*   **Target:** 5\n"
    "*   **Last check:** 2026-02-08T10:00:00Z\n"
    '*   **Result:** "3/5 complete"\n'
    "\n"
    "## [WAITING] hook\n"
    "- Type: webhook\n"
)


def test_run_pass_writes_minimal_edits_and_wakes_on_satisfaction(
    paths: WildPaths, clock: FakeClock
) -> None:
    paths.barriers.write_text(BARRIERS)
    (paths.project / "done.flag").write_text("")
    wakes = Wakes()
    written: list[tuple[Path, bytes]] = []
    checker = make_checker(paths, clock, wakes, written=written)

    results = checker.run_pass()

    assert results == [
        ("done-flag", CheckResult(True, "exit 0", None, True)),
        ("count", CheckResult(False, "3/5 complete", None, True)),
    ]
    assert paths.barriers.read_text() == AFTER_FIRST_PASS
    assert wakes.ids == ["done-flag"]
    assert written == [(paths.barriers, AFTER_FIRST_PASS.encode())]


def test_crlf_file_stays_crlf(paths: WildPaths, clock: FakeClock) -> None:
    paths.barriers.write_bytes(BARRIERS.replace("\n", "\r\n").encode())
    (paths.project / "done.flag").write_text("")
    make_checker(paths, clock).run_pass()
    assert paths.barriers.read_bytes() == AFTER_FIRST_PASS.replace("\n", "\r\n").encode()


def test_nothing_due_means_no_check_and_no_write(paths: WildPaths, clock: FakeClock) -> None:
    paths.barriers.write_text(BARRIERS)
    checker = make_checker(paths, clock)
    checker.run_pass()
    after = paths.barriers.read_bytes()
    clock.advance(59)
    assert checker.run_pass() == []
    assert paths.barriers.read_bytes() == after
    clock.advance(1)
    assert checker.run_pass() == [
        ("done-flag", CheckResult(False, "exit 1", None, True)),
        ("count", CheckResult(False, "3/5 complete", None, True)),
    ]
    assert paths.barriers.read_text().count("Last check:** 2026-02-08T10:01:00Z\n") == 1
    assert paths.barriers.read_text().count("- Last check: 2026-02-08T10:01:00Z\n") == 1


def test_a_result_is_not_written_over_a_barrier_edited_meanwhile(
    paths: WildPaths, clock: FakeClock
) -> None:
    # The check itself plays the human: it edits the barrier's command while it runs.
    edit = "sed -i 's/^- Check: .*/- Check: echo edited/' .wild/barriers.md"
    paths.barriers.write_text(f"## [WAITING] b1\n- Type: command-check\n- Check: {edit}\n")
    wakes = Wakes()
    results = make_checker(paths, clock, wakes).run_pass()
    assert results == [("b1", CheckResult(True, "exit 0", None, True))]
    edited = "## [WAITING] b1\n- Type: command-check\n- Check: echo edited\n"
    assert paths.barriers.read_text() == edited
    assert wakes.ids == []


def test_check_all_now_ignores_intervals(paths: WildPaths, clock: FakeClock) -> None:
    paths.barriers.write_text(
        "## [WAITING] b1\n- Type: command-check\n- Check: echo fine\n- Interval: 1h\n"
        "- Last check: 2026-02-08T10:00:00Z\n\n"
        "## [WAITING] hook\n- Type: webhook\n\n"
        "## [SATISFIED] done\n- Type: manual\n"
    )
    clock.advance(5)
    results = check_all_now(paths, require_approval=False, clock=clock)
    assert results == [
        ("b1", CheckResult(True, "fine", None, True)),
        ("hook", CheckResult(False, "Waiting for webhook", None, False)),
    ]
    assert paths.barriers.read_text() == (
        "## [SATISFIED] b1\n- Type: command-check\n- Check: echo fine\n- Interval: 1h\n"
        '- Last check: 2026-02-08T10:00:05Z\n- Result: "fine"\n'
        "- Satisfied: 2026-02-08T10:00:05Z\n\n"
        "## [WAITING] hook\n- Type: webhook\n\n"
        "## [SATISFIED] done\n- Type: manual\n"
    )


# ------------------------------------------------------------------------------ approval

UNAPPROVED = "## [WAITING] b1\n- Type: command-check\n- Check: touch ran.marker\n- Interval: 60s\n"


def test_unapproved_command_is_not_run_and_alerts_exactly_once(
    paths: WildPaths, clock: FakeClock
) -> None:
    paths.barriers.write_text(UNAPPROVED)
    checker = make_checker(paths, clock, require=True)

    assert checker.run_pass() == [("b1", CheckResult(False, NOT_APPROVED, NOT_APPROVED, False))]
    clock.advance(61)
    assert checker.run_pass() == [("b1", CheckResult(False, NOT_APPROVED, NOT_APPROVED, False))]
    clock.advance(61)
    make_checker(paths, clock, require=True).run_pass()  # a restarted loop remembers too

    assert not (paths.project / "ran.marker").exists()
    assert paths.barriers.read_text() == UNAPPROVED + (
        f'- Last check: 2026-02-08T10:02:02Z\n- Result: "{NOT_APPROVED}"\n'
    )
    alerts = alert_lines(paths)
    assert len(alerts) == 1
    alert = alerts[0]
    assert str(alert.pop("id")).startswith("alert-20260208-100000-")
    assert alert == {
        "timestamp": "2026-02-08T10:00:00Z",
        "severity": "warning",
        "source": "wild",
        "type": "unapproved-command",
        "description": (
            "Barrier b1 wants to run a command no human has approved, so it was not run; "
            "read it in barriers.md and run `wild --approve b1`"
        ),
        "status": "pending",
        "context": {
            "barrier": "b1",
            "command": "touch ran.marker",
            "commandHash": command_hash("touch ran.marker"),
        },
    }


def test_a_changed_command_alerts_again(paths: WildPaths, clock: FakeClock) -> None:
    paths.barriers.write_text(UNAPPROVED)
    checker = make_checker(paths, clock, require=True)
    checker.run_pass()
    paths.barriers.write_text(UNAPPROVED.replace("ran.marker", "other.marker"))
    clock.advance(61)
    checker.run_pass()
    commands = [a["context"]["command"] for a in alert_lines(paths)]  # type: ignore[index]
    assert commands == ["touch ran.marker", "touch other.marker"]


def test_approving_lets_the_next_pass_run_it(paths: WildPaths, clock: FakeClock) -> None:
    paths.barriers.write_text(UNAPPROVED)
    checker = make_checker(paths, clock, require=True)
    checker.run_pass()
    approve(paths.project, "touch ran.marker")
    clock.advance(60)
    assert checker.run_pass() == [("b1", CheckResult(True, "exit 0", None, True))]
    assert (paths.project / "ran.marker").exists()
    assert len(alert_lines(paths)) == 1


def test_trusted_policy_runs_without_alerts(paths: WildPaths, clock: FakeClock) -> None:
    paths.barriers.write_text(UNAPPROVED)
    make_checker(paths, clock, require=False).run_pass()
    assert (paths.project / "ran.marker").exists()
    assert alert_lines(paths) == []


# ------------------------------------------------------------------------ background thread


def test_thread_sleeps_until_due_without_extra_passes(paths: WildPaths, clock: FakeClock) -> None:
    paths.barriers.write_text(
        "## [WAITING] b1\n- Type: file-exists\n- File: x\n- Interval: 1h\n"
        "- Last check: 2026-02-08T10:00:00Z\n"
    )
    checker = make_checker(paths, clock)
    checker.start()
    try:
        assert wait_until(lambda: checker.passes >= 1)
        time.sleep(0.5)  # an hour from the next check: any pass now would be polling
        assert checker.passes == 1
        checker.poke()
        assert wait_until(lambda: checker.passes >= 2)
        time.sleep(0.2)
        assert checker.passes == 2
    finally:
        checker.stop()
    assert paths.barriers.read_text().endswith("- Last check: 2026-02-08T10:00:00Z\n")


def test_poke_picks_up_a_new_barrier_at_once(paths: WildPaths, clock: FakeClock) -> None:
    idle = "## [WAITING] idle\n- Type: file-exists\n- File: x\n- Interval: 1h\n"
    paths.barriers.write_text(idle + "- Last check: 2026-02-08T10:00:00Z\n")
    (paths.project / "ready.flag").write_text("")
    wakes = Wakes()
    checker = make_checker(paths, clock, wakes)
    checker.start()
    try:
        assert wait_until(lambda: checker.passes >= 1)
        with paths.barriers.open("a") as handle:
            handle.write("\n## [WAITING] new\n- Type: file-exists\n- File: ready.flag\n")
        checker.poke()
        assert wakes.event.wait(10)
    finally:
        checker.stop()
    assert wakes.ids == ["new"]


def test_thread_wakes_itself_when_the_next_check_is_due(paths: WildPaths) -> None:
    paths.barriers.write_text("## [WAITING] b1\n- Type: file-exists\n- File: go\n- Interval: 1s")
    wakes = Wakes()
    checker = make_checker(paths, SystemClock(), wakes)
    checker.start()
    try:
        assert wait_until(lambda: checker.passes >= 1)
        (paths.project / "go").write_text("")  # no poke: the thread must come back by itself
        assert wakes.event.wait(10)
    finally:
        checker.stop()
    assert wakes.ids == ["b1"]
    assert checker.passes == 2  # checked, slept until due, checked again: nothing in between
    assert "## [SATISFIED] b1" in paths.barriers.read_text()


def test_stop_without_start_is_harmless(paths: WildPaths, clock: FakeClock) -> None:
    make_checker(paths, clock).stop()


def test_stop_kills_a_long_check_instead_of_waiting_for_it(
    paths: WildPaths, clock: FakeClock
) -> None:
    block = (
        "## [WAITING] slow\n- Type: command-check\n"
        "- Check: sleep 300 & echo $! > child.pid; wait\n- Timeout: 120s\n"
    )
    paths.barriers.write_text(block)
    pid_file = paths.project / "child.pid"
    wakes = Wakes()
    checker = make_checker(paths, clock, wakes)
    checker.start()
    try:
        assert wait_until(lambda: pid_file.exists() and pid_file.read_text().endswith("\n"))
    finally:
        checker.stop()
    # Had stop() waited, the check would have timed out and written its result.
    assert paths.barriers.read_text() == block
    assert probe(int(pid_file.read_text())) is None
    assert (checker.passes, wakes.ids) == (1, [])


def test_approving_resolves_the_alert_that_asked_for_it(paths: WildPaths, clock: FakeClock) -> None:
    paths.barriers.write_text(UNAPPROVED)
    make_checker(paths, clock, require=True).run_pass()
    paths.barriers.write_text(UNAPPROVED.replace("ran.marker", "other.marker"))
    clock.advance(61)
    make_checker(paths, clock, require=True).run_pass()  # a second alert, for the new command
    assert [a["status"] for a in alert_lines(paths)] == ["pending", "pending"]

    barrier_cmds.approve_barrier(paths, "b1", clock.now())
    lines = alert_lines(paths)
    assert len(lines) == 3
    resolved = lines[2]
    assert (resolved["id"], resolved["status"]) == (lines[1]["id"], "resolved")
    assert resolved["resolution"] == {
        "choice": None,
        "note": "approved by the human (wild --approve b1)",
    }
    # The alert for the command no longer in barriers.md is not approved by this.
    open_ids = {a.id for a in AlertIndex(read_new(paths.alerts, None).entries).active()}
    assert open_ids == {lines[0]["id"]}
    # The approved command now runs.
    clock.advance(61)
    make_checker(paths, clock, require=True).run_pass()
    assert (paths.project / "other.marker").exists()


def test_a_full_disk_in_a_pass_is_one_log_line_and_the_thread_goes_on(
    paths: WildPaths,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    checker = make_checker(paths, clock)
    passes: list[int] = []

    def full_disk() -> None:
        passes.append(1)
        if len(passes) == 2:
            checker._stopping.set()
        raise OSError(errno.ENOSPC, "No space left on device", str(paths.barriers))

    monkeypatch.setattr(checker, "run_pass", full_disk)
    monkeypatch.setattr("wild.barriers.checker.ERROR_RETRY_S", 0.01)
    with caplog.at_level(logging.WARNING, logger="wild.barriers.checker"):
        checker._run()
    assert len(passes) == 2  # it went on after the first failure
    assert [r.exc_info for r in caplog.records] == [None, None]  # no traceback
    assert caplog.records[0].getMessage() == (
        f"barrier checks failed: {paths.barriers}: No space left on device; free some disk"
        " space, then try again; retrying in 0s"
    )
