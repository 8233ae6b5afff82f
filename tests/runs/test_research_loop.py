"""Seed 002 §10.2's research path, whole: plan → sweep → real runs → a failure alert the
agent answers with `rerun` → analysis of the real metrics → COMPLETE.

The loop runs in-process with the real watcher and the real local backend (each run a
detached wrapper process); only the agent is a Python function. It acts on the prompt
and files as an agent would: it launches the sweep it designed, answers the alert whose
id the work names, and concludes from the metric files the runs wrote.
"""

from __future__ import annotations

import re
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import orjson

from tests.runs.research_support import Agent, resolve_tag, sweep_tag
from wild.commands.init import init_wild
from wild.commands.status import status_data
from wild.commands.status_text import format_status
from wild.loop import Loop, LoopOptions
from wild.loop.hooks import Hooks
from wild.paths import WildPaths
from wild.store.events_log import read_events
from wild.workspace import load_workspace

TRAIN = textwrap.dedent(
    """
    import json, os, sys
    args = dict(a[2:].split("=", 1) for a in sys.argv[1:])
    lr, crash = float(args["lr"]), args["crash"] == "1"
    run_dir = os.environ["WILD_RUN_DIR"]
    flag = os.path.join(os.path.dirname(run_dir), "..", "crashed-once")
    if crash and not os.path.exists(flag):
        open(flag, "w").close()
        print("CUDA error: simulated crash", flush=True)
        sys.exit(3)
    loss = 1.0
    with open(os.path.join(run_dir, "metrics.jsonl"), "a") as out:
        for step in range(5):
            loss = loss * (1 - lr) + abs(lr - 0.2)
            out.write(json.dumps({"step": step, "loss": loss}) + "\\n")
    print("done", loss)
    """
)

SWEEP = {
    "name": "lr-scan",
    "base_command": "python train.py",
    "parameters": {
        "cfg": [{"lr": 0.1, "crash": 0}, {"lr": 0.2, "crash": 1}, {"lr": 0.3, "crash": 0}]
    },
    "resources": {"cpus": 1, "time": "00:01:00"},
}


class ResearchAgent(Agent):
    """Reads its prompt and the run files, as a real agent would."""

    def __init__(self, project: Path) -> None:
        super().__init__(self.answer)
        self.project = project

    def answer(self, kind: str, work_id: str, prompt: str) -> str:
        if kind == "planning":
            if (self.project / "reports").exists():
                return "The sweep is analysed and the goal is met.\n<promise>COMPLETE</promise>\n"
            return "I will scan the learning rate.\n" + sweep_tag(SWEEP)
        if kind == "alert":
            return "A transient crash; rerun it.\n" + resolve_tag(work_id, "rerun")
        if kind == "analysis":
            return self.analyse(prompt)
        raise AssertionError(f"unexpected work {kind} {work_id}")

    def analyse(self, prompt: str) -> str:
        finals = {}
        for folder in re.findall(r"`([^`]*runs/[^`]*)/`", prompt):
            lines = (self.project / folder / "metrics.jsonl").read_bytes().splitlines()
            finals[Path(folder).name] = orjson.loads(lines[-1])["loss"]
        best = min(finals, key=lambda run: finals[run])
        report = re.search(r"analysis to `([^`]+)`", prompt)
        assert report is not None
        target = self.project / report.group(1)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"best run: {best} (final loss {finals[best]:.4f})\n")
        return "Analysis written.\n<promise>COMPLETE</promise>\n"


def test_plan_sweep_failure_rerun_analysis_complete(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text(TRAIN)
    paths = WildPaths(project / ".wild")
    init_wild(paths)
    agent = ResearchAgent(project)
    options = LoopOptions(goal="find the best learning rate", max_time_s=120.0, run_slots=2)
    loop = Loop(
        paths,
        options,
        runner=agent,
        out=lambda _: None,
        hooks=Hooks(barrier_checker=False, signals=False),
    )
    result = loop.run()

    assert result.reason == "complete", result
    assert [kind for kind, _ in agent.seen] == ["planning", "alert", "analysis", "planning"]
    records = [orjson.loads(line) for line in paths.runs_log.read_bytes().splitlines()]
    runs = {r["id"]: r for r in records if r["kind"] == "run"}
    assert sorted(r["status"] for r in runs.values()) == ["finished"] * 3
    crashed = next(r for r in runs.values() if r["params"]["crash"] == 1)
    assert crashed["attempt"] == 2 and crashed["metrics"]["step"] == 4
    failed_lines = [r for r in records if r.get("status") == "failed"]
    assert [r["id"] for r in failed_lines] == [crashed["id"]]
    # The alert carried the log tail and the agent's choice was recorded on it.
    alerts = [orjson.loads(x) for x in paths.alerts.read_bytes().splitlines()]
    assert "simulated crash" in alerts[0]["context"]["log_tail"][crashed["id"]]
    assert alerts[-1]["status"] == "resolved"
    assert alerts[-1]["resolution"]["choice"] == "rerun"
    # The analysis saw every run's real metrics; the report names the run with the least loss.
    analysis = agent.seen[2][1]
    assert analysis.count("| finished |") == 3
    best = min(runs.values(), key=lambda r: r["metrics"]["loss"])
    report = next((project / "reports").iterdir()).read_text()
    assert report.startswith(f"best run: {best['id']}")
    assert best["params"]["lr"] == 0.2  # what train.py's loss rewards
    events = read_events(paths.events)[0]
    kinds = [e["kind"] for e in events]
    assert kinds.count("run-ended") == 4 and "sweep-done" in kinds
    stages = [(e["from"], e["to"]) for e in events if e["kind"] == "stage"]
    assert stages == [
        ("exploring", "running"),
        ("running", "analyzing"),
        ("analyzing", "exploring"),
    ]
    # What `wild --status` shows after the run.
    status = status_data(load_workspace(paths, datetime.now(UTC)))
    assert status["research"] == {
        "stage": "exploring", "sweeps": 1,
        "runs": {"queued": 0, "running": 0, "finished": 3, "failed": 0, "stopped": 0},
    }  # fmt: skip
    stage_line = "Stage: exploring — runs: 0 running, 0 queued, 3 finished, 0 failed, 0 stopped"
    assert f"{stage_line} (1 sweep)" in format_status(status).splitlines()  # not "1 sweeps"
