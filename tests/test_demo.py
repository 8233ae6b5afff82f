"""`wild demo` runs the first research story with the real loop and the real local backend,
end to end, and shows what the runs answered: from the installed wheel, in an empty folder, as
a user who ran `pip install wild` would (a checkout reads the same story in place)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.installed_wheel import Installed
from wild.paths import approvals_path


def test_wild_demo_runs_the_whole_story(installed_wild: Installed, tmp_path: Path) -> None:
    result = installed_wild.wild("demo", cwd=tmp_path, timeout=300)  # a hang guard only
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    expected_in_order = [
        "== The rl-training story in",
        "The agent is scripted (wild_stories.agent, shipped beside the story)",
        "🤖 Iteration 1: planning",
        "🔬 Sweep s",
        "🏃 sweep s",  # progress: runs ended out of 42
        "🚨 run s",  # the run that crashes once on purpose
        "🤖 Iteration 2: alert alert-",
        "✅ Alert resolved: alert-",
        "is done: analysis next",
        "🤖 Iteration 3: analysis",
        "✅ All work complete.",
        "Stage: exploring — runs: 0 running, 0 queued, 42 finished, 0 failed",
        # The answers with their intervals (which values win is the runs' to say:
        # tests/stories/test_rl_training.py checks each claim against the metrics).
        "**Which clip strategy works better?**",
        "  - random init, 64/16: 0.2 ",
        "**Which off-policiness setting works better?**",
        "**Which start works better (random init vs bc)?**",
        "Over 42 finished runs of 42 (1 rerun after a failure); 3 seeds per setting.",
        "The report: ",
        "The curves with their bands: ",
    ]
    position = 0
    for snippet in expected_in_order:
        found = out.find(snippet, position)
        assert found >= 0, f"{snippet!r} missing after position {position}:\n{out}"
        position = found
    assert "The loop ended: all work complete" in out
    # Issue 24 item 14: it ended on "Iteration 4: planning" and "Stage: exploring", which read
    # like work left undone; it ends saying what was shown and what to try with a real agent.
    ending = out.rsplit("== What you saw, and what to try next\n", 1)[1]
    assert "- The agent was scripted: its replies were computed, not written by a model." in ending
    assert "examples/rl-training/run.sh --agent claude" in ending
    assert out.rstrip().endswith("- where a loop stands, at any time: wild --status")
    assert re.search(r"0\.2 \d+\.\d ± \d+\.\d vs 0\.28 \d+\.\d ± \d+\.\d", out), out
    report = Path(out.split("The report: ", 1)[1].split("\n", 1)[0])
    plot = Path(out.split("The curves with their bands: ", 1)[1].split("\n", 1)[0])
    assert report.read_text().startswith("# RL sweep report") and "<polygon" in plot.read_text()
    results = out.rsplit("The artifacts (report, run table, curves.svg) are in ", 1)[1]
    folder = Path(results.split(";", 1)[0])
    assert (folder / "curves.svg").is_file() and (folder / "run_table.md").is_file()
    shutil.rmtree(folder.parent)
    assert "Problems" not in out  # a clean story: nothing for the user to fix
    # The throwaway project's trust (set with --update-policy) is not left in the real store.
    store = approvals_path()
    assert not store.exists() or b"wild-demo-" not in store.read_bytes()
    projects = store.with_name("approvals").glob("*.json")  # a file per project
    assert [file for file in projects if b"wild-demo-" in file.read_bytes()] == []
