"""A loop that starts after a killed one takes over cleanly: the killed loop's agent and
everything it started are killed before any work starts, the killed run's iteration number is
never used again, and the run is not counted as a failed attempt.

Before each agent starts, state.json records the run under `agentRun` (iteration, work, the
run id every process of the run carries) and, once spawned, the agent's pid with its start
time under `agentProcess` (its process group has the same number: the agent leads its own
session). The end of the run clears both. Finding them at start means the last loop died
with an agent running.

Why a killed run is not a failed attempt: the agent did not fail, the loop did. Counting it
would let crashes of wild escalate work to the human or give it up; the work simply starts
again, as attempt the same number as the run that was cut short.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from wild.agents import orphans
from wild.liveness import Liveness, check
from wild.loop.iteration import work_words
from wild.loop.model import LoopOptions, RunAgent
from wild.parsers.process_id import ProcessId
from wild.parsers.state import RECENT_SUMMARIES_KEEP, LoopState, push_summary
from wild.paths import WildPaths

AGENT_RUN = "agentRun"


@dataclass(frozen=True)
class AgentRunRecord:
    """The agent run in progress, as state.json keeps it (in `extra`, camelCase)."""

    iteration: int
    work_type: str
    work_id: str
    run_id: str

    @classmethod
    def starting(cls, action: RunAgent, loop_id: str) -> AgentRunRecord:
        return cls(
            action.iteration, action.work_type, action.work_id, f"{loop_id}.{action.iteration}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "workType": self.work_type,
            "workId": self.work_id,
            "runId": self.run_id,
        }

    def event_data(self) -> dict[str, Any]:
        """As events.log names the fields of an agent run (snake_case, like agent-start)."""
        return {
            "iteration": self.iteration,
            "work_type": self.work_type,
            "work_id": self.work_id,
            "run_id": self.run_id,
        }

    @classmethod
    def from_json(cls, raw: object) -> AgentRunRecord | None:
        """Leniently: a hand-edited or foreign value is no record."""
        if not isinstance(raw, Mapping):
            return None
        iteration, kind = raw.get("iteration"), raw.get("workType")
        work_id, run_id = raw.get("workId"), raw.get("runId")
        if not (isinstance(iteration, int) and not isinstance(iteration, bool) and iteration > 0):
            return None
        if not all(isinstance(v, str) and v for v in (kind, work_id, run_id)):
            return None
        return cls(iteration, str(kind), str(work_id), str(run_id))


def started(state: LoopState, record: AgentRunRecord) -> LoopState:
    """The state to save before the agent starts."""
    return replace(state, extra={**state.extra, AGENT_RUN: record.to_json()})


def ended(state: LoopState) -> LoopState:
    """The state once the run is over and counted: no run, no agent. The record is dropped
    only in the state that counts the run's iteration (`decide`), never before: a loop
    killed between the agent's end and that save finds the record at restart and uses the
    number up, instead of giving it to the next run (whose log would be `iteration-N.2`)."""
    extra = {k: v for k, v in state.extra.items() if k != AGENT_RUN}
    return replace(state, extra=extra, agent_process=None)


def interrupted(state: LoopState) -> AgentRunRecord | None:
    """The run a killed loop left behind, if any."""
    return AgentRunRecord.from_json(state.extra.get(AGENT_RUN))


def group_to_kill(recorded: ProcessId | None, seen: Liveness) -> int | None:
    """The process group of the killed loop's agent that may still hold processes.

    The agent led its own group, so the group has the agent's number. "gone" still kills:
    the leader's children may run on in its group, and a group number is not given to a new
    process while any member lives. "reused" means the number belongs to an unrelated
    process now, and "elsewhere" to another host: neither is ours to kill. Without a start
    time (no /proc) "running" cannot tell the agent from a process that got its number.
    """
    if recorded is None or seen not in ("running", "gone"):
        return None
    if seen == "running" and recorded.start_ticks is None:
        return None
    return recorded.pid


def taken_over(
    state: LoopState, record: AgentRunRecord | None, keep: int = RECENT_SUMMARIES_KEEP
) -> LoopState:
    """The state a restarted loop continues from: the killed run's number is used up; `keep`
    is the loop's context window."""
    if record is None:
        return ended(state)
    note = (
        f"iteration {record.iteration}: {record.work_type} {record.work_id} → interrupted "
        "(the loop was killed; not counted as an attempt)"
    )
    state = replace(state, iteration=max(state.iteration, record.iteration))
    return ended(push_summary(state, note, keep))


def stray_temp_files(root: Path, state_name: str) -> list[Path]:
    """Temporary files of state.json writes that a kill cut short (`.state.json.*.tmp`)."""
    return sorted(root.glob(f".{state_name}.*.tmp"))


def notice(record: AgentRunRecord) -> str:
    """What the user is told when a loop takes over from a killed one."""
    return (
        f"⚠️  The last loop was killed during iteration {record.iteration} "
        f"({work_words(record.work_type, record.work_id)}); its agent was stopped and the work"
        " starts again"
    )


def new_loop_id() -> str:
    """Names one run of the loop; its agent runs are `<id>.<iteration>`."""
    return secrets.token_hex(6)


def take_over(
    paths: WildPaths, state: LoopState, out: Callable[[str], None], options: LoopOptions
) -> tuple[LoopState, AgentRunRecord | None]:
    """Clean up after a killed loop (the caller holds the loop lock): the state to continue
    from, and the run the killed loop left unfinished (the user is told about it)."""
    for stray in stray_temp_files(paths.root, paths.state.name):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(stray)  # only the loop writes state.json, and the lock says none runs
    record = interrupted(state)
    recorded = state.agent_process
    group = group_to_kill(recorded, check(recorded)) if recorded is not None else None
    if group is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    if record is not None:
        orphans.sweep(record.run_id, grace_s=0.0)  # the agent's descendants, wherever they went
        out(notice(record))
    return taken_over(state, record, options.context_window), record


def starting(state: LoopState, options: LoopOptions, process: ProcessId) -> LoopState:
    """The state a loop starts with: what it took over, marked as this loop's run now."""
    return replace(
        state,
        active=True,
        prompt=options.goal,
        agent=options.agent,
        model=options.model,
        started_at=state.started_at or process.started_at,
        paused=False,  # requests made before this run started do not count
        # Who runs now, so `wild --status` can tell this loop from a dead one's leftovers.
        loop_process=process,
    )
