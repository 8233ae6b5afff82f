"""A byte that is not UTF-8 in a task title, a human input or the policy's Instructions never
stops the loop: the real loop starts, the agent gets the bytes as they are, the file keeps
them byte for byte, and `--status` names the line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir, invoke

PLANTED = b"caf\xe9 \xff\xfe end"


def _plant_task(root: Path) -> Path:
    (root / "tasks.md").write_bytes(b"# Tasks\n\n- [ ] [P1] task-001: Train " + PLANTED + b"\n")
    return root / "tasks.md"


def _plant_human_input(root: Path) -> Path:
    assert invoke("--human-input", "MARK", "--dir", str(root)).exit_code == 0
    human = root / "human.md"
    human.write_bytes(human.read_bytes().replace(b"MARK", PLANTED))
    return human


def _plant_policy_instruction(root: Path) -> Path:
    policy = root / "human-policy.md"
    text = policy.read_bytes()
    at = text.index(b"### Instructions\n") + len(b"### Instructions\n")
    policy.write_bytes(text[:at] + b"\n" + PLANTED + b"\n" + text[at:])
    return policy


@pytest.mark.parametrize("plant", [_plant_task, _plant_human_input, _plant_policy_instruction])
def test_the_loop_runs_and_keeps_the_bytes(tmp_path: Path, plant: object) -> None:
    root = init_wild_dir(tmp_path)
    assert callable(plant)
    planted_file: Path = plant(root)
    line = next(n for n, b in enumerate(planted_file.read_bytes().split(b"\n"), 1) if PLANTED in b)
    before = planted_file.read_bytes()
    seen = tmp_path / "seen.bin"
    agent = tmp_path / "agent.sh"
    agent.write_text(f'#!/bin/sh\ncat > "{seen}"\necho "looked at it"\n')
    agent.chmod(0o755)
    loop = subprocess.run(
        [sys.executable, "-m", "wild", "Go", "--agent-cmd", str(agent), "--once"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert loop.returncode == 0, loop.stderr
    assert PLANTED in seen.read_bytes()  # the prompt on stdin carries the bytes as they are
    after = planted_file.read_bytes()
    # The loop marks the task as taken (its box); the planted text stays byte for byte.
    kept = after.split(b"\n")[line - 1]
    assert kept == before.split(b"\n")[line - 1].replace(b"- [ ]", b"- [/]", kept[:5] == b"- [/]")
    if planted_file.name == "human-policy.md":
        assert after == before
    status = subprocess.run(
        [sys.executable, "-m", "wild", "--status"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    assert f"{planted_file.name}:{line}: bytes that are not UTF-8".encode() in status


def test_a_goal_that_is_not_utf8_starts_the_loop_and_the_logs_name_its_bytes(
    tmp_path: Path,
) -> None:
    agent = tmp_path / "agent.sh"
    agent.write_text("#!/bin/sh\ncat > /dev/null\necho looked\n")
    agent.chmod(0o755)
    goal = b"Train caf\xe9"
    loop = subprocess.run(
        [sys.executable.encode(), b"-m", b"wild", goal, b"--agent-cmd", bytes(agent), b"--once"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert loop.returncode == 0, loop.stderr
    root = tmp_path / ".wild"
    starts = [
        e
        for e in map(json.loads, (root / "events.log").read_text().splitlines())
        if e["kind"] == "loop-start"
    ]
    assert [e["goal"] for e in starts] == ["Train caf\\xe9"]
    assert json.loads((root / "state.json").read_text())["prompt"] == "Train caf\\xe9"
