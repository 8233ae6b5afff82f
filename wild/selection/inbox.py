"""The head of the queue: human inputs (urgent first, then oldest) and alerts (in progress,
then by severity and age), each held back while it waits for the human's answer."""

from __future__ import annotations

from collections.abc import Iterable

from wild.clock import parse_time
from wild.parsers.alerts import Alert
from wild.parsers.human import HumanInput
from wild.parsers.severity import rank
from wild.selection.items import HUMAN_WAIT, WorkItem


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
    active = [
        (i, a) for i, a in indexed if a.status == "in-progress" and a.id not in awaiting_human
    ]
    pending = [(i, a) for i, a in indexed if a.status == "pending" and a.id not in awaiting_human]
    pending.sort(
        key=lambda pair: (
            rank(pair[1].severity),
            _sort_time(pair[1].timestamp),
            pair[0],
        )
    )
    items = [_alert_item(a) for _, a in active + pending]
    waiting = [
        a
        for _, a in indexed
        if a.status == "escalated" or (a.id in awaiting_human and a.status != "resolved")
    ]
    items += [
        WorkItem(
            kind="blocked",
            id=a.id,
            title=a.description,
            reason=f"{HUMAN_WAIT} (escalated)",
            severity=a.severity,
            status=a.status,
        )
        for a in waiting
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
