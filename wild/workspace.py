"""Load every `.wild/` file into one parsed view; the read side shared by the CLI and the loop.

It also holds the policy to the trust recorded outside `.wild/` (`wild.policy.trust`), and
records that trust (`record_trust`, `settle_trust`) for the CLI and the loop alike: a policy
file whose last change was made while no agent of wild ran is the human's (`humans_change`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from wild.barriers.approval_set import NO_APPROVALS, Approvals
from wild.barriers.approvals import changing_store, load_checks, load_project
from wild.barriers.command_gate import may_run
from wild.errors import WildError
from wild.parsers import barriers as barriers_md
from wild.parsers import checks as checks_md
from wild.parsers import human as human_md
from wild.parsers import policy as policy_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import Alert
from wild.parsers.lines import Problem, undecodable_lines
from wild.parsers.runs import RunIndex
from wild.paths import WildPaths, approvals_path
from wild.policy.checks_trust import (
    ChecksBaseline,
    HeldChecks,
    baseline_from_json,
    baseline_of,
    baseline_to_json,
    hold_checks,
    weakened_message,
)
from wild.policy.model import HumanPolicy, effective_policy, policy_from_document
from wild.policy.trust import (
    NOTIFY_APPROVAL_ID,
    HeldPolicy,
    RecordedTrust,
    hold_policy,
    loosened_message,
    made_during_agent_run,
    trust_from_json,
    trust_of,
    trust_to_json,
)
from wild.record import replace
from wild.store.files import Signature, read_text, stat_signature, update_text
from wild.store.runs_log import RunLog, read_runs
from wild.store.runs_summary import read_summary
from wild.store.work_files import (
    open_alerts_of,
    read_alerts,
    read_tasks,
    refusals_of,
    tasks_problems,
)
from wild.workspace_view import Workspace

if TYPE_CHECKING:
    # events.log is read only when a change to the policy or checks must be dated: not by
    # `wild --status` (issue 22 item 8).
    from wild.parsers.events_log import AgentSpan


def require_initialised(paths: WildPaths) -> None:
    if not paths.root.is_dir():
        raise WildError(
            f"{paths.root} does not exist; run `wild --init` first (or pass --dir PATH)"
        )


def read_trust(paths: WildPaths) -> tuple[Approvals, RecordedTrust | None]:
    """This project's approvals and recorded trust, from the store outside `.wild/`."""
    approvals, trust = load_project(paths.project, path=approvals_path())
    return approvals, trust_from_json(trust)


def read_accepted_checks(paths: WildPaths) -> ChecksBaseline | None:
    """The completion checks a human last accepted, from the store outside `.wild/`."""
    return baseline_from_json(load_checks(paths.project, path=approvals_path()))


# When wild's agents ran: read from events.log only when a file's change must be dated.
Spans = Callable[[], Iterable["AgentSpan"]]


def recorded_spans(paths: WildPaths) -> Spans:
    """The agent runs events.log records, read when asked."""

    def spans() -> Iterable[AgentSpan]:
        from wild.parsers.events_log import agent_spans  # noqa: PLC0415
        from wild.store.events_log import read_events  # noqa: PLC0415

        return agent_spans(read_events(paths.events)[0])

    return spans


def modified_at(path: Path) -> datetime | None:
    """When the file was last changed, as its own time says; None when it cannot be stat'ed."""
    try:
        return datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
    except OSError:
        return None


def humans_change(path: Path, spans: Spans) -> bool:
    """The file's last change was made while no agent of wild ran: the human's own edit (a
    folder's first loop included), to be taken as it stands."""
    return not made_during_agent_run(modified_at(path), spans())


def policy_in_force(
    policy_doc: policy_md.PolicyDocument,
    recorded: RecordedTrust | None,
    now: datetime,
    by_human: Callable[[], bool] = lambda: False,
) -> tuple[HeldPolicy, str | None]:
    """The file's policy at `now` (expiry applied), held to the trust a human recorded unless
    `by_human()` says the human made the file as it stands (asked only when it is looser); and
    the expiry note, if any."""
    policy, note = effective_policy(policy_from_document(policy_doc), now)
    held = hold_policy(policy, recorded, now)
    if held.loosened and by_human():
        held = hold_policy(policy, recorded, now, by_human=True)
    return held, note


def stated_policy(paths: WildPaths, now: datetime, text: str | None = None) -> HumanPolicy:
    """The policy as human-policy.md (or `text` for it) states it at `now`: expiry applied,
    nothing held back."""
    text = read_text(paths.policy) if text is None else text
    doc = policy_md.parse(text, file=str(paths.policy))
    return effective_policy(policy_from_document(doc), now)[0]


def record_trust(
    paths: WildPaths, now: datetime, edit: Callable[[str], str] | None = None
) -> RecordedTrust:
    """A human, through the CLI, sets the policy: the trust of human-policy.md as `edit`
    makes it (as it stands without one) is recorded, then the file is written, both under the
    store's lock. The record comes first: a loop woken by the file's change reads it already."""
    with changing_store(paths.project, path=approvals_path()) as entry:
        text = read_text(paths.policy)
        trust = trust_of(stated_policy(paths, now, edit(text) if edit is not None else text))
        entry.trust = trust_to_json(trust)
        entry.save()
        if edit is not None:
            update_text(paths.policy, edit, paths.lock)
    return trust


def settle_trust(paths: WildPaths, now: datetime, spans: Spans | None = None) -> HeldPolicy:
    """The file and the record read together under the store's lock (so never half of a
    `record_trust`); a file stricter than the record (a hand tightening), or looser by the
    human's own edit (its last change made while no agent ran: `spans`, events.log's by
    default), becomes the record, so an agent cannot loosen it back. Returns how the file is
    held."""
    when = recorded_spans(paths) if spans is None else spans
    with changing_store(paths.project, path=approvals_path()) as entry:
        doc = policy_md.parse(read_text(paths.policy), file=str(paths.policy))
        recorded = trust_from_json(entry.trust)
        held, _ = policy_in_force(doc, recorded, now, lambda: humans_change(paths.policy, when))
        if held.to_record is not None:
            entry.trust = trust_to_json(held.to_record)
        return held


def checks_in_force(
    doc: checks_md.CheckList,
    recorded: ChecksBaseline | None,
    by_human: Callable[[], bool] = lambda: False,
) -> HeldChecks:
    """checks.md held to the checks a human accepted, unless `by_human()` says the human made
    the file as it stands (asked only when it is weaker)."""
    held = hold_checks(doc, recorded)
    if held.weakened and by_human():
        held = hold_checks(doc, recorded, by_human=True)
    return held


def settle_checks(paths: WildPaths, spans: Spans | None = None) -> HeldChecks:
    """checks.md and the accepted checks read together under the store's lock; what becomes
    the record (the first checks seen, a new check, the human's own edit) is recorded."""
    when = recorded_spans(paths) if spans is None else spans
    with changing_store(paths.project, path=approvals_path()) as entry:
        doc = checks_md.parse(read_text(paths.checks), file=str(paths.checks))
        recorded = baseline_from_json(entry.checks)
        held = checks_in_force(doc, recorded, lambda: humans_change(paths.checks, when))
        if held.to_record is not None:
            entry.checks = baseline_to_json(held.to_record)
        return held


def accept_checks(paths: WildPaths) -> ChecksBaseline:
    """`wild --approve @checks`: a human accepts checks.md as it stands."""
    with changing_store(paths.project, path=approvals_path()) as entry:
        accepted = baseline_of(checks_md.parse(read_text(paths.checks), file=str(paths.checks)))
        entry.checks = baseline_to_json(accepted)
        return accepted


def unapproved_notify(policy: HumanPolicy, approvals: Approvals) -> str | None:
    """The policy's Notify Command when the command gate does not let it run, else None."""
    command = policy.notify_command
    required = policy.command_approval == "required"  # as held to the recorded trust
    if command and not may_run(command, approval_required=required, approvals=approvals):
        return command
    return None


def trust_problems(ws: Workspace) -> list[str]:
    """What the policy file asks that wild does not do, for `wild --status`."""
    problems = []
    if ws.held.loosened:
        problems.append(loosened_message(ws.held.loosened, str(ws.paths.policy)))
    if ws.held_checks is not None and ws.held_checks.weakened:
        problems.append(weakened_message(ws.held_checks.weakened, str(ws.paths.checks)))
    command = unapproved_notify(ws.policy, ws.approvals)
    if command is not None:
        problems.append(
            f"{ws.paths.policy}: the Notify Command is not approved, so it is not run; read it "
            f"and run `wild --approve {NOTIFY_APPROVAL_ID}` to allow `{command}`"
        )
    return problems


_T = TypeVar("_T")


class ParseCache:
    """Parses kept while their file's stat signature (size, mtime, inode) stands, and
    runs.jsonl read by byte offset: for a reader that lives long and reads again on every
    change (the dashboard), so a change to one file re-parses that file alone."""

    def __init__(self) -> None:
        self._kept: dict[Path, tuple[Signature, object]] = {}
        self.runs: RunLog | None = None
        self._followed: dict[str, object] = {}

    def run_metrics(self, run_id: str, make: Callable[[], _T]) -> _T:
        """The run's metrics follower (wild.metrics.follow.RunMetrics), kept across reads so
        each reads only what its files gained since."""
        if run_id not in self._followed:
            self._followed[run_id] = make()
        return cast(_T, self._followed[run_id])

    def get(self, path: Path, make: Callable[[], _T]) -> _T:
        signature = stat_signature(path)
        if signature is None:
            return make()  # missing or unreadable: nothing worth keeping
        kept = self._kept.get(path)
        if kept is not None and kept[0] == signature:
            return cast(_T, kept[1])
        value = make()
        self._kept[path] = (signature, value)
        return value

    def run_log(self, paths: WildPaths) -> RunLog:
        if self.runs is None:
            self.runs = RunLog(paths.runs_log)
        self.runs.refresh()
        return self.runs


def _parsed(cache: ParseCache | None, path: Path, parse: Callable[[str, str], _T]) -> _T:
    def make() -> _T:
        return parse(read_text(path), str(path))

    return make() if cache is None else cache.get(path, make)


def load_workspace(
    paths: WildPaths, now: datetime, cache: ParseCache | None = None, *, run_summary: bool = False
) -> Workspace:
    """Parse every file; unknown lines become problems, never errors (the CLI's read side).
    With a `cache`, a file whose stat signature has not moved is not parsed again. With
    `run_summary` (`wild --status`), runs.jsonl is read by way of its kept summary: only the
    runs not ended are whole records (`Workspace.run_states`)."""
    require_initialised(paths)
    alerts, alert_problems = read_alerts(paths)
    tasks, damaged = (
        read_tasks(paths) if cache is None else cache.get(paths.tasks, lambda: read_tasks(paths))
    )
    approvals, recorded = read_trust(paths)
    if run_summary:
        summary, found = read_summary(paths.runs_log, paths.runs_summary)
        index, run_problems, states = summary.open_index(), found, summary.states()
    else:
        runs = read_runs(paths.runs_log) if cache is None else cache.run_log(paths)
        index, run_problems, states = runs.index, tuple(runs.problems), None
    ws = assemble_workspace(
        paths,
        now,
        policy_by_human=lambda: humans_change(paths.policy, recorded_spans(paths)),
        checks_recorded=read_accepted_checks(paths),
        checks_by_human=lambda: humans_change(paths.checks, recorded_spans(paths)),
        tasks=tasks,
        barriers=_parsed(cache, paths.barriers, barriers_md.parse),
        human=_parsed(cache, paths.human, human_md.parse),
        policy_doc=_parsed(cache, paths.policy, policy_md.parse),
        checks=_parsed(cache, paths.checks, checks_md.parse),
        alerts=alerts,
        alert_problems=alert_problems,
        refusals=refusals_of(paths),
        notices=() if damaged is None else (damaged,),
        approvals=approvals,
        recorded_trust=recorded,
        runs=index,
        run_problems=run_problems,
    )
    return ws if states is None else replace(ws, run_states=states)


def assemble_workspace(
    paths: WildPaths,
    now: datetime,
    *,
    tasks: tasks_md.TaskList,
    barriers: barriers_md.BarrierList,
    human: human_md.HumanQueue,
    policy_doc: policy_md.PolicyDocument,
    alerts: tuple[Alert, ...],
    alert_problems: tuple[Problem, ...] = (),
    open_alerts: tuple[Alert, ...] | None = None,
    checks: checks_md.CheckList | None = None,
    refusals: tuple[tuple[str, str], ...] = (),
    notices: tuple[str, ...] = (),
    approvals: Approvals = NO_APPROVALS,
    recorded_trust: RecordedTrust | None = None,
    runs: RunIndex | None = None,
    run_problems: tuple[Problem, ...] = (),
    policy_by_human: Callable[[], bool] = lambda: False,
    checks_recorded: ChecksBaseline | None = None,
    checks_by_human: Callable[[], bool] = lambda: False,
) -> Workspace:
    """One view of parsed documents (pure): the loop keeps its documents current by file
    events and passes them here; `open_alerts` may be given when the caller keeps them.
    With no recorded trust, the default policy's holds (fail closed), unless
    `policy_by_human()` says the human made the policy file as it stands."""
    held, note = policy_in_force(policy_doc, recorded_trust, now, policy_by_human)
    file_checks = checks if checks is not None else checks_md.parse("")
    held_checks = checks_in_force(file_checks, checks_recorded, checks_by_human)
    documents = (
        (barriers.lines, paths.barriers),
        (human.lines, paths.human),
        (policy_doc.lines, paths.policy),
        (file_checks.lines, paths.checks),
    )
    problems = (
        # tasks.md's first, all of them: a status after an edit of tasks.md alone joins them
        # to the rest it kept (`wild.commands.status_tasks`).
        *tasks_problems(tasks, str(paths.tasks)),
        *alert_problems,
        *barriers.problems,
        *human.problems,
        *policy_doc.problems,
        *(checks.problems if checks is not None else ()),
        *run_problems,
        *(found for lines, path in documents for found in undecodable_lines(lines, str(path))),
    )
    return Workspace(
        paths=paths,
        tasks=tasks,
        alerts=alerts,
        open_alerts=open_alerts_of(alerts) if open_alerts is None else open_alerts,
        barriers=barriers,
        human=human,
        policy_doc=policy_doc,
        policy=held.policy,
        policy_note=note,
        problems=tuple(problems),
        checks=held_checks.checks,
        held_checks=held_checks,
        refusals=refusals,
        notices=notices,
        approvals=approvals,
        recorded_trust=recorded_trust,
        held=held,
        runs=runs if runs is not None else RunIndex(),
    )
