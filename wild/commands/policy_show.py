"""`wild --show-policy`: the policy in force, its expiry and its instructions."""

from __future__ import annotations

from typing import Any

from wild.clock import iso
from wild.workspace_view import Workspace


def policy_json(ws: Workspace) -> dict[str, Any]:
    policy = ws.policy
    return {
        "mode": policy.mode,
        "preset": policy.preset,
        "autonomyLevel": policy.autonomy_level,
        "maxRetryAttempts": policy.max_retry_attempts,
        "escalationThreshold": policy.escalation_threshold,
        "progressReportMinutes": policy.progress_report_minutes,
        "contextSwitchPenaltyMinutes": policy.context_switch_penalty_minutes,
        "escalateOn": {
            "repeatedFailures": policy.escalate_on.repeated_failures,
            "stuckMinutes": policy.escalate_on.stuck_minutes,
            "criticalAlerts": policy.escalate_on.critical_alerts,
            "unexpectedSuccess": policy.escalate_on.unexpected_success,
        },
        "commandApproval": policy.command_approval,
        "notifyCommand": policy.notify_command,
        "activeFrom": iso(policy.active_from) if policy.active_from else None,
        "expiresAt": iso(policy.expires_at) if policy.expires_at else None,
        "note": ws.policy_note,
        # What human-policy.md asks beyond the trust set through the CLI (wild --approve @policy).
        "heldBack": list(ws.held.loosened),
        "instructions": policy.instructions,
    }


def format_policy(ws: Workspace) -> str:
    data = policy_json(ws)
    rules = data["escalateOn"]
    lines = [
        f"Mode: {data['mode']}" + (f" (preset {data['preset']})" if data["preset"] else ""),
        f"Autonomy level: {data['autonomyLevel']}",
        f"Max retry attempts: {data['maxRetryAttempts']}",
        f"Escalation threshold: {data['escalationThreshold']}",
        f"Progress reports: every {data['progressReportMinutes']} minutes"
        if data["progressReportMinutes"]
        else "Progress reports: none",
        f"Context switch penalty: {data['contextSwitchPenaltyMinutes']} minutes",
        f"Escalate on: {rules['repeatedFailures']} failed attempts, {rules['stuckMinutes']} minutes"
        f" without progress, critical alerts {'yes' if rules['criticalAlerts'] else 'no'},"
        f" unexpected success {'yes' if rules['unexpectedSuccess'] else 'no'}",
        f"Command approval: {data['commandApproval']}",
        f"Notify command: {data['notifyCommand'] or 'none'}",
    ]
    if data["expiresAt"]:
        lines.append(f"Active from {data['activeFrom']} until {data['expiresAt']}")
    if data["note"]:
        lines.append(f"Note: {data['note']}")
    if data["heldBack"]:
        held = "; ".join(data["heldBack"])
        lines.append(f"Held back: {held} (run wild --approve @policy to accept the file)")
    if data["instructions"].strip():
        lines += [
            "Instructions:",
            *("  " + line for line in data["instructions"].strip().splitlines()),
        ]
    return "\n".join(lines)
