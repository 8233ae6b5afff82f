"""A plain `wild` run takes the goal, agent and model state.json records, and says so."""

from __future__ import annotations

import pytest

from wild.commands.loop_defaults import choose
from wild.errors import UsageError
from wild.parsers.state import LoopState

RECORDED = LoopState(prompt="Port to Arrow", agent="opencode", model="sonnet")


def test_given_values_win_silently() -> None:
    choice = choose(
        goal="Ship", agent="codex", model="m", agent_cmd=None, recorded=RECORDED, source="s"
    )
    assert (choice.goal, choice.agent, choice.model) == ("Ship", "codex", "m")
    assert choice.notes == ("Agent: codex, model m",)


def test_missing_values_come_from_the_record_and_are_named() -> None:
    choice = choose(
        goal=None, agent=None, model=None, agent_cmd=None, recorded=RECORDED, source="s"
    )
    assert (choice.goal, choice.agent, choice.model) == ("Port to Arrow", "opencode", "sonnet")
    assert choice.notes == (
        "Goal from s: Port to Arrow",
        "Agent: opencode, model sonnet (from s; --agent to change)",
    )


def test_a_recorded_model_goes_only_with_the_recorded_agent() -> None:
    choice = choose(
        goal="Ship", agent="codex", model=None, agent_cmd=None, recorded=RECORDED, source="s"
    )
    assert (choice.agent, choice.model) == ("codex", None)


@pytest.mark.parametrize(
    ("agent", "expected"), [(None, "custom"), ("claude", "custom"), ("gemini", "gemini")]
)
def test_an_agent_command_is_a_custom_agent_unless_another_agent_is_named(
    agent: str | None, expected: str
) -> None:
    choice = choose(
        goal="Ship", agent=agent, model=None, agent_cmd="./a.sh", recorded=RECORDED, source="s"
    )
    assert choice.agent == expected


def test_a_recorded_custom_agent_is_refused_without_its_command() -> None:
    """Issue 24 item 2: a plain `wild` after `--agent-cmd` once ran Claude Code silently."""
    recorded = LoopState(prompt="Ship", agent="custom")
    with pytest.raises(UsageError) as refused:
        choose(goal=None, agent=None, model=None, agent_cmd=None, recorded=recorded, source="s")
    assert str(refused.value) == (
        "the last loop (s) ran a custom agent, whose command wild does not keep; pass it"
        " again: wild --agent-cmd 'CMD ...' (or choose one with --agent NAME)"
    )
    # Naming an agent, or the command again, is a clear choice.
    named = choose(
        goal=None, agent="claude", model=None, agent_cmd=None, recorded=recorded, source="s"
    )
    assert named.notes[-1] == "Agent: claude"
    again = choose(
        goal=None, agent=None, model=None, agent_cmd="./my.sh", recorded=recorded, source="s"
    )
    assert again.notes[-1] == "Agent: custom (command: ./my.sh)"


def test_the_agent_line_is_always_there() -> None:
    choice = choose(goal="Ship", agent=None, model=None, agent_cmd=None, recorded=None, source="s")
    assert choice.notes == ("Agent: claude (the default; --agent to change)",)


@pytest.mark.parametrize("recorded", [None, LoopState()])
def test_no_goal_anywhere_is_a_usage_error(recorded: LoopState | None) -> None:
    with pytest.raises(UsageError, match="give a goal"):
        choose(goal=None, agent=None, model=None, agent_cmd=None, recorded=recorded, source="s")
