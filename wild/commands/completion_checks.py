"""`wild --run-checks`: run `.wild/checks.md` now, write each result back, judge the strategy.

The commands come from a file an agent can edit, so the approval rule of barrier commands
applies (SPEC §3): under `Command Approval: required`, only a command a human approved with
`wild --approve CHECK` runs.
"""

from __future__ import annotations

from typing import Any

from wild.barriers.approval_set import command_hash
from wild.barriers.approvals import approve_hash, load_approvals
from wild.barriers.command_gate import gate
from wild.clock import Clock, iso
from wild.commands.barrier_cmds import approval_required
from wild.commands.human_acts import NOT_ASKED, HumanGate
from wild.completion.run import record, run_all
from wild.completion.verdict import CheckOutcome, Verdict, judge
from wild.control import request
from wild.parsers import checks as checks_md
from wild.parsers import tasks as tasks_md
from wild.paths import WildPaths
from wild.record import record as frozen_record
from wild.store.files import read_text, update_text
from wild.workspace import require_initialised, settle_checks


@frozen_record
class ChecksRun:
    """What one `--run-checks` found."""

    doc: checks_md.CheckList
    verdict: Verdict


def run_checks(paths: WildPaths, clock: Clock) -> ChecksRun:
    """Run every check in file order and record each result in checks.md as it ends."""
    require_initialised(paths)
    doc = settle_checks(paths).checks  # a check an agent weakened still stands
    required = approval_required(paths, clock.now())
    allowed = gate(load_approvals(paths.project), approval_required=required)

    def write(outcome: CheckOutcome) -> None:
        update_text(paths.checks, record(outcome, iso(clock.now())), paths.lock)

    outcomes = run_all(doc.checks, project_dir=paths.project, may_run=allowed, record_outcome=write)
    return ChecksRun(doc, judge(doc.strategy, outcomes))


def check_commands(paths: WildPaths) -> dict[str, str]:
    """The command of each completion check that runs one, and of each open task's own
    `- check:` line, by id."""
    doc = checks_md.parse(read_text(paths.checks), file=str(paths.checks))
    tasks = tasks_md.parse(read_text(paths.tasks), file=str(paths.tasks))
    found = {
        t.id: t.check
        for t in tasks.tasks
        if t.id and t.check and t.status in ("todo", "in-progress")
    }
    found.update(
        (c.id, c.command) for c in doc.checks if c.type in checks_md.COMMAND_TYPES and c.command
    )
    return found


def approve_check(
    paths: WildPaths, check_id: str, human: HumanGate = NOT_ASKED
) -> tuple[str, str] | None:
    """Approve the named check's command once `human` lets the human's act through (the hash
    of the command shown is recorded); None when no check of that id runs one."""
    command = check_commands(paths).get(check_id)
    if command is None:
        return None
    digest = command_hash(command)
    human.require(paths, f"approve check {check_id}: `{command}`")
    approve_hash(paths.project, digest)
    request(paths, "recheck")  # a running loop judged the checks without this command
    return command, digest


def unapproved_checks(paths: WildPaths) -> list[tuple[str, str]]:
    """(id, command) of each check whose command no human has approved yet."""
    approvals = load_approvals(paths.project)
    return [
        (check_id, command)
        for check_id, command in check_commands(paths).items()
        if not approvals.allows(command)
    ]


def checks_json(run: ChecksRun) -> dict[str, Any]:
    return {
        "strategy": run.doc.strategy,
        "mode": run.doc.mode,
        "passed": run.verdict.holds,
        "checks": [
            {
                "id": o.id,
                "status": o.status,
                "ran": o.ran,
                "result": o.summary,
                "output": o.tail,
            }
            for o in run.verdict.outcomes
        ],
        "problems": [str(p) for p in run.doc.problems],
    }


def format_checks_run(run: ChecksRun) -> str:
    if not run.verdict.outcomes:
        return "No completion checks in checks.md: COMPLETE needs only that no work is left."
    lines = [f"{o.id}: {o.status.upper()} — {o.summary}" for o in run.verdict.outcomes]
    passed = sum(1 for o in run.verdict.outcomes if o.passed)
    word = "holds" if run.verdict.holds else "fails"
    lines.append(
        f"Strategy {run.doc.strategy} {word}: {passed}/{len(run.verdict.outcomes)} passing"
    )
    lines.extend(f"Problem: {p}" for p in run.doc.problems)
    return "\n".join(lines)
