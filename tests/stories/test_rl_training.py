"""The rl-training story: its skill is PPO that learns on gymnasium's CartPole-v1, its
42-run grid answers the story's questions, and every answer the report gives follows from
intervals this test recomputes from the runs' own metrics files."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from statistics import fmean, stdev
from typing import Any

from scipy import stats

from tests.stories.conftest import EXAMPLES, Project, expected, fresh_project
from wild.agents.signals import parse_signals
from wild.parsers.alerts import Alert
from wild.paths import WildPaths
from wild.policy.model import default_policy
from wild.prompt_files import render
from wild.prompts import alert_values, common_values
from wild_stories.agent import story_step
from wild_stories.intervals import T_975, Interval, interval, winner
from wild_stories.results import load_results
from wild_stories.rl_training import Comparison, answer

SKILL = EXAMPLES / "rl-training" / "skills" / "train_ppo.py"


def train(run_dir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SKILL), "--updates=6", *flags],
        env={**os.environ, "WILD_RUN_DIR": str(run_dir)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def lines(run_dir: Path) -> list[dict[str, float]]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_the_skill_is_ppo_that_learns_on_cartpole_and_logs_every_update(tmp_path: Path) -> None:
    done = train(tmp_path, "--updates=12", "--mini_batch_size=16", "--seed=0")
    assert done.returncode == 0, done.stderr
    curve = lines(tmp_path)
    assert [c["step"] for c in curve] == list(range(13))  # step 0: the starting policy
    keys = {"return", "episode_length", "clip_frac", "approx_kl", "entropy", "env_steps"}
    assert keys <= set(curve[1])
    assert curve[-1]["env_steps"] == 12 * 64 * 16
    returns = [c["return"] for c in curve]
    assert returns[-1] > 2 * returns[0]  # a random policy balances ~20 steps; PPO learns
    summary = json.loads((tmp_path / "metrics.json").read_text())
    assert summary["return_auc"] == fmean(returns)
    assert summary["final_return"] == returns[-1]  # the last tenth of 13 points is one


def test_the_clip_acts_only_on_stale_samples(tmp_path: Path) -> None:
    def run(name: str, *flags: str) -> list[dict[str, float]]:
        assert train(tmp_path / name, "--lr=0.02", *flags).returncode == 0
        return lines(tmp_path / name)

    stale = [run(f"stale {c}", f"--clip_coef={c}", "--mini_batch_size=16") for c in (0.2, 0.28)]
    assert stale[0] != stale[1]
    assert max(c.get("clip_frac", 0.0) for c in stale[0]) > 0
    # On-policy (one step per batch, or each minibatch sampled fresh) the ratio is exactly 1.
    for flags in (["--mini_batch_size=64"], ["--mini_batch_size=16", "--sampling=fresh"]):
        twins = [run(f"{flags} {c}", f"--clip_coef={c}", *flags) for c in (0.2, 0.28)]
        assert twins[0] == twins[1]
        assert all(c.get("clip_frac", 0.0) == 0.0 for c in twins[0])


def test_behaviour_cloning_starts_better_than_a_random_policy(tmp_path: Path) -> None:
    for init in ("random", "bc"):
        assert train(tmp_path / init, f"--init={init}", "--updates=1").returncode == 0
    start = {init: lines(tmp_path / init)[0]["return"] for init in ("random", "bc")}
    assert start["bc"] > 2 * start["random"], start


def test_the_planned_crash_happens_on_the_first_attempt_only(tmp_path: Path) -> None:
    flags = ["--init=bc", "--clip_coef=0.2", "--mini_batch_size=32", "--seed=1"]
    crash = "--crash_once_on=bc/0.2/64x32/stale/seed1"
    first = train(tmp_path, *flags, crash)
    assert first.returncode == 1
    assert "NaN in the policy loss (simulated)" in first.stdout
    assert not (tmp_path / "metrics.json").exists()
    assert train(tmp_path, *flags, crash).returncode == 0
    assert len(lines(tmp_path)) == 7  # the rerun's curve, not the crashed one's tail


def test_the_interval_table_is_students_t() -> None:
    assert [round(stats.t.ppf(0.975, df), 4) for df in range(1, 31)] == list(T_975)
    values = [3.0, 5.5, 4.25, 9.0]
    low, high = stats.t.interval(0.95, 3, loc=fmean(values), scale=stats.sem(values))
    found = interval(values)
    assert found is not None and math.isclose(found.low, low, rel_tol=1e-4)
    assert math.isclose(found.high, high, rel_tol=1e-4)


def _i(mean: float, half: float) -> Interval:
    return Interval(mean, half, 3)


def test_a_winner_needs_an_interval_above_every_other() -> None:
    assert winner({"a": _i(10, 1), "b": _i(5, 1)}) == "a"
    assert winner({"a": _i(10, 3), "b": _i(5, 3)}) is None  # 7 is not above 8
    assert winner({"a": _i(10, 1), "b": _i(5, 1), "c": _i(9.5, 1)}) is None
    assert winner({"a": _i(10, math.inf), "b": _i(5, 1)}) is None  # one seed: unbounded

    def c(w: str | None) -> Comparison:
        return Comparison("held", {}, {}, w, None)

    assert answer([c(None), c(None)], 3).value is None
    assert "no difference detected at 3 seeds" in answer([c(None)], 3).text
    assert answer([c("x"), c(None)], 3).value == "x"
    assert answer([c("x"), c("y")], 3).value == "mixed"


# --- the report against intervals recomputed here, from the runs' files alone -------------

Key = tuple[str, str, str, str]  # init, clip, batch x mini, sampling


def _recomputed(project: Path) -> dict[Key, dict[str, list[float]]]:
    """Every setting's seeds' scores, read from each run folder's metrics.json (its `run`
    key says the setting: init/clip/BSxMBS/sampling/seedN)."""
    scores: dict[Key, dict[str, list[float]]] = {}
    for path in sorted((project / ".wild" / "runs").glob("*/metrics.json")):
        summary = json.loads(path.read_text())
        init, clip, pair, sampling, _seed = summary["run"].split("/")
        group = scores.setdefault((init, clip, pair.replace("x", "/"), sampling), {})
        for metric in ("return_auc", "final_return"):
            group.setdefault(metric, []).append(summary[metric])
    return scores


def _t_interval(values: list[float]) -> tuple[float, float]:
    return fmean(values), stats.t.ppf(0.975, len(values) - 1) * stdev(values) / len(values) ** 0.5


def _separates(groups: dict[str, tuple[float, float]]) -> str | None:
    best = max(groups, key=lambda k: groups[k][0])
    low = groups[best][0] - groups[best][1]
    others = [m + h for k, (m, h) in groups.items() if k != best]
    return best if all(low > high for high in others) else None


def _setting_of(question: str, held: str, value: str) -> Key:
    """The setting a comparison's `value` stands for, given what it holds fixed."""
    if question == "init":
        init, label = value, held
    else:
        init, rest = held.split(" init, ")
        label = {"clip": f"{rest} clip {value}", "offpolicy": f"{value} {rest}"}.get(
            question, f"{rest} {value}"
        )
    if "fresh" in label:
        return (init, "0.2", label.split()[0], "fresh")
    if label.startswith("64/64"):
        return (init, "0.2", "64/64", "stale")
    clip = re.search(r"clip (\S+)", label)
    assert clip is not None, label
    return (init, clip.group(1), re.findall(r"64/\d+", label)[0], "stale")


def check_report_against_metrics(project: Path) -> dict[str, Any]:
    """Recompute every interval and winner of the report from the metrics files; returns
    the conclusions after checking them and the report's text against the recomputation."""
    results = project / "results"
    conclusions = json.loads((results / "conclusions.json").read_text())
    report = (results / "report.md").read_text()
    scores = _recomputed(project)
    seeds = min(len(v["return_auc"]) for v in scores.values())
    assert conclusions["seeds"] == seeds
    counts = {"clip": 4, "offpolicy": 4, "control": 4, "init": 7}
    for question, comparisons in conclusions["comparisons"].items():
        assert len(comparisons) == counts[question], question
        for comparison in comparisons:
            mine: dict[str, dict[str, tuple[float, float]]] = {"auc": {}, "final": {}}
            for value, (mean, half) in comparison["auc"].items():
                key = _setting_of(question, comparison["held"], value)
                mine["auc"][value] = _t_interval(scores[key]["return_auc"])
                mine["final"][value] = _t_interval(scores[key]["final_return"])
                assert math.isclose(mean, mine["auc"][value][0], rel_tol=1e-9)
                assert math.isclose(half, mine["auc"][value][1], rel_tol=1e-4)
                final = comparison["final"][value]
                assert math.isclose(final[0], mine["final"][value][0], rel_tol=1e-9)
            assert comparison["winner"] == _separates(mine["auc"]), comparison
            assert comparison["final_winner"] == _separates(mine["final"]), comparison
            shown = " vs ".join(f"{k} {m:.1f} ± {h:.1f}" for k, (m, h) in mine["auc"].items())
            verdict = (
                f"`{comparison['winner']}` better"
                if comparison["winner"]
                else f"no difference detected at {seeds} seeds"
            )
            assert f"  - {comparison['held']}: {shown} → {verdict}\n" in report
    named = {"clip": "best_clip_coef", "offpolicy": "best_offpolicy", "init": "best_init"}
    named["control"] = "stale_vs_fresh"
    for question, field in named.items():
        winners = {c["winner"] for c in conclusions["comparisons"][question]} - {None}
        agreed = None if not winners else winners.pop() if len(winners) == 1 else "mixed"
        if field == "best_clip_coef" and agreed not in (None, "mixed"):
            agreed = float(agreed)
        assert conclusions[field] == agreed, (field, winners)
    return dict(conclusions)


def test_the_42_run_grid_answers_every_question_from_its_own_intervals(
    story_project: Project,
) -> None:
    project = story_project("rl-training")
    reply = story_step("Analyze the finished sweep.", project, work_type="analysis")
    results = project / "results"
    conclusions = check_report_against_metrics(project)
    wanted = expected("rl-training")
    assert isinstance(wanted, dict)
    assert {k: conclusions[k] for k in wanted} == wanted
    assert parse_signals(reply).promises == ("COMPLETE",)
    for name in ("sweep.json", "run_table.md", "curves.svg", "report.md"):
        assert (results / name).stat().st_size > 0, name
    report = (results / "report.md").read_text()
    for question in (
        "**Which clip strategy works better?**",
        "**Which off-policiness setting works better?**",
        "**Control at equal updates: do stale samples matter?**",
        "**Which start works better (random init vs bc)?**",
    ):
        assert question in report
    assert "Over 42 finished runs of 42 (1 rerun after a failure); 3 seeds per setting." in report
    assert "(its log: `update 8: RuntimeError: NaN in the policy loss (simulated)`)" in report
    assert (results / "run_table.md").read_text().count("| finished |") == 42
    svg = (results / "curves.svg").read_text()
    assert svg.count("<polyline") == 14 and svg.count("<polygon") == 14  # 7 settings × 2 starts
    assert report.startswith("# RL sweep report: PPO clip and off-policiness on CartPole-v1")


def _rewrite(project: Path, chosen: Callable[[dict[str, Any]], bool], **changes: float) -> None:
    """Change the metrics.json of the runs `chosen(params)` picks, as a changed skill would;
    each seed's value is offset by its seed so the seeds still differ."""
    paths = WildPaths(project / ".wild")
    for run in load_results(paths):
        params = dict(run.params)
        if chosen(params):
            path = paths.run_dir(run.id) / "metrics.json"
            new = {k: v + params["seed"] for k, v in changes.items()}
            path.write_text(json.dumps({**json.loads(path.read_text()), **new}))


def test_a_winner_is_claimed_when_and_only_when_the_intervals_separate(
    story_project: Project,
) -> None:
    project = story_project("rl-training")
    _rewrite(project, lambda p: p["clip_coef"] == 0.2, return_auc=400.0)
    _rewrite(project, lambda p: p["init"] == "bc", final_return=1000.0)
    story_step("Analyze the finished sweep.", project, work_type="analysis")
    conclusions = check_report_against_metrics(project)
    assert conclusions["best_clip_coef"] == 0.2
    assert (
        "**Which clip strategy works better?** `0.2`, in all 4 matched comparisons."
        in (project / "results" / "report.md").read_text()
    )
    assert all(c["final_winner"] == "bc" for c in conclusions["comparisons"]["init"])


def test_the_exploring_stage_proposes_the_story_sweep(tmp_path: Path) -> None:
    project = fresh_project("rl-training", tmp_path)
    reply = story_step("No sweep is active. Propose one in a <sweep> tag.", project, "sweep")
    spec = json.loads(reply.split("<sweep>", 1)[1].split("</sweep>", 1)[0])
    assert spec == json.loads((EXAMPLES / "rl-training" / "sweep.json").read_text())
    assert "42 runs" in reply


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
    assert "Its log says: 'update 8: RuntimeError: NaN in the policy loss (simulated)'." in reply
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
