"""The main loop (seed 001): load state, report, select, handle one piece of work, sleep when idle.

One fresh agent process per iteration (`wild.handlers` runs it on the selected work). Idle and
blocked waits are not iterations: the loop blocks on one wake event (file changes, barrier
results, signals, control requests, the next timed duty) and uses no CPU while it waits.

Decisions the seed leaves open:
- When all remaining work waits on barriers wild can check, one monitoring iteration runs when
  the loop becomes blocked, then again every `monitor_every_s` while it stays blocked.
- An item waits for the human after NEED_HUMAN_INPUT or a blocking escalation; other work goes
  on, except at autonomy level low (interactive), where nothing but human input starts while a
  question is open. Any processed human input answers every open question.
- `COMPLETE` never ends the loop by itself: the loop ends when no work is left. A premature
  `COMPLETE` is recorded (events.log, and the next prompts' notes) and the loop goes on.
- A usage-limited run waits for the reset (or `wild --stop`) and is not counted as a failure.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Literal

from wild import handlers
from wild import iteration as iteration_md
from wild.agents.runner import AgentRequest, AgentRun, run_agent
from wild.barriers.checker import BarrierChecker
from wild.bookkeeping import Bookkeeping, select_with_holds
from wild.clock import Clock, SystemClock, iso, parse_time
from wild.commands.init import init_wild
from wild.control import ControlState, end_offset, read_pending
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import Alert, AlertCursor, AlertIndex, AlertLog
from wild.parsers.events_log import EventLog
from wild.parsers.state import CurrentWork, LoopState, load_state, push_summary, save_state
from wild.paths import WildPaths
from wild.policy.escalation import progress_report_due
from wild.policy.model import HumanPolicy
from wild.reporting import Reporter, progress_summary
from wild.selection import Selection
from wild.store import update_text
from wild.wake import FolderWatcher, SelfWrites, Waker, WakeReason, install_signal_handlers
from wild.workspace import Workspace, load_workspace, open_alerts_of

EndReason = Literal["complete", "max-iterations", "max-time", "once", "stopped"]
Runner = Callable[[AgentRequest], AgentRun]
RATE_LIMIT_UNKNOWN_S = 300.0  # a usage limit that names no reset time
RATE_LIMIT_MAX_S = 6 * 3600.0
GC_YOUNG_THRESHOLD = 50_000


@dataclass(frozen=True)
class LoopOptions:
    """What `wild "GOAL" …` asked for."""

    goal: str
    agent: str = "claude"
    model: str | None = None
    agent_cmd: str | None = None
    max_iterations: int | None = None
    max_time_s: float | None = None
    once: bool = False
    agent_timeout_s: float | None = 3600.0
    heartbeat_s: float = 60.0
    safety_rescan_s: float = 300.0
    monitor_with_agent: bool = True  # an agent looks at the jobs when all work waits on them
    monitor_every_s: float | None = 1800.0  # ... and again this often while it still waits


@dataclass(frozen=True)
class LoopResult:
    reason: EndReason
    iterations: int
    message: str


class _StopFlag(threading.Event):
    """The loop's stop flag. Asking it also reads new `wild --stop/--pause` requests, so the
    agent runner's cancel check (every 50 ms while an agent runs) notices a stop at once."""

    def __init__(self, poll: Callable[[], None]) -> None:
        super().__init__()
        self._poll = poll

    def is_set(self) -> bool:
        if not super().is_set():
            self._poll()  # sets the flag when a stop request is found
        return super().is_set()


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Collect young objects less often while the loop runs.

    The loop keeps big parsed documents alive (say 100k alerts, 10k tasks); at Python's
    default threshold (700) full collections walk them several times per iteration, which
    bench/bench_loop.py measured at half of the loop's time per iteration.
    """
    before = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


class _AlertsView:
    """The alert index as tuples (all, open), made again only when the index changed.

    With 100,000 resolved alerts, making them costs milliseconds on every iteration; the
    index changes only by reading new lines (which moves the cursor) or by a reset (which
    makes a new index).
    """

    def __init__(self) -> None:
        self._seen: tuple[AlertIndex, AlertCursor | None] | None = None
        self.everything: tuple[Alert, ...] = ()
        self.open: tuple[Alert, ...] = ()

    def of(self, log: AlertLog) -> _AlertsView:
        seen = self._seen
        if seen is None or seen[0] is not log.index or seen[1] != log.cursor:
            self._seen = (log.index, log.cursor)
            self.everything = log.index.all()
            self.open = open_alerts_of(self.everything)
        return self


class Loop:
    """One running loop over one `.wild/` folder."""

    def __init__(
        self,
        paths: WildPaths,
        options: LoopOptions,
        *,
        clock: Clock | None = None,
        out: Callable[[str], None] = print,
        runner: Runner = run_agent,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.paths = paths
        self.options = options
        self.clock: Clock = clock or SystemClock()
        self.out = out
        self.runner = runner
        self.environ = dict(os.environ if environ is None else environ)
        self.waker = Waker()
        self.self_writes = SelfWrites()
        self.stop_event: threading.Event = _StopFlag(self._apply_control)
        self.events = EventLog(paths.events, self.clock)
        self.reporter = Reporter(paths, self.events, out, self._remember(paths.human))
        self.state = LoopState()
        self.policy: HumanPolicy | None = None
        self.alert_log = AlertLog(paths.alerts)
        self._alerts = _AlertsView()
        self.control = ControlState()
        self._control_offset = 0
        self._monitored_at: float | None = None  # monotonic time of the last monitoring run
        self._started = 0.0
        self._iterations_this_run = 0
        self._agent_event: str | None = None  # events.log id of the last agent run's end
        self._setup = iteration_md.AgentSetup(
            goal=options.goal,
            agent=options.agent,
            model=options.model,
            agent_cmd=options.agent_cmd,
            timeout_s=options.agent_timeout_s,
            heartbeat_s=options.heartbeat_s,
        )
        self._services = handlers.Services(
            paths=paths,
            clock=self.clock,
            out=out,
            events=self.events,
            reporter=self.reporter,
            edit=self._edit,
            latest_alert=self._latest_alert,
            run_agent=self._run_agent,
            cause=lambda: self._agent_event,
        )

    # -- plumbing ------------------------------------------------------------------------

    def _remember(self, path: Path) -> Callable[[bytes], None]:
        return lambda data: self.self_writes.remember(path, data)

    def _edit(self, path: Path, edit: Callable[[str], str]) -> str:
        return update_text(path, edit, self.paths.lock, on_written=self._remember(path))

    def _save(self) -> None:
        cursor = self.alert_log.cursor
        self.state = replace(
            self.state, alerts_file_position=cursor.to_json() if cursor is not None else None
        )
        save_state(self.paths.state, self.state)

    @property
    def book(self) -> Bookkeeping:
        return Bookkeeping.from_extra(self.state.extra)

    def _set_book(self, book: Bookkeeping) -> None:
        self.state = replace(self.state, extra=book.merged_into(self.state.extra))

    def _latest_alert(self, alert_id: str) -> Alert | None:
        self.alert_log.refresh()
        return self.alert_log.index.get(alert_id)

    def _result(self, reason: EndReason, message: str) -> LoopResult:
        return LoopResult(reason, self._iterations_this_run, message)

    # -- lifecycle -----------------------------------------------------------------------

    def run(self) -> LoopResult:
        with _fewer_collections():
            return self._run()

    def _run(self) -> LoopResult:
        init_wild(self.paths)
        self.paths.logs.mkdir(exist_ok=True)
        loaded = load_state(self.paths.state, self.clock)
        for problem in loaded.problems:
            self.out(f"⚠️  {problem}")
        self.state = replace(
            loaded.state,
            active=True,
            prompt=self.options.goal,
            agent=self.options.agent,
            model=self.options.model,
            started_at=loaded.state.started_at or iso(self.clock.now()),
            paused=False,  # requests made before this run started do not count
        )
        self.alert_log = AlertLog(
            self.paths.alerts, since=AlertCursor.from_json(loaded.state.alerts_file_position)
        )
        self._control_offset = end_offset(self.paths)
        self._started = self.clock.monotonic()
        watcher = FolderWatcher(
            self.paths.root,
            self.waker,
            self.self_writes,
            safety_rescan_s=self.options.safety_rescan_s,
        )
        checker = BarrierChecker(
            self.paths,
            clock=self.clock,
            wake=lambda barrier_id: self.waker.wake(WakeReason("barrier", detail=barrier_id)),
            require_approval=lambda: (
                self.policy is None or self.policy.command_approval == "required"
            ),
            on_written=self.self_writes.remember,
        )
        restore = (
            install_signal_handlers(self.waker, self.stop_event)
            if threading.current_thread() is threading.main_thread()
            else None
        )
        start_event = self.events.append(
            "loop-start", goal=self.options.goal, agent=self.options.agent
        )
        self._save()
        watcher.start()
        checker.start()
        try:
            result = self._cycle(watcher, checker, start_event)
            if self.policy is not None:  # batched notes would be lost with the loop
                self.reporter.flush_all(self.policy)
        finally:
            checker.stop()
            watcher.stop()
            if restore is not None:
                restore()
            self.state = replace(self.state, active=False)
            self._save()
        self.events.append("loop-end", cause=start_event, reason=result.reason)
        return result

    def _cycle(self, watcher: FolderWatcher, checker: BarrierChecker, cause: str) -> LoopResult:
        while True:
            ended = self._limits()
            if ended is not None:
                return ended
            ws = self._load()
            self.policy = ws.policy
            self._progress_report(ws, cause)
            self.reporter.flush(ws.policy, self.clock.now())
            selection = None if self.control.paused else self._select(ws)
            if selection is not None and selection.kind == "complete":
                self.out("✅ All work complete.")
                self.events.append("complete", cause=cause, iterations=self.state.iteration)
                return self._result("complete", "all work complete")
            outcome = self._work(ws, selection)
            if outcome is None:
                if self.options.once:
                    return self._result("once", "nothing to run now")
                self._idle(watcher, checker, ws, selection)
                continue
            self._set_book(outcome.book)
            self._after_iteration(outcome)
            if self.options.once and outcome.run is not None:
                return self._result("once", "one iteration done")

    def _work(self, ws: Workspace, selection: Selection | None) -> handlers.Outcome | None:
        """Handle the selected item, or monitor the barriers; None when there is nothing to do."""
        if selection is None or selection.item is None:
            return None
        if selection.kind != "blocked":
            self._monitored_at = None  # the next time all work waits, look at the jobs again
            return handlers.handle(
                self._services,
                ws,
                selection.item,
                self.book,
                feedback="\n".join(f"- {s}" for s in self.state.recent_summaries),
                minutes_since_progress=self._minutes_since_progress(),
            )
        if self._monitor_in(selection) == 0.0:
            self._monitored_at = self.clock.monotonic()
            return handlers.monitor(self._services, ws, selection, self.book)
        return None

    def _limits(self) -> LoopResult | None:
        if self.stop_event.is_set():  # reads new control requests too
            return self._result("stopped", "stopped on request")
        limit = self.options.max_iterations
        if limit is not None and self._iterations_this_run >= limit:
            return self._result("max-iterations", f"reached {limit} iterations")
        if self._time_left() == 0.0:
            return self._result("max-time", "reached the time limit")
        return None

    def _time_left(self) -> float | None:
        if self.options.max_time_s is None:
            return None
        return max(0.0, self._started + self.options.max_time_s - self.clock.monotonic())

    def _apply_control(self) -> None:
        requests, self._control_offset = read_pending(self.paths, self._control_offset)
        if not requests:
            return
        before = self.control
        self.control = self.control.apply(requests)
        for request in requests:
            self.events.append("control", command=request.command)
        if before.paused != self.control.paused:
            self.state = replace(self.state, paused=self.control.paused)
            self._save()
        if self.control.stop_requested:
            self.stop_event.set()

    def _load(self) -> Workspace:
        """Parse the files; give id-less tasks their ids first (one minimal edit)."""
        ws = self._load_once()
        if tasks_md.missing_ids(ws.tasks):
            self._edit(self.paths.tasks, tasks_md.assign_missing_ids)
            ws = self._load_once()
        return ws

    def _load_once(self) -> Workspace:
        self.alert_log.refresh()
        alerts = self._alerts.of(self.alert_log)
        return load_workspace(
            self.paths, self.clock.now(), alerts=alerts.everything, open_alerts=alerts.open
        )

    def _select(self, ws: Workspace) -> Selection:
        return select_with_holds(ws, frozenset(self.book.awaiting))

    # -- waiting -------------------------------------------------------------------------

    def _monitor_in(self, selection: Selection) -> float | None:
        """Seconds until a monitoring iteration is due (0: now); None when none will be."""
        if not (self.options.monitor_with_agent and selection.can_check):
            return None
        if self._monitored_at is None:
            return 0.0
        every = self.options.monitor_every_s
        if every is None:
            return None
        return max(0.0, self._monitored_at + every - self.clock.monotonic())

    def _idle(
        self,
        watcher: FolderWatcher,
        checker: BarrierChecker,
        ws: Workspace,
        selection: Selection | None,
    ) -> None:
        if selection is None:
            self.out("⏸️  paused; `wild --resume` continues")
        elif selection.item is not None:
            waiting = ", ".join(b.id for b in selection.waiting_barriers) or selection.item.reason
            self.out(f"⏳ Waiting ({waiting}); sleeping until something changes")
        reasons = watcher.wait_for_work(self._idle_timeout(ws, selection))
        if any(r.path is not None and r.path.endswith("barriers.md") for r in reasons):
            checker.poke()
        self.events.append("wake", reasons=sorted({r.kind for r in reasons}))

    def _idle_timeout(self, ws: Workspace, selection: Selection | None) -> float | None:
        """Sleep until the next timed duty, else until something happens."""
        now = self.clock.now()
        moments = [self.reporter.next_flush(), ws.policy.expires_at]
        if ws.policy.progress_report_minutes > 0:
            last = parse_time(self.state.last_progress_report) or parse_time(self.state.started_at)
            if last is not None:
                moments.append(last + timedelta(minutes=ws.policy.progress_report_minutes))
        waits = [max(0.0, (m - now).total_seconds()) for m in moments if m is not None]
        later = (self._time_left(), None if selection is None else self._monitor_in(selection))
        waits += [w for w in later if w is not None]
        return min(waits) if waits else None

    def _progress_report(self, ws: Workspace, cause: str) -> None:
        now = self.clock.now()
        started = parse_time(self.state.started_at) or now
        if not progress_report_due(
            ws.policy, parse_time(self.state.last_progress_report), started, now
        ):
            return
        summary = progress_summary(ws, self.state)
        self.reporter.progress(ws.policy, now=now, summary=summary, cause=cause)
        self.state = replace(self.state, last_progress_report=iso(now))
        self._save()

    def _wait_for_rate_limit(self, run: AgentRun) -> None:
        reset = run.rate_limit_reset
        wait_s = RATE_LIMIT_UNKNOWN_S
        if reset is not None:
            wait_s = (reset - self.clock.now()).total_seconds()
        wait_s = float(round(max(1.0, min(wait_s, RATE_LIMIT_MAX_S))))
        self.out(f"⏳ The agent hit a usage limit; waiting {wait_s:.0f} s for it to reset")
        self.events.append("rate-limited", wait_s=wait_s)
        deadline = time.monotonic() + wait_s
        # File events wake this wait too; the loop re-reads everything afterwards anyway.
        while not self.stop_event.is_set() and (left := deadline - time.monotonic()) > 0:
            self.waker.wait(left)

    # -- one iteration -------------------------------------------------------------------

    def _run_agent(
        self, ws: Workspace, work_type: str, work_id: str, values: Mapping[str, object]
    ) -> AgentRun:
        """Run one agent process on this work and record it in state.json and events.log."""
        iteration = self.state.iteration + 1
        request = iteration_md.build_request(
            self.paths,
            self._setup,
            ws,
            iteration=iteration,
            work_type=work_type,
            work_id=work_id,
            values=values,
            environ=self.environ,
            cancel=self.stop_event,
            clock=self.clock,
        )
        now = iso(self.clock.now())
        self.state = replace(self.state, current_work=CurrentWork(work_type, work_id, now))
        self._save()
        started = self.events.append(
            "agent-start", iteration=iteration, work_type=work_type, work_id=work_id
        )
        self.out(f"🤖 Iteration {iteration}: {work_type} {work_id}")
        run = self.runner(request)
        self._agent_event = self.events.append(
            "agent-end",
            cause=started,
            iteration=iteration,
            exit_code=run.exit_code,
            timed_out=run.timed_out,
            cancelled=run.cancelled,
            duration_s=round(run.duration_s, 3),
            signals=list(run.signals.promises),
            cost_usd=run.cost_usd,
            log=str(run.log_path),
        )
        return run

    def _after_iteration(self, outcome: handlers.Outcome) -> None:
        """Count the iteration, remember its summary, and wait out a usage limit."""
        run = outcome.run
        if run is None:  # an escalation without an agent run is not an iteration
            self._save()
            return
        self._iterations_this_run += 1
        warning = iteration_md.failure_line(self.state.iteration + 1, run)
        if warning is not None:
            self.out(warning)
        excused = run.cancelled or run.rate_limited
        failures = self.state.consecutive_failures
        if outcome.failed:
            failures += 1
        elif outcome.done or not excused:
            failures = 0
            self._set_book(self.book.progressed(iso(self.clock.now())))
        work = self.state.current_work
        what = f"{work.type} {work.id}" if work is not None else "work"
        note = iteration_md.summary(
            self.state.iteration + 1, what, run, done=outcome.done, failed=outcome.failed
        )
        self.state = push_summary(
            replace(
                self.state,
                iteration=self.state.iteration + 1,
                consecutive_failures=failures,
                total_cost_usd=self.state.total_cost_usd + (run.cost_usd or 0.0),
                total_tokens=self.state.total_tokens
                + (run.input_tokens or 0)
                + (run.output_tokens or 0),
                current_work=None if outcome.done else work,
            ),
            note,
        )
        if run.signals.has("COMPLETE") and not run.timed_out:
            self._premature_complete()
        self._save()
        if run.rate_limited:
            self._wait_for_rate_limit(run)

    def _premature_complete(self) -> None:
        """COMPLETE with work left is recorded, and the next prompts say so; the loop goes on."""
        selection = self._select(self._load())
        if selection.kind == "complete":
            return  # the next cycle ends the loop
        left = len(selection.queue)
        first = selection.item.id if selection.item is not None else selection.queue[0].id
        note = f"COMPLETE was ignored: {left} work item(s) remain, next {first}"
        self.events.append("complete-rejected", remaining=left, next=first)
        self.out(f"⚠️  The agent said COMPLETE, but {left} work item(s) remain; going on")
        self.state = push_summary(self.state, note)

    def _minutes_since_progress(self) -> float:
        last = parse_time(self.book.last_progress_at) or parse_time(self.state.started_at)
        if last is None:
            return 0.0
        return max(0.0, (self.clock.now() - last).total_seconds() / 60.0)
