"""CLI commands that change `.wild/` files: human input, tasks, alerts, barriers and policy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import orjson

from wild.barriers.approvals import load_project
from wild.clock import iso, iso_ms
from wild.commands.human_acts import NOT_ASKED, HumanGate
from wild.errors import UsageError, WildError
from wild.parsers import barriers as barriers_md
from wild.parsers import human as human_md
from wild.parsers import ids
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import make_alert
from wild.parsers.severity import is_severity, listed
from wild.paths import WildPaths
from wild.policy.presets import update_policy_text
from wild.policy.trust import hold_policy, trust_from_json
from wild.store.alerts_log import append_alert
from wild.store.files import read_text, update_text
from wild.workspace import record_trust, require_initialised, stated_policy


def add_human_input(paths: WildPaths, text: str, *, urgent: bool, now: datetime) -> str:
    """Queue the human's text in human.md; returns the entry's timestamp key."""
    require_initialised(paths)
    if not text.strip():
        raise UsageError(
            '--human-input needs some text, e.g. wild --human-input "Use batch size 32"'
        )
    key = ""

    def edit(current: str) -> str:
        # The key is chosen from the text being edited, under the lock: keys read before it
        # collided when inputs came in together.
        nonlocal key
        key = _fresh_key({h.key for h in human_md.parse(current).inputs}, now)
        return human_md.append_input(current, text, timestamp=key, urgent=urgent)

    update_text(paths.human, edit, paths.lock)
    return key


def _fresh_key(taken: set[str], now: datetime) -> str:
    """Seconds are what humans write; then milliseconds, one later each time it is taken, so
    inputs made together stay distinct."""
    if iso(now) not in taken:
        return iso(now)
    at = now
    while iso_ms(at) in taken:
        at += timedelta(milliseconds=1)
    return iso_ms(at)


def _check_ids(
    flag: str, values: Sequence[str], valid: Callable[[str], bool], example: str, rule: str
) -> None:
    """A relation the file could not read back is refused, not written (issue 8); the
    message states the rule of that kind of id (wild.parsers.ids)."""
    for value in values:
        if not valid(value):
            raise UsageError(
                f'{flag} "{value}" is not an id: give one id per {flag}, such as {example} ({rule})'
            )


def add_task(
    paths: WildPaths,
    description: str,
    *,
    priority: int,
    depends_on: Sequence[str],
    blocked_by: Sequence[str],
) -> str:
    """Append a task to tasks.md; returns its new id."""
    require_initialised(paths)
    if not description.strip():
        raise UsageError(
            '--add-task needs a description, e.g. wild --add-task "Plot the loss curves"'
        )
    highest = tasks_md.HIGHEST_PRIORITY
    if priority < highest:
        # Told rather than clamped: the human typed it and can type it again.
        raise UsageError(
            f"--priority must be {highest} or more ({highest} is the highest), not {priority}"
        )
    _check_ids("--depends-on", depends_on, ids.is_task_id, "task-001", ids.TASK_ID_RULE)
    _check_ids("--blocked-by", blocked_by, ids.is_block_id, "train-done", ids.BLOCK_ID_RULE)
    new_id = ""

    def edit(current: str) -> str:
        nonlocal new_id
        text, new_id = tasks_md.add_task(
            current,
            description,
            priority=priority,
            depends_on=tuple(depends_on),
            blocked_by=tuple(blocked_by),
        )
        return text

    update_text(paths.tasks, edit, paths.lock)
    return new_id


def parse_context(raw: str | None) -> dict[str, Any]:
    if raw is None:
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UsageError(
            f"--context is not valid JSON ({exc}); pass an object such as '{{\"batch_size\": 64}}'"
        ) from None
    if not isinstance(value, dict):
        raise UsageError("--context must be a JSON object such as '{\"batch_size\": 64}'")
    return value


def raise_alert(
    paths: WildPaths,
    *,
    severity: str,
    source: str,
    alert_type: str,
    description: str,
    context: dict[str, Any],
    choices: Sequence[str],
    now: datetime,
) -> str:
    """Append a pending alert (jobs and scripts call this); returns the alert id."""
    require_initialised(paths)
    if not is_severity(severity):
        raise UsageError(f"--severity must be one of {listed(last=', ')}, not {severity!r}")
    record = make_alert(
        severity=severity,
        source=source,
        type=alert_type,
        description=description,
        context=context,
        choices=tuple(choices),
        now=now,
    )
    append_alert(paths.alerts, record)
    return str(record["id"])


def find_barrier(paths: WildPaths, barrier_id: str) -> barriers_md.Barrier:
    """The named barrier, or an error listing the ones that exist."""
    require_initialised(paths)
    doc = barriers_md.parse(read_text(paths.barriers), file=str(paths.barriers))
    barrier = barriers_md.find(doc, barrier_id)
    if barrier is None:
        known = ", ".join(b.id for b in doc.barriers) or "none"
        raise WildError(
            f"{paths.barriers}: no barrier named {barrier_id} (known: {known}); "
            "check the id with `wild --status`"
        )
    return barrier


def satisfy_barrier(paths: WildPaths, barrier_id: str, *, now: datetime) -> bool:
    """Mark a barrier satisfied; returns False when it already was."""
    barrier = find_barrier(paths, barrier_id)
    if barrier.status == "satisfied":
        return False
    update_text(
        paths.barriers,
        lambda current: barriers_md.set_status(current, barrier_id, "satisfied", at=iso(now)),
        paths.lock,
    )
    return True


def update_policy(
    paths: WildPaths,
    mode: str,
    *,
    duration: timedelta | None,
    now: datetime,
    human: HumanGate = NOT_ASKED,
) -> None:
    """`wild --update-policy MODE`: a human's choice, so its trust is recorded too (outside
    `.wild/`, where an agent's edit of the file cannot reach it). A change that loosens the
    trust a human recorded must pass `human` (never from inside an agent's process tree)."""
    require_initialised(paths)

    def edit(current: str) -> str:
        return update_policy_text(current, mode, now=now, duration=duration)

    recorded = trust_from_json(load_project(paths.project)[1])
    loosened = hold_policy(stated_policy(paths, now, edit(read_text(paths.policy))), recorded, now)
    if loosened.loosened:
        human.require(paths, f"loosen the policy to {mode} ({'; '.join(loosened.loosened)})")
    record_trust(paths, now, edit)
