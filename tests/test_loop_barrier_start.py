"""The barrier checker starts once the first agent runs, or before the loop first does anything
else: a loop that waits for a barrier has its barriers checked."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir
from tests.loop.harness import loop_options
from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest
from wild.agents.signals import parse_signals
from wild.loop import Loop
from wild.loop.barrier_start import needs_checker
from wild.loop.hooks import Hooks
from wild.loop.model import Continue, End, LoopResult, RunAgent, RunChecks, Say, SuperviseRuns, Wait
from wild.paths import WildPaths
from wild.wake import WakeReason

pytestmark = [pytest.mark.timeout(90)]

WAIT_S = 30.0  # never reached when healthy

BARRIER = (
    "\n## [WAITING] data-ready\n- Type: command-check\n- Check: touch {marker}\n- Interval: 1s\n"
)


def test_a_step_that_waits_or_works_needs_the_checker_one_that_runs_an_agent_not_yet() -> None:
    run = RunAgent(iteration=1, work_type="task", work_id="task-001", values={})
    assert not needs_checker((Say("hi"), run))  # started once the agent runs
    assert not needs_checker((End(LoopResult("complete", 0, "done")),))
    assert not needs_checker((Say("hi"), Continue()))  # quick writes: nothing to wait for
    assert needs_checker((Wait(timeout_s=None),))
    assert needs_checker((RunChecks(),))
    assert needs_checker((SuperviseRuns(),))


def _unapproved_alert(root: Path) -> bool:
    alerts = root / "alerts.jsonl"
    return alerts.exists() and '"barrier":"data-ready"' in alerts.read_text().replace(" ", "")


def test_a_loop_that_waits_for_a_barrier_has_it_checked(tmp_path: Path) -> None:
    """All work waits on a barrier: an agent monitors it once, then the loop waits (the next
    monitoring is far off) and the checker looks at the barrier meanwhile. The real watcher
    and checker run in-process."""
    root = init_wild_dir(tmp_path / "project")
    marker = tmp_path / "ran.marker"
    with (root / "barriers.md").open("a") as handle:
        handle.write(BARRIER.format(marker=marker))
    (root / "tasks.md").write_text("- [ ] [P1] task-001: Train\n  - blockedBy: data-ready\n")
    ran: list[tuple[str | None, bool]] = []  # each agent's work, and whether the alert was in

    def agent(request: AgentRequest) -> AgentRun:
        ran.append((request.env.get("WILD_WORK_TYPE"), _unapproved_alert(root)))
        if len(ran) > 1:
            loop.stop_event.set()  # seen enough: the loop stops after this run
        return AgentRun(
            exit_code=1, timed_out=False, cancelled=True, duration_s=0.0, final_text="",
            signals=parse_signals(""), cost_usd=None, input_tokens=None, output_tokens=None,
            rate_limited=False, rate_limit_reset=None, log_path=request.log_path, output_bytes=0,
        )  # fmt: skip

    options = loop_options()
    loop = Loop(WildPaths(root), options, out=lambda _line: None, runner=agent,
                hooks=Hooks(signals=False))  # fmt: skip
    running = threading.Thread(target=loop.run)
    running.start()
    try:
        # The checker's first pass: the command needs a human's approval (the default policy),
        # so it raises an alert instead of running it.
        deadline = time.monotonic() + WAIT_S
        while not _unapproved_alert(root) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        loop.stop_event.set()
        loop.waker.wake(WakeReason("signal"))
        running.join(WAIT_S)
    assert _unapproved_alert(root)
    assert not marker.exists()
    assert ran[0] == ("monitoring", False)
    assert all(alert_first for _, alert_first in ran[1:])  # the alert's agent, if any, came after
