"""The loop's current state (wild/loop/states.py) as the model holds it, pure: each transition
a `state` line for events.log (a refused one `state-refused`, never a crash), the state and
since when for state.json, and each state's timeout measured on the decision's clock.

`decide` applies them around every step, so the model is the one owner of the phase; the
driver only performs the `Log` actions and sleeps no longer than the `Wait` it is given.
"""

from __future__ import annotations

from collections.abc import Mapping

from wild.clock import iso
from wild.loop import states
from wild.loop.model import Action, AgentFinished, Event, Log, LoopModel, Moment, Wait
from wild.loop.states import State
from wild.parsers.loop_state import RECORD_KEY, record, recorded
from wild.parsers.state import LoopState
from wild.record import replace

Moved = tuple[LoopModel, tuple[Action, ...]]


def begin(model: LoopModel, previous: LoopState, at: Moment) -> Moved:
    """A new loop starts in IDLE, whatever state the last one (stopped or killed) left."""
    last = recorded(previous.extra)
    model = _recorded(replace(model, phase="IDLE", phase_since=at))
    came_from = last.state if last else None
    return model, (Log("state", model.cause, _move(came_from, "IDLE", "loop-start")),)


def move(model: LoopModel, target: State, why: str, at: Moment) -> Moved:
    """Go to `target`, if the table allows it; a refused move is logged and ignored."""
    source = model.phase
    if target == source:
        return model, ()
    if not states.allowed(source, target):
        return model, (Log("state-refused", model.cause, _move(source, target, why)),)
    model = _recorded(replace(model, phase=target, phase_since=at))
    return model, (Log("state", model.cause, _move(source, target, why)),)


def before(model: LoopModel, event: Event, at: Moment) -> Moved:
    """An agent's end: judged in OBSERVING, after ERROR_RECOVERY if it ran too long."""
    if not isinstance(event, AgentFinished):
        return model, ()
    logs: tuple[Action, ...] = ()
    run = event.run
    if run.timed_out or expired(model, at):
        why = f"timeout: the agent was killed after {run.duration_s:.0f} s"
        model, logs = move(model, "ERROR_RECOVERY", why, at)
    model, observed = move(model, "OBSERVING", "agent-end", at)
    return model, (*logs, *observed)


def after(model: LoopModel, actions: tuple[Action, ...], at: Moment) -> Moved:
    """The state the decided step leads to; its `Wait` cut at that state's timeout."""
    target = states.after_step(model, actions, at)
    model, logs = move(model, target, type(actions[-1]).__name__ if actions else "Continue", at)
    last = actions[-1] if actions else None
    if isinstance(last, Wait):
        capped = cap(model, last.timeout_s, at)
        if capped != last.timeout_s:
            actions = (*actions[:-1], Wait(capped))
    return model, (*logs, *actions)


def timed_out(model: LoopModel, at: Moment) -> Moved | None:
    """After the driver acted: the state outlived its timeout, so the loop goes to
    ERROR_RECOVERY (the driver re-reads every file and decides again) and failed iterations
    are not waited out any longer. A recovery that outlives its own timeout ends: the loop
    goes on. None while the state is within its time."""
    if model.phase in states.TERMINAL or not expired(model, at):
        return None
    limit = limit_of(model)
    model = replace(model, backoff_until=None)
    if model.phase == "ERROR_RECOVERY":  # the next step leaves it
        model = _recorded(replace(model, phase_since=at))
        fields = {"state": model.phase, "after_s": limit}
        return model, (Log("state-timeout", model.cause, fields),)
    return move(model, "ERROR_RECOVERY", f"timeout: {model.phase} passed {limit:g} s", at)


def agent_timeout(option_s: float | None, timeouts: Mapping[State, float | None]) -> float | None:
    """The agent's limit: --agent-timeout and RUNNING_AGENT's timeout, the shorter one."""
    return states.agent_timeout(option_s, timeouts.get("RUNNING_AGENT"))


def limit_of(model: LoopModel) -> float | None:
    return model.timeouts.get(model.phase)


def left(model: LoopModel, at: Moment) -> float | None:
    """Seconds until the current state's timeout (0.0: passed); None without one."""
    limit = limit_of(model)
    if limit is None or model.phase_since is None:
        return None
    return max(0.0, model.phase_since.mono + limit - at.mono)


def expired(model: LoopModel, at: Moment) -> bool:
    return left(model, at) == 0.0


def cap(model: LoopModel, wait_s: float | None, at: Moment) -> float | None:
    """A wait, cut at the current state's timeout."""
    remaining = left(model, at)
    if remaining is None:
        return wait_s
    return remaining if wait_s is None else min(wait_s, remaining)


def recorded_state(state: LoopState, phase: State, since: Moment) -> LoopState:
    """`state` with the loop's state and since when, as state.json keeps it."""
    now = record(phase, iso(since.now))
    if state.extra.get(RECORD_KEY) == now:
        return state
    return replace(state, extra={**state.extra, RECORD_KEY: now})


def _recorded(model: LoopModel) -> LoopModel:
    if model.phase_since is None:
        return model
    return replace(model, state=recorded_state(model.state, model.phase, model.phase_since))


def _move(source: str | None, target: str, why: str) -> dict[str, object]:
    return {"from": source, "to": target, "reason": why}
