"""The limits a run may not pass (`--max-iterations`, `--max-time`, `--max-cost`,
`--max-tokens`), pure: which one the loop has reached, in words that say what was reached.

Cost and tokens are the totals state.json keeps across restarts, so a loop killed and started
again with the same cap starts no agent, and one started with a higher cap goes on.
"""

from __future__ import annotations

from dataclasses import replace

from wild.loop.model import Action, Ask, EndReason, Log, LoopModel, LoopOptions, Moment, Say


def reached(model: LoopModel, at: Moment) -> tuple[EndReason, str] | None:
    """The first limit reached, with what was reached; None while the run may go on."""
    state, options = model.state, model.options
    if options.max_iterations is not None and model.counted >= options.max_iterations:
        return "max-iterations", f"reached {options.max_iterations} iterations"
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


def backoff_s(failures: int, options: LoopOptions) -> float:
    """How long to wait after `failures` failed iterations in a row before the next agent
    run: none after the first (a retry at once), then the base, doubling, up to the cap."""
    if failures < 2 or options.backoff_base_s <= 0:
        return 0.0
    doublings = min(failures - 2, 30)  # past the cap long before: no float overflow
    return float(min(options.backoff_base_s * 2**doublings, options.backoff_max_s))


def backoff_left(model: LoopModel, kind: str | None, at: Moment) -> float:
    """Seconds the selected work must still wait after failed iterations (0: none). Only an
    alert or a task waits: the human's input is never kept waiting."""
    until = model.backoff_until
    if until is None or kind not in ("alert", "task"):
        return 0.0
    return max(0.0, until - at.mono)


# The same failure this many runs in a row is a stall: more runs will not fix it.
STALL_REPEATS = 3


def stalled(model: LoopModel, failure: str | None) -> tuple[LoopModel, tuple[Action, ...]]:
    """Count a run's failure against the last one; the same failure STALL_REPEATS times in a
    row pauses the loop and asks the human (a broken agent, a missing key, a full disk: no
    agent run fixes those), instead of spending run after run on it."""
    if failure is None:
        return replace(model, failure=None, failure_repeats=0), ()
    repeats = model.failure_repeats + 1 if failure == model.failure else 1
    model = replace(model, failure=failure, failure_repeats=repeats)
    if repeats < STALL_REPEATS:
        return model, ()
    reason = f"the same failure {repeats} times in a row: {failure}"
    body = "The loop is paused. Fix the cause, then run `wild --resume`."
    paused = replace(model.control, paused=True)
    model = replace(model, control=paused, state=replace(model.state, paused=True))
    return replace(model, failure_repeats=0), (
        Ask("stall", reason, body, model.agent_event),
        Log("stalled", model.agent_event, {"failure": failure, "repeats": repeats}),
        Say(f"⏸️  Paused: {reason}; `wild --resume` goes on"),
    )
