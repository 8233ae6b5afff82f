"""Named policies a human can switch to, and the edit `wild --update-policy NAME` makes.

The four modes (interactive, semi-autonomous, autonomous, hands-off) come from
`wild.policy.model`. Seed 002's interruption modes are full policies too, each expressed in the
ordinary settings so the file says exactly what wild will do:

* `wild_night`: never wait for the human; page only on critical alerts (critical safety).
* `balanced`: the agent resolves alerts first; the human is asked after repeated failures, when
  stuck, or when the agent is not confident (it says `NEED_HUMAN_INPUT`).
* `page_on_alert`: every alert pages the human at once (threshold all, no batching).
* `away_but_ping`: keep going; notify on severe (warning and critical) alerts, never block.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from wild.clock import iso, later
from wild.errors import WildError
from wild.parsers.policy import INTERRUPTION_MODES, MODES, apply_policy, parse
from wild.policy.model import (
    MODE_PRESETS,
    EscalateOn,
    HumanPolicy,
    format_duration,
    policy_from_document,
    policy_title,
    render_policy_section,
)
from wild.record import replace

INTERRUPTION_PRESETS: Mapping[str, HumanPolicy] = {
    "wild_night": HumanPolicy(
        mode="hands-off",
        autonomy_level="high",
        max_retry_attempts=5,
        escalation_threshold="critical-only",
        progress_report_minutes=0,
        context_switch_penalty_minutes=60,
        escalate_on=EscalateOn(0, 0, critical_alerts=True, unexpected_success=False),
        command_approval="trusted",
        instructions="I am asleep. Keep going on your own and never wait for me; page me only "
        "for a critical safety problem (data loss, runaway cost, the cluster down).",
        preset="wild_night",
    ),
    "balanced": HumanPolicy(
        mode="semi-autonomous",
        autonomy_level="medium",
        max_retry_attempts=3,
        escalation_threshold="never",
        progress_report_minutes=60,
        context_switch_penalty_minutes=15,
        escalate_on=EscalateOn(3, 60, critical_alerts=False, unexpected_success=True),
        command_approval="required",
        instructions="Try to resolve alerts and failures yourself first. If you are not "
        "confident about a fix, ask me with NEED_HUMAN_INPUT instead of guessing.",
        preset="balanced",
    ),
    "page_on_alert": HumanPolicy(
        mode="semi-autonomous",
        autonomy_level="medium",
        max_retry_attempts=3,
        escalation_threshold="all",
        progress_report_minutes=60,
        context_switch_penalty_minutes=0,
        escalate_on=EscalateOn(3, 60, critical_alerts=True, unexpected_success=True),
        command_approval="required",
        instructions="Tell me about every alert as soon as it arrives, then keep working on it.",
        preset="page_on_alert",
    ),
    "away_but_ping": HumanPolicy(
        mode="autonomous",
        autonomy_level="high",
        max_retry_attempts=5,
        escalation_threshold="warnings",
        progress_report_minutes=60,
        context_switch_penalty_minutes=30,
        escalate_on=EscalateOn(5, 60, critical_alerts=True, unexpected_success=True),
        command_approval="trusted",
        instructions="I am away. Keep going without waiting for me, but let me know about "
        "warnings and critical alerts.",
        preset="away_but_ping",
    ),
}

PRESETS: Mapping[str, HumanPolicy] = {**MODE_PRESETS, **INTERRUPTION_PRESETS}


def preset(name: str) -> HumanPolicy:
    """The named policy: a mode or an interruption mode (`Semi Autonomous`, `wild-night` too)."""
    key = name.strip().lower().replace(" ", "-")
    for candidate in (key, key.replace("_", "-"), key.replace("-", "_")):
        if candidate in PRESETS:
            return PRESETS[candidate]
    names = ", ".join((*MODES, *INTERRUPTION_MODES))
    raise WildError(f'unknown policy "{name}"; choose one of {names}')


def history_entry(policy: HumanPolicy, *, now: datetime, duration: timedelta | None) -> str:
    """`### 2026-02-08 10:00 - Autonomous Mode` with the mode, preset and duration lines."""
    until = (
        f"{format_duration(duration)} (until {iso(later(now, duration))})"
        if duration
        else "until changed"
    )
    lines = [
        f"### {now.astimezone(UTC).strftime('%Y-%m-%d %H:%M')} - {policy_title(policy)}",
        f"- Mode: {policy.mode}",
        *([f"- Preset: {policy.preset}"] if policy.preset else []),
        f"- Duration: {until}",
    ]
    return "\n".join(lines) + "\n"


def update_policy_text(text: str, name: str, *, now: datetime, duration: timedelta | None) -> str:
    """human-policy.md switched to the named policy, with one history entry appended.

    The current Instructions and Notify Command are the human's, so they survive the switch.
    Instructions that are empty or still some preset's own text were never the human's: the
    new preset's text replaces them (wild_night must not keep saying "ask me first"). Raises
    WildError for an unknown name. A pure `str -> str` edit for `store.update_text`.
    """
    chosen = preset(name)
    doc = parse(text)
    if doc.current is not None:
        current = policy_from_document(doc)
        stock = {policy.instructions for policy in PRESETS.values()}
        own = current.instructions and current.instructions not in stock
        chosen = replace(
            chosen,
            instructions=current.instructions if own else chosen.instructions,
            notify_command=current.notify_command,
        )
    return apply_policy(
        text,
        render_policy_section(chosen, now=now, duration=duration),
        history_entry=history_entry(chosen, now=now, duration=duration),
    )
