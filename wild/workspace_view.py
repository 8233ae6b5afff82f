"""One consistent read of `.wild/` as data: the parsed documents, the policy in force and every
problem found. `wild.workspace` reads the files into it (the CLI's read side, and the loop's
through `LoopFiles`); the loop's pure core (wild/loop/model.py) holds it. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING

from wild.barriers.approval_set import NO_APPROVALS, Approvals
from wild.parsers import barriers as barriers_md
from wild.parsers import checks as checks_md
from wild.parsers import human as human_md
from wild.parsers import policy as policy_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import Alert
from wild.parsers.lines import Problem
from wild.parsers.runs import RunIndex
from wild.policy.checks_trust import HeldChecks
from wild.policy.model import HumanPolicy
from wild.policy.trust import HeldPolicy, RecordedTrust
from wild.record import record
from wild.selection import WorkSnapshot

if TYPE_CHECKING:
    from wild.paths import WildPaths
    from wild.runs.stage import RunState


@record
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
    policy: HumanPolicy  # in force: expiry applied, loosenings beyond the recorded trust held
    policy_note: str | None  # e.g. "policy expired at …; using semi-autonomous"
    problems: tuple[Problem, ...]
    checks: checks_md.CheckList  # the completion checks (SPEC §8)
    held: HeldPolicy  # how `policy` was held to the recorded trust
    # (file name, message) for each file wild will not write: read-only, or linked out of
    # the project (`store.write_guard`). Its work waits until the human makes it writable.
    refusals: tuple[tuple[str, str], ...] = ()
    # Problems with a whole file, said once by the loop: tasks.md damaged (`tasks_backup`).
    notices: tuple[str, ...] = ()
    # From the approval store outside `.wild/`: what a human approved and the trust last set
    # through the CLI (None: never; the default policy's then).
    approvals: Approvals = NO_APPROVALS
    recorded_trust: RecordedTrust | None = None
    # runs.jsonl: the sweeps and runs, latest line per id (SPEC §7).
    runs: RunIndex = field(default_factory=RunIndex)
    # Read from the runs summary (`--status`): `runs` then holds only the runs not ended, and
    # this every run's status (wild.parsers.runs_summary); None: `runs` holds every run.
    run_states: Mapping[str, RunState] | None = None
    # How checks.md was held to the checks a human accepted (`checks` is what is in force).
    held_checks: HeldChecks | None = None

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
