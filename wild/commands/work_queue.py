"""`wild --list-work`'s data: the ordered work queue as plain JSON values, one per item.

Its own module so that `wild --list-work` imports the selection and the workspace it reads,
not all that `wild --status` shows (the state's facts, the runs' stages, the policy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wild.selection import WorkItem, select_work

if TYPE_CHECKING:  # a status after an edit of tasks.md needs `item_json`, not the workspace
    from wild.workspace_view import Workspace


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


def list_work_data(ws: Workspace) -> list[dict[str, Any]]:
    return [item_json(item) for item in select_work(ws.snapshot()).queue]
