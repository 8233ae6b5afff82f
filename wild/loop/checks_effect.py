"""Running the completion checks for the loop: each in turn, its result written to checks.md
as it ends (a self-write the watcher ignores), the outcomes handed back as the next event."""

from __future__ import annotations

import threading
from collections.abc import Callable

from wild.barriers.approvals import load_approvals
from wild.completion.run import record, run_check
from wild.loop.files import LoopFiles
from wild.loop.model import ChecksFinished
from wild.paths import WildPaths
from wild.store.files import update_text
from wild.store.self_writes import SelfWrites


def run_completion_checks(
    paths: WildPaths,
    files: LoopFiles,
    *,
    approval_required: Callable[[], bool],
    cancel: threading.Event,
    self_writes: SelfWrites,
    at: str,
) -> ChecksFinished:
    """Run every check of the loop's checks.md; a stop cancels the one running."""
    approvals = load_approvals(paths.project)
    required = approval_required()

    def may_run(command: str) -> bool:
        return not required or approvals.allows(command)

    outcomes = []
    for check in files.view_checks().checks:
        outcome = run_check(check, project_dir=paths.project, may_run=may_run, cancel=cancel)
        outcomes.append(outcome)
        if cancel.is_set():
            break  # nothing is written for a check that did not finish
        remember = self_writes.remembering(paths.checks)
        text = update_text(paths.checks, record(outcome, at), paths.lock, on_written=remember)
        files.wrote("checks", text)
    return ChecksFinished(tuple(outcomes))
