"""Running checks for the loop: the completion checks of checks.md (each result written back
as it ends, a self-write the watcher ignores) and a task's own `- check:` command; the
outcomes come back as the next event."""

from __future__ import annotations

import threading
from collections.abc import Callable

from wild.barriers.approvals import load_approvals
from wild.barriers.command_gate import gate
from wild.completion.verdict import CheckOutcome
from wild.errors import RefusedWriteError
from wild.loop.files import LoopFiles
from wild.loop.model import ChecksFinished, RunChecks, TaskVerified, VerifyTask
from wild.paths import WildPaths
from wild.store.files import update_text
from wild.store.self_writes import SelfWrites


class LoopChecks:
    """Runs what `RunChecks` and `VerifyTask` ask for; a stop cancels the check running."""

    def __init__(
        self,
        paths: WildPaths,
        self_writes: SelfWrites,
        cancel: threading.Event,
        approval_required: Callable[[], bool],
    ) -> None:
        self.paths = paths
        self.self_writes = self_writes
        self.cancel = cancel
        self.approval_required = approval_required

    def _may_run(self) -> Callable[[str], bool]:
        approvals = load_approvals(self.paths.project)
        return gate(approvals, approval_required=self.approval_required())

    def perform(
        self, action: RunChecks | VerifyTask, files: LoopFiles, at: str
    ) -> ChecksFinished | TaskVerified:
        # The checks' runner is needed only once work is done: not on the loop's start path.
        from wild.completion.run import record, run_all, run_check, task_check  # noqa: PLC0415

        may_run = self._may_run()
        project = self.paths.project
        if isinstance(action, VerifyTask):
            check = task_check(action.task_id, action.command)
            outcome = run_check(check, project_dir=project, may_run=may_run, cancel=self.cancel)
            return TaskVerified(action.task_id, outcome, action.ticked_by_agent)

        def write(outcome: CheckOutcome) -> None:
            remember = self.self_writes.remembering(self.paths.checks)
            edit = record(outcome, at)
            try:
                text = update_text(self.paths.checks, edit, self.paths.lock, on_written=remember)
            except RefusedWriteError:
                return  # the human made checks.md read-only: the verdict stands unrecorded
            files.wrote("checks", text)

        outcomes = run_all(
            files.view_checks().checks,
            project_dir=project,
            may_run=may_run,
            record_outcome=write,
            cancel=self.cancel,
        )
        return ChecksFinished(tuple(outcomes))
