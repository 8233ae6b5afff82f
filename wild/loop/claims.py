"""Whether a finished run's claims count, as a pure decision: only a run that exited cleanly.

An agent killed mid-way (by its timeout, the OOM killer, a signal) or one that crashed or said
it failed may have printed `TASK_COMPLETE` before the work was done, or a wrapper may have
echoed it; nothing it claimed has been verified. So its promises, `<resolve_alert>` and
`<event_output>` are not acted on: the run is a failed attempt, and its claims are recorded
as ignored, with the reason. What it changed in `.wild/` files is read as for any run.
"""

from __future__ import annotations

import signal

from wild.agents.run_result import AgentRun
from wild.agents.signals import Signals
from wild.loop.model import Log

# A shell (or a wrapper script) reports a child killed by signal N as exit 128 + N.
_SHELL_SIGNAL_BASE = 128


def _signal_name(number: int) -> str | None:
    try:
        return signal.Signals(number).name
    except ValueError:
        return None


def distrust(run: AgentRun) -> str | None:
    """Why the run's claims are not believed ("it exited with 137 (killed by SIGKILL)"), or
    None for a clean exit."""
    if run.cancelled:
        return "it was stopped"
    if run.timed_out:
        return "it was killed at its timeout"
    if run.exit_code < 0:
        name = _signal_name(-run.exit_code)
        return f"it was killed by {name or f'signal {-run.exit_code}'}"
    if run.exit_code != 0:
        name = _signal_name(run.exit_code - _SHELL_SIGNAL_BASE)
        killed = f" (killed by {name})" if run.exit_code > _SHELL_SIGNAL_BASE and name else ""
        return f"it exited with {run.exit_code}{killed}"
    if run.is_error:
        return "the agent reported an error"
    return None


def believed(run: AgentRun) -> Signals:
    """The signals wild acts on: all of a clean run's, none of any other."""
    return run.signals if distrust(run) is None else Signals()


def claimed(signals: Signals) -> bool:
    """Whether the agent claimed anything wild would act on."""
    return bool(signals.promises or signals.resolutions or signals.event_output)


def ignored(run: AgentRun, related: str, cause: str | None) -> Log | None:
    """The events.log record of the claims of a run that is not believed (None: nothing to say)."""
    reason = distrust(run)
    if reason is None or not claimed(run.signals):
        return None
    out = run.signals.event_output
    fields = {
        "related": related,
        "promises": list(run.signals.promises),
        "resolutions": [r.alert_id for r in run.signals.resolutions],
        "event_output": out.status if out is not None else None,
        "reason": reason,
    }
    return Log("signals-ignored", cause, fields)


def note(run: AgentRun) -> str:
    """The signals part of an iteration's one-line summary: `TASK_COMPLETE`, `none`, or
    `TASK_COMPLETE ignored: it exited with 137 (killed by SIGKILL)`."""
    said = ", ".join(run.signals.promises) or "none"
    reason = distrust(run)
    if reason is None or not run.signals.promises:
        return said
    return f"{said} ignored: {reason}"
