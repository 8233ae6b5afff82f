"""`wild --check-barriers`, `--approve [BARRIER]` and `--generate-check BARRIER`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from wild.barriers.approvals import approve, command_of, is_approved, pending_approvals
from wild.barriers.checker import check_all_now, open_unapproved_alerts
from wild.barriers.scripts import generate_check_script
from wild.clock import Clock
from wild.commands.edits import find_barrier
from wild.errors import WildError
from wild.loop.reporting import NOTIFY_APPROVAL_ID
from wild.parsers import barriers as barriers_md
from wild.parsers import policy as policy_md
from wild.parsers.alerts import status_update
from wild.paths import WildPaths
from wild.policy.model import effective_policy, policy_from_document
from wild.store.alerts_log import append_alert
from wild.store.files import read_text
from wild.workspace import require_initialised


def _barrier_list(paths: WildPaths) -> barriers_md.BarrierList:
    require_initialised(paths)
    return barriers_md.parse(read_text(paths.barriers), file=str(paths.barriers))


def approval_required(paths: WildPaths, now: datetime) -> bool:
    doc = policy_md.parse(read_text(paths.policy), file=str(paths.policy))
    policy, _ = effective_policy(policy_from_document(doc), now)
    return policy.command_approval == "required"


def barrier_ids(paths: WildPaths) -> set[str]:
    return {b.id for b in _barrier_list(paths).barriers}


def check_barriers(paths: WildPaths, clock: Clock) -> list[dict[str, Any]]:
    """One pass over every waiting barrier, results written back; returns what each found."""
    require_initialised(paths)
    results = check_all_now(
        paths, require_approval=approval_required(paths, clock.now()), clock=clock
    )
    return [
        {
            "id": barrier_id,
            "satisfied": result.satisfied,
            "ran": result.ran,
            "result": result.status_text,
            "error": result.error,
        }
        for barrier_id, result in results
    ]


def format_checks(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No waiting barriers to check."
    lines = []
    for row in rows:
        mark = "satisfied" if row["satisfied"] else ("not run" if not row["ran"] else "waiting")
        lines.append(f"{row['id']}: {mark} — {row['result']}")
    return "\n".join(lines)


def approve_barrier(paths: WildPaths, barrier_id: str, now: datetime) -> tuple[str, str]:
    """Approve one barrier's command (or, for `@notify`, the policy's Notify Command) for this
    project, and resolve the alerts that asked for it; returns (command, sha256)."""
    if barrier_id == NOTIFY_APPROVAL_ID:
        command = _notify_command(paths)
        if command is None:
            raise WildError(f"{paths.policy}: the policy has no Notify Command; nothing to approve")
        return command, approve(paths.project, command)
    barrier = find_barrier(paths, barrier_id)
    command = command_of(barrier)
    if command is None:
        raise WildError(
            f"{paths.barriers}: barrier {barrier_id} runs no command "
            f"(type {barrier.type or 'missing'}); nothing to approve"
        )
    digest = approve(paths.project, command)
    for alert in open_unapproved_alerts(paths.alerts).get((barrier_id, digest), []):
        note = f"approved by the human (wild --approve {barrier_id})"
        resolution = {"choice": None, "note": note}
        append_alert(paths.alerts, status_update(alert, "resolved", now, resolution=resolution))
    return command, digest


def _notify_command(paths: WildPaths) -> str | None:
    doc = policy_md.parse(read_text(paths.policy), file=str(paths.policy))
    return policy_from_document(doc).notify_command


def unapproved(paths: WildPaths) -> list[tuple[str, str]]:
    """(id, command) for every waiting barrier, and the Notify Command, awaiting approval."""
    doc = _barrier_list(paths)
    waiting = [(b.id, command_of(b) or "") for b in pending_approvals(doc, paths.project)]
    notify = _notify_command(paths)
    if notify and not is_approved(paths.project, notify):
        waiting.append((NOTIFY_APPROVAL_ID, notify))
    return waiting


def generate_check(paths: WildPaths, barrier_id: str) -> Path:
    return generate_check_script(find_barrier(paths, barrier_id), paths.project)
