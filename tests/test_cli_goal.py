"""`wild demo` is a subcommand; a goal is any text, the word demo included (`--` or `--goal`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.cli_support import invoke
from wild.commands import demo as demo_module


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A state folder with one task and an agent script that completes it."""
    root = tmp_path / ".wild"
    assert invoke("--init", "--dir", str(root)).exit_code == 0
    assert invoke("--add-task", "Say hello", "--dir", str(root)).exit_code == 0
    agent = tmp_path / "agent.sh"
    agent.write_text('#!/bin/sh\necho "<promise>TASK_COMPLETE</promise>"\n')
    agent.chmod(0o755)
    return root


@pytest.mark.parametrize("goal_args", [("--", "demo"), ("--goal", "demo")])
def test_the_word_demo_can_be_a_goal(project: Path, goal_args: tuple[str, str]) -> None:
    agent = str(project.parent / "agent.sh")
    options = ("--agent-cmd", agent, "--once", "--dir", str(project))
    result = invoke(*options, *goal_args)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "wild stopped: one iteration done (1 iteration)"
    status = orjson.loads(invoke("--status", "--json", "--dir", str(project)).output)
    assert status["loop"]["goal"] == "demo"


def test_wild_demo_runs_the_demo_subcommand(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[bool] = []

    def fake_demo(out: Callable[[str], None], heading: Callable[[str], None]) -> int:
        runs.append(True)
        heading("heading")
        out("line")
        return 0

    monkeypatch.setattr(demo_module, "run_demo", fake_demo)
    result = invoke("demo")
    assert result.exit_code == 0, result.output
    assert runs == [True]
    assert result.output == "heading\nline\n"


def test_demo_after_options_is_refused_not_run_as_a_goal(tmp_path: Path) -> None:
    result = invoke("--dir", str(tmp_path / ".wild"), "demo")
    assert result.exit_code == 2
    assert result.output.endswith(
        'Error: `demo` is a command: run `wild demo` on its own; for the goal "demo",'
        " write `wild -- demo` or `wild --goal demo`\n"
    )
    assert not (tmp_path / ".wild").exists()


def test_demo_takes_no_arguments() -> None:
    result = invoke("demo", "--status")
    assert result.exit_code == 2
    assert result.output.endswith("Error: No such option '--status'.\n")


def test_a_goal_given_twice_is_refused(tmp_path: Path) -> None:
    result = invoke("one", "--goal", "two", "--dir", str(tmp_path / ".wild"))
    assert result.exit_code == 2
    assert result.output == "Error: give the goal once: as an argument or with --goal, not both\n"


def test_help_lists_the_demo_command_and_how_to_use_demo_as_a_goal() -> None:
    help_text = invoke("--help").output
    assert help_text.startswith("Usage: wild [OPTIONS] [GOAL]\n       wild demo\n")
    commands = help_text.split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
    assert " ".join(commands.split()) == "demo The first research story, in a temporary folder."
    assert "`wild -- demo`" in help_text and "`wild --goal demo`" in help_text
    demo_help = invoke("demo", "--help").output
    assert demo_help.startswith("Usage: wild demo [OPTIONS]\n")


def test_a_loop_stopped_by_a_limit_exits_4(project: Path) -> None:
    assert invoke("--add-task", "Say bye", "--dir", str(project)).exit_code == 0
    agent = str(project.parent / "agent.sh")
    options = ("--agent-cmd", agent, "--max-iterations", "1", "--dir", str(project))
    result = invoke(*options, "greet")
    assert result.exit_code == 4, result.output
    assert result.output.splitlines()[-1] == "wild stopped: reached 1 iteration (1 iteration)"


def test_resume_after_a_custom_agent_refuses_instead_of_switching_agents(project: Path) -> None:
    """Issue 24 item 2: a plain `wild` after `--agent-cmd` started Claude Code silently."""
    agent = str(project.parent / "agent.sh")
    first = invoke("Ship it", "--agent-cmd", agent, "--once", "--dir", str(project))
    assert first.exit_code == 0, first.output
    assert first.output.splitlines()[0] == f"Agent: custom (command: {agent})"
    again = invoke("--once", "--dir", str(project))
    assert again.exit_code == 2
    assert "ran a custom agent, whose command wild does not keep; pass it again" in again.output
    assert "Iteration" not in again.output


def test_an_agent_that_cannot_start_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24 item 3: no `.wild/`, no "Iteration 1", and so no "killed loop" next time."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    root = tmp_path / ".wild"
    result = invoke("Ship it", "--agent", "codex", "--dir", str(root))
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: cannot start agent 'codex': No such file or directory; install it, or point"
        " WILD_CODEX_BINARY (or --agent-cmd) at a program that exists"
    )
    assert "Iteration" not in result.output
    assert not root.exists()
