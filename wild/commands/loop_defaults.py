"""What a plain `wild` run takes from the last one: the goal, the agent and its model that
state.json records (a previous run's, or what `wild --migrate` took from `.ralph/`).

Read-only: a broken state.json is the loop's to set aside, not this lookup's.
"""

from __future__ import annotations

from wild.errors import UsageError
from wild.parsers.state import LoadedState, LoopState, parse_state
from wild.paths import WildPaths
from wild.record import record
from wild.store.files import read_bytes

DEFAULT_AGENT = "claude"


@record
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
    `--agent` it is the command that runs that agent. The notes always end with the one
    `Agent:` line naming the agent the loop will run."""
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
        notes.append(f"Agent: {chosen} (command: {agent_cmd})")
        return LoopChoice(goal, chosen, model, tuple(notes))
    recorded_agent = recorded.agent if recorded is not None else None
    if agent is None and recorded_agent == "custom":
        # Its command is not kept (state.json is the agent's to write too), and running
        # another agent in its place would change who works on the goal without a word.
        raise UsageError(
            f"the last loop ({source}) ran a custom agent, whose command wild does not keep;"
            " pass it again: wild --agent-cmd 'CMD ...' (or choose one with --agent NAME)"
        )
    how = ""
    if agent is None and recorded is not None and recorded_agent:
        agent = recorded_agent
        how = f" (from {source}; --agent to change)"
        if model is None and recorded.model:
            model = recorded.model
    elif agent is None:
        how = " (the default; --agent to change)"
    chosen = agent or DEFAULT_AGENT
    notes.append(f"Agent: {chosen}{f', model {model}' if model else ''}{how}")
    return LoopChoice(goal, chosen, model, tuple(notes))
