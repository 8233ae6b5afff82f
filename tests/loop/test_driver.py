"""The driver as the single owner of the loop's state: it reads state.json once, reads a file
again only when an event names it, and writes state.json on every change."""

from __future__ import annotations

import errno
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.fd_support import unnamed_files
from tests.loop import harness
from tests.loop.harness import T0, TASK, Actions, add_alert, new_project, say
from wild import control, procfs
from wild.commands import edits
from wild.control import ControlInbox
from wild.errors import WildError
from wild.liveness import this_process
from wild.loop import decide as decide_module
from wild.loop import driver, effects
from wild.loop.agent_record import AGENT_RUN, ended
from wild.loop.files import WATCHED, LoopFiles
from wild.loop.hooks import Hooks
from wild.parsers.alerts import status_update
from wild.parsers.state import LoadedState
from wild.paths import WildPaths
from wild.store import files, jsonl
from wild.store.alerts_log import append_alert
from wild.store.events_log import read_events
from wild.store.self_writes import SelfWrites
from wild.store.state_file import load_state as real_load
from wild.store.state_file import save_state as real_save
from wild.wake import TIMEOUT, FolderWatcher, Waker, WakeReason


def test_state_json_is_read_once_per_run_and_written_on_every_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    reads: list[Path] = []
    writes: list[int] = []

    def counting_load(path: Path, *args: Any) -> LoadedState:
        reads.append(path)
        return real_load(path, *args)

    def counting_save(path: Path, state: Any, **kwargs: Any) -> None:
        writes.append(state.iteration)
        real_save(path, state, **kwargs)

    monkeypatch.setattr(driver, "load_state", counting_load)
    monkeypatch.setattr(driver, "save_state", counting_save)
    sim.script = [say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 2)
    assert reads == [sim.paths.state]
    # Written at start, when each run starts and ends, and when the loop ends; never unchanged.
    assert writes[0] == 0 and writes[-1] == 2
    assert sim.state().iteration == 2 and not sim.state().active


def test_a_decision_that_starts_an_agent_is_written_with_its_run_record_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One fsynced write of state.json between a decision and its agent, not two: the decided
    state goes to disk with the run's record (nothing of the run exists before that write)."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    saved: list[Any] = []

    def counting_save(path: Path, state: Any, **kwargs: Any) -> None:
        saved.append(state)
        real_save(path, state, **kwargs)

    on_disk: list[Any] = []

    def agent_runs(request: Any) -> None:
        request.on_start(os.getpid())  # as the runner does before the agent's program runs
        on_disk.append(real_load(sim.paths.state))

    monkeypatch.setattr(driver, "save_state", counting_save)
    sim.script = [[{"call": agent_runs}, *say(TASK)]]
    assert sim.run().iterations == 2
    starts = [  # a write naming a run the write before did not name
        n
        for n, state in enumerate(saved)
        if AGENT_RUN in state.extra and state.extra[AGENT_RUN] != saved[n - 1].extra.get(AGENT_RUN)
    ]
    assert len(starts) == 2
    for n in starts:  # the write before is not the same decision without the record
        assert saved[n - 1] != ended(saved[n])
    for loaded, task in zip(on_disk, ("task-001", "task-002"), strict=True):
        assert loaded.state.current_work is not None and loaded.state.current_work.id == task
        assert AGENT_RUN in loaded.state.extra


def test_a_quiet_wake_reads_no_file_and_a_file_event_reads_only_that_file(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n  - blockedBy: gate\n")
    sim.paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")
    seen: list[int] = []

    def human_note() -> WakeReason:
        seen.append(sim.loop.files.reads)
        edits.add_human_input(sim.paths, "Looks good", urgent=False, now=sim.clock.now())
        return WakeReason("file", str(sim.paths.human))

    def nothing_changed() -> WakeReason:
        seen.append(sim.loop.files.reads)
        return WakeReason("timeout")

    sim.queue(nothing_changed)
    sim.queue(human_note)
    sim.script = [say("<promise>HUMAN_INPUT_PROCESSED</promise>")]
    sim.run(max_iterations=1)
    # 5 Markdown files read at start; the quiet wake read none, the human.md event one.
    assert seen == [5, 5]
    assert sim.worked_on() == [("human-input", sim.human().inputs[0].key)]


def test_a_stop_request_reaches_the_loop_through_the_watcher_and_cancels_at_once(
    tmp_path: Path,
) -> None:
    paths = WildPaths(tmp_path / ".wild")
    paths.root.mkdir()
    stop = threading.Event()
    inbox = ControlInbox(paths, stop)
    waker = Waker()
    watcher = FolderWatcher(paths.root, waker, SelfWrites(), on_control=inbox.on_change)
    watcher.start()
    try:
        control.request(paths, "pause")
        control.request(paths, "stop")
        # The event is set by the watcher's own thread: a running agent's wait wakes on it.
        assert stop.wait(timeout=10.0)
        reasons = watcher.wait_for_work(timeout=10.0)
        assert {r.kind for r in reasons} == {"control"}
        taken = inbox.take()
        while len(taken) < 2:  # a burst may arrive as one event or two
            assert watcher.wait_for_work(timeout=10.0)
            taken += inbox.take()
        assert [r.command for r in taken] == ["pause", "stop"]
    finally:
        watcher.stop()
    assert inbox.take() == ()


def test_requests_made_before_the_loop_started_are_not_replayed(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    paths.root.mkdir()
    control.request(paths, "stop")
    stop = threading.Event()
    inbox = ControlInbox(paths, stop)
    inbox.on_change()
    assert (inbox.take(), stop.is_set()) == ((), False)
    control.request(paths, "pause")
    inbox.on_change()
    assert [r.command for r in inbox.take()] == ["pause"]


def test_a_full_disk_is_waited_out_and_the_work_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    full = [2]  # the first two appends find the disk full

    def append(path: Path, record: Any) -> None:
        if full[0] > 0:
            full[0] -= 1
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        append_alert(path, record)

    monkeypatch.setattr(effects, "append_alert", append)
    add_alert(sim.paths, "alert-1", severity="info")
    sim.script = [say("<promise>ALERT_RESOLVED</promise>"), say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 2)
    retries = [e["retry_in_s"] for e in sim.events("io-error")]
    assert retries == [1.0, 2.0]
    assert sim.watcher is not None and sim.watcher.timeouts[:2] == [1.0, 2.0]
    assert any(line.startswith(f"⚠️  {sim.paths.alerts}: No space left") for line in sim.out)
    assert [line["status"] for line in sim.alert_lines()] == ["pending", "in-progress", "resolved"]


def test_a_permission_error_stops_the_loop_with_the_file_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")

    def refuse(path: Path, *args: Any, **kwargs: Any) -> str:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(effects, "update_text", refuse)
    with pytest.raises(WildError) as raised:
        sim.run()
    assert str(raised.value) == (
        f"{sim.paths.tasks}: Permission denied; make it and its folder readable and writable "
        "by this user, then try again"
    )
    assert not sim.state().active  # the state still says the loop is over


def test_resolved_alerts_past_the_threshold_move_to_the_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(decide_module, "COMPACT_AFTER_RESOLVED", 3)
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    for n in range(4):
        add_alert(sim.paths, f"old-{n}", severity="info")
        record = sim.alert_lines()[-1]
        append_alert(sim.paths.alerts, status_update(record, "resolved", T0))
    add_alert(sim.paths, "open-1", severity="info")
    sim.script = [say("<promise>ALERT_RESOLVED</promise>"), say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 2)
    archive = sim.paths.alerts_archive.read_text().splitlines()
    assert len(archive) == 8  # both lines of each of the 4 resolved alerts, once
    assert [e["archived_alerts"] for e in sim.events("alerts-compacted")] == [4]
    kept = [json.loads(line)["id"] for line in sim.paths.alerts.read_text().splitlines()]
    assert kept == ["open-1"] * 3  # pending, in-progress, resolved: below the threshold again


def test_every_event_names_its_cause(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n  - blockedBy: gate\n")
    sim.paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")

    def gate_opens() -> WakeReason:
        edits.satisfy_barrier(sim.paths, "gate", now=T0)
        return WakeReason("file", str(sim.paths.barriers))

    sim.queue(gate_opens)
    sim.script = [say("<promise>NOTIFY_HUMAN</promise><reason>half way</reason>", TASK)]
    assert sim.run().reason == "complete"
    events, _ = read_events(sim.paths.events)
    assert events[0]["kind"] == "loop-start"
    uncaused = [e["kind"] for e in events[1:] if not e.get("cause")]
    assert uncaused == []
    by_id = {e["id"]: e for e in events}
    start = by_id[sim.events("agent-start")[0]["cause"]]
    assert start["kind"] == "wake"  # the run follows from the barrier's wake-up


def test_runs_cut_short_by_a_usage_limit_do_not_count_towards_max_iterations(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    limited: Actions = [{"print": "Usage limit reached. Try again in 5 minutes."}, {"exit": 1}]
    sim.script = [limited, limited, say(TASK)]
    result = sim.run(max_iterations=2)  # three runs, one of them counted
    assert (result.reason, result.iterations) == ("complete", 3)
    assert [e["wait_s"] for e in sim.events("rate-limited")] == [300.0, 300.0]


def test_state_json_names_the_loop_and_the_agent_while_it_runs(tmp_path: Path) -> None:
    """So `wild --status` can check both processes; the agent is dropped once its run ends."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    seen: list[dict[str, Any]] = []

    def agent_starts(request: Any) -> None:
        request.on_start(os.getpid())  # the in-process agent: this very process
        seen.append(json.loads(sim.paths.state.read_text()))

    sim.script = [[{"call": agent_starts}, *say(TASK)]]
    sim.run(once=True)
    me = this_process()
    during = seen[0]
    assert during["active"] is True
    assert (during["loopProcess"]["pid"], during["agentProcess"]["pid"]) == (me.pid, me.pid)
    assert during["loopProcess"]["startTicks"] == me.start_ticks
    assert during["agentProcess"]["startedAt"] == "2026-02-08T10:00:00Z"
    after = json.loads(sim.paths.state.read_text())
    assert after["agentProcess"] is None
    assert after["loopProcess"]["pid"] == me.pid  # kept: status says when it was last seen


class _PatientWatcher(FolderWatcher):
    """The real watcher; a wait that times out means an edit was lost (the test fails, not
    hangs)."""

    def wait_for_work(self, timeout: float | None) -> list[WakeReason]:
        reasons = super().wait_for_work(10.0)
        assert reasons != [TIMEOUT], "the human's edit never woke the loop"
        return reasons


def test_a_write_between_the_first_read_and_watching_wakes_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop makes its watcher (the files' stat signatures) before its first read and starts
    it later (issue 22 item 8: once its first agent runs, or before it first waits): a human's
    write that lands after the first read, before watching began, wakes the loop all the same
    (it made no event)."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: After the gate\n  - blockedBy: gate\n")
    sim.paths.barriers.write_text("## [WAITING] gate\n- Type: manual\n")
    first_read: list[str] = []

    class HumanWritesAfterTheFirstRead(LoopFiles):
        def refresh(self, names: Any = WATCHED) -> None:
            super().refresh(names)
            if not first_read:
                first_read.append("read")
                edits.add_human_input(sim.paths, "Use the small model", urgent=False, now=T0)

    monkeypatch.setattr(driver, "LoopFiles", HumanWritesAfterTheFirstRead)
    watchers: list[FolderWatcher] = []

    def watcher(loop: driver.Loop) -> FolderWatcher:
        made = _PatientWatcher(loop.paths.root, loop.waker, loop.self_writes, watch_runs=True)
        watchers.append(made)
        return made

    agent = harness.ScriptedAgent(sim.clock, [say("<promise>HUMAN_INPUT_PROCESSED</promise>")])
    hooks = Hooks(watcher=watcher, barrier_checker=False, signals=False)
    options = harness.loop_options(max_iterations=1)
    loop = driver.Loop(
        sim.paths, options, clock=sim.clock, out=sim.out.append, runner=agent, hooks=hooks
    )
    result = loop.run()
    assert result.reason == "max-iterations", (result, sim.out)
    assert first_read and len(watchers) == 1, sim.out
    assert [kind for kind, _ in sim.worked_on()] == ["human-input"], (result, sim.out)


def test_a_watcher_that_cannot_start_while_the_first_agent_runs_stops_the_loop_at_its_wait(
    tmp_path: Path,
) -> None:
    """The watcher starts once the first agent runs; when it cannot (inotify limits), the
    agent's run goes on to its end, recorded, and the failure stops the loop before it would
    wait on a watcher that does not watch."""
    sim = new_project(
        tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n  - blockedBy: gate\n"
    )
    sim.paths.barriers.write_text("## [WAITING] gate\n- Type: manual\n")
    tries: list[str] = []

    class Unwatchable(harness.TestWatcher):
        def start(self) -> None:
            tries.append("start")
            raise WildError("cannot watch .wild: raise the inotify limits")

    watcher = Unwatchable(sim.clock)
    agent = harness.ScriptedAgent(sim.clock, [say(TASK)])
    hooks = Hooks(watcher=lambda _loop: watcher, barrier_checker=False, signals=False)
    loop = driver.Loop(
        sim.paths, harness.loop_options(), clock=sim.clock, out=sim.out.append, runner=agent,
        hooks=hooks,
    )  # fmt: skip
    with pytest.raises(WildError, match="inotify limits"):
        loop.run()
    assert len(tries) == 2  # once the agent ran (held), then before the wait (raised)
    [end] = sim.events("agent-end")
    assert end["exit_code"] == 0
    assert sim.task_status("task-001") == "complete"


def _states_saved_over_two_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every state.json write of a loop over two tasks, each an instant agent told started at
    its gate (`on_start`, as the real runner does), in order."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    saved: list[Any] = []

    def counting_save(path: Path, state: Any, **kwargs: Any) -> None:
        saved.append(state)
        real_save(path, state, **kwargs)

    def started(request: Any) -> None:
        request.on_start(os.getpid())  # as the runner tells the agent's pid, at the gate

    monkeypatch.setattr(driver, "save_state", counting_save)
    sim.script = [[{"call": started}, *say(TASK)]]
    assert sim.run().iterations == 2
    return saved


def test_a_runs_record_and_its_agents_pid_are_one_durable_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record is written with the pid while the runner holds the agent at its gate: no
    state.json write holds a run's record without its agent (before: record, then pid), and
    an instant iteration writes state.json once (the record with the pid, which carries the
    judgment of the run before it; before: twice, the judgment alone first)."""
    saved = _states_saved_over_two_runs(tmp_path, monkeypatch)
    with_record = [state for state in saved if AGENT_RUN in state.extra]
    assert len(with_record) == 2  # one write per run names its record
    assert all(state.agent_process is not None for state in with_record)
    first_run = next(n for n, state in enumerate(saved) if AGENT_RUN in state.extra)
    second_run = next(n for n in range(first_run + 1, len(saved)) if AGENT_RUN in saved[n].extra)
    assert second_run - first_run == 1  # before: 2, the judgment written alone in between


def test_a_runs_judgment_goes_to_disk_with_the_next_runs_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an agent ran, its judgment (the run's end, its count, no pid) is not written
    alone: the next decision's write carries it, here the next run's record and pid; the
    last run's judgment goes with the loop's last decision."""
    saved = _states_saved_over_two_runs(tmp_path, monkeypatch)
    ran = [n for n in range(1, len(saved)) if saved[n - 1].agent_process is not None]
    assert len(ran) == 2  # the write after each run's pid was named
    after_first, after_last = (saved[n] for n in ran)
    assert after_first.iteration == 1  # run 1 counted, in the write that names run 2
    assert after_first.extra[AGENT_RUN]["iteration"] == 2
    assert after_first.agent_process is not None
    assert after_last.iteration == 2  # the last judgment: the record is gone, the pid with it
    assert AGENT_RUN not in after_last.extra and after_last.agent_process is None


def test_a_runs_tick_and_the_next_tasks_mark_are_one_tasks_md_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tasks.md is written once per iteration: the finished task's tick is held until the
    next decision marks the next task, and both are one write (before: two, each two fsyncs).
    Whenever an agent's run is recorded, tasks.md on disk already holds its task's mark and
    the tick of the run before."""
    from wild.parsers.tasks import parse as parse_tasks

    sim = new_project(
        tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n- [ ] [P1] task-003: C\n"
    )
    written: list[dict[str, str]] = []
    on_disk_at_start: list[dict[str, str]] = []
    real_update = files.update_text

    def statuses(text: str) -> dict[str, str]:
        return {str(task.id): task.status for task in parse_tasks(text).tasks}

    def counting_update(path: Path, edit: Any, lock: Path, **kwargs: Any) -> str:
        text = real_update(path, edit, lock, **kwargs)
        if path == sim.paths.tasks:
            written.append(statuses(text))
        return text

    def started(request: Any) -> None:
        request.on_start(os.getpid())
        on_disk_at_start.append(statuses(sim.paths.tasks.read_text()))

    monkeypatch.setattr(effects, "update_text", counting_update)
    sim.script = [[{"call": started}, *say(TASK)]]
    assert sim.run().iterations == 3
    assert [list(w.values()) for w in written] == [
        ["in-progress", "todo", "todo"],
        ["complete", "in-progress", "todo"],
        ["complete", "complete", "in-progress"],
        ["complete", "complete", "complete"],
    ]  # before: six writes, a tick and a mark apart
    assert on_disk_at_start == written[:3]


def test_the_ledgers_raise_meets_the_next_decision_and_is_settled_before_a_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The totals ledger's raise after a judgment is one line appended on the loop's thread
    (a thread of its own took the CPU from the loop's next decision) and fsynced when the loop
    settles, with the run record's own raise, before the agent's program is let go; whenever
    an agent's program is let go, and when the loop ends, the ledger on disk holds
    state.json's counts (a restart after a damaged state.json takes them) and nothing
    appended is left unsynced."""
    from wild.parsers.totals import Totals
    from wild.store import totals_ledger

    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    writers: list[str] = []
    covered_at_go: list[bool] = []
    real_line = totals_ledger.append_raise

    def noting_line(path: Path, data: bytes, *, durable: bool = True) -> None:
        writers.append(threading.current_thread().name)
        real_line(path, data, durable=durable)

    def covered() -> bool:
        on_disk = real_load(sim.paths.state).state
        return totals_ledger.recorded(sim.paths.state).covers(Totals.of(on_disk))

    def started(request: Any) -> None:
        request.on_start(os.getpid())  # then the runner lets the agent's program run
        covered_at_go.append(covered() and not totals_ledger._unsynced)

    monkeypatch.setattr(totals_ledger, "append_raise", noting_line)
    sim.script = [[{"call": started}, *say(TASK)]]
    assert sim.run().iterations == 2
    assert writers and set(writers) == {"MainThread"}  # before: a thread of the ledger's
    assert covered_at_go == [True, True]
    assert covered() and not totals_ledger._unsynced


def test_a_steps_consecutive_log_lines_are_one_events_log_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judgment's lines (its state changes) go to events.log in one append, not one each
    (an open, a lock and a write apiece), and with them the run's `agent-end` before and the
    next decision's lines after (the judgment is written with that decision): the lines,
    their order and their causes are those the actions name, as when each was appended
    alone."""

    real_append = jsonl.KeptAppender.append

    def one_each(self: effects.Effects, logs: Any, cause: str | None, **_: Any) -> set[str]:
        for log in logs:  # as before: each Log its own append
            self.perform(log, None, None, cause)  # type: ignore[arg-type]
        return set()

    def run(project: Path, *, batched: bool) -> tuple[list[int], list[tuple[str, str | None]]]:
        sim = new_project(project, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
        appends: list[int] = []

        def counting(appender: jsonl.KeptAppender, parts: Any, **kwargs: Any) -> None:
            if appender.path == sim.paths.events:
                appends.append(sum(part.count(b"\n") for part in parts))  # one append's lines
            real_append(appender, parts, **kwargs)

        monkeypatch.setattr(jsonl.KeptAppender, "append", counting)
        if not batched:
            monkeypatch.setattr(effects.Effects, "log_all", one_each)
        sim.script = [say(TASK)]
        assert sim.run().iterations == 2
        events, _problems = read_events(sim.paths.events)
        kinds = {event["id"]: event["kind"] for event in events}
        return appends, [(event["kind"], kinds.get(event.get("cause"))) for event in events]

    appends, lines = run(tmp_path / "batched", batched=True)
    alone, lines_alone = run(tmp_path / "one-each", batched=False)
    assert lines == lines_alone
    assert sum(appends) == sum(alone) == len(lines)
    # Each run's end, its judgment's two state lines and the next decision's line: one
    # append (before: the end, the judgment's two lines together, then the next line).
    assert appends.count(4) == 2
    assert len(appends) == len(alone) - 4


def test_an_iteration_looks_at_the_disk_beside_its_files_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view after a judgment that only kept the books (the tick held) is the view after
    the agent's run with the tick: the files' modes and the approval store are looked at once
    per iteration, not again for it (before: twice)."""
    from wild.loop import files as loop_files
    from wild.store import work_files

    sim = new_project(
        tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n- [ ] [P1] task-003: C\n"
    )
    looks: list[int] = []
    real_refusals = work_files.refusals_of
    runs: list[int] = []

    def counting(paths: WildPaths) -> tuple[tuple[str, str], ...]:
        looks.append(len(runs))
        return real_refusals(paths)

    def started(request: Any) -> None:
        runs.append(1)
        request.on_start(os.getpid())

    monkeypatch.setattr(loop_files, "refusals_of", counting)
    sim.script = [[{"call": started}, *say(TASK)]]
    assert sim.run().iterations == 3
    # After each of the first two runs: the view after the run, none for the next decision.
    assert looks.count(1) == 1 and looks.count(2) == 1, looks


def test_the_runs_console_line_is_printed_once_its_agent_runs_not_on_the_way_to_its_start(
    tmp_path: Path,
) -> None:
    """`🤖 Iteration N` is printed once the runner says the agent's program runs (after the
    go), not before the run's record and spawn; a run whose runner never says so (it could
    not start, or an in-process one) gets its line as the runner returns, before anything
    the judgment says."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    seen: list[tuple[str, int]] = []

    def says_it_runs(request: Any) -> None:
        request.on_start(os.getpid())
        seen.append(("at the gate", len(sim.out)))
        assert request.on_running is not None
        request.on_running()
        seen.append(("running", len(sim.out)))
        request.on_running()  # told twice: one line

    sim.script = [[{"call": says_it_runs}, *say(TASK)], [*say(TASK)]]
    assert sim.run().iterations == 2
    before_gate = seen[0][1]
    assert sim.out[before_gate : seen[1][1]] == ["🤖 Iteration 1: task task-001"]
    assert [line for line in sim.out if line.startswith("🤖")] == [
        "🤖 Iteration 1: task task-001",
        "🤖 Iteration 2: task task-002",
    ]
    second = sim.out.index("🤖 Iteration 2: task task-002")
    assert sim.out.index("✅ Task complete: task-002") > second


def test_the_tasks_md_swap_before_an_agent_shares_the_run_records_folder_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tick and the next task's mark, written just before the next agent starts, leave
    their folder's fsync to the run record's write in the same `.wild/` a moment later: one
    `.wild/` fsync on an iteration's way to its agent, not two, and none owed when the
    agent's program is let go (a power loss then finds both files as written)."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    state_folder = os.path.realpath(sim.paths.root)
    synced: list[str] = []
    owed_at_go: list[int] = []
    real_fsync_dir = files.fsync_dir

    def noting(directory: Path) -> None:
        synced.append(os.fspath(directory))
        real_fsync_dir(directory)

    def owed() -> int:
        """The folder fsyncs still owed now (paying them: a test's look)."""
        before = len(synced)
        files.sync_owed_folders()
        return len(synced) - before

    def started(request: Any) -> None:
        request.on_start(os.getpid())  # the run's record, then the runner lets the agent go
        owed_at_go.append(owed())
        synced.append("go")

    monkeypatch.setattr(files, "fsync_dir", noting)
    sim.script = [[{"call": started}, *say(TASK)]]
    assert sim.run().iterations == 2
    ways = " ".join("w" if s == state_folder else s for s in synced if s in (state_folder, "go"))
    # Before the first agent: the loop's start writes state.json too; between the two runs,
    # the judgment, tick and mark go with the second run's record: one fsync (before: two).
    assert ways.split(" go")[1].split() == ["w"], ways
    assert owed_at_go == [0, 0]
    assert "[x] [P1] task-001" in sim.paths.tasks.read_text()
    assert owed() == 0


def test_the_files_swaps_displace_before_a_go_are_removed_once_the_agent_runs(
    tmp_path: Path,
) -> None:
    """The run record's state.json swap and the tasks.md swap before it leave the old
    versions at their temp names while the agent waits at its gate: their removal (~90 µs
    each on ext4) is not on the way to the go. They are gone once the agent's program runs,
    and none is left when the loop ends."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    at_gate: list[list[str]] = []
    running: list[list[str]] = []

    def temp_files() -> list[str]:  # by the name each is beside: `.state.json`
        return sorted(path.name.rsplit(".", 2)[0] for path in sim.paths.root.glob(".*.tmp"))

    def started(request: Any) -> None:
        request.on_start(os.getpid())
        at_gate.append(temp_files())
        request.on_running()
        running.append(temp_files())

    sim.script = [[{"call": started}, *say(TASK)]]
    assert sim.run().iterations == 2
    # Each run: its task's mark (with the judgment's tick, after the first), then its record.
    assert at_gate == [[".state.json", ".tasks.md"]] * 2
    assert running == [[], []]
    assert temp_files() == []
    assert "[x] [P1] task-002" in sim.paths.tasks.read_text()


def test_the_folders_real_paths_are_asked_afresh_once_an_agent_runs(tmp_path: Path) -> None:
    """Within one step the loop resolves the project's folder once
    (`procfs.hold_real_folders`), and again once an agent's program runs: a project reached
    through a link that a run repoints is the new folder for the next agent."""
    first = tmp_path / "a"
    first.mkdir()
    sim = new_project(first, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    link = tmp_path / "link"
    link.symlink_to(first)
    sim.paths = WildPaths(link / ".wild")
    cwds: list[str] = []

    let_go: list[str] = []

    def moves_the_project(request: Any) -> None:
        request.on_start(os.getpid())  # the go follows at once: nothing is held from here
        cwds.append(str(request.cwd))
        if len(cwds) == 1:  # the run copies the project elsewhere and repoints the link
            second = tmp_path / "b"
            shutil.copytree(first, second, symlinks=True)
            link.unlink()
            link.symlink_to(second)
            let_go.append(procfs.real_folder(link))  # on the loop's thread, before on_running
        request.on_running()

    sim.script = [[{"call": moves_the_project}, *say(TASK)]]
    assert sim.run().iterations == 2
    assert cwds == [str(first), str(tmp_path / "b")]
    assert let_go == [str(tmp_path / "b")]


def test_the_runs_agent_start_line_is_written_once_its_agent_runs_not_on_the_way_to_it(
    tmp_path: Path,
) -> None:
    """A run's `agent-start` line follows its record (on disk before the go) and is written
    once the runner says the agent's program runs, not while the agent waits at its gate; a
    run whose runner never says so gets it as the runner returns. One line per run."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    seen: list[tuple[str, int]] = []

    def says_it_runs(request: Any) -> None:
        request.on_start(os.getpid())
        seen.append(("at the gate", len(sim.events("agent-start"))))
        request.on_running()
        seen.append(("running", len(sim.events("agent-start"))))
        request.on_running()  # told twice: one line

    sim.script = [[{"call": says_it_runs}, *say(TASK)], [*say(TASK)]]
    assert sim.run().iterations == 2
    assert seen == [("at the gate", 0), ("running", 1)]
    starts = sim.events("agent-start")
    assert [event["work_id"] for event in starts] == ["task-001", "task-002"]
    ends = sim.events("agent-end")
    assert [event["cause"] for event in ends] == [event["id"] for event in starts]


def test_the_held_tasks_md_edits_are_written_at_the_agents_gate(tmp_path: Path) -> None:
    """The tick of the run before and the next task's mark are written once the agent is
    spawned and waits at its gate (`on_start`), before the run's record: its chain
    (`setpriv`, `sh`) is still on its way there, so the write costs the go nothing. A run
    whose agent never reaches the gate has them written by the loop's next step."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    seen: list[tuple[str, ...]] = []

    def statuses() -> tuple[str, ...]:
        return (sim.task_status("task-001"), sim.task_status("task-002"))

    def at_the_gate(request: Any) -> None:
        before = statuses()
        request.on_start(os.getpid())
        seen.append((*before, "|", *statuses()))

    sim.script = [[{"call": at_the_gate}, *say(TASK)]]
    assert sim.run().iterations == 2
    assert seen == [
        ("todo", "todo", "|", "in-progress", "todo"),
        ("in-progress", "todo", "|", "complete", "in-progress"),
    ]
    assert [sim.task_status("task-001"), sim.task_status("task-002")] == ["complete"] * 2


def test_the_swaps_at_an_agents_gate_name_files_made_while_the_agent_before_ran(
    tmp_path: Path,
) -> None:
    """Once an agent's program runs, the loop makes the unnamed files the next gate's two
    swaps take (`files.make_spares`): none is created on the way to that go; none is held
    when the loop ends."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    held: list[tuple[int, int, int]] = []

    def spares() -> int:
        return len(unnamed_files(sim.paths.root))

    def started(request: Any) -> None:
        at_the_gate = spares()
        request.on_start(os.getpid())
        let_go = spares()
        request.on_running()
        held.append((at_the_gate, let_go, spares()))

    sim.script = [[{"call": started}, *say(TASK)]]
    assert sim.run().iterations == 2
    # The first gate: none made yet; the second: the two made as the first agent ran, taken
    # by its swaps; then two more for the next.
    assert held == [(0, 0, 2), (2, 0, 2)]
    assert spares() == 0


def _handing_a_look(order: list[str], name: str) -> Actions:
    """A run as the real runner makes it: its program let go (`on_running`), then, at its
    clean exit, its last look handed to the loop (`look_later`)."""
    return [
        {"call": lambda request: request.on_running()},
        {"call": lambda request: request.look_later(lambda: order.append(name))},
        *say(TASK),
    ]


def test_a_runs_last_look_is_made_once_the_next_agents_program_runs(tmp_path: Path) -> None:
    # Off the way to the next agent's start (issue 22 item 8): not before its go, not later.
    order: list[str] = []
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    sim.script = [
        _handing_a_look(order, "look at run 1"),
        [
            {"call": lambda _request: order.append("run 2 at its gate")},
            {"call": lambda request: request.on_running()},
            {"call": lambda _request: order.append("run 2 running")},
            *say(TASK),
        ],
    ]
    sim.run()
    assert order == ["run 2 at its gate", "look at run 1", "run 2 running"]


def test_a_runs_last_look_is_made_before_the_loop_ends(tmp_path: Path) -> None:
    order: list[str] = []
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [_handing_a_look(order, "look at run 1")]
    result = sim.run()
    assert (result.reason, order) == ("complete", ["look at run 1"])


def test_an_agent_told_running_by_its_runner_is_not_told_again_as_its_run_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loop's work as an agent's program runs (the step over, the spare files for the next
    # gate, the watcher and checker started) is made once per run, not again on the way to
    # the next agent; a run the runner never said was running gets it as it returns.
    made: list[Path] = []
    monkeypatch.setattr(driver, "make_spares", lambda folder, _count: made.append(folder))
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    told = [{"call": lambda request: request.on_running()}, *say(TASK)]
    sim.script = [told, say(TASK)]  # the second never told: an in-process runner's way
    sim.run()
    assert len(made) == 2
