"""The rl-training story: its skill learns for real, its 12-run grid answers the story's two
questions as expected/ says, and the answers follow the metrics, not a script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.stories.conftest import EXAMPLES, Project, expected, fresh_project
from wild.agents.signals import parse_signals
from wild.parsers.alerts import Alert
from wild.paths import WildPaths
from wild.policy.model import default_policy
from wild.prompts import alert_values, common_values, render
from wild.stories.agent import story_step
from wild.stories.results import load_results

SKILL = EXAMPLES / "rl-training" / "skills" / "train_ppo.py"


def train(run_dir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SKILL), "--steps=12", *flags],
        env={**os.environ, "WILD_RUN_DIR": str(run_dir)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def curve(run_dir: Path) -> list[float]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [json.loads(line)["accuracy"] for line in lines]


def test_the_skill_learns_and_its_curves_differ_by_clip_and_off_policiness(tmp_path: Path) -> None:
    settings = {
        "on-policy": ["--clip_coef=0.2", "--mini_batch_size=64"],
        "stale clip 0.2": ["--clip_coef=0.2", "--mini_batch_size=16"],
        "stale clip 0.28": ["--clip_coef=0.28", "--mini_batch_size=16"],
        "on-policy clip 0.28": ["--clip_coef=0.28", "--mini_batch_size=64"],
    }
    curves = {}
    for name, flags in settings.items():
        assert train(tmp_path / name, *flags).returncode == 0
        curves[name] = curve(tmp_path / name)
        summary = json.loads((tmp_path / name / "metrics.json").read_text())
        assert summary["auc_accuracy"] == sum(curves[name]) / len(curves[name])
    assert all(c[-1] > c[0] + 0.2 for c in curves.values())  # every setting learns
    assert curves["stale clip 0.2"] != curves["on-policy"]
    assert curves["stale clip 0.2"] != curves["stale clip 0.28"]
    # On-policy the PPO ratio is exactly 1: the clip cannot change anything.
    assert curves["on-policy"] == curves["on-policy clip 0.28"]


def test_the_planned_crash_happens_on_the_first_attempt_only(tmp_path: Path) -> None:
    flags = ["--model=qwen2.5-7b-base", "--clip_coef=0.2", "--mini_batch_size=32"]
    crash = "--crash_once_on=qwen2.5-7b-base/0.2/64x32"
    first = train(tmp_path, *flags, crash)
    assert first.returncode == 1
    assert "illegal memory access (simulated)" in first.stdout
    assert not (tmp_path / "metrics.json").exists()
    assert train(tmp_path, *flags, crash).returncode == 0
    assert len(curve(tmp_path)) == 12  # the rerun's curve, not the crashed one's tail


def test_the_12_run_grid_answers_the_story_questions(story_project: Project) -> None:
    project = story_project("rl-training")
    reply = story_step("Analyze the finished sweep.", project, work_type="analysis")
    results = project / "results"
    assert json.loads((results / "conclusions.json").read_text()) == expected("rl-training")
    assert parse_signals(reply).promises == ("COMPLETE",)
    for name in ("sweep.json", "run_table.md", "curves.svg", "report.md"):
        assert (results / name).stat().st_size > 0, name
    report = (results / "report.md").read_text()
    assert "**Which clip strategy works better?** `clip_coef=0.28`" in report
    assert "**Which off-policiness setting works better?**" in report
    assert "= 64/16`" in report
    assert "Over 12 finished runs of 12 (1 rerun after a failure)." in report
    assert "On-policy (`mini_batch_size = batch_size`) both clips score the same" in report
    assert "(its log: `step 10: CUDA error: an illegal memory access (simulated)`)" in report
    assert (results / "run_table.md").read_text().count("| finished |") == 12
    assert (results / "curves.svg").read_text().count("<polyline") == 6


def _rewrite(project: Path, chosen: Any, **changes: float) -> None:
    """Change the metrics.json of the runs `chosen(params)` picks, as a changed skill would."""
    paths = WildPaths(project / ".wild")
    for run in load_results(paths):
        if chosen(run.params):
            path = paths.run_dir(run.id) / "metrics.json"
            path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_the_answers_follow_the_metrics(story_project: Project) -> None:
    project = story_project("rl-training")
    _rewrite(project, lambda p: p["clip_coef"] == 0.2, auc_accuracy=0.99)
    _rewrite(project, lambda p: p["mini_batch_size"] == 32, auc_accuracy=0.995)  # flattened
    story_step("Analyze the finished sweep.", project, work_type="analysis")
    conclusions = json.loads((project / "results" / "conclusions.json").read_text())
    assert conclusions["best_clip_coef"] == 0.2
    assert conclusions["best_offpolicy"] == "64/32"
    report = (project / "results" / "report.md").read_text()
    assert "`clip_coef=0.2`" in report
    assert "both clips score the same" not in report  # no longer true, so no longer said


def test_the_exploring_stage_proposes_the_story_sweep(tmp_path: Path) -> None:
    project = fresh_project("rl-training", tmp_path)
    reply = story_step("No sweep is active. Propose one in a <sweep> tag.", project, "sweep")
    spec = json.loads(reply.split("<sweep>", 1)[1].split("</sweep>", 1)[0])
    assert spec == json.loads((EXAMPLES / "rl-training" / "sweep.json").read_text())
    assert "12 runs" in reply


def _alert_prompt(project: Path, run_id: str, together: tuple[str, ...] = ()) -> str:
    """The prompt of a run-failed alert; `together`: runs that failed with it (a flood's
    alert names them in its context and its source is the sweep)."""
    alert = Alert(
        id="alert-7",
        timestamp="2026-11-25T10:00:00Z",
        severity="warning",
        source=f"sweep {run_id.rsplit('-', 1)[0]}" if together else run_id,
        type="run-failed",
        description=f"run {run_id} exited 1",
        status="pending",
        context={"runs": [run_id, *together]} if together else {},
        resolved_at=None,
        escalated_at=None,
        choices=("rerun", "ignore", "stop_sweep"),
        raw={},
        line=1,
    )
    policy = default_policy()
    values = common_values(
        iteration=3, goal="g", context="", policy=policy, work_id=alert.id
    ) | alert_values(alert, policy, 1, "")
    return render("alert", project / ".wild" / "prompts", values)


def test_a_failed_run_alert_is_answered_rerun_then_escalated_if_it_fails_again(
    story_project: Project,
) -> None:
    project = story_project("rl-training")
    rerun = next(r for r in load_results(WildPaths(project / ".wild")) if r.attempt == 2)
    prompt = _alert_prompt(project, rerun.id)
    # As the first failure's alert: the run is still on attempt 1 (its later lines dropped).
    log = project / ".wild" / "runs.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    first = [ln for ln in lines if not (rerun.id in ln and '"attempt":2' in ln)]
    log.write_text("".join(first))
    reply = story_step(prompt, project, "alert", "alert-7")
    assert "Its log says: 'step 10: CUDA error: an illegal memory access (simulated)'." in reply
    signals = parse_signals(reply)
    assert [(r.alert_id, r.choice) for r in signals.resolutions] == [("alert-7", "rerun")]
    # The rerun failed too: a third attempt is for the human to decide.
    log.write_text(
        "".join(lines).replace('"status":"finished","backend"', '"status":"failed","backend"')
    )
    signals = parse_signals(story_step(prompt, project, "alert", "alert-7"))
    assert signals.promises == ("NEED_HUMAN_INPUT",)
    assert signals.resolutions == ()
    # The same when it failed again with another run: the flood's alert names both.
    other = next(r.id for r in load_results(WildPaths(project / ".wild")) if r.id != rerun.id)
    flood = _alert_prompt(project, rerun.id, together=(other,))
    assert parse_signals(story_step(flood, project, "alert", "alert-7")).promises == (
        "NEED_HUMAN_INPUT",
    )
