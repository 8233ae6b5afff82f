"""What a plain `wild` run takes from the last one: the goal, the agent and its model that
state.json records (a previous run's, or what `wild --migrate` took from `.ralph/`).

Read-only: a broken state.json is the loop's to set aside, not this lookup's.
"""

from __future__ import annotations

from dataclasses import dataclass

from wild.errors import UsageError
from wild.parsers.state import LoadedState, LoopState, parse_state
from wild.paths import WildPaths
from wild.store.files import read_bytes

DEFAULT_AGENT = "claude"


@dataclass(frozen=True)
class LoopChoice:
    """The goal, agent and model a run uses, and a line for each one taken from state.json."""

    goal: str
    agent: str
    model: str | None
    notes: tuple[str, ...]


def recorded_state(paths: WildPaths) -> LoopState | None:
    """The state state.json holds, or None when it is missing or unreadable."""
    try:
        data = read_bytes(paths.state)
    except FileNotFoundError:
        return None
    loaded = parse_state(data, str(paths.state))
    return loaded.state if isinstance(loaded, LoadedState) else None


def choose(
    *,
    goal: str | None,
    agent: str | None,
    model: str | None,
    agent_cmd: str | None,
    recorded: LoopState | None,
    source: str,
) -> LoopChoice:
    """What was given wins; what was not comes from `recorded`, and says so. An agent
    command alone (or with `--agent claude`, the default) is a custom agent; with another
    `--agent` it is the command that runs that agent."""
    notes: list[str] = []
    if goal is None:
        if recorded is None or not recorded.prompt:
            raise UsageError(
                'give a goal (wild "GOAL") or an action such as --status; see wild --help'
            )
        goal = recorded.prompt
        notes.append(f"Goal from {source}: {goal}")
    if agent_cmd:
        chosen = "custom" if agent in (None, DEFAULT_AGENT) else agent
        return LoopChoice(goal, chosen, model, tuple(notes))
    if agent is None and recorded is not None and recorded.agent and recorded.agent != "custom":
        agent = recorded.agent
        notes.append(f"Agent from {source}: {agent} (--agent to change)")
        if model is None and recorded.model:
            model = recorded.model
            notes.append(f"Model from {source}: {model}")
    return LoopChoice(goal, agent or DEFAULT_AGENT, model, tuple(notes))
