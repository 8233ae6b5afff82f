"""One iteration's agent run: its prompt, command line and request, and the note it leaves.

The prompt is written to `.wild/logs/iteration-N.prompt.md` (custom agents also get it on
stdin); the agent's output goes to `.wild/logs/iteration-N.log`.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from wild import prompt_files, prompts
from wild.agents.registry import build_command, output_format, prompt_on_stdin
from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest, agent_env
from wild.agents.sandbox import sandbox_for
from wild.clock import Clock
from wild.loop import changes
from wild.loop.model import LoopOptions, RunAgent
from wild.loop.run_words import work_words
from wild.paths import WildPaths
from wild.procfs import real_folder, real_path
from wild.record import record
from wild.store.files import ENCODING, ERRORS
from wild.store.write_guard import open_own_file
from wild.workspace_view import Workspace


@record
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
    analysis: str | None = None,
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
    if analysis is not None:
        values = {**analysis_values(paths, ws, analysis), **values}
    prompt = prompt_files.render(work_type, paths.prompts, {**common, **values})
    if not paths.logs.is_symlink():  # a link there is refused when the log is opened
        paths.logs.mkdir(exist_ok=True)
    name = fresh_name(paths.logs, iteration)
    prompt_file = paths.logs / f"{name}.prompt.md"
    _write_prompt(prompt_file, prompt)
    # Where the file is, as the kernel names it (`real_path`: no lstat per folder, as
    # `Path.resolve` makes); the agent runs in the project, maybe not here.
    prompt_at = Path(real_path(prompt_file))
    argv = build_command(
        setup.agent,
        prompt,
        setup.model,
        prompt_file=prompt_at,
        skip_permissions=ws.policy.mode != "interactive",
        agent_cmd=setup.agent_cmd,
        environ=environ,
    )
    return AgentRequest(
        argv=tuple(argv),
        cwd=paths.project,
        log_path=paths.logs / f"{name}.log",
        env=agent_env(
            wild_dir=Path(real_folder(paths.root)),
            iteration=iteration,
            work_type=work_type,
            work_id=work_id,
            prompt_file=prompt_at,
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


def analysis_values(paths: WildPaths, ws: Workspace, sweep_id: str) -> dict[str, object]:
    """A sweep's analysis prompt input: its run table, and the metrics read from its runs'
    files (`RunAgent.analysis`: the decision names the sweep, the reading happens here)."""
    # Only a sweep's analysis reads metrics: statistics, the metric decoders and the comparison
    # stay out of the loop's start (launch → first agent, issue 22).
    from wild.metrics.comparison import sweep_metrics  # noqa: PLC0415

    sweep = ws.runs.sweeps[sweep_id]
    return prompts.analysis_values(
        sweep,
        ws.runs.of_sweep(sweep_id),
        lambda run: str(paths.run_dir(run)),
        f"reports/{sweep_id}.md",
        sweep_metrics(paths, ws.runs, sweep),
    )


def fresh_name(logs: Path, iteration: int) -> str:
    """`iteration-N`, or `iteration-N.2`, `.3`… when its log exists: a log is never
    overwritten, even when state.json was lost and the numbers start again. A prompt with no
    log beside it is a run that never began (its log is opened once the run's record is
    durable and its program let go: `wild.agents.runner`), or one killed with the loop in the
    instant between the two, so its number left no log and is given again; its prompt is
    replaced (`_write_prompt`). A link at either name, even a dangling one, counts as taken:
    wild never writes through it."""
    name, copy = f"iteration-{iteration}", 1
    while os.path.lexists(logs / f"{name}.log") or not _replaceable(logs / f"{name}.prompt.md"):
        copy += 1
        name = f"iteration-{iteration}.{copy}"
    return name


def _replaceable(prompt_file: Path) -> bool:
    """Nothing there, or a plain file (a prompt whose run never began); a link, a folder or
    anything else at that name is left alone."""
    try:
        return stat.S_ISREG(os.lstat(prompt_file).st_mode)
    except FileNotFoundError:
        return True


def _write_prompt(prompt_file: Path, prompt: str) -> None:
    """The prompt, in a file of its own: one a run that never began left is replaced; never
    through a link (O_EXCL after the unlink: a link planted meanwhile is refused)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(prompt_file)
    fd = open_own_file(prompt_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, own_folder=True)
    with os.fdopen(fd, "wb") as handle:
        # The files' bytes that are not UTF-8 reach the agent as they are, never a crash.
        handle.write(prompt.encode(ENCODING, ERRORS))


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
