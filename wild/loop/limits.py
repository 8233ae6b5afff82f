"""The limits a run may not pass (`--max-iterations`, `--max-time`, `--max-cost`,
`--max-tokens`), pure: which one the loop has reached, in words that say what was reached.

All four count the run, not one loop process: state.json keeps the cost and token totals,
the agent runs counted (`countedIterations`) and the time loops have been running
(`runningSeconds`: a loop's running time, not the time no loop ran). So a loop killed and
started again with the same cap starts no agent, and one started with a higher cap goes on.
A killed loop's last moments may go uncounted: the time is written with every change of
state.json, and at least every TIME_GRAIN_S while anything happens (an agent's heartbeat).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from wild.agents.run_result import AgentRun
from wild.clock import iso
from wild.loop.model import (
    Action,
    AgentFinished,
    Ask,
    EndReason,
    Log,
    LoopModel,
    Moment,
    Notify,
    Say,
)
from wild.output import plural
from wild.parsers.state import LoopState
from wild.parsers.totals import COUNTED, RUNNING_S
from wild.record import replace

TIME_GRAIN_S = 30.0
# Failed iterations in a row back off: the first retry is at once, then from the base,
# doubling, up to the cap.
BACKOFF_BASE_S = 5.0
BACKOFF_MAX_S = 300.0


def carried(state: LoopState) -> tuple[int, float]:
    """The agent runs counted and the seconds loops ran before this one (leniently read)."""
    counted, running = state.extra.get(COUNTED), state.extra.get(RUNNING_S)
    count = counted if isinstance(counted, int) and not isinstance(counted, bool) else 0
    seconds = 0.0
    if isinstance(running, int | float) and not isinstance(running, bool):
        seconds = float(running) if math.isfinite(running) else 0.0
    return max(0, count), max(0.0, seconds)


def kept(model: LoopModel, mono: float, changed: bool) -> LoopState:
    """state.json with the run's counted iterations and running time; the time alone is
    written again only every TIME_GRAIN_S (not at every wake-up)."""
    counted, recorded_s = carried(model.state)
    running = round(max(0.0, mono - model.started_mono), 1)
    if counted == model.counted and not changed and running - recorded_s < TIME_GRAIN_S:
        return model.state
    extra: Mapping[str, object] = {**model.state.extra, COUNTED: model.counted, RUNNING_S: running}
    return replace(model.state, extra=extra)


def reached(model: LoopModel, at: Moment) -> tuple[EndReason, str] | None:
    """The first limit reached, with what was reached; None while the run may go on."""
    state, options = model.state, model.options
    if options.max_iterations is not None and model.counted >= options.max_iterations:
        return "max-iterations", f"reached {plural(options.max_iterations, 'iteration')}"
    if time_left(model, at) == 0.0:
        return "max-time", "reached the time limit"
    if options.max_cost_usd is not None and state.total_cost_usd >= options.max_cost_usd:
        spent = f"${state.total_cost_usd:.2f} of ${options.max_cost_usd:.2f}"
        return "max-cost", f"reached the cost limit ({spent}); a higher --max-cost goes on"
    if options.max_tokens is not None and state.total_tokens >= options.max_tokens:
        spent = f"{state.total_tokens:,} of {options.max_tokens:,} tokens"
        return "max-tokens", f"reached the token limit ({spent}); a higher --max-tokens goes on"
    return None


def time_left(model: LoopModel, at: Moment) -> float | None:
    """Seconds left under --max-time (0.0: reached), or None without one."""
    if model.options.max_time_s is None:
        return None
    return max(0.0, model.started_mono + model.options.max_time_s - at.mono)


def backoff_s(failures: int) -> float:
    """How long to wait after `failures` failed iterations in a row before the next agent
    run: none after the first (a retry at once), then the base, doubling, up to the cap."""
    if failures < 2:
        return 0.0
    doublings = min(failures - 2, 30)  # past the cap long before: no float overflow
    return float(min(BACKOFF_BASE_S * 2**doublings, BACKOFF_MAX_S))


def backoff_left(model: LoopModel, kind: str | None, at: Moment) -> float:
    """Seconds the selected work must still wait after failed iterations (0: none). Only an
    alert or a task waits: the human's input is never kept waiting."""
    until = model.backoff_until
    if until is None or kind not in ("alert", "task"):
        return 0.0
    return max(0.0, until - at.mono)


# The same failure this many runs in a row is a stall: more runs will not fix it.
STALL_REPEATS = 3
# Clean runs in a row that finished nothing and changed no file of the project (outside the
# state folder) are a stall too: an agent that only talks, or only edits its notes.
STILL_RUNS = 3


def stalled(
    model: LoopModel, failure: str | None, event: AgentFinished, settled: bool
) -> tuple[LoopModel, tuple[Action, ...]]:
    """Count a run's failure against the last one, and a clean run that changed no project
    file against the runs before it; the same failure STALL_REPEATS times in a row, or
    STILL_RUNS runs that changed nothing, pause the loop and ask the human (a broken agent, a
    missing key, a full disk, an agent going round in circles: no agent run fixes those),
    instead of spending run after run on it."""
    model, still = _still(model, failure, event, settled)
    if still is not None:
        return _pause(model, still, {"files_changed": 0, "runs": model.still_runs})
    if failure is None:
        return replace(model, failure=None, failure_repeats=0), ()
    repeats = model.failure_repeats + 1 if failure == model.failure else 1
    model = replace(model, failure=failure, failure_repeats=repeats)
    if repeats < STALL_REPEATS:
        return model, ()
    reason = f"the same failure {repeats} times in a row: {failure}"
    return _pause(
        replace(model, failure_repeats=0), reason, {"failure": failure, "repeats": repeats}
    )


def _still(
    model: LoopModel, failure: str | None, event: AgentFinished, settled: bool
) -> tuple[LoopModel, str | None]:
    """Count a clean run that changed no project file and neither finished nor failed its
    work (`settled`); the reason to pause at STILL_RUNS. Failures are the other rule's (and
    the policy's); monitoring changes nothing by design; an unknown change set (a huge tree)
    is never taken for none."""
    if failure is not None or _excused(event.run, model.last_work_type):
        return model, None
    if settled or event.files_changed != ():
        return replace(model, still_runs=0), None
    runs = model.still_runs + 1
    if runs < STILL_RUNS:
        return replace(model, still_runs=runs), None
    reason = f"{runs} iterations in a row changed no file in the project and finished nothing"
    return replace(model, still_runs=runs), reason


def _excused(run: AgentRun, work_type: str | None) -> bool:
    return run.failed or run.rate_limited or work_type == "monitoring"


def _pause(
    model: LoopModel, reason: str, fields: Mapping[str, object]
) -> tuple[LoopModel, tuple[Action, ...]]:
    body = "The loop is paused. Fix the cause, then run `wild --resume`."
    paused = replace(model.control, paused=True)
    model = replace(model, control=paused, state=replace(model.state, paused=True), still_runs=0)
    return model, (
        Ask("stall", reason, body, model.agent_event),
        Log("stalled", model.agent_event, dict(fields)),
        Say(f"⏸️  Paused: {reason}; `wild --resume` goes on"),
    )


RATE_LIMIT_UNKNOWN_S = 300.0  # a usage limit that names no reset time
# The longest one wait: a reset further off is waited out in steps of this, each ending in
# one run of the agent (refused at once while the limit holds), so a wrong or far reset time
# costs at most this long, never a night.
RATE_LIMIT_MAX_S = 3600.0


def rate_limit_wait(run: AgentRun, at: Moment) -> float:
    """How long to wait for the agent's usage limit to reset (its own figure, capped)."""
    reset = run.rate_limit_reset
    wait_s = RATE_LIMIT_UNKNOWN_S
    if reset is not None:
        wait_s = (reset - at.now).total_seconds()
    return float(round(max(1.0, min(wait_s, RATE_LIMIT_MAX_S))))


def rate_limit_pause(run: AgentRun, at: Moment, event_id: str) -> tuple[float, tuple[Action, ...]]:
    """The wait for a usage limit the agent's failure reported, and how the human hears of
    it: a terminal line, events.log, and a note to the Notify Command."""
    wait_s = rate_limit_wait(run, at)
    reset = run.rate_limit_reset
    when = f"it resets at {iso(reset)}" if reset is not None else "it named no reset time"
    capped = (
        " (the longest wait, then the agent is tried again)" if wait_s >= RATE_LIMIT_MAX_S else ""
    )
    message = f"The agent hit a usage limit ({when}); waiting {wait_s:.0f} s{capped}"
    return wait_s, (
        Say(f"⏳ {message}"),
        Log("rate-limited", event_id, {"wait_s": wait_s}),
        Notify("rate-limit", message, event_id),
    )
