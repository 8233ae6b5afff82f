"""The loop's decisions, pure: `decide(model, event, at) -> Step` (seed 001's cycle).

No file, process, clock or sleep is touched here: the time comes in as `at`, the files as the
parsed documents in `model.ws`, and what should happen goes out as actions. The driver
(wild/loop/driver.py) performs them and feeds back what happened as the next event.

Decisions the seed leaves open:
- When all remaining work waits on barriers wild can check, one monitoring iteration runs when
  the loop becomes blocked, then again every `MONITOR_EVERY_S` while it stays blocked.
- An item waits for the human after NEED_HUMAN_INPUT or a blocking escalation; other work goes
  on, except at autonomy level low (interactive), where nothing but human input starts while a
  question is open. Any processed human input answers every open question.
- `COMPLETE` never ends the loop by itself: the loop ends when no work is left. A premature
  `COMPLETE` is recorded (events.log, and the next prompts' notes) and the loop goes on.
- A usage-limited run waits for the reset (or `wild --stop`) and is not counted as a failure.
"""

from __future__ import annotations

from datetime import timedelta

from wild.clock import iso, later, parse_time
from wild.loop import (
    agent_record,
    human_only,
    limits,
    notes,
    phases,
    research,
    research_step,
    work,
)
from wild.loop.bookkeeping import select_with_holds
from wild.loop.model import (
    Action,
    AgentFinished,
    Ask,
    Checkpoint,
    ChecksFinished,
    CompactAlerts,
    Continue,
    ControlRequested,
    EditFile,
    End,
    EndReason,
    Event,
    FlushNotes,
    IoFailed,
    Log,
    LoopModel,
    LoopResult,
    Moment,
    Report,
    RunAgent,
    RunsSupervised,
    Say,
    Step,
    SweepsRecorded,
    TaskVerified,
    Tick,
    TimedOut,
    Wait,
)
from wild.loop.run_words import failure_line, failure_of, progress_summary, summary
from wild.output import plural
from wild.parsers import tasks as tasks_md
from wild.parsers.state import push_summary
from wild.policy.escalation import progress_report_due
from wild.policy.model import HumanPolicy, effective_policy
from wild.policy.trust import hold_policy
from wild.record import replace
from wild.selection import HUMAN_ONLY_WAIT, HUMAN_WAIT, Selection

# _AFTER_WORK: the decisions on work done (a run judged and its claims, a task's checks, the
# end of the plan) import their modules when first made: the first decision starts an agent,
# and they are not on its way (issue 22 item 8).

# Resolved alerts kept in alerts.jsonl before the loop moves them to the archive: enough that
# compaction is rare (it rewrites the file), few enough that a cold read of the log stays fast.
COMPACT_AFTER_RESOLVED = 1000
# Planning runs in a row that neither plan nor confirm before the loop gives up: with no
# tasks there is nothing else to do, and an agent that cannot plan would spin forever.
PLANNING_TRIES = 3
# While all work waits on barriers an agent looks at the jobs, and again this often.
MONITOR_EVERY_S = 1800.0


def decide(model: LoopModel, event: Event, at: Moment) -> Step:
    """The next model and the actions that get there; a step ends with RunAgent, Wait,
    Continue or End (a control request's step ends with Continue). The loop's state moves
    with it (wild/loop/phases.py): its `state` lines come first, and a `Wait` is cut at the
    new state's timeout. state.json's count of iterations and running time are written in
    (`limits.kept`)."""
    step = _moved(model, event, at)
    changed = step.model.state != model.state
    state = limits.kept(step.model, at.mono, changed)
    if state is step.model.state:  # nothing to write in (most steps but an agent's end)
        return step
    return Step(replace(step.model, state=state), step.actions)


def _moved(model: LoopModel, event: Event, at: Moment) -> Step:
    if isinstance(event, AgentFinished):
        model = replace(model, cause=event.event_id)
    elif isinstance(event, Tick | ControlRequested) and event.cause is not None:
        model = replace(model, cause=event.cause)
    if isinstance(event, TimedOut):
        moved = phases.timed_out(model, at)
        model, logs = moved if moved is not None else (model, ())
        return Step(model, (*logs, Continue()))
    if isinstance(event, IoFailed):
        fields = {"error": event.error, "retry_in_s": event.retry_in_s}
        failed = Log("io-error", model.cause, fields)
        model, logs = phases.move(model, "ERROR_RECOVERY", "io-error", at)
        return Step(model, (failed, *logs, Wait(event.retry_in_s)))
    model, before = phases.before(model, event, at)
    step = _decide(model, event, at)
    model, actions = phases.after(step.model, step.actions, at)
    penalty = policy_at(model, at).context_switch_penalty_minutes
    model, actions = notes.batched(model, actions, at, penalty)
    return Step(model, (*before, *actions))


def _decide(model: LoopModel, event: Event, at: Moment) -> Step:
    if isinstance(event, ControlRequested):
        return _control(model, event)
    if isinstance(event, AgentFinished):
        return _agent_finished(model, event, at)
    if isinstance(event, TaskVerified):
        from wild.loop import task_checks  # noqa: PLC0415 (see _AFTER_WORK)

        return task_checks.task_verified(model, event, policy_at(model, at))
    if isinstance(event, ChecksFinished):
        from wild.loop import ending  # noqa: PLC0415 (see _AFTER_WORK)

        model, actions = ending.checks_finished(model, event, policy_at(model, at))
        return Step(model, (*actions, Continue()))
    if isinstance(event, RunsSupervised):
        return research_step.supervised(model, event, at)
    if isinstance(event, SweepsRecorded):
        return research_step.recorded(model, event)
    if isinstance(event, Tick):
        return _tick(model, event, at)
    return Step(model, (Continue(),))  # TimedOut and IoFailed are met in `decide`


def policy_at(model: LoopModel, at: Moment) -> HumanPolicy:
    """The policy in force now (a timed policy, or the trust a human recorded, may have
    expired since the file was read)."""
    policy = effective_policy(model.ws.policy, at.now)[0]
    return hold_policy(policy, model.ws.recorded_trust, at.now).policy


def _end(model: LoopModel, reason: EndReason, message: str, *before: Action) -> Step:
    # Batched notes would be lost with the loop.
    result = LoopResult(reason, model.iterations, message)
    return Step(model, (*before, FlushNotes(everything=True), End(result)))


def _control(model: LoopModel, event: ControlRequested) -> Step:
    control = model.control.apply(event.requests)
    actions = tuple(
        Log("control", None, {"command": r.command, **({"target": r.target} if r.target else {})})
        for r in event.requests
    ) + research_step.run_requests(event.requests)
    state = model.state
    if control.paused != state.paused:
        state = replace(state, paused=control.paused)
    model = replace(model, control=control, state=state)
    if any(r.command == "recheck" for r in event.requests):
        # A command was approved: what waited for an approval is tried again.
        book = model.book.released(work.CHECKS)
        from wild.loop import task_checks  # noqa: PLC0415 (see _AFTER_WORK)

        for key, reason in model.book.awaiting.items():
            if reason == task_checks.approval_reason(key):
                book = book.released(key)
        # Runs held for a sweep's approval are looked at now, not at the next poll.
        model = replace(model, checks_ran_at=None, runs_due=True).with_book(book)
    return Step(model, (*actions, Continue()))


# -- one cycle: limits, reports, selection, then work or sleep --------------------------------


def _tick(model: LoopModel, event: Tick, at: Moment) -> Step:
    if event.stop or model.control.stop_requested:
        return _end(model, "stopped", "stopped on request")
    reached = limits.reached(model, at)
    if reached is not None:
        return _end(model, *reached)
    runs = research_step.on_tick(model, event, at)
    if runs is not None:
        return runs
    model, told = _tell_refusals(model)
    if told:
        return Step(model, (*told, Continue()))
    model, announced = human_only.announce(model, at)
    if announced:
        return Step(model, (*announced, Continue()))
    if tasks_md.missing_ids(model.ws.tasks) and "tasks" not in model.ws.refused:
        # Ids first (one minimal edit), so every piece of work has a name to be held by.
        return Step(model, (EditFile("tasks", tasks_md.assign_missing_ids), Continue()))
    policy = policy_at(model, at)
    model, actions = _reports(model, policy, at)
    model, compaction = _compaction(model)
    actions += compaction
    if model.rate_limited_until is not None and at.mono < model.rate_limited_until:
        return Step(model, (*actions, Wait(model.rate_limited_until - at.mono)))
    settling = research.settling_alerts(model.ws.open_alerts, model.ws.runs.runs, at.now)
    selection = (
        None
        if model.control.paused
        else select_with_holds(model.ws, frozenset(model.book.awaiting) | settling.keys())
    )
    if model.complete_claimed:
        model, judged = _judge_complete(model, selection)
        actions += judged
    if selection is not None and selection.kind == "complete":
        waiting = _runs_going(model, actions, at)
        if waiting is not None:
            return waiting
        return _no_work_left(replace(model, idle_note=None), actions, at)
    pause_s = limits.backoff_left(model, selection.kind if selection else None, at)
    if pause_s:
        return Step(model, (*actions, Wait(pause_s)))
    started = _start_work(model, selection, policy, at)
    if started is not None:
        model, work_actions = started
        model = replace(model, idle_note=None)
        return Step(model, (*actions, *work_actions))
    if model.options.once and not settling:
        item = selection.item if selection is not None else None
        if item is not None and item.reason in (HUMAN_WAIT, HUMAN_ONLY_WAIT):
            return _end(model, "waiting-human", "waiting for the human's answer", *actions)
        return _end(model, "once", "nothing to run now", *actions)
    # A run alert gathering its flood is not waiting for the human: nothing to say yet.
    item = selection.item if selection is not None else None
    note = None if item is not None and item.id in settling else _idle_note(selection)
    if note is not None and note != model.idle_note:
        # Said once per reason, not at every wake-up.
        actions += (Say(note), *work.stuck_plan_question(selection))
    model = replace(model, idle_note=note)
    timeout = _idle_timeout(model, policy, selection, at)
    if settling:  # hand the gathered alert on once its window closes
        timeout = min([*settling.values(), *([] if timeout is None else [timeout])])
    return Step(model, (*actions, Wait(timeout)))


def _tell_refusals(model: LoopModel) -> tuple[LoopModel, tuple[Action, ...]]:
    """Say once that a file is read-only or linked out of the project (its work waits, see
    `refused_work`), or that tasks.md was damaged; again only if it comes back after the
    human fixed it."""
    told = (*model.ws.refusals, *(("tasks", notice) for notice in model.ws.notices))
    if told == model.refusals_told:
        return model, ()
    actions: list[Action] = []
    for name, message in told:
        if (name, message) not in model.refusals_told:
            kind = "write-refused" if (name, message) in model.ws.refusals else "file-damaged"
            actions.append(Say(f"⚠️  {message}"))
            actions.append(Log(kind, model.start_event, {"file": name, "error": message}))
    return replace(model, refusals_told=told), tuple(actions)


def _reports(
    model: LoopModel, policy: HumanPolicy, at: Moment
) -> tuple[LoopModel, tuple[Action, ...]]:
    """A due progress report, and batched notes whose window has passed."""
    started = parse_time(model.state.started_at) or at.now
    last = parse_time(model.state.last_progress_report)
    if not progress_report_due(policy, last, started, at.now):
        return model, (FlushNotes(),)
    report = Report(progress_summary(model.ws, model.state), model.start_event)
    state = replace(model.state, last_progress_report=iso(at.now))
    return replace(model, state=state), (report, FlushNotes())


def _compaction(model: LoopModel) -> tuple[LoopModel, tuple[Action, ...]]:
    """Compact once resolved alerts pass the threshold; not again while their count stands
    (a compaction that could move nothing must not repeat every cycle)."""
    resolved = len(model.ws.alerts) - len(model.ws.open_alerts)
    if resolved < COMPACT_AFTER_RESOLVED or resolved == model.compacted_with:
        return model, ()
    return replace(model, compacted_with=resolved), (CompactAlerts(),)


def _runs_going(model: LoopModel, actions: tuple[Action, ...], at: Moment) -> Step | None:
    """With every task done, runs still queued or running (a rerun asked for after the
    analysis, say) keep the loop: it waits for them (their exit markers wake it), never
    ends and leaves them behind. None when no run is open."""
    going = research_step.active_runs(model)
    if not going:
        return None
    note = f"⏳ Every task is done; waiting for {plural(going, 'run')} queued or running"
    if note != model.idle_note:
        actions += (Say(note),)
    model = replace(model, idle_note=note)
    return Step(model, (*actions, Wait(research_step.poll_in(model, at) or None)))


def _no_work_left(model: LoopModel, actions: tuple[Action, ...], at: Moment) -> Step:
    """Run the completion checks, work on them, plan, or end (wild/loop/ending.py)."""
    from wild.loop import ending  # noqa: PLC0415 (see _AFTER_WORK)

    following = ending.next_at_end(model, at)
    if following is not None:
        model, more = following
        return Step(model, (*actions, *more))
    if ending.may_end(model):
        done = (
            Say("✅ All work complete."),
            Log("complete", model.start_event, {"iterations": model.state.iteration}),
        )
        return _end(model, "complete", "all work complete", *actions, *done)
    tries = model.book.failures.get(work.PLANNING, 0)
    if tries >= PLANNING_TRIES:
        message = (
            f"the agent wrote no plan and did not confirm the goal in {tries} planning runs;"
            " add tasks to .wild/tasks.md or read the agent's logs in .wild/logs/"
        )
        return _end(model, "no-plan", message, *actions)
    model, planning = work.start_planning(model, at)
    return Step(model, (*actions, *planning))


def _judge_complete(
    model: LoopModel, selection: Selection | None
) -> tuple[LoopModel, tuple[Action, ...]]:
    """COMPLETE with work left is recorded, and the next prompts say so; the loop goes on.
    COMPLETE from a planning or checks run with no work left confirms the goal is met."""
    claim = model.complete_claimed
    model = replace(model, complete_claimed=None)
    confirming = claim in (work.PLANNING, work.CHECKS)
    if selection is not None and selection.kind == "complete" and confirming:
        return replace(model, confirmed_at=model.state.iteration), ()
    if selection is None or selection.kind == "complete" or not selection.queue:
        return model, ()
    left = len(selection.queue)
    first = selection.item.id if selection.item is not None else selection.queue[0].id
    note = f"COMPLETE was ignored: {plural(left, 'work item')} left, next {first}"
    model = replace(model, state=push_summary(model.state, note, model.options.context_window))
    return model, (
        Log("complete-rejected", model.agent_event, {"remaining": left, "next": first}),
        Say(f"⚠️  The agent said COMPLETE with {plural(left, 'work item')} left; going on"),
    )


def _start_work(
    model: LoopModel, selection: Selection | None, policy: HumanPolicy, at: Moment
) -> tuple[LoopModel, tuple[Action, ...]] | None:
    """Work on the selected item, or monitor the barriers; None when there is nothing to do."""
    if selection is None or selection.item is None:
        return None
    if selection.kind != "blocked":
        # The next time all work waits, look at the jobs again.
        model = replace(model, monitored_at=None)
        model, actions = work.start(model, selection.item, policy, at)
        if not any(isinstance(a, RunAgent) for a in actions):
            return model, (*actions, Continue())  # an escalation without an agent run
        return model, actions
    if _monitor_in(model, selection, at) == 0.0:
        model = replace(model, monitored_at=at.mono)
        return work.start_monitoring(model, selection, at)
    return None


def _idle_note(selection: Selection | None) -> str | None:
    if selection is None:
        return "⏸️  paused; `wild --resume` continues"
    if selection.item is None:
        return None
    waiting = ", ".join(b.id for b in selection.waiting_barriers) or selection.item.reason
    return f"⏳ Waiting ({waiting}); sleeping until something changes"


def _monitor_in(model: LoopModel, selection: Selection, at: Moment) -> float | None:
    """Seconds until a monitoring iteration is due (0: now); None when none will be."""
    if not selection.can_check:
        return None
    if model.monitored_at is None:
        return 0.0
    return max(0.0, model.monitored_at + MONITOR_EVERY_S - at.mono)


def _idle_timeout(
    model: LoopModel, policy: HumanPolicy, selection: Selection | None, at: Moment
) -> float | None:
    """Sleep until the next timed duty, else until something happens (the driver adds the
    batched notes' window is added to every Wait after the step: wild/loop/notes.py)."""
    moments = [policy.expires_at]
    if policy.progress_report_minutes > 0:
        last = parse_time(model.state.last_progress_report) or parse_time(model.state.started_at)
        if last is not None:
            moments.append(later(last, timedelta(minutes=policy.progress_report_minutes)))
    waits = [max(0.0, (m - at.now).total_seconds()) for m in moments if m is not None]
    timers = (
        limits.time_left(model, at),
        None if selection is None else _monitor_in(model, selection, at),
        research_step.poll_in(model, at),
    )
    waits += [w for w in timers if w is not None]
    return min(waits) if waits else None


# -- after an agent run -----------------------------------------------------------------------


def _agent_finished(model: LoopModel, event: AgentFinished, at: Moment) -> Step:
    """Judge the run, count the iteration, remember its summary, and wait out a usage limit."""
    from wild.loop import claims, judge  # noqa: PLC0415 (see _AFTER_WORK)

    run, running = event.run, model.running
    model = replace(
        model,
        agent_event=event.event_id,
        last_work_type=running.work_type if running is not None else None,
    )
    outcome = judge.finish(model, run, policy_at(model, at), at)
    model = replace(model.with_book(outcome.book), running=None)
    actions: list[Action] = list(outcome.actions)
    iteration = model.state.iteration + 1
    work_type = running.work_type if running is not None else None
    warning = failure_line(iteration, run, failed_attempt=outcome.failed, work_type=work_type)
    if warning is not None:  # why it failed, before what follows (an escalation, a backoff)
        actions.insert(0, Say(warning))
    book, failures = model.book, model.state.consecutive_failures
    if outcome.failed:
        failures += 1
    elif outcome.done or not (run.cancelled or run.rate_limited):
        failures = 0
        book = book.progressed(iso(at.now))
    work_now = model.state.current_work
    what = f"{work_now.type} {work_now.id}" if work_now is not None else "work"
    note = summary(iteration, what, run, done=outcome.done, failed=outcome.failed)
    state = replace(
        agent_record.ended(model.state),  # its number is counted in this state: the record goes
        iteration=iteration,
        consecutive_failures=failures,
        total_cost_usd=model.state.total_cost_usd + (run.cost_usd or 0.0),
        total_tokens=model.state.total_tokens + (run.input_tokens or 0) + (run.output_tokens or 0),
        current_work=None if outcome.done else work_now,
    )
    # A run the agent's usage limit cut short is waited out, not counted against the limit.
    model = replace(
        model,
        state=push_summary(state, note, model.options.context_window),
        iterations=model.iterations + 1,
        counted=model.counted + (0 if run.rate_limited else 1),
    )
    model = model.with_book(book)
    believed = claims.believed(run)
    if believed.has("COMPLETE") and running is not None:
        model = replace(model, complete_claimed=running.work_type)
    model, launched = research_step.sweeps_of(model, run, f"iteration {iteration}")
    actions += launched
    # A usage limit is waited out; a failure the judge escalated already has the human's eye.
    escalated = any(isinstance(a, Ask) for a in outcome.actions)
    failure = None if run.rate_limited or escalated else failure_of(run)
    model, stall = limits.stalled(model, failure, event, outcome.done or outcome.failed)
    actions += stall
    pause_s = limits.backoff_s(failures)
    model = replace(model, backoff_until=at.mono + pause_s if pause_s else None)
    if pause_s and limits.reached(model, at) is None:  # no "next" when a limit ends the loop
        failed_ones = plural(failures, "failed iteration")
        actions += [
            Say(f"⏳ {failed_ones} in a row; the next starts in {pause_s:.0f} s"),
            Log("backoff", event.event_id, {"failures": failures, "wait_s": pause_s}),
        ]
    if run.rate_limited:
        wait_s, told = limits.rate_limit_pause(run, at, event.event_id)
        actions += told
        model = replace(model, rate_limited_until=at.mono + wait_s)
    every = model.options.checkpoint_every
    if every and iteration % every == 0:
        actions.append(Checkpoint(iteration))
    if outcome.verify is not None:  # the task's own check decides; --once ends after it
        return Step(model, (*actions, outcome.verify))
    if model.options.once and running is not None:
        return _end(model, "once", "one iteration done", *actions)
    return Step(model, (*actions, Continue()))
