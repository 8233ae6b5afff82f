"""A mistyped verb (`wild status`) never starts an agent: a one-word goal naming an action is
refused with the flag it meant, nothing is created, and `wild --goal WORD` still means it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from wild.cli import cli
from wild.commands.actions import action_words

# A few spelled out, so the test cannot pass by an empty derived list.
WORDS = ["status", "init", "help", "stop", "runs", "serve", "pause", "resume", "approve"]
WORDS += ["migrate", "version", "list-work", "list_work", "Status"]


def _wild(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `python -m wild` in `cwd`, with a `claude` on PATH that records any start."""
    bin_dir = cwd.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    claude = bin_dir / "claude"
    claude.write_text(f'#!/bin/sh\ntouch "{cwd.parent / "AGENT_STARTED"}"\n')
    claude.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("WILD_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "wild", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("word", WORDS)
def test_a_one_word_action_goal_is_refused_and_nothing_starts(tmp_path: Path, word: str) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    result = _wild(folder, word)
    assert result.returncode == 2, result.stderr
    flag = "--" + word.lower().replace("_", "-")
    assert f"Error: did you mean `wild {flag}`?" in result.stderr
    assert f"`wild --goal {word}`" in result.stderr
    assert list(folder.iterdir()) == []
    assert not (tmp_path / "AGENT_STARTED").exists()


def test_every_action_flag_is_refused_as_a_goal() -> None:
    """The list is the CLI's own: each action's flag, so a new action is covered too."""
    params = cli.get_params(click.Context(cli))
    words = action_words((p.name, p.opts, not p.expose_value) for p in params)
    actions = {p.opts[0] for p in cli.params if p.name in ("status", "add_task", "sweep")}
    assert actions <= set(words.values())
    assert {"--help", "--version", "--serve"} <= set(words.values())
    assert "json" not in words and "once" not in words  # modifiers, not actions


def test_goal_option_still_means_the_word(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    agent = tmp_path / "agent.sh"
    agent.write_text('#!/bin/sh\necho "<promise>TASK_COMPLETE</promise>"\n')
    agent.chmod(0o755)
    result = _wild(folder, "--goal", "status", "--agent-cmd", str(agent), "--once")
    assert result.returncode == 0, result.stderr
    assert (folder / ".wild" / "state.json").exists()
    state = json.loads((folder / ".wild" / "state.json").read_text())
    assert state["prompt"] == "status"
