"""The head of the queue: human inputs (urgent first, then oldest) and alerts (in progress,
then by severity and age), each held back while it waits for the human's answer; an alert
only a human can resolve (`wild.parsers.alert_types.HUMAN_ONLY`) always waits for the human."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from wild.clock import parse_time
from wild.parsers.alert_types import human_only
from wild.parsers.severity import rank
from wild.selection.items import HUMAN_ONLY_WAIT, HUMAN_WAIT, WorkItem

if TYPE_CHECKING:  # records named, not made
    from wild.parsers.alerts import Alert
    from wild.parsers.human import HumanInput


def _sort_time(text: str) -> float:
    moment = parse_time(text)
    return moment.timestamp() if moment is not None else float("inf")


def human_items(
    inputs: Iterable[HumanInput], awaiting_human: frozenset[str]
) -> tuple[list[WorkItem], list[WorkItem]]:
    """Pending inputs, urgent first then oldest; and those held for the human's answer."""
    pending = [(i, h) for i, h in enumerate(inputs) if h.status == "pending"]
    pending.sort(key=lambda pair: (not pair[1].urgent, _sort_time(pair[1].timestamp), pair[0]))
    ready: list[WorkItem] = []
    held: list[WorkItem] = []
    for _, entry in pending:
        waits = entry.key in awaiting_human
        (held if waits else ready).append(
            WorkItem(
                kind="blocked" if waits else "human-input",
                id=entry.key,
                title=_first_line(entry.content),
                reason=HUMAN_WAIT if waits else None,
                urgent=entry.urgent,
                status="pending",
            )
        )
    return ready, held


def _first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def alert_items(alerts: Iterable[Alert], awaiting_human: frozenset[str]) -> list[WorkItem]:
    indexed = list(enumerate(alerts))
    for_agent = [
        (i, a) for i, a in indexed if a.id not in awaiting_human and not human_only(a.type)
    ]
    active = [(i, a) for i, a in for_agent if a.status == "in-progress"]
    pending = [(i, a) for i, a in for_agent if a.status == "pending"]
    pending.sort(
        key=lambda pair: (
            rank(pair[1].severity),
            _sort_time(pair[1].timestamp),
            pair[0],
        )
    )
    items = [_alert_item(a) for _, a in active + pending]
    items += [
        WorkItem(
            kind="blocked",
            id=a.id,
            title=a.description,
            reason=HUMAN_ONLY_WAIT if human_only(a.type) else f"{HUMAN_WAIT} (escalated)",
            severity=a.severity,
            status=a.status,
        )
        for _, a in indexed
        if a.status != "resolved"
        and (a.status == "escalated" or a.id in awaiting_human or human_only(a.type))
    ]
    return items


def _alert_item(alert: Alert) -> WorkItem:
    return WorkItem(
        kind="alert",
        id=alert.id,
        title=f"{alert.source}: {alert.description}",
        severity=alert.severity,
        status=alert.status,
    )
