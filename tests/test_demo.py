"""`wild demo` runs the real loop end to end with its scripted agent and finishes."""

from __future__ import annotations

import os
import subprocess
import sys

from wild.barriers.approvals import approvals_path


def test_wild_demo_runs_the_whole_story() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wild", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("WILD_")},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    expected_in_order = [
        "🤖 Iteration 1: human-input",
        "✅ Human input",
        "Task complete: task-001",
        "Task complete: task-002",
        "✅ Alert resolved: alert-",
        "📣 wild needs you (task-003)",
        "🧑 (the human answers)",
        "Task complete: task-003",
        "✅ All work complete.",
        "Tasks: 3/3 complete",
        "Barriers: 0 waiting, 1 satisfied, 0 failed",
    ]
    position = 0
    for snippet in expected_in_order:
        found = out.find(snippet, position)
        assert found >= 0, f"{snippet!r} missing after position {position}:\n{out}"
        position = found
    assert "The loop ended: all work complete" in out
    assert "Problems" not in out  # a clean story: nothing for the user to fix
    # The throwaway project's trust (set with --update-policy) is not left in the real store.
    store = approvals_path()
    assert not store.exists() or b"wild-demo-" not in store.read_bytes()
