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
import signal
from collections.abc import Callable
from pathlib import Path

from wild.agents import orphans
from wild.liveness import Liveness, check
from wild.loop.agent_record import AgentRunRecord, ended, interrupted
from wild.loop.model import LoopOptions
from wild.loop.run_words import work_words
from wild.parsers.process_id import ProcessId
from wild.parsers.state import RECENT_SUMMARIES_KEEP, LoopState, push_summary
from wild.paths import WildPaths
from wild.record import replace
from wild.store.files import wild_lock


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


def stray_temp_files(root: Path, name: str) -> list[Path]:
    """Temporary files of a file's swaps that a kill cut short (`.state.json.*.tmp`): the new
    version before the swap, or the old one it displaced (`files.remove_displaced`)."""
    return sorted(root.glob(f".{name}.*.tmp"))


def _remove_strays(root: Path, name: str) -> None:
    for stray in stray_temp_files(root, name):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(stray)


def notice(record: AgentRunRecord) -> str:
    """What the user is told when a loop takes over from a killed one."""
    return (
        f"⚠️  The last loop was killed during iteration {record.iteration} "
        f"({work_words(record.work_type, record.work_id)}); its agent was stopped and the work"
        " starts again"
    )


def new_loop_id() -> str:
    """Names one run of the loop; its agent runs are `<id>.<iteration>`. The kernel's random
    bytes, as `secrets.token_hex` reads them: `secrets` (with hmac) is not on the way to the
    first agent's start."""
    return os.urandom(6).hex()


def take_over(
    paths: WildPaths, state: LoopState, out: Callable[[str], None], options: LoopOptions
) -> tuple[LoopState, AgentRunRecord | None]:
    """Clean up after a killed loop (the caller holds the loop lock): the state to continue
    from, and the run the killed loop left unfinished (the user is told about it)."""
    # Only the loop writes state.json, and the lock says none runs. The command line writes
    # tasks.md too, its temp file's life under the wild lock: held by another (a command
    # writing, an agent's doing), tasks.md's wait for the next start.
    _remove_strays(paths.root, paths.state.name)
    with contextlib.suppress(TimeoutError), wild_lock(paths.lock, timeout=0):
        _remove_strays(paths.root, paths.tasks.name)
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
