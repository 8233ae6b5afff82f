"""Where research runs enter the loop's decisions, pure (the rules are wild.loop.research).

- Supervising: a run's exit marker, a change of runs.jsonl from outside, the loop's start,
  a recorded sweep or a run act make the next step `SuperviseRuns`; while runs are active a
  slow poll (`LoopOptions.runs_poll_s`) is the safety net for ends no file event reports (a wrapper
  killed by SIGKILL writes no marker; a shared filesystem sends no events).
- After a step: the runs that failed in it raise one alert (a flood is one alert); backend
  errors raise an alert once per distinct message.
- Every decision also closes the sweeps that are done (all runs terminal, their alerts
  answered): their barrier is satisfied, so the analysis task becomes selectable.
- An agent's `<sweep>` is validated here; a bad one launches nothing and the errors go into
  the next prompts' notes. A good one is recorded by the driver (`RecordSweep`).
- A choice on a run alert acts on its runs (`ActOnRuns`), whoever answered it, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from wild.agents.run_result import AgentRun
from wild.clock import duration_text, iso
from wild.loop import research
from wild.loop.model import (
    Action,
    ActOnRuns,
    AppendAlert,
    CloseSweep,
    Continue,
    Log,
    LoopModel,
    Moment,
    RecordSweep,
    RunsSupervised,
    Say,
    Step,
    SuperviseRuns,
    SweepsRecorded,
    Tick,
)
from wild.output import plural
from wild.parsers.alert_answer import answer_of
from wild.parsers.alerts import make_alert, status_update
from wild.parsers.control import ControlRequest
from wild.parsers.run_table import eta_s, facts_of, sweep_facts
from wild.parsers.runs import RunIndex, RunRecord
from wild.parsers.state import push_summary
from wild.record import replace
from wild.runs import retry, stage

STAGE_KEY = "stage"  # in state.json
BACKEND_ALERT_TYPE = "run-backend-error"


def active_runs(model: LoopModel) -> int:
    return sum(1 for run in model.ws.runs.runs.values() if not run.terminal)


def poll_in(model: LoopModel, at: Moment) -> float | None:
    """Seconds until the safety poll of active runs is due; None with no run active."""
    if not active_runs(model):
        return None
    if model.runs_polled_at is None:
        return 0.0
    return max(0.0, model.runs_polled_at + model.options.runs_poll_s - at.mono)


def on_tick(model: LoopModel, tick: Tick, at: Moment) -> Step | None:
    """Supervise the runs, or close done sweeps, before anything else is selected."""
    if tick.runs or model.runs_due or poll_in(model, at) == 0.0:
        model = replace(model, runs_due=False, runs_polled_at=at.mono)
        return Step(model, (SuperviseRuns(),))
    applying = choices_to_apply(model, at)
    if applying:
        return Step(model, (*applying, Continue()))
    closing = close_done_sweeps(model)
    if closing:
        return Step(model, (*closing, Continue()))
    now = stage_now(model)
    before = model.state.extra.get(STAGE_KEY, "exploring")
    if before != now:
        state = replace(model.state, extra={**model.state.extra, STAGE_KEY: now})
        change = Log("stage", model.start_event, {"from": before, "to": now})
        return Step(replace(model, state=state), (change, Continue()))
    return None


def stage_now(model: LoopModel) -> stage.Stage:
    """The stage the files show (kept in state.json as `stage` for readers of the file)."""
    return stage.stage_in(model.ws.runs, model.ws.open_alerts, model.ws.tasks.tasks)


def close_done_sweeps(model: LoopModel) -> tuple[Action, ...]:
    """CloseSweep for each active sweep whose runs all ended and whose alerts are answered."""
    index = model.ws.runs
    about = stage.open_run_alerts(model.ws.open_alerts)
    actions: list[Action] = []
    for sweep in index.sweeps.values():
        if sweep.status == "active" and stage.sweep_done(sweep, index.runs, about):
            actions.append(CloseSweep(sweep.id, sweep.barrier))
            actions.append(Say(f"🔬 Sweep {sweep.id} ({sweep.name}) is done: analysis next"))
    return tuple(actions)


def supervised(model: LoopModel, event: RunsSupervised, at: Moment) -> Step:
    """Alerts for what failed in the step and for new backend errors; then decide again."""
    actions: list[Action] = []  # each end is in events.log already (the supervisor's)
    failed = [run for run in event.ended if run.status == "failed"]
    if failed:
        runs, alerts = model.ws.runs, model.ws.open_alerts
        spent = [r.id for r in failed if not retry.attempts_left(r, runs.sweeps.get(r.sweep))]
        record, joined = research.flood_alert(
            failed,
            event.tails,
            alerts,
            runs.runs,
            at.now,
            exhausted=spent,
            deterministic=event.deterministic,
        )
        actions.append(AppendAlert(record))
        more = f" (alert {record['id']} now names them all)" if joined else ""
        actions.append(Say(f"🚨 {record['description']}{more}"))
    for problem in event.problems:
        if problem not in model.run_problems_told:
            actions.append(AppendAlert(backend_alert(problem, at)))
            actions.append(Say(f"⚠️  {problem}"))
    if event.ended:  # progress, as the runs end: one line per sweep, redrawn on a TTY
        actions += [Say(line, status=True) for line in progress(model, event, at.now)]
    model = replace(model, run_problems_told=event.problems)
    return Step(model, (*actions, Continue()))


def progress(model: LoopModel, event: RunsSupervised, now: datetime) -> list[str]:
    """One line per sweep whose runs ended in this step:
    `🏃 sweep s1 (lr): 5/12 done (4 finished, 1 failed), 2 running, ETA ~3m10s`."""
    return [sweep_progress(model.ws.runs, s, now) for s in sorted({r.sweep for r in event.ended})]


def sweep_progress(index: RunIndex, sweep_id: str, now: datetime) -> str:
    """`🏃 sweep s1 (lr): 5/12 done (4 finished, 1 failed), 2 running, ETA ~3m10s`: the
    loop's progress line, and `wild --run-sweeps`'. From the sweep's facts (counts by
    status, finished durations: wild.parsers.run_table), not from every run's record."""
    facts = sweep_facts(index, sweep_id)
    sweep = index.sweeps.get(sweep_id)
    counts = facts.counts
    finished, failed, stopped = counts["finished"], counts["failed"], counts["stopped"]
    ended = finished + failed + stopped
    detail = ", ".join(
        f"{n} {word}"
        for n, word in ((finished, "finished"), (failed, "failed"), (stopped, "stopped"))
        if n
    )
    left = eta_s(facts, now)
    eta = f", ETA ~{duration_text(left)}" if left is not None and ended < facts.total else ""
    name = f" ({sweep.name})" if sweep is not None else ""
    detail = f" ({detail})" if detail else ""
    return (
        f"🏃 sweep {sweep_id}{name}: {ended}/{plural(facts.total, 'run')} done{detail}, "
        f"{counts['running']} running{eta}"
    )


def sweep_eta_s(runs: Sequence[RunRecord], now: datetime) -> float | None:
    """Seconds until a sweep's last run ends: its finished runs' median time for each run
    still to go, as many at once as run now, less what the running ones have done."""
    return eta_s(facts_of(runs), now)


def backend_alert(problem: str, at: Moment) -> dict[str, object]:
    return make_alert(
        now=at.now,
        severity="warning",
        source="run-backend",
        type=BACKEND_ALERT_TYPE,
        description=problem,
    )


def launches_sweep(run: AgentRun) -> bool:
    """Whether `sweeps_of` will record a sweep from this run: for a planning run, a plan."""
    from wild.agents.sweep_tags import sweeps_in_reply  # noqa: PLC0415 (as below)
    from wild.loop import claims  # noqa: PLC0415 (as below)

    return claims.distrust(run) is None and bool(sweeps_in_reply(run.final_text).specs)


def sweeps_of(model: LoopModel, run: AgentRun, origin: str) -> tuple[LoopModel, tuple[Action, ...]]:
    """The agent's `<sweep>`s: good ones to record, bad ones told in the next prompts. A run
    whose claims are not believed (it crashed, timed out or reported an error) launches none."""
    # A run's claims are read once it ended, not on the way to the first agent's start.
    from wild.loop import claims  # noqa: PLC0415

    if claims.distrust(run) is not None:
        return model, ()
    # Imported at the first agent's end, not before it starts: the sweep parser is ~5 ms.
    from wild.agents.sweep_tags import sweeps_in_reply  # noqa: PLC0415

    tags = sweeps_in_reply(run.final_text)
    actions: tuple[Action, ...] = ()
    if tags.errors:
        model, actions = refused(model, tags.errors)
    if tags.specs:
        actions += (RecordSweep(tags.specs, origin, model.agent_event),)
    return model, actions


def refused(model: LoopModel, errors: Sequence[str]) -> tuple[LoopModel, tuple[Action, ...]]:
    """A sweep that launched nothing: the reasons in the next prompts, the log and the screen."""
    from wild.agents.sweep_tags import refusal_text  # noqa: PLC0415

    note = refusal_text(errors)
    state = push_summary(model.state, note, model.options.context_window)
    model = replace(model, state=state)
    return model, (
        Log("sweep-refused", model.agent_event, {"errors": list(errors)}),
        Say(f"⚠️  {note}"),
    )


def recorded(model: LoopModel, event: SweepsRecorded) -> Step:
    """What came of RecordSweep: refusals told; recorded sweeps are supervised at once."""
    actions: list[Action] = []
    for errors in event.refused:
        model, told = refused(model, errors)
        actions += told
    if event.recorded:
        model = replace(model, runs_due=True)
        names = ", ".join(event.recorded)
        actions.append(Say(f"🔬 Sweep {names} recorded; its runs are queued"))
    return Step(model, (*actions, Continue()))


def choices_to_apply(model: LoopModel, at: Moment) -> tuple[Action, ...]:
    """Run alerts answered with an acting choice, by anyone (the agent's `<resolve_alert>`,
    the dashboard, a human's line), acted on once: the act is marked `applied` on the alert,
    so a restarted loop never reruns a run twice for one answer."""
    actions: list[Action] = []
    index = model.ws.runs
    for alert in model.ws.alerts:
        if alert.status != "resolved" or alert.raw.get("applied") or not stage.runs_of_alert(alert):
            continue
        answer = answer_of(alert)
        act = research.act_of_choice(answer.choice if answer is not None else None)
        if act is None:
            continue
        ids = stage.runs_of_alert(alert)
        targets = research.runs_to_act_on(act, ids, index.runs, index.sweeps)
        if targets:
            actions.append(ActOnRuns(act, targets, model.agent_event))
        actions.append(AppendAlert(status_update(alert, "resolved", at.now, applied=iso(at.now))))
    return tuple(actions)


def run_requests(requests: Sequence[ControlRequest]) -> tuple[Action, ...]:
    """`wild --rerun ID` and `wild --stop-run ID` sent to the running loop."""
    acts: dict[str, research.RunAct] = {"rerun": "rerun", "stop-run": "stop_run"}
    return tuple(
        ActOnRuns(acts[r.command], (r.target,))
        for r in requests
        if r.command in acts and r.target is not None
    )
