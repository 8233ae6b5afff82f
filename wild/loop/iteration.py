"""One iteration's agent run: its prompt, command line and request, and the note it leaves.

The prompt is written to `.wild/logs/iteration-N.prompt.md` (custom agents also get it on
stdin); the agent's output goes to `.wild/logs/iteration-N.log`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from wild import prompts
from wild.agents.registry import build_command, output_format, prompt_on_stdin
from wild.agents.runner import AgentRequest, AgentRun, agent_env
from wild.agents.sandbox import sandbox_for
from wild.clock import Clock
from wild.loop import changes, claims
from wild.loop.model import LoopOptions, RunAgent
from wild.paths import WildPaths
from wild.store.files import ENCODING, ERRORS
from wild.store.write_guard import open_own_file
from wild.workspace import Workspace

LAST_WORDS_CHARS = 200


@dataclass(frozen=True)
class AgentSetup:
    """The parts of `wild "GOAL" …` that shape every agent run."""

    goal: str
    agent: str
    model: str | None
    agent_cmd: str | None
    timeout_s: float | None
    heartbeat_s: float
    sandbox: bool = False

    @classmethod
    def of(cls, options: LoopOptions, timeout_s: float | None) -> AgentSetup:
        """The setup `wild "GOAL" …` asked for; `timeout_s`: the agent's limit."""
        return cls(
            goal=options.goal,
            agent=options.agent,
            model=options.model,
            agent_cmd=options.agent_cmd,
            timeout_s=timeout_s,
            heartbeat_s=options.heartbeat_s,
            sandbox=options.sandbox,
        )


def build_request(
    paths: WildPaths,
    setup: AgentSetup,
    ws: Workspace,
    *,
    iteration: int,
    work_type: str,
    work_id: str,
    values: Mapping[str, object],
    environ: Mapping[str, str],
    cancel: threading.Event,
    clock: Clock,
    run_id: str,
    on_start: Callable[[int], None] | None = None,
) -> AgentRequest:
    """Write the prompt for this work and say how to run the agent on it."""
    context = prompts.context_summary(ws.open_alerts, ws.tasks.tasks, ws.barriers.barriers)
    common = prompts.common_values(
        iteration=iteration, goal=setup.goal, context=context, policy=ws.policy, work_id=work_id
    )
    prompt = prompts.render(work_type, paths.prompts, {**common, **values})
    if not paths.logs.is_symlink():  # a link there is refused when the log is opened
        paths.logs.mkdir(exist_ok=True)
    name = fresh_name(paths.logs, iteration)
    prompt_file = paths.logs / f"{name}.prompt.md"
    fd = open_own_file(prompt_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, own_folder=True)
    with os.fdopen(fd, "wb") as handle:
        # The files' bytes that are not UTF-8 reach the agent as they are, never a crash.
        handle.write(prompt.encode(ENCODING, ERRORS))
    argv = build_command(
        setup.agent,
        prompt,
        setup.model,
        prompt_file=prompt_file.resolve(),  # the agent runs in the project, maybe not here
        skip_permissions=ws.policy.mode != "interactive",
        agent_cmd=setup.agent_cmd,
        environ=environ,
    )
    return AgentRequest(
        argv=tuple(argv),
        cwd=paths.project,
        log_path=paths.logs / f"{name}.log",
        env=agent_env(
            wild_dir=paths.root.resolve(),
            iteration=iteration,
            work_type=work_type,
            work_id=work_id,
            prompt_file=prompt_file.resolve(),
        ),
        stdin=prompt.encode(ENCODING, ERRORS) if prompt_on_stdin(setup.agent, prompt) else None,
        timeout_s=setup.timeout_s,
        heartbeat_s=setup.heartbeat_s,
        cancel=cancel,
        on_start=on_start,
        output_format=output_format(setup.agent),
        clock=clock,
        run_id=run_id,
        sandbox=sandbox_for(paths, setup.agent, environ) if setup.sandbox else None,
    )


def fresh_name(logs: Path, iteration: int) -> str:
    """`iteration-N`, or `iteration-N.2`, `.3`… when its log or prompt exists: a log is never
    overwritten, even when state.json was lost and the numbers start again. A link at either
    name, even a dangling one, counts as taken: wild never writes through it."""
    name, copy = f"iteration-{iteration}", 1
    while os.path.lexists(logs / f"{name}.log") or os.path.lexists(logs / f"{name}.prompt.md"):
        copy += 1
        name = f"iteration-{iteration}.{copy}"
    return name


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


def start(action: RunAgent) -> dict[str, object]:
    """The iteration's `agent-start` line: which iteration works on what."""
    return {
        "iteration": action.iteration,
        "work_type": action.work_type,
        "work_id": action.work_id,
    }


def describe(action: RunAgent) -> str:
    """The work, for people: `task task-001`, `planning` (a planning run's id is its type)."""
    return work_words(action.work_type, action.work_id)


def work_words(work_type: str, work_id: str) -> str:
    """`task task-001`, or `planning` alone: a planning run's id is its type."""
    return work_type if work_id == work_type else f"{work_type} {work_id}"


def record_fields(
    options: LoopOptions, run: AgentRun, iteration: int, files: tuple[str, ...] | None
) -> dict[str, object]:
    """The iteration's `agent-end` line: how the run ended, who ran (`sandbox`: under
    `--sandbox`), what it cost, which project files it changed (`wild.loop.changes`), and
    what went wrong (the agent's own error flag and what wild could not read)."""
    return {
        "iteration": iteration,
        "exit_code": run.exit_code,
        "timed_out": run.timed_out,
        "cancelled": run.cancelled,
        "duration_s": round(run.duration_s, 3),
        "signals": list(run.signals.promises),
        **changes.record(files),
        "agent": options.agent,
        "model": options.model,
        **({"sandbox": "bwrap"} if options.sandbox else {}),
        "cost_usd": run.cost_usd,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "is_error": run.is_error,
        "problems": list(run.problems),
        **({"start_error": run.start_error} if run.start_error is not None else {}),
        "log": str(run.log_path),
    }
