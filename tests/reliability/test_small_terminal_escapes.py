"""Text from the files never drives the terminal: escape sequences in an alert or a task title
are stripped from `--status` and `--list-work` (the files keep them, `--json` too)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir, invoke

# Retitle the window, clear the screen, recolour, ring the bell, CSI as one C1 character.
ESCAPES = "\x1b]0;PWNED\x07\x1b[2J\x1b[31m\r\x9b1m\x08"


@pytest.mark.parametrize("action", ["--status", "--list-work"])
def test_escape_sequences_from_the_files_do_not_reach_the_terminal(
    tmp_path: Path, action: str
) -> None:
    root = init_wild_dir(tmp_path)
    description = f"loss{ESCAPES} diverged"
    alert = invoke(
        "--alert", "--severity", "critical", "--source", "job", "--type", "NaN",
        "--description", description, "--dir", str(root),
    )  # fmt: skip
    assert alert.exit_code == 0, alert.output
    (root / "tasks.md").write_text(f"# Tasks\n\n- [ ] [P1] task-001: Train{ESCAPES} it\n")
    shown = subprocess.run(
        [sys.executable, "-m", "wild", action, "--dir", str(root)],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=60,
        check=True,
    ).stdout
    for control in ("\x1b", "\x07", "\r", "\x9b", "\x08"):
        assert control.encode() not in shown
    assert b"loss]0;PWNED[2J[31m1m diverged" in shown
    if action == "--list-work":  # --status names only the next piece of work
        assert b"Train]0;PWNED[2J[31m1m it" in shown
    lines = (root / "alerts.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["description"] == description  # the file keeps it all
