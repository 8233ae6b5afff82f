"""Everything the page shows, assembled from the `.wild/` files on each request.

Each section is built on its own: a file that cannot be read or parsed becomes a problem
(file and line) in the answer and an empty section, never an error page. Long lists come a
page at a time (`Window`), so 10k tasks or 100k alerts cost one page of JSON. The only state
is the caller's optional `ParseCache`: a file unchanged since the last request is not parsed again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from wild.barriers.approval_set import command_hash
from wild.barriers.approvals import command_of, pending_approvals
from wild.clock import iso, iso_ms
from wild.commands.policy_show import policy_json
from wild.commands.status import status_data
from wild.commands.work_queue import item_json
from wild.errors import WildError
from wild.parsers.alerts import Alert
from wild.parsers.policy import INTERRUPTION_MODES, MODES
from wild.paths import WildPaths
from wild.record import record
from wild.selection import select_work
from wild.serve import history
from wild.serve.events_view import EventFilter, events_tail
from wild.serve.runs_view import runs_view, thin
from wild.serve.stage import stage_of
from wild.store.events_log import read_events
from wild.workspace import ParseCache, load_workspace
from wild.workspace_view import Workspace

_T = TypeVar("_T")
TEXT_CAP = 4000  # characters of one untrusted text field sent to the page (descriptions…)
ITERATIONS_SHOWN = 200  # the iteration table's newest rows (the stats count them all)


@record
class Window:
    """Which page of each long list the page wants."""

    tasks_offset: int = 0
    tasks_limit: int = 100
    alerts_offset: int = 0
    alerts_limit: int = 20
    runs_offset: int = 0
    runs_limit: int = 24
    queue_limit: int = 100
    events: EventFilter = EventFilter()  # a record (frozen): one shared default is safe


def _cap(text: str) -> str:
    return text if len(text) <= TEXT_CAP else text[:TEXT_CAP] + f"… ({len(text)} characters)"


def _page(items: list[_T], offset: int, limit: int) -> tuple[list[_T], dict[str, int]]:
    offset = max(0, min(offset, max(len(items) - 1, 0)))
    return items[offset : offset + limit], {"total": len(items), "offset": offset, "limit": limit}


def _guarded(problems: list[str], what: str, build: Callable[[], _T], empty: _T) -> _T:
    """`build()`, or `empty` with the reason noted: one bad file never blanks the whole page."""
    try:
        return build()
    except (WildError, OSError, ValueError, UnicodeError) as exc:
        problems.append(f"{what}: {exc}")
        return empty


def alert_json(alert: Alert) -> dict[str, Any]:
    return {
        "id": alert.id,
        "severity": alert.severity,
        "status": alert.status,
        "source": _cap(alert.source),
        "type": _cap(alert.type),
        "description": _cap(alert.description),
        "timestamp": alert.timestamp,
        "choices": [_cap(c) for c in alert.choices],
        "context": _cap(str(dict(alert.context))) if alert.context else "",
        "line": alert.line,
    }


def alerts_in_order(alerts: tuple[Alert, ...]) -> list[Alert]:
    """Critical ones first, then warnings, then the rest; newest first within each."""
    rank = {"critical": 0, "warning": 1}
    newest_first = list(reversed(alerts))
    return sorted(newest_first, key=lambda a: rank.get(a.severity, 2))


def _tasks(ws: Workspace, window: Window) -> dict[str, Any]:
    rows, page = _page(list(ws.tasks.tasks), window.tasks_offset, window.tasks_limit)
    return {
        **page,
        "rows": [
            {
                "id": t.id,
                "text": _cap(t.text),
                "status": t.status,
                "priority": t.priority,
                "dependsOn": list(t.depends_on),
                "blockedBy": list(t.blocked_by),
                "subtasks": [{"text": _cap(s.text), "status": s.status} for s in t.subtasks],
                "line": t.span.start + 1,
            }
            for t in rows
        ],
    }


def _human(ws: Workspace) -> list[dict[str, Any]]:
    newest = list(reversed(ws.human.inputs))[:50]
    return [
        {
            "key": h.key,
            "status": h.status,
            "urgent": h.urgent,
            "content": _cap(h.content.strip()),
            "relatedAlert": h.related_alert,
        }
        for h in newest
    ]


def _sha256(command: str | None) -> str | None:
    return command_hash(command) if command else None


def _barriers(ws: Workspace) -> list[dict[str, Any]]:
    awaiting = {b.id for b in pending_approvals(ws.barriers, ws.approvals)}
    return [
        {
            "id": b.id,
            "status": b.status,
            "type": b.type,
            "command": _cap(command_of(b) or ""),
            # What "Approve command" sends back: the approval names the command shown.
            "commandSha256": _sha256(command_of(b)),
            "result": _cap(b.result or ""),
            "lastCheck": b.last_check,
            "blocks": list(b.blocks),
            "needsApproval": b.id in awaiting,
            "canSatisfy": b.status != "satisfied",
        }
        for b in ws.barriers.barriers
    ]


def _history(paths: WildPaths) -> tuple[list[dict[str, Any]], list[Any], list[dict[str, Any]]]:
    """events.log's events, its problems, and the iteration rows made from them."""
    events, problems = read_events(paths.events)
    return events, list(problems), history.iterations(events)


def _iterations(
    paths: WildPaths, open_tasks: int, now: datetime, cache: ParseCache | None
) -> dict[str, Any]:
    # Kept while events.log stands: an alert appended re-reads the alerts, not the history.
    read = functools.partial(_history, paths)
    events, problems, rows = read() if cache is None else cache.get(paths.events, read)
    return {
        "rows": rows[-ITERATIONS_SHOWN:],
        "stats": history.stats(rows),
        "health": history.health(rows),
        # thinned like a run's curve (first and last point kept)
        "burndown": thin(history.burndown(events, rows, open_tasks, iso_ms(now))),
        "problems": [str(p) for p in problems],
    }


def dashboard(
    paths: WildPaths,
    now: datetime,
    window: Window = Window(),  # noqa: B008  (a record, frozen: one shared default is safe)
    cache: ParseCache | None = None,
) -> dict[str, Any]:
    """The whole page's data, read from the files now (a file whose stat signature stands
    since the last read, with a `cache`, is not parsed again)."""
    problems: list[str] = []
    ws = load_workspace(paths, now, cache)
    selection = select_work(ws.snapshot())  # once: the status and the queue both need it
    status: dict[str, Any] = _guarded(
        problems, "state", lambda: status_data(ws, now, selection=selection), {}
    )
    problems.extend(status.get("problems", []))
    runs, metric_problems = runs_view(
        paths, ws.runs, offset=window.runs_offset, limit=window.runs_limit, cache=cache
    )  # runs.jsonl's own problems are the workspace's, in the status's
    problems.extend(str(p) for p in metric_problems)
    shown, queue_page = _page(list(selection.queue), 0, window.queue_limit)
    queue = [item_json(item) for item in shown]  # the page only: the queue may hold 10k
    alerts, alerts_page = _page(
        alerts_in_order(ws.open_alerts), window.alerts_offset, window.alerts_limit
    )
    open_tasks = sum(1 for t in ws.tasks.tasks if t.status in ("todo", "in-progress"))
    iterations: dict[str, Any] = _guarded(
        problems, str(paths.events), lambda: _iterations(paths, open_tasks, now, cache), {}
    )
    problems.extend(iterations.get("problems", []))
    loop = status.get("loop", {})
    policy: dict[str, Any] = _guarded(problems, str(paths.policy), lambda: policy_json(ws), {})
    events: dict[str, Any] = _guarded(
        problems, str(paths.events), lambda: events_tail(paths.events, window.events), {}
    )
    return {
        "dir": str(paths.root),
        "now": iso(now),
        "banner": {
            "stage": stage_of(loop, status.get("research", {})),
            "iteration": loop.get("iteration"),
            "loop": loop.get("state"),
            "paused": loop.get("paused"),
            "goal": _cap(loop.get("goal") or ""),
            "elapsedS": status.get("totals", {}).get("elapsedS"),
            "runs": runs["counts"],  # counted once, for the banner and the runs section
            "alerts": len(ws.open_alerts),
            "critical": sum(1 for a in ws.open_alerts if a.severity == "critical"),
            "work": status.get("work"),
        },
        "status": {k: status.get(k) for k in ("tasks", "alerts", "barriers", "checks", "totals")},
        "queue": {**queue_page, "rows": queue},
        "tasks": _tasks(ws, window),
        "alerts": {**alerts_page, "rows": [alert_json(a) for a in alerts]},
        "human": _human(ws),
        "policy": {
            **policy,
            "modes": [*MODES, *INTERRUPTION_MODES],
        },
        "barriers": _barriers(ws),
        "runs": runs,
        "iterations": iterations,
        "events": events,
        "problems": [_cap(p) for p in problems],
    }
