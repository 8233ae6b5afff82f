"""`wild --check-barriers`, `--approve [BARRIER]` and `--generate-check BARRIER`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from wild.barriers.approval_set import command_hash
from wild.barriers.approvals import approve_hash, command_of, load_approvals, pending_approvals
from wild.barriers.checker import check_all_now, open_unapproved_alerts
from wild.barriers.scripts import generate_check_script
from wild.clock import Clock
from wild.commands.edits import find_barrier
from wild.commands.human_acts import NOT_ASKED, HumanGate
from wild.control import request
from wild.errors import ConflictError, WildError
from wild.parsers import barriers as barriers_md
from wild.parsers.alert_types import CHECKS_WEAKENED
from wild.parsers.alerts import Alert, AlertIndex, status_update
from wild.paths import WildPaths
from wild.policy.checks_trust import CHECKS_APPROVAL_ID, ChecksBaseline
from wild.policy.trust import (
    NOTIFY_APPROVAL_ID,
    POLICY_APPROVAL_ID,
    POLICY_LOOSENED_TYPE,
    RecordedTrust,
)
from wild.runs import signing
from wild.store.alerts_log import append_alert, read_new
from wild.store.files import read_text
from wild.store.runs_log import read_runs
from wild.workspace import (
    accept_checks,
    record_trust,
    require_initialised,
    settle_checks,
    settle_trust,
    stated_policy,
    unapproved_notify,
)


def _barrier_list(paths: WildPaths) -> barriers_md.BarrierList:
    require_initialised(paths)
    return barriers_md.parse(read_text(paths.barriers), file=str(paths.barriers))


def approval_required(paths: WildPaths, now: datetime) -> bool:
    """The policy in force, held to the trust a human recorded (a stricter file is recorded
    first, as the loop does, so an agent cannot loosen it back), requires approval."""
    return settle_trust(paths, now).policy.command_approval == "required"


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


def approve_barrier(
    paths: WildPaths,
    barrier_id: str,
    now: datetime,
    *,
    human: HumanGate = NOT_ASKED,
    seen: str | None = None,
) -> tuple[str, str]:
    """Approve one barrier's command (or, for `@notify`, the policy's Notify Command) for this
    project, and resolve the alerts that asked for it; returns (command, sha256).

    What is approved is the command read once here and shown to the human (in `human`'s
    question, or on the page as `seen`, its sha256): a file changed meanwhile changes nothing
    that was approved. A `seen` that is not the command's hash now is refused."""
    if barrier_id == NOTIFY_APPROVAL_ID:
        command = stated_policy(paths, now).notify_command
        if command is None:
            raise WildError(f"{paths.policy}: the policy has no Notify Command; nothing to approve")
    elif (program := sweep_program(paths, barrier_id)) is not None:
        command = program  # a sweep's runs: the program they all run
    else:
        barrier = find_barrier(paths, barrier_id)
        found = command_of(barrier)
        if found is None:
            raise WildError(
                f"{paths.barriers}: barrier {barrier_id} runs no command "
                f"(type {barrier.type or 'missing'}); nothing to approve"
            )
        command = found
    digest = command_hash(command)
    if seen is not None and seen != digest:
        raise ConflictError(
            f"{paths.barriers}: the command of {barrier_id} changed since it was shown "
            f"(it is now `{command}`); nothing was approved: look at it again"
        )
    human.require(paths, f"approve {barrier_id}: `{command}`")
    approve_hash(paths.project, digest)
    _resolve(paths, open_unapproved_alerts(paths.alerts).get((barrier_id, digest), []), now)
    if barrier_id in held_sweeps(paths):
        request(paths, "recheck")  # a running loop starts the sweep's runs now
    return command, digest


def approve_policy(
    paths: WildPaths, now: datetime, *, human: HumanGate = NOT_ASKED
) -> RecordedTrust:
    """`wild --approve @policy`: a human accepts human-policy.md as it stands (a hand edit that
    loosened it included); its trust is recorded and the alerts that asked are resolved."""
    require_initialised(paths)
    loosened = settle_trust(paths, now).loosened
    human.require(
        paths, f"accept {paths.policy} as it stands ({'; '.join(loosened) or 'no loosening'})"
    )
    trust = record_trust(paths, now)
    index = AlertIndex(read_new(paths.alerts, None).entries)
    _resolve(paths, [a for a in index.active() if a.type == POLICY_LOOSENED_TYPE], now)
    return trust


def approve_checks(
    paths: WildPaths, now: datetime, *, human: HumanGate = NOT_ASKED
) -> ChecksBaseline:
    """`wild --approve @checks`: a human accepts checks.md as it stands (a weakening made
    during an agent's run included); the alerts that asked are resolved. Like every approval,
    a human's act: refused from an agent's process tree, confirmed on the terminal."""
    require_initialised(paths)
    human.require(paths, f"accept {paths.checks} as it stands (its checks may be weaker)")
    accepted = accept_checks(paths)
    index = AlertIndex(read_new(paths.alerts, None).entries)
    _resolve(paths, [a for a in index.active() if a.type == CHECKS_WEAKENED], now)
    return accepted


def _resolve(paths: WildPaths, alerts: list[Alert], now: datetime) -> None:
    for alert in alerts:
        subject = alert.context.get("barrier") or alert.context.get("approve") or POLICY_APPROVAL_ID
        note = f"approved by the human (wild --approve {subject})"
        resolution = {"choice": None, "note": note}
        append_alert(paths.alerts, status_update(alert, "resolved", now, resolution=resolution))


def unapproved(paths: WildPaths, now: datetime) -> list[tuple[str, str]]:
    """(id, what) for every waiting barrier's command, the Notify Command and a loosened
    policy file awaiting a human's approval."""
    held = settle_trust(paths, now)  # the one step that writes: first
    approvals = load_approvals(paths.project)
    doc = _barrier_list(paths)
    waiting = [(b.id, command_of(b) or "") for b in pending_approvals(doc, approvals)]
    notify = unapproved_notify(held.policy, approvals)
    if notify is not None:
        waiting.append((NOTIFY_APPROVAL_ID, notify))
    if held.policy.command_approval == "required":
        for sweep, program in held_sweeps(paths).items():
            if not approvals.allows(program):
                waiting.append((sweep, program))
    if held.loosened:
        waiting.append((POLICY_APPROVAL_ID, "; ".join(held.loosened)))
    checks = settle_checks(paths)
    if checks.weakened:
        waiting.append((CHECKS_APPROVAL_ID, "; ".join(checks.weakened)))
    return waiting


def sweep_program(paths: WildPaths, sweep_id: str) -> str | None:
    """The program of a sweep's runs (as wild signed them), or None when `sweep_id` names no
    sweep in runs.jsonl."""
    index = read_runs(paths.runs_log).index
    if sweep_id not in index.sweeps:
        return None
    program = signing.sweep_programs(index, signing.load_key(), queued_only=False).get(sweep_id)
    if program is None:
        raise WildError(
            f"{paths.runs_log}: sweep {sweep_id} has no run wild queued; nothing to approve"
        )
    return program


def held_sweeps(paths: WildPaths) -> dict[str, str]:
    """The program of each sweep with runs queued (by wild): those the command gate holds."""
    index = read_runs(paths.runs_log).index
    if not any(run.status == "queued" for run in index.runs.values()):
        return {}
    return signing.sweep_programs(index, signing.load_key(), queued_only=True)


def generate_check(paths: WildPaths, barrier_id: str) -> Path:
    return generate_check_script(find_barrier(paths, barrier_id), paths.project)
