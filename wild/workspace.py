"""Load every `.wild/` file into one parsed view; the read side shared by the CLI and the loop."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from wild.errors import WildError
from wild.parsers import barriers as barriers_md
from wild.parsers import checks as checks_md
from wild.parsers import human as human_md
from wild.parsers import policy as policy_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import Alert
from wild.parsers.lines import Problem
from wild.paths import WildPaths
from wild.policy.model import HumanPolicy, effective_policy, policy_from_document
from wild.selection import WorkSnapshot
from wild.store.alerts_summary import read_open_alerts
from wild.store.files import read_text
from wild.store.tasks_backup import damage_notice
from wild.store.write_guard import link_refusal, refusal

EDITED_FILES = ("tasks", "barriers", "human", "policy")  # the Markdown files wild edits


@dataclass(frozen=True)
class Workspace:
    """One consistent read of `.wild/`: parsed documents plus every problem found in them."""

    paths: WildPaths
    tasks: tasks_md.TaskList
    # Latest state per id: the loop's view holds resolved ones too; `load_workspace` (read
    # commands) only the open ones, read from the alerts summary in O(what was appended).
    alerts: tuple[Alert, ...]
    open_alerts: tuple[Alert, ...]  # those of `alerts` not resolved (often a small part)
    barriers: barriers_md.BarrierList
    human: human_md.HumanQueue
    policy_doc: policy_md.PolicyDocument
    policy: HumanPolicy
    policy_note: str | None  # e.g. "policy expired at …; using semi-autonomous"
    problems: tuple[Problem, ...]
    checks: checks_md.CheckList  # the completion checks (SPEC §8)
    # (file name, message) for each file wild will not write: read-only, or linked out of
    # the project (`store.write_guard`). Its work waits until the human makes it writable.
    refusals: tuple[tuple[str, str], ...] = ()
    # Problems with a whole file, said once by the loop: tasks.md damaged (`tasks_backup`).
    notices: tuple[str, ...] = ()

    @property
    def refused(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.refusals)

    def snapshot(self) -> WorkSnapshot:
        return WorkSnapshot(
            tasks=self.tasks.tasks,
            alerts=self.open_alerts,
            barriers=self.barriers.barriers,
            human=self.human.inputs,
        )


def require_initialised(paths: WildPaths) -> None:
    if not paths.root.is_dir():
        raise WildError(
            f"{paths.root} does not exist; run `wild --init` first (or pass --dir PATH)"
        )


def read_alerts(paths: WildPaths) -> tuple[tuple[Alert, ...], tuple[Problem, ...]]:
    """The open alerts and every problem of alerts.jsonl, by way of its summary (which this
    read brings up to date: a read command may write that cache file, nothing else)."""
    return read_open_alerts(paths.alerts, paths.alerts_summary, file=str(paths.alerts))


def refusals_of(paths: WildPaths) -> tuple[tuple[str, str], ...]:
    """The edited files wild must not write now, each with what the human can do about it."""
    found = [(name, refusal(getattr(paths, name))) for name in EDITED_FILES]
    # An append replaces nothing: alerts.jsonl is refused only as a link out of the project.
    found.append(("alerts", link_refusal(paths.alerts)))
    return tuple((name, message) for name, message in found if message is not None)


def open_alerts_of(alerts: tuple[Alert, ...]) -> tuple[Alert, ...]:
    """The alerts still to be dealt with: every one not resolved."""
    return tuple(a for a in alerts if a.status != "resolved")


def load_workspace(paths: WildPaths, now: datetime) -> Workspace:
    """Parse every file; unknown lines become problems, never errors (the CLI's read side)."""
    require_initialised(paths)
    alerts, alert_problems = read_alerts(paths)
    tasks_text = read_text(paths.tasks)
    tasks = tasks_md.parse(tasks_text, file=str(paths.tasks))
    present = tasks_text != "" or paths.tasks.exists()
    damaged = damage_notice(paths, tasks_text if present else None, len(tasks.tasks))
    return assemble_workspace(
        paths,
        now,
        tasks=tasks,
        barriers=barriers_md.parse(read_text(paths.barriers), file=str(paths.barriers)),
        human=human_md.parse(read_text(paths.human), file=str(paths.human)),
        policy_doc=policy_md.parse(read_text(paths.policy), file=str(paths.policy)),
        checks=checks_md.parse(read_text(paths.checks), file=str(paths.checks)),
        alerts=alerts,
        alert_problems=alert_problems,
        refusals=refusals_of(paths),
        notices=() if damaged is None else (damaged,),
    )


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
) -> Workspace:
    """One view of parsed documents (pure): the loop keeps its documents current by file
    events and passes them here; `open_alerts` may be given when the caller keeps them."""
    policy, note = effective_policy(policy_from_document(policy_doc), now)
    problems = (
        *tasks.problems,
        *alert_problems,
        *barriers.problems,
        *human.problems,
        *policy_doc.problems,
        *(checks.problems if checks is not None else ()),
    )
    return Workspace(
        paths=paths,
        tasks=tasks,
        alerts=alerts,
        open_alerts=open_alerts_of(alerts) if open_alerts is None else open_alerts,
        barriers=barriers,
        human=human,
        policy_doc=policy_doc,
        policy=policy,
        policy_note=note,
        problems=tuple(problems),
        checks=checks if checks is not None else checks_md.parse(""),
        refusals=refusals,
        notices=notices,
    )
