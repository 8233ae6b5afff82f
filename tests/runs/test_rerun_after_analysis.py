"""A rerun asked for after a sweep's analysis starts, and the loop waits for it before it ends
(issue 23: "the loop said all work complete with 2 runs running and 2 queued")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runs.research_support import Agent, project, run_loop, runs_by_id, sweep_tag
from wild.commands.runs_cmds import act_on_run
from wild.paths import WildPaths

pytestmark = pytest.mark.timeout(120)

# Slow enough that the loop, were it to end at once, would leave the reruns queued or running.
TRAIN = (
    "import json, os, sys, time\n"
    "time.sleep(0.5)\n"
    "open(os.path.join(os.environ['WILD_RUN_DIR'], 'metrics.jsonl'), 'a')"
    ".write(json.dumps({'step': 1, 'loss': 0.5}) + '\\n')\n"
)
SWEEP = {
    "name": "seeds",
    "base_command": "python train.py",
    "parameters": {"seed": [0, 1, 2]},
    "resources": {"cpus": 1, "time": "00:01:00"},
}


def test_reruns_made_after_the_analysis_start_and_the_loop_waits_for_them(tmp_path: Path) -> None:
    paths = project(tmp_path, {"train.py": TRAIN, "notes.txt": ""})
    notes = paths.project / "notes.txt"

    def reply(kind: str, _work_id: str, _prompt: str) -> str:
        if kind == "planning" and notes.read_text():
            return "The goal is met.\n<promise>COMPLETE</promise>\n"
        if kind == "planning":
            return "Seeds.\n" + sweep_tag(SWEEP)
        assert kind == "analysis", kind
        notes.write_text("analysed")
        for run_id in sorted(runs_by_id(paths))[:2]:  # as the agent's `wild --rerun ID`
            act_on_run(WildPaths(paths.root), run_id, stop=False)
        return "Analysed; two seeds rerun for a check.\n<promise>COMPLETE</promise>\n"

    result = run_loop(paths, Agent(reply))
    assert result.reason == "complete", result
    attempts = sorted((run["attempt"], run["status"]) for run in runs_by_id(paths).values())
    assert attempts == [(1, "finished"), (2, "finished"), (2, "finished")]
