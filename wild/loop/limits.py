"""The limits a run may not pass (`--max-iterations`, `--max-time`, `--max-cost`,
`--max-tokens`), pure: which one the loop has reached, in words that say what was reached.

Cost and tokens are the totals state.json keeps across restarts, so a loop killed and started
again with the same cap starts no agent, and one started with a higher cap goes on.
"""

from __future__ import annotations

from wild.loop.model import EndReason, LoopModel, LoopOptions, Moment


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
