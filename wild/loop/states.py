"""The loop's explicit state machine (seed 003, adapted to the loop), pure: the states, the
transitions allowed between them, each state's timeout, and the state a decided step leaves
the loop in.

The state is derived, not decided twice: a step's last action says where the loop goes
(`RunAgent` → RUNNING_AGENT, `RunChecks`/`VerifyTask` → VERIFYING, `Wait` → WAITING, …), an
agent's end puts it in OBSERVING, and a timeout or a file error in ERROR_RECOVERY. Another
state later (say, waiting for runs) is one more name in `State`, `ALLOWED` and
`DEFAULT_TIMEOUTS_S` — or simply WAITING. docs/states.md describes each state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from wild.errors import UsageError
from wild.loop.model import (
    Action,
    Continue,
    End,
    LoopModel,
    Moment,
    RunAgent,
    RunChecks,
    VerifyTask,
    Wait,
)
from wild.parsers.alert_types import human_only
from wild.parsers.field_values import parse_duration

State = Literal[
    "IDLE",
    "SELECTING",
    "RUNNING_AGENT",
    "OBSERVING",
    "VERIFYING",
    "WAITING",
    "ESCALATED",
    "ERROR_RECOVERY",
    "COMPLETE",
    "STOPPED",
]
STATES: tuple[State, ...] = get_args(State)
TERMINAL: frozenset[State] = frozenset({"COMPLETE", "STOPPED"})

# Where a step can end from a state where the loop decides (every terminal action).
_AFTER_A_STEP: frozenset[State] = frozenset(
    {
        "SELECTING",
        "RUNNING_AGENT",
        "VERIFYING",
        "WAITING",
        "ESCALATED",
        "ERROR_RECOVERY",
        "COMPLETE",
        "STOPPED",
    }
)

# Allowed transitions. Staying in a state is not a transition. A new loop starts in IDLE
# whatever state a stopped or killed loop left (`wild.loop.phases.begin`).
ALLOWED: Mapping[State, frozenset[State]] = {
    "IDLE": _AFTER_A_STEP,
    "SELECTING": _AFTER_A_STEP,
    # An agent run ends in OBSERVING, or past its timeout in ERROR_RECOVERY first.
    "RUNNING_AGENT": frozenset({"OBSERVING", "ERROR_RECOVERY"}),
    # Judging a run: decide again, verify the task it claims, or end (--once).
    "OBSERVING": frozenset({"SELECTING", "VERIFYING", "ERROR_RECOVERY", "COMPLETE", "STOPPED"}),
    "VERIFYING": frozenset({"SELECTING", "ERROR_RECOVERY", "COMPLETE", "STOPPED"}),
    "WAITING": _AFTER_A_STEP,
    "ESCALATED": _AFTER_A_STEP,
    "ERROR_RECOVERY": _AFTER_A_STEP | {"OBSERVING"},
    "COMPLETE": frozenset(),
    "STOPPED": frozenset(),
}

# Seconds a state may last before the loop goes to ERROR_RECOVERY (None: no limit). The
# agent's own limit is `--agent-timeout` (default 1 h); TIMEOUT_RUNNING_AGENT, when set, also
# applies and the shorter one wins. Deciding and reading files take milliseconds, so 5 minutes
# there means something hangs (a network file system, a huge file); checks have their own
# per-check timeouts, and an hour for all of them together.
DEFAULT_TIMEOUTS_S: Mapping[State, float | None] = {
    "IDLE": None,
    "SELECTING": 300.0,
    "RUNNING_AGENT": None,
    "OBSERVING": 300.0,
    "VERIFYING": 3600.0,
    "WAITING": None,
    "ESCALATED": None,
    "ERROR_RECOVERY": 300.0,
    "COMPLETE": None,
    "STOPPED": None,
}
ENV_PREFIX = "TIMEOUT_"
MIN_TIMEOUT_S = 1.0
_NO_LIMIT = ("none", "off", "never")


def allowed(source: State, target: State) -> bool:
    """Whether the loop may go from `source` to `target` (staying put is always allowed)."""
    return source == target or target in ALLOWED.get(source, frozenset())


def timeouts(environ: Mapping[str, str]) -> dict[State, float | None]:
    """Each state's timeout: the default, or `TIMEOUT_<STATE>` (seconds, a duration such as
    `10m`, or `none`). A bad value is a UsageError naming the variable."""
    found: dict[State, float | None] = dict(DEFAULT_TIMEOUTS_S)
    for state in STATES:
        name = ENV_PREFIX + state
        raw = environ.get(name)
        if raw is None or state in TERMINAL:
            continue
        if raw.strip().lower() in _NO_LIMIT:
            found[state] = None
            continue
        seconds = parse_duration(raw)
        if seconds is None or seconds < MIN_TIMEOUT_S:  # shorter: the loop would spin
            raise UsageError(
                f"{name}={raw!r} is not a timeout; give a number of seconds (at least 1), "
                f"a duration such as 10m, or none"
            )
        found[state] = seconds
    return found


def agent_timeout(option_s: float | None, state_s: float | None) -> float | None:
    """The agent's limit: --agent-timeout and RUNNING_AGENT's timeout, the shorter one."""
    limits = [s for s in (option_s, state_s) if s is not None]
    return min(limits) if limits else None


def waits_for_human(model: LoopModel) -> bool:
    """Work waits for the human: held work, an escalated or human-only alert, an open question."""
    ws = model.ws
    return (
        bool(model.book.awaiting)
        or any(a.status == "escalated" or human_only(a.type) for a in ws.open_alerts)
        or any(entry.status == "question" for entry in ws.human.inputs)
    )


def after_step(model: LoopModel, actions: tuple[Action, ...], at: Moment) -> State:
    """The state the step's last action puts the loop in (`at`: the moment it was decided)."""
    last = actions[-1] if actions else Continue()
    if isinstance(last, RunAgent):
        return "RUNNING_AGENT"
    if isinstance(last, RunChecks | VerifyTask):
        return "VERIFYING"
    if isinstance(last, End):
        if last.result.reason == "complete":
            return "COMPLETE"
        return "ESCALATED" if last.result.reason == "waiting-human" else "STOPPED"
    if isinstance(last, Wait):
        until = model.backoff_until
        if until is not None and last.timeout_s == until - at.mono:
            return "ERROR_RECOVERY"  # waiting out failed iterations (`limits.backoff_left`)
        return "ESCALATED" if waits_for_human(model) else "WAITING"
    return "SELECTING"
