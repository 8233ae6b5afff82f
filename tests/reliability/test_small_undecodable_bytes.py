"""Bytes that are not UTF-8 in a `.wild/` file are shown, never a crash (found by the fuzzing).

wild reads files with surrogateescape, so such bytes survive a rewrite as lone surrogates. The
terminal gets them back as the bytes the file holds; JSON, which must be UTF-8, gets U+FFFD.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir, invoke

TASKS = b"# Tasks\n- [ ] task-001: caf\xe9 \xff\n"
POLICY_TAIL = b"\nCall me on \xff\xfe.\n"


@pytest.fixture
def wild_dir(tmp_path: Path) -> Path:
    root = init_wild_dir(tmp_path)
    (root / "tasks.md").write_bytes(TASKS)
    policy = root / "human-policy.md"
    text = policy.read_bytes()
    at = text.index(b"### Instructions") + len(b"### Instructions\n")
    policy.write_bytes(text[:at] + POLICY_TAIL + text[at:])
    return root


@pytest.mark.parametrize("action", ["--status", "--list-work", "--show-policy"])
def test_text_output_shows_the_files_bytes(wild_dir: Path, action: str) -> None:
    result = invoke(action, "--dir", str(wild_dir))
    assert result.exit_code == 0, result.output
    file_bytes = b"\xff\xfe" if action == "--show-policy" else b"caf\xe9 \xff"
    assert file_bytes in result.stdout_bytes


@pytest.mark.parametrize("action", ["--status", "--list-work", "--show-policy"])
def test_json_output_is_utf8_with_replacement_characters(wild_dir: Path, action: str) -> None:
    result = invoke(action, "--json", "--dir", str(wild_dir))
    assert result.exit_code == 0, result.output
    text = result.stdout_bytes.decode("utf-8")  # strict: valid UTF-8 throughout
    json.loads(text)
    assert "\ufffd" in text


def test_a_real_terminal_gets_the_bytes_too(wild_dir: Path) -> None:
    # A desktop's UTF-8 locale: strict (the C locale would escape by itself).
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    done = subprocess.run(
        [sys.executable, "-m", "wild", "--list-work", "--dir", str(wild_dir)],
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"caf\xe9 \xff" in done.stdout
