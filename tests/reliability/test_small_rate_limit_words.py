"""Only the agent's failure says "usage limit": the real loop with a scripted `claude` on
stream-json. Words in a successful run (its summary, a quoted task title) never pause it; the
CLI's structured error does, for at most the documented maximum, and the human is told."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir
from wild.loop.limits import RATE_LIMIT_MAX_S

IN_5_HOURS = int(time.time()) + 5 * 3600


def _loop(tmp_path: Path, result: dict[str, object], exit_code: int) -> str:
    root = init_wild_dir(tmp_path)
    (root / "tasks.md").write_text(
        f"# Tasks\n\n- [ ] [P1] task-001: usage limit reached|{IN_5_HOURS}\n"
    )
    events = [{"type": "system", "subtype": "init"}, {"type": "result", **result}]
    output = tmp_path / "claude.out"
    output.write_text("".join(json.dumps(e) + "\n" for e in events))
    claude = tmp_path / "claude"
    claude.write_text(f'#!/bin/sh\ncat > /dev/null\ncat "{output}"\nexit {exit_code}\n')
    claude.chmod(0o755)
    loop = subprocess.run(
        [sys.executable, "-m", "wild", "Go", "--agent", "claude", "--once", "--dir", str(root)],
        cwd=tmp_path,
        env={**os.environ, "WILD_CLAUDE_BINARY": str(claude)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert loop.returncode == 0, loop.stderr
    return loop.stdout + (root / "events.log").read_text()


@pytest.mark.parametrize(
    "reply",
    [
        "Done. Note: the API's rate limit resets in 5 hours.",
        f"Worked on task-001: usage limit reached|{IN_5_HOURS}",
    ],
    # Named, not by value: the epoch differs between the parallel workers' collections.
    ids=["words", "quoted-epoch"],
)
def test_a_successful_run_quoting_a_limit_does_not_pause(tmp_path: Path, reply: str) -> None:
    shown = _loop(tmp_path, {"is_error": False, "result": reply}, 0)
    assert "hit a usage limit" not in shown
    assert '"rate-limited"' not in shown


def test_the_clis_structured_error_pauses_for_at_most_the_maximum(tmp_path: Path) -> None:
    error = {"is_error": True, "result": f"Claude AI usage limit reached|{IN_5_HOURS}"}
    shown = _loop(tmp_path, error, 1)
    assert f"waiting {RATE_LIMIT_MAX_S:.0f} s (the longest wait" in shown
    assert '"rate-limited"' in shown
