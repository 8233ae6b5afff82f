"""`wild --status` and `wild --list-work`: the state at a glance and the ordered work queue."""

from __future__ import annotations

from collections import Counter
from typing import Any

from wild.selection import Selection, WorkItem, select_work
from wild.store.state_file import load_state
from wild.workspace import Workspace


def item_json(item: WorkItem) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": item.kind, "id": item.id, "title": item.title}
    for key, value in (
        ("reason", item.reason),
        ("severity", item.severity),
        ("priority", item.priority),
        ("status", item.status),
    ):
        if value is not None:
            data[key] = value
    if item.barriers:
        data["barriers"] = list(item.barriers)
    if item.urgent:
        data["urgent"] = True
    return data


def status_data(ws: Workspace) -> dict[str, Any]:
    """Everything `--status` shows, as plain data (the JSON form)."""
    selection = select_work(ws.snapshot())
    tasks = Counter(t.status for t in ws.tasks.tasks)
    # Items made from tasks carry a priority; held inputs and escalated alerts do not.
    blocked_tasks = sum(
        1 for item in selection.queue if item.kind == "blocked" and item.priority is not None
    )
    alerts = [a for a in ws.alerts if a.status != "resolved"]
    severities = Counter(a.severity for a in alerts)
    barrier_counts = Counter(b.status for b in ws.barriers.barriers)
    loaded = load_state(ws.paths.state)
    state = loaded.state
    return {
        "dir": str(ws.paths.root),
        "loop": {
            "active": state.active,
            "iteration": state.iteration,
            "paused": state.paused,
            "goal": state.prompt,
        },
        "policy": {
            "mode": ws.policy.mode,
            "autonomy": ws.policy.autonomy_level,
            "note": ws.policy_note,
        },
        "human": {"pending": sum(1 for h in ws.human.inputs if h.status == "pending")},
        "alerts": {
            "active": len(alerts),
            "inProgress": sum(1 for a in alerts if a.status == "in-progress"),
            "pending": sum(1 for a in alerts if a.status == "pending"),
            "escalated": sum(1 for a in alerts if a.status == "escalated"),
            "critical": severities["critical"],
            "warning": severities["warning"],
            "info": severities["info"],
        },
        "tasks": {
            "total": len(ws.tasks.tasks),
            "complete": tasks["complete"],
            "inProgress": tasks["in-progress"],
            "todo": tasks["todo"],
            "cancelled": tasks["cancelled"],
            "blocked": blocked_tasks,
        },
        "barriers": {
            "waiting": barrier_counts["waiting"],
            "satisfied": barrier_counts["satisfied"],
            "failed": barrier_counts["failed"],
        },
        "next": _next_json(selection),
        "problems": [str(p) for p in (*ws.problems, *loaded.problems)] + list(selection.problems),
    }


def _next_json(selection: Selection) -> dict[str, Any]:
    if selection.item is None:
        return {"kind": "complete"}
    data = item_json(selection.item)
    data["kind"] = selection.kind
    return data


def _next_text(nxt: dict[str, Any]) -> str:
    if nxt["kind"] == "complete":
        return "nothing left: all work is complete"
    if nxt["kind"] == "blocked":
        return f"waiting — {nxt['id']}: {nxt.get('reason', '')}"
    return f"{nxt['kind']} {nxt['id']} — {nxt['title']}"


def format_status(data: dict[str, Any]) -> str:
    loop = data["loop"]
    alerts = data["alerts"]
    tasks = data["tasks"]
    barriers = data["barriers"]
    running = "running" if loop["active"] else "not running"
    if loop["paused"]:
        running += ", paused"
    policy = f"Policy: {data['policy']['mode']} (autonomy {data['policy']['autonomy']})"
    if data["policy"]["note"]:
        policy += f" — {data['policy']['note']}"
    alert_line = f"Alerts: {alerts['active']} active"
    if alerts["active"]:
        alert_line += (
            f" ({alerts['critical']} critical, {alerts['warning']} warning, {alerts['info']} info;"
            f" {alerts['inProgress']} in progress, {alerts['escalated']} escalated)"
        )
    lines = [
        f"wild — {data['dir']}",
        f"Loop: {running} (iteration {loop['iteration']})",
        policy,
        f"Human input: {data['human']['pending']} pending",
        alert_line,
        f"Tasks: {tasks['complete']}/{tasks['total']} complete, {tasks['inProgress']} in progress,"
        f" {tasks['blocked']} blocked, {tasks['cancelled']} cancelled",
        f"Barriers: {barriers['waiting']} waiting, {barriers['satisfied']} satisfied,"
        f" {barriers['failed']} failed",
        f"Next: {_next_text(data['next'])}",
    ]
    if data["problems"]:
        lines.append(f"Problems ({len(data['problems'])}):")
        lines.extend(f"  {p}" for p in data["problems"])
    return "\n".join(lines)


def list_work_data(ws: Workspace) -> list[dict[str, Any]]:
    return [item_json(item) for item in select_work(ws.snapshot()).queue]


def format_work(items: list[dict[str, Any]]) -> str:
    if not items:
        return "No work queued: all work is complete."
    width = len(str(len(items)))
    lines = []
    for number, item in enumerate(items, 1):
        tag = ""
        if item.get("urgent"):
            tag = "[URGENT] "
        elif "severity" in item:
            tag = f"[{item['severity']}] "
        elif "priority" in item:
            tag = f"[P{item['priority']}] "
        line = f"{number:>{width}}. {item['kind']:<11} {item['id']}  {tag}{item['title']}"
        if item.get("reason"):
            line += f" — {item['reason']}"
        lines.append(line)
    return "\n".join(lines)
