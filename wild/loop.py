"""The main loop (seed 001): load state, report, select, handle one piece of work, sleep when idle.

One fresh agent process per iteration. Idle and blocked waits are not iterations: the loop
blocks on one wake event (file changes, barrier results, signals, control requests) and uses
no CPU while it waits.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from wild import prompts
from wild.agents.registry import build_command, output_format, prompt_on_stdin
from wild.agents.runner import AgentRequest, AgentRun, agent_env, run_agent
from wild.barriers.checker import BarrierChecker
from wild.clock import Clock, SystemClock, iso, parse_time
from wild.commands.init import init_wild
from wild.control import ControlState, end_offset, read_pending
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import Alert, AlertCursor, AlertLog, append_alert, status_update
from wild.parsers.events_log import EventLog
from wild.parsers.state import CurrentWork, LoopState, load_state, push_summary, save_state
from wild.paths import WildPaths
from wild.policy.escalation import progress_report_due, should_escalate, should_escalate_failures
from wild.policy.model import HumanPolicy
from wild.reporting import Reporter
from wild.selection import Selection, WorkItem, WorkSnapshot, select_work, task_key
from wild.store import read_text, update_text
from wild.wake import FolderWatcher, SelfWrites, Waker, WakeReason, install_signal_handlers
from wild.workspace import Workspace, load_workspace

EndReason = Literal["complete", "max-iterations", "max-time", "once", "stopped"]
Runner = Callable[[AgentRequest], AgentRun]
HANDLED = ("human-input", "alert", "task")


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
    monitor_with_agent: bool = True  # one monitoring iteration each time the loop becomes blocked


@dataclass(frozen=True)
class LoopResult:
    reason: EndReason
    iterations: int
    message: str


@dataclass(frozen=True)
class Outcome:
    """How handling one piece of work went."""

    ran_agent: bool
    progressed: bool = False
    run: AgentRun | None = None


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
        self.stop_event = threading.Event()
        self.events = EventLog(paths.events, self.clock)
        self.reporter = Reporter(paths, self.events, out, self._remember(paths.human))
        self.state = LoopState()
        self.policy: HumanPolicy | None = None
        self.alert_log = AlertLog(paths.alerts)
        self.control = ControlState()
        self._control_offset = 0
        self._monitored = False  # ran a monitoring iteration since work was last possible
        self._started = 0.0
        self._iterations_this_run = 0

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

    def _extra(self, key: str) -> dict[str, Any]:
        value = self.state.extra.get(key)
        return dict(value) if isinstance(value, Mapping) else {}

    def _set_extra(self, key: str, value: Mapping[str, Any]) -> None:
        extra = dict(self.state.extra)
        if value:
            extra[key] = dict(value)
        else:
            extra.pop(key, None)
        self.state = replace(self.state, extra=extra)

    # -- lifecycle -----------------------------------------------------------------------

    def run(self) -> LoopResult:
        init_wild(self.paths)
        self.paths.logs.mkdir(exist_ok=True)
        loaded = load_state(self.paths.state, self.clock)
        for problem in loaded.problems:
            self.out(f"⚠️  {problem}")
        now = self.clock.now()
        self.state = replace(
            loaded.state,
            active=True,
            prompt=self.options.goal,
            agent=self.options.agent,
            model=self.options.model,
            started_at=loaded.state.started_at or iso(now),
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
            if self.control.paused:
                self.out("⏸️  paused; `wild --resume` continues")
                self._idle(watcher, checker, ws, None)
                continue
            selection = select_work(self._snapshot(ws))
            if selection.kind == "complete":
                self.out("✅ All work complete.")
                self.events.append("complete", cause=cause, iterations=self.state.iteration)
                return LoopResult("complete", self._iterations_this_run, "all work complete")
            if selection.kind == "blocked":
                if self._should_monitor(selection):
                    outcome = self._monitor(ws, selection)
                    self._after_iteration(outcome)
                    if self.options.once:
                        return LoopResult("once", self._iterations_this_run, "one iteration done")
                    continue
                self._idle(watcher, checker, ws, selection)
                continue
            self._monitored = False
            item = selection.item
            if item is None:  # only "complete" comes without an item, and it returned above
                continue
            outcome = self._handle(ws, item)
            if outcome.ran_agent:
                self._after_iteration(outcome)
                if self.options.once:
                    return LoopResult("once", self._iterations_this_run, "one iteration done")
            if self.stop_event.is_set() or self.control.stop_requested:
                return LoopResult("stopped", self._iterations_this_run, "stopped on request")

    def _limits(self) -> LoopResult | None:
        self._apply_control()
        if self.stop_event.is_set() or self.control.stop_requested:
            return LoopResult("stopped", self._iterations_this_run, "stopped on request")
        limit = self.options.max_iterations
        if limit is not None and self._iterations_this_run >= limit:
            return LoopResult(
                "max-iterations", self._iterations_this_run, f"reached {limit} iterations"
            )
        max_time = self.options.max_time_s
        if max_time is not None and self.clock.monotonic() - self._started >= max_time:
            return LoopResult("max-time", self._iterations_this_run, "reached the time limit")
        return None

    def _apply_control(self) -> None:
        requests, self._control_offset = read_pending(self.paths, self._control_offset)
        if requests:
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
        self.alert_log.refresh()
        ws = load_workspace(self.paths, self.clock.now(), alerts=self.alert_log.index.all())
        if any(task.id is None for task in ws.tasks.tasks):
            self._edit(self.paths.tasks, tasks_md.assign_missing_ids)
            ws = load_workspace(self.paths, self.clock.now(), alerts=self.alert_log.index.all())
        return ws

    def _snapshot(self, ws: Workspace) -> WorkSnapshot:
        awaiting = frozenset(self._extra("awaitingHuman"))
        return replace(ws.snapshot(), awaiting_human=awaiting)

    # -- waiting -------------------------------------------------------------------------

    def _idle(
        self,
        watcher: FolderWatcher,
        checker: BarrierChecker,
        ws: Workspace,
        selection: Selection | None,
    ) -> None:
        if selection is not None and selection.item is not None:
            waiting = ", ".join(b.id for b in selection.waiting_barriers) or selection.item.reason
            self.out(f"⏳ Waiting ({waiting}); sleeping until something changes")
        timeout = self._idle_timeout(ws)
        reasons = watcher.wait_for_work(timeout)
        if any(r.path is not None and r.path.endswith("barriers.md") for r in reasons):
            checker.poke()
        self.events.append("wake", reasons=sorted({r.kind for r in reasons}))

    def _idle_timeout(self, ws: Workspace) -> float | None:
        """Sleep until the next timed duty (a progress report or batched note), else forever."""
        now = self.clock.now()
        deadlines: list[datetime] = []
        flush = self.reporter.next_flush()
        if flush is not None:
            deadlines.append(flush)
        if ws.policy.progress_report_minutes > 0:
            last = parse_time(self.state.last_progress_report) or parse_time(self.state.started_at)
            if last is not None:
                deadlines.append(last + timedelta(minutes=ws.policy.progress_report_minutes))
        if ws.policy.expires_at is not None and ws.policy.expires_at > now:
            deadlines.append(ws.policy.expires_at)
        if not deadlines:
            return None
        return max(0.0, (min(deadlines) - now).total_seconds())

    def _progress_report(self, ws: Workspace, cause: str) -> None:
        now = self.clock.now()
        started = parse_time(self.state.started_at) or now
        if not progress_report_due(
            ws.policy, parse_time(self.state.last_progress_report), started, now
        ):
            return
        snapshot = self._snapshot(ws)
        done = sum(1 for t in ws.tasks.tasks if t.status == "complete")
        open_alerts = [a for a in snapshot.alerts]
        waiting = [b.id for b in ws.barriers.barriers if b.status == "waiting"]
        current = self.state.current_work
        summary = (
            f"Tasks: {done}/{len(ws.tasks.tasks)} complete\n"
            f"Alerts: {len(open_alerts)} open\n"
            f"Barriers waiting: {', '.join(waiting) or 'none'}\n"
            f"Iterations: {self.state.iteration}\n"
            f"Current work: {f'{current.type} {current.id}' if current else 'none'}"
        )
        self.reporter.progress(ws.policy, now=now, summary=summary, cause=cause)
        self.state = replace(self.state, last_progress_report=iso(now))
        self._save()

    # -- one piece of work ---------------------------------------------------------------

    def _handle(self, ws: Workspace, item: WorkItem) -> Outcome:
        if item.kind == "human-input":
            return self._human_input(ws, item)
        if item.kind == "alert":
            return self._alert(ws, item)
        return self._task(ws, item)

    def _run(
        self, ws: Workspace, kind: str, work_type: str, work_id: str, values: dict[str, object]
    ) -> AgentRun:
        """Build the prompt, run one agent process, record the iteration."""
        iteration = self.state.iteration + 1
        now = self.clock.now()
        context = prompts.context_summary(
            tuple(a for a in ws.alerts if a.status != "resolved"),
            ws.tasks.tasks,
            ws.barriers.barriers,
        )
        prompt = prompts.render(
            kind,
            self.paths.prompts,
            {
                **prompts.common_values(
                    iteration=iteration,
                    goal=self.options.goal,
                    context=context,
                    policy=ws.policy,
                    work_id=work_id,
                ),
                **values,
            },
        )
        prompt_file = self.paths.logs / f"iteration-{iteration}.prompt.md"
        prompt_file.write_text(prompt, encoding="utf-8")
        self.state = replace(
            self.state,
            current_work=CurrentWork(type=work_type, id=work_id, started_at=iso(now)),
        )
        self._save()
        argv = build_command(
            self.options.agent,
            prompt,
            self.options.model,
            prompt_file=prompt_file,
            skip_permissions=ws.policy.mode != "interactive",
            agent_cmd=self.options.agent_cmd,
            environ=self.environ,
        )
        started_event = self.events.append(
            "agent-start", iteration=iteration, work_type=work_type, work_id=work_id
        )
        self.out(f"🤖 Iteration {iteration}: {work_type} {work_id}")
        run = self.runner(
            AgentRequest(
                argv=tuple(argv),
                cwd=self.paths.project,
                log_path=self.paths.logs / f"iteration-{iteration}.log",
                env={
                    **agent_env(
                        wild_dir=self.paths.root.resolve(),
                        iteration=iteration,
                        work_type=work_type,
                        work_id=work_id,
                        prompt_file=prompt_file.resolve(),
                    )
                },
                stdin=prompt.encode("utf-8") if prompt_on_stdin(self.options.agent) else None,
                timeout_s=self.options.agent_timeout_s,
                heartbeat_s=self.options.heartbeat_s,
                cancel=self.stop_event,
                output_format=output_format(self.options.agent),
                clock=self.clock,
            )
        )
        self.events.append(
            "agent-end",
            cause=started_event,
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

    def _after_iteration(self, outcome: Outcome) -> None:
        run = outcome.run
        if run is None:
            return
        self._iterations_this_run += 1
        tokens = (run.input_tokens or 0) + (run.output_tokens or 0)
        failures = (
            0 if (outcome.progressed and not run.failed) else self.state.consecutive_failures + 1
        )
        summary = (
            f"iteration {self.state.iteration + 1}: "
            f"{self.state.current_work.type if self.state.current_work else 'work'} "
            f"{self.state.current_work.id if self.state.current_work else ''} → "
            f"exit {run.exit_code}, signals {', '.join(run.signals.promises) or 'none'}"
        )
        self.state = push_summary(
            replace(
                self.state,
                iteration=self.state.iteration + 1,
                consecutive_failures=failures,
                total_cost_usd=self.state.total_cost_usd + (run.cost_usd or 0.0),
                total_tokens=self.state.total_tokens + tokens,
                current_work=self.state.current_work if not outcome.progressed else None,
            ),
            summary,
        )
        if outcome.progressed:
            self.state = replace(
                self.state, extra={**self.state.extra, "lastProgressAt": iso(self.clock.now())}
            )
        self._save()
        if run.rate_limited:
            self._wait_for_rate_limit(run)

    def _wait_for_rate_limit(self, run: AgentRun) -> None:
        reset = run.rate_limit_reset
        wait_s = (reset - self.clock.now()).total_seconds() if reset is not None else 300.0
        wait_s = max(1.0, min(wait_s, 6 * 3600.0))
        self.out(f"⏳ The agent hit a usage limit; waiting {int(wait_s)} s for it to reset")
        self.events.append("rate-limited", wait_s=wait_s)
        deadline = time.monotonic() + wait_s
        while not self.stop_event.is_set() and time.monotonic() < deadline:
            self.waker.wait(deadline - time.monotonic())

    def _common_signals(
        self, ws: Workspace, run: AgentRun, related: str, cause: str | None
    ) -> bool:
        """NOTIFY_HUMAN and NEED_HUMAN_INPUT from any kind of work; True when the item now waits."""
        signals = run.signals
        now = self.clock.now()
        if signals.has("NOTIFY_HUMAN"):
            self.reporter.notify(
                ws.policy,
                now=now,
                related=related,
                message=signals.reason or "(no reason given)",
                cause=cause,
            )
        needs = (
            signals.has("NEED_HUMAN_INPUT")
            or signals.has("NEEDS_HUMAN")
            or (signals.event_output is not None and signals.event_output.status == "needs_human")
        )
        if needs:
            reason = signals.reason or "the agent asked for your input"
            self.reporter.ask(
                ws.policy,
                now=now,
                related=related,
                title=reason,
                body=f"Urgency: {signals.urgency or 'medium'}",
                cause=cause,
            )
        return needs

    def _await_human(self, work_key: str, reason: str) -> None:
        awaiting = self._extra("awaitingHuman")
        awaiting[work_key] = reason
        self._set_extra("awaitingHuman", awaiting)
        self._save()

    def _failure(self, ws: Workspace, work_key: str, run: AgentRun) -> None:
        """Count a failed attempt at non-alert work and escalate per policy."""
        failures = self._extra("failures")
        count = int(failures.get(work_key, 0)) + 1
        failures[work_key] = count
        self._set_extra("failures", failures)
        escalation = should_escalate_failures(work_key, ws.policy, count)
        if escalation.escalate and escalation.reason:
            if escalation.blocking:
                self.reporter.ask(
                    ws.policy,
                    now=self.clock.now(),
                    related=work_key,
                    title=escalation.reason,
                    body=f"Last log: {run.log_path}",
                    cause=None,
                )
                self._await_human(work_key, escalation.reason)
            else:
                self.reporter.notify(
                    ws.policy,
                    now=self.clock.now(),
                    related=work_key,
                    message=escalation.reason,
                    cause=None,
                )

    def _clear_failures(self, work_key: str) -> None:
        failures = self._extra("failures")
        if failures.pop(work_key, None) is not None:
            self._set_extra("failures", failures)

    # -- handlers ------------------------------------------------------------------------

    def _human_input(self, ws: Workspace, item: WorkItem) -> Outcome:
        entry = next(h for h in ws.human.inputs if h.key == item.id and h.status == "pending")
        escalated = [a for a in ws.alerts if a.status == "escalated"]
        related = entry.related_alert or (escalated[0].id if escalated else None)
        values = prompts.human_input_values(replace(entry, related_alert=related))
        run = self._run(ws, "human-input", "human-input", entry.key, values)
        if run.cancelled:
            return Outcome(ran_agent=True, run=run)
        self._common_signals(ws, run, entry.key, None)
        if not run.signals.has("HUMAN_INPUT_PROCESSED"):
            self._failure(ws, entry.key, run)
            return Outcome(ran_agent=True, run=run)
        now = self.clock.now()
        self._edit(
            self.paths.human,
            lambda text: human_md.mark_processed(
                text,
                entry.key,
                processed_at=iso(now),
                note=f"processed in iteration {self.state.iteration + 1}",
            ),
        )
        self._clear_failures(entry.key)
        # The human has answered: whatever waited on them may go on, with this input as guidance.
        open_questions = [q.key for q in ws.human.inputs if q.status == "question"]
        if open_questions:
            self._edit(self.paths.human, lambda text: _answer_all(text, open_questions))
        self._set_extra("awaitingHuman", {})
        if related is not None:
            alert = next((a for a in ws.alerts if a.id == related), None)
            if alert is not None and alert.status in ("escalated", "pending", "in-progress"):
                append_alert(
                    self.paths.alerts,
                    status_update(alert, "pending", now, humanGuidance=entry.content),
                )
        self.out(f"✅ Human input {entry.key} processed")
        return Outcome(ran_agent=True, progressed=True, run=run)

    def _alert(self, ws: Workspace, item: WorkItem) -> Outcome:
        alert = next(a for a in ws.alerts if a.id == item.id)
        attempts = _attempts(alert)
        escalation = should_escalate(
            alert,
            ws.policy,
            attempts=attempts,
            minutes_since_progress=self._minutes_since_progress(),
        )
        notified = self._extra("notified")
        now = self.clock.now()
        if (
            escalation.escalate
            and escalation.reason
            and f"{alert.id}:{escalation.reason}" not in notified
        ):
            key = f"{alert.id}:{escalation.reason}"
            # Asked or told once per reason: after the human answers, the agent gets to work.
            notified[key] = iso(now)
            self._set_extra("notified", notified)
            if escalation.blocking:
                append_alert(self.paths.alerts, status_update(alert, "escalated", now))
                self.reporter.ask(
                    ws.policy,
                    now=now,
                    related=alert.id,
                    title=escalation.reason,
                    body=f"[{alert.severity.upper()}] {alert.source}: {alert.description}",
                    cause=None,
                )
                self.out(f"⏸️  Escalated {alert.id} to the human: {escalation.reason}")
                return Outcome(ran_agent=False)
            self.reporter.notify(
                ws.policy,
                now=now,
                related=alert.id,
                message=f"{escalation.reason}: [{alert.severity}] {alert.description}",
                cause=None,
            )
        started = status_update(alert, "in-progress", now)
        append_alert(self.paths.alerts, started)
        attempt = int(started["context"]["attempt"])
        guidance = alert.raw.get("humanGuidance")
        values = prompts.alert_values(
            alert, ws.policy, attempt, guidance if isinstance(guidance, str) else ""
        )
        run = self._run(ws, "alert", "alert", alert.id, values)
        if run.cancelled:
            return Outcome(ran_agent=True, run=run)
        waits = self._common_signals(ws, run, alert.id, None)
        resolution = next((r for r in run.signals.resolutions if r.alert_id == alert.id), None)
        latest = self._latest_alert(alert.id)
        if (
            run.signals.has("ALERT_RESOLVED")
            or resolution is not None
            or (latest is not None and latest.status == "resolved")
        ):
            if latest is None or latest.status != "resolved":
                extra: dict[str, Any] = {}
                if resolution is not None:
                    extra["resolution"] = {"choice": resolution.choice, "note": resolution.note}
                append_alert(
                    self.paths.alerts,
                    status_update(latest or alert, "resolved", self.clock.now(), **extra),
                )
            self._clear_notified(alert.id)
            self.out(f"✅ Alert resolved: {alert.id}")
            return Outcome(ran_agent=True, progressed=True, run=run)
        if waits:
            append_alert(
                self.paths.alerts, status_update(latest or alert, "escalated", self.clock.now())
            )
        return Outcome(ran_agent=True, run=run)

    def _latest_alert(self, alert_id: str) -> Alert | None:
        self.alert_log.refresh()
        return self.alert_log.index.get(alert_id)

    def _clear_notified(self, alert_id: str) -> None:
        notified = {
            k: v for k, v in self._extra("notified").items() if not k.startswith(f"{alert_id}:")
        }
        self._set_extra("notified", notified)

    def _task(self, ws: Workspace, item: WorkItem) -> Outcome:
        task = next(t for t in ws.tasks.tasks if task_key(t) == item.id)
        if task.status == "todo" and task.id is not None:
            self._edit(
                self.paths.tasks, lambda text: tasks_md.set_status(text, item.id, "in-progress")
            )
        feedback = "\n".join(f"- {s}" for s in self.state.recent_summaries)
        run = self._run(ws, "task", "task", item.id, prompts.task_values(task, feedback))
        if run.cancelled:
            return Outcome(ran_agent=True, run=run)
        waits = self._common_signals(ws, run, item.id, None)
        if waits:
            self._await_human(item.id, run.signals.reason or "the agent asked for input")
        now_task = tasks_md.find(tasks_md.parse(read_text(self.paths.tasks)), item.id)
        ticked = now_task is not None and now_task.status == "complete"
        if run.signals.has("TASK_COMPLETE") or ticked:
            if not ticked:
                self._edit(
                    self.paths.tasks, lambda text: tasks_md.set_status(text, item.id, "complete")
                )
            self._clear_failures(item.id)
            self.out(f"✅ Task complete: {item.id}")
            return Outcome(ran_agent=True, progressed=True, run=run)
        if run.failed and not waits:
            self._failure(ws, item.id, run)
        return Outcome(ran_agent=True, progressed=not run.failed, run=run)

    def _should_monitor(self, selection: Selection) -> bool:
        return self.options.monitor_with_agent and selection.can_check and not self._monitored

    def _monitor(self, ws: Workspace, selection: Selection) -> Outcome:
        self._monitored = True
        ids = ",".join(b.id for b in selection.waiting_barriers)
        run = self._run(
            ws,
            "monitoring",
            "monitoring",
            ids,
            prompts.monitoring_values(selection.waiting_barriers),
        )
        if not run.cancelled:
            self._common_signals(ws, run, ids, None)
        return Outcome(ran_agent=True, progressed=run.signals.has("MONITORING_COMPLETE"), run=run)

    def _minutes_since_progress(self) -> float:
        last = parse_time(self.state.extra.get("lastProgressAt")) or parse_time(
            self.state.started_at
        )
        if last is None:
            return 0.0
        return max(0.0, (self.clock.now() - last).total_seconds() / 60.0)


def _attempts(alert: Alert) -> int:
    attempt = alert.context.get("attempt", 0)
    return attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else 0


def _answer_all(text: str, keys: list[str]) -> str:
    for key in keys:
        text = human_md.mark_answered(text, key)
    return text
