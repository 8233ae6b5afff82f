"""What the loop says about agent runs and progress, in words: an iteration's one-line summary
for the next prompts, how a run failed (the same words when it fails the same way again), the
work named for people, and the progress report's body. Pure: `decide` and the driver share it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wild.parsers.state import LoopState
from wild.workspace_view import Workspace

if TYPE_CHECKING:
    from wild.agents.run_result import AgentRun

LAST_WORDS_CHARS = 200


def summary(iteration: int, what: str, run: AgentRun, *, done: bool, failed: bool) -> str:
    """One line for the sliding window of iteration notes the next prompts carry."""
    if run.cancelled:
        verdict = "stopped"
    elif run.timed_out:
        verdict = "timed out"
    elif run.rate_limited:
        verdict = "hit a usage limit"
    elif done:
        verdict = "done"
    elif failed:
        verdict = "failed"
    else:
        verdict = "not finished"
    # A run's claims are read once it ended, not on the way to the first agent's start.
    from wild.loop import claims  # noqa: PLC0415

    signals = claims.note(run)
    line = f"iteration {iteration}: {what} → {verdict} (exit {run.exit_code}, signals {signals})"
    out = run.signals.event_output
    return f"{line}: {out.summary}" if out is not None and out.summary else line


def failure_line(
    iteration: int, run: AgentRun, *, failed_attempt: bool = False, work_type: str | None = None
) -> str | None:
    """What to tell the user about a run that failed, or exited cleanly but still counts as a
    `failed_attempt` (None when neither), with the agent's last words: a CLI refusing to start
    (say, Claude Code run as root without IS_SANDBOX=1 refusing to skip permissions) explains
    itself there."""
    failure = failure_of(run)
    if failure is None and failed_attempt and not run.cancelled:
        failure = attempt_failure(run, work_type)
    return None if failure is None else f"⚠️  Iteration {iteration}: {failure} (log: {run.log_path})"


def attempt_failure(run: AgentRun, work_type: str | None) -> str:
    """Why a run that exited cleanly is still a failed attempt (`wild.loop.judge`): it said it
    failed, or said nothing wild understands (no promise, no `<event_output>`)."""
    from wild.loop import claims  # noqa: PLC0415 (see summary)

    out = claims.believed(run).event_output
    if out is not None and out.status == "failed":
        what = "the agent reported status failed"
    elif work_type == "planning":
        what = "the planning run added no task to .wild/tasks.md and did not say COMPLETE"
    else:
        what = "no promise or <event_output> found in the agent's final message"
        what += f" (exit {run.exit_code})"
    return what + _last_words(run)


def _last_words(run: AgentRun) -> str:
    lines = [line.strip() for line in run.final_text.splitlines() if line.strip()]
    return f"; it last said: {lines[-1][:LAST_WORDS_CHARS]}" if lines else "; it said nothing"


def failure_of(run: AgentRun) -> str | None:
    """How a failed run failed, in words that are the same when it fails the same way again
    (no iteration number, no log name); None when it did not fail."""
    if not run.failed or run.cancelled:
        return None
    if run.start_error is not None:
        return f"the agent could not start ({run.start_error})"
    if run.timed_out:
        what = f"timed out after {run.duration_s:.0f} s"
    elif run.is_error:
        what = "the agent reported an error"
    else:
        what = f"the agent exited with {run.exit_code}"
    lines = [line.strip() for line in run.final_text.splitlines() if line.strip()]
    said = f": {lines[-1][:LAST_WORDS_CHARS]}" if lines else ""
    if run.signals.promises:  # such a run's claims are not believed (wild.loop.claims)
        said += f"; its {', '.join(run.signals.promises)} was ignored"
    return f"{what}{said}"


def work_words(work_type: str, work_id: str) -> str:
    """`task task-001`, or `planning` alone: a planning run's id is its type."""
    return work_type if work_id == work_type else f"{work_type} {work_id}"


def progress_summary(ws: Workspace, state: LoopState) -> str:
    """The body of a progress report: where the work stands."""
    done = sum(1 for t in ws.tasks.tasks if t.status == "complete")
    open_alerts = sum(1 for a in ws.alerts if a.status != "resolved")
    waiting = [b.id for b in ws.barriers.barriers if b.status == "waiting"]
    current = state.current_work
    return (
        f"Tasks: {done}/{len(ws.tasks.tasks)} complete\n"
        f"Alerts: {open_alerts} open\n"
        f"Barriers waiting: {', '.join(waiting) or 'none'}\n"
        f"Iterations: {state.iteration}\n"
        f"Current work: {f'{current.type} {current.id}' if current else 'none'}"
    )
