"""An approval that appears in the approval store while an agent runs, and that wild did not
write, is void: it is removed when the run ends, and an alert tells the human.

As each agent starts, the approvals in the store are recorded as the human's (no agent ran
while they were added); `wild --approve` and the dashboard record theirs as they write them.
Every reader, in any process, leaves an unrecorded approval out (`wild.barriers.approvals`),
so a forged one never runs a command, even during the run that forged it. The record is in
the agent's reach too: for a file whose record is gone, the loop's readers count only what
counted as the run started (`record_present` keeps it in this process until `remove_void`).
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest
from wild.barriers.approvals import UNRECORDED_TYPE, record_present, remove_void
from wild.clock import Clock
from wild.errors import WildError
from wild.loop.hooks import Runner
from wild.parsers.alerts import make_alert
from wild.paths import WildPaths
from wild.store.alerts_log import append_alert


def guarding(paths: WildPaths, clock: Clock, runner: Runner) -> Runner:
    """`runner` with the approvals recorded before each run and the void ones removed after."""

    def run(request: AgentRequest) -> AgentRun:
        # A damaged store approves nothing (every reader fails closed): the run goes on.
        with contextlib.suppress(WildError, OSError):
            record_present(paths.project, f"in the store when agent run {request.run_id} started")
        try:
            return runner(request)
        finally:
            remove_void_approvals(paths, clock.now())

    return run


def remove_void_approvals(paths: WildPaths, now: datetime) -> frozenset[str]:
    """Remove the approvals wild did not write (an agent's), one alert each; returns them.
    A damaged store is left as it is: it approves nothing until a human fixes it."""
    try:
        void = remove_void(paths.project)
    except (WildError, OSError):
        return frozenset()
    for digest in sorted(void):
        alert = make_alert(
            now=now,
            severity="critical",
            source="wild",
            type=UNRECORDED_TYPE,
            description=(
                f"An approval of the command with sha256 {digest[:12]} appeared in the approval "
                "store while an agent ran, and wild did not write it: it is void and was removed. "
                "If you trust that command, approve it with `wild --approve ID`"
            ),
            context={"commandHash": digest},
        )
        append_alert(paths.alerts, alert)
    return void
