"""What a human policy is: the `HumanPolicy` record, each mode's defaults, reading and writing one.

The four mode defaults live here (not in `presets`) because reading a file needs them: a value
the reader cannot use falls back to the mode's default. `wild.policy.presets` adds seed 002's
named interruption modes on top and switches the file between them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import TypeVar

from wild.clock import LONGEST_SPAN_TEXT, iso, later, parse_time, span_of
from wild.errors import WildError
from wild.parsers.policy import (
    AutonomyLevel,
    CommandApproval,
    EscalationThreshold,
    Mode,
    PolicyDocument,
    duration_seconds,
    read_approval,
    read_command,
    read_count,
    read_duration,
    read_flag,
    read_level,
    read_minutes,
    read_mode,
    read_preset,
    read_threshold,
)
from wild.record import record, replace

DEFAULT_MODE: Mode = "semi-autonomous"

_T = TypeVar("_T")


@record
class EscalateOn:
    """The Escalation Rules; 0 turns a counted rule off."""

    repeated_failures: int  # escalate a task after this many failures in a row
    stuck_minutes: int  # escalate after this long without progress
    critical_alerts: bool
    unexpected_success: bool


@record
class HumanPolicy:
    """How much the human wants to be involved; seed 001's `HumanPolicy` plus wild's fields."""

    mode: Mode
    autonomy_level: AutonomyLevel
    max_retry_attempts: int
    escalation_threshold: EscalationThreshold
    progress_report_minutes: int  # 0: no progress reports
    context_switch_penalty_minutes: int  # 0: send every notification at once
    escalate_on: EscalateOn
    command_approval: CommandApproval
    notify_command: str | None = None
    instructions: str = ""
    preset: str | None = None  # seed 002 interruption mode it was made from, if any
    active_from: datetime | None = None
    expires_at: datetime | None = None


MODE_PRESETS: Mapping[str, HumanPolicy] = {
    "interactive": HumanPolicy(
        mode="interactive",
        autonomy_level="low",
        max_retry_attempts=2,
        escalation_threshold="all",
        progress_report_minutes=30,
        context_switch_penalty_minutes=0,
        escalate_on=EscalateOn(2, 30, critical_alerts=True, unexpected_success=True),
        command_approval="required",
        instructions="I am at the keyboard. Check with me before each significant step and "
        "before anything destructive or expensive.",
    ),
    # Byte for byte what templates/.wild/human-policy.md says (a test holds them together).
    "semi-autonomous": HumanPolicy(
        mode="semi-autonomous",
        autonomy_level="medium",
        max_retry_attempts=3,
        escalation_threshold="warnings",
        progress_report_minutes=60,
        context_switch_penalty_minutes=15,
        escalate_on=EscalateOn(3, 60, critical_alerts=True, unexpected_success=True),
        command_approval="required",
        instructions="Work through the tasks and alerts on your own. Ask me before anything "
        "destructive or\nexpensive, and tell me when you are stuck.",
    ),
    "autonomous": HumanPolicy(
        mode="autonomous",
        autonomy_level="high",
        max_retry_attempts=5,
        escalation_threshold="critical-only",
        progress_report_minutes=30,
        context_switch_penalty_minutes=15,
        escalate_on=EscalateOn(5, 60, critical_alerts=True, unexpected_success=True),
        command_approval="trusted",
        instructions="I am stepping away. Keep going on your own and try alternatives before "
        "giving up; escalate only after repeated failures or a critical failure.",
    ),
    "hands-off": HumanPolicy(
        mode="hands-off",
        autonomy_level="high",
        max_retry_attempts=10,
        escalation_threshold="never",
        progress_report_minutes=0,
        context_switch_penalty_minutes=60,
        escalate_on=EscalateOn(0, 0, critical_alerts=False, unexpected_success=False),
        command_approval="trusted",
        instructions="Do not wait for me. Decide everything yourself and record why in the "
        "task notes.",
    ),
}


def default_policy() -> HumanPolicy:
    """The policy wild uses with no file, an empty one, or after a policy expired."""
    return MODE_PRESETS[DEFAULT_MODE]


# --------------------------------------------------------------------------- durations


_DURATION_HELP = "use a number with a unit, e.g. 6h, 90m, 2d or 1h30m"


def parse_duration(text: str) -> timedelta:
    """`6h`, `90m`, `2d`, `1h30m`, `6 hours`; raises WildError for anything else."""
    seconds = duration_seconds(text, whole=True)
    if seconds is None:
        raise WildError(f'invalid duration "{text}"; {_DURATION_HELP}')
    duration = span_of(seconds)
    if duration is None:
        raise WildError(f'duration "{text}" is too long; use at most {LONGEST_SPAN_TEXT}')
    if duration <= timedelta(0):
        raise WildError(f'duration "{text}" must be longer than zero; {_DURATION_HELP}')
    return duration


def format_duration(duration: timedelta) -> str:
    """`6 hours`, `1 hour 30 minutes`, `2 days`: what the file's Duration line says."""
    seconds = int(duration.total_seconds())
    parts = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        amount, seconds = divmod(seconds, size)
        if amount:
            parts.append(f"{amount} {unit}{'' if amount == 1 else 's'}")
    return " ".join(parts) or "0 minutes"


# --------------------------------------------------------------------------- reading


def _pick(raw: str | None, reader: Callable[[str], _T | None], default: _T) -> _T:
    """The value the file gives, or the default when it is missing or unreadable."""
    value = reader(raw) if raw is not None else None
    return default if value is None else value


def _times(doc: PolicyDocument) -> tuple[datetime | None, datetime | None]:
    active_from = parse_time(doc.active_from)
    expires_at = parse_time(doc.expires_at)
    duration = read_duration(doc.duration) if doc.duration else None
    if expires_at is None and active_from is not None and duration is not None:
        expires_at = later(active_from, duration)
    return active_from, expires_at


# The last document read and the policy it describes: the loop's two views an iteration hand
# the same parsed document while human-policy.md is unchanged (its parse is kept), and each
# asked for its policy again (~70 Python calls; issue 22 item 8). Matched by identity: a
# document is a frozen record that no one changes, kept alive here while it is matched.
_last: list[tuple[PolicyDocument, HumanPolicy] | None] = [None]


def policy_from_document(doc: PolicyDocument) -> HumanPolicy:
    """The policy a parsed file describes. Never raises: missing or unreadable values (the
    document's `problems` name them) take the mode's default, a missing mode the default's,
    and a file with no current policy (missing, empty) gives the default policy."""
    last = _last[0]
    if last is not None and last[0] is doc:
        return last[1]
    policy = _described(doc)
    _last[0] = (doc, policy)
    return policy


def _described(doc: PolicyDocument) -> HumanPolicy:
    if doc.current is None:
        return default_policy()
    mode = _pick(doc.settings.get("mode"), read_mode, DEFAULT_MODE)
    base = MODE_PRESETS[mode]
    settings, rules = doc.settings, doc.rules
    active_from, expires_at = _times(doc)
    command = read_command(settings.get("notify command", ""))
    rule_defaults = base.escalate_on
    return HumanPolicy(
        mode=mode,
        autonomy_level=_pick(settings.get("autonomy level"), read_level, base.autonomy_level),
        max_retry_attempts=_pick(
            settings.get("max retry attempts"), read_count, base.max_retry_attempts
        ),
        escalation_threshold=_pick(
            settings.get("escalation threshold"), read_threshold, base.escalation_threshold
        ),
        progress_report_minutes=_pick(
            settings.get("progress reports"), read_minutes, base.progress_report_minutes
        ),
        context_switch_penalty_minutes=_pick(
            settings.get("context switch penalty"),
            read_minutes,
            base.context_switch_penalty_minutes,
        ),
        escalate_on=EscalateOn(
            repeated_failures=_pick(
                rules.get("repeated failures"), read_count, rule_defaults.repeated_failures
            ),
            stuck_minutes=_pick(
                rules.get("stuck duration"), read_minutes, rule_defaults.stuck_minutes
            ),
            critical_alerts=_pick(
                rules.get("critical alerts"), read_flag, rule_defaults.critical_alerts
            ),
            unexpected_success=_pick(
                rules.get("unexpected success"), read_flag, rule_defaults.unexpected_success
            ),
        ),
        command_approval=_pick(
            settings.get("command approval"), read_approval, base.command_approval
        ),
        notify_command=command or None,
        instructions=doc.instructions,
        preset=read_preset(settings["preset"]) if "preset" in settings else None,
        active_from=active_from,
        expires_at=expires_at,
    )


def effective_policy(policy: HumanPolicy, now: datetime) -> tuple[HumanPolicy, str | None]:
    """The policy in force at `now`, and a message when an expired one was replaced.

    An expired policy gives way to the default semi-autonomous one; the notify command is a
    delivery channel, not part of the mode, so it is kept.
    """
    if policy.expires_at is None or now < policy.expires_at:
        return policy, None
    fallback = replace(default_policy(), notify_command=policy.notify_command)
    message = (
        f"the {policy_title(policy).lower()} policy expired at {iso(policy.expires_at)}; "
        f"using the default {DEFAULT_MODE} policy until you run wild --update-policy MODE"
    )
    return fallback, message


# --------------------------------------------------------------------------- writing


def policy_title(policy: HumanPolicy) -> str:
    """`Semi-Autonomous Mode`, `Wild Night Mode`: the heading and history name."""
    name = policy.preset or policy.mode
    return f"{name.replace('_', ' ').title()} Mode"


def _off_or(amount: int, text: str, off: str) -> str:
    return text.format(amount) if amount else off


def render_policy_section(policy: HumanPolicy, *, now: datetime, duration: timedelta | None) -> str:
    """The `## Current Policy` section in the seed's format, ending with a newline.

    With a duration it is active from `now` and says when it expires; `now` is otherwise
    unused. `policy.active_from`/`expires_at` are not written: the duration decides.
    """
    title = policy_title(policy)
    lines = [
        f"## Current Policy: {title}" + (f" ({format_duration(duration)})" if duration else "")
    ]
    lines.append("")
    if duration is not None:
        # Two trailing spaces are a Markdown line break, as in the seed's example.
        lines += [
            f"**Active From:** {iso(now)}  ",
            f"**Duration:** {format_duration(duration)}  ",
            f"**Expires At:** {iso(later(now, duration))}",
            "",
        ]
    rules = policy.escalate_on
    lines += [
        "### Settings",
        "",
        f"- **Mode:** {policy.mode}",
        *([f"- **Preset:** {policy.preset}"] if policy.preset else []),
        f"- **Autonomy Level:** {policy.autonomy_level}",
        f"- **Max Retry Attempts:** {policy.max_retry_attempts}",
        f"- **Escalation Threshold:** {policy.escalation_threshold}",
        "- **Progress Reports:** "
        + _off_or(policy.progress_report_minutes, "Every {} minutes", "None"),
        f"- **Context Switch Penalty:** {policy.context_switch_penalty_minutes} minutes",
        f"- **Command Approval:** {policy.command_approval}",
        *([f"- **Notify Command:** {policy.notify_command}"] if policy.notify_command else []),
        "",
        "### Escalation Rules",
        "",
        "- **Repeated Failures:** "
        + _off_or(rules.repeated_failures, "Escalate after {} failed attempts", "Never escalate"),
        "- **Stuck Duration:** "
        + _off_or(rules.stuck_minutes, "Escalate if no progress for {} minutes", "Never escalate"),
        "- **Critical Alerts:** "
        + ("Always escalate" if rules.critical_alerts else "Never escalate"),
        "- **Unexpected Success:** "
        + ("Notify me of breakthroughs" if rules.unexpected_success else "Don't notify me"),
        "",
        "### Instructions",
    ]
    if policy.instructions:
        lines += ["", policy.instructions]
    return "\n".join(lines) + "\n"
