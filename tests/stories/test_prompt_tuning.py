"""The prompt-tuning story: soft prompts for a frozen transformer the story pre-trains once, a
36-run sweep scored by held-out exact match, and a report whose every interval, winner,
selection and failure count this test recomputes from the runs' own files."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from functools import cache
from pathlib import Path
from statistics import fmean, stdev
from types import ModuleType
from typing import Any

import pytest
from scipy import stats

from tests.stories.conftest import EXAMPLES, Project, expected, fresh_project
from wild.agents.signals import parse_signals
from wild.commands.demo import copy_story
from wild.paths import WildPaths
from wild_stories.agent import story_step
from wild_stories.results import load_results
from wild_stories.run import use_scale

ANALYZE = "Analyze the finished sweep."
SKILL = EXAMPLES / "prompt-tuning" / "skills" / "prompt_tune.py"
pytestmark = pytest.mark.slow  # the story's sweep: 36 torch runs, a few minutes on 2 cores


@cache
def skill() -> ModuleType:
    """The story's skill as a module (its dataclasses need it in sys.modules)."""
    spec = importlib.util.spec_from_file_location("prompt_tune", SKILL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["prompt_tune"] = module
    spec.loader.exec_module(module)
    return module


def conclusions(project: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((project / "results" / "conclusions.json").read_text())
    return result


def test_a_wrong_output_is_classified_by_what_it_did_instead() -> None:
    kind = skill().failure_kind
    assert kind([3, 1, 2], [1, 2, 3]) is None
    assert kind([3, 1, 2], [3, 1, 2]) == "did copy instead"
    assert kind([3, 1, 2], [2, 1, 3]) == "did reverse instead"
    assert kind([3, 1, 2], [4, 2, 3]) == "did shift instead"
    assert kind([3, 1, 2], [1, 3, 2]) == "right digits, wrong order"
    assert kind([3, 1, 2], [1, 2, 2]) == "sorted, but digits changed"
    assert kind([3, 1, 2], [2, 9, 1]) == "unsorted, digits changed"


# --- the report against what the test recomputes from the runs' files alone --------------


def _runs(project: Path) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each run's metrics.json and outputs.jsonl, read from its folder."""
    found = []
    for path in sorted((project / ".wild" / "runs").glob("*/metrics.json")):
        outputs = (path.parent / "outputs.jsonl").read_text().splitlines()
        found.append((json.loads(path.read_text()), [json.loads(o) for o in outputs]))
    return found


def _t(values: list[float]) -> tuple[float, float]:
    half = stats.t.ppf(0.975, len(values) - 1) * stdev(values) / len(values) ** 0.5
    return fmean(values), half


def _kind(x: list[int], out: list[int]) -> str | None:
    """The failure classes, written again here from story.md's words."""
    if out == sorted(x):
        return None
    if out == x:
        return "did copy instead"
    if out == x[::-1]:
        return "did reverse instead"
    if out == [(d + 1) % 10 for d in x]:
        return "did shift instead"
    if sorted(out) == sorted(x):
        return "right digits, wrong order"
    return "sorted, but digits changed" if out == sorted(out) else "unsorted, digits changed"


def check_report_against_runs(project: Path) -> dict[str, Any]:
    found = conclusions(project)
    report = (project / "results" / "report.md").read_text()
    runs = _runs(project)
    scores: dict[str, list[float]] = {}
    failures: dict[str, int] = {}
    for summary, outputs in runs:
        right = [o["output"] == sorted(o["input"]) for o in outputs]
        assert summary["exact_match"] == sum(right) / len(outputs)  # the score is the outputs'
        scores.setdefault(summary["run"].rsplit("/", 1)[0], []).append(
            100 * sum(right) / len(right)
        )
        for o in outputs:
            kind = _kind(o["input"], o["output"])
            if kind:
                failures[kind] = failures.get(kind, 0) + 1
    intervals = {k: _t(v) for k, v in scores.items()}
    assert found["seeds"] == min(len(v) for v in scores.values())
    for label, (mean, half) in intervals.items():
        assert math.isclose(found["settings"][label][0], mean, rel_tol=1e-9)
        assert math.isclose(found["settings"][label][1], half, rel_tol=1e-4)
        assert f"| {label} |" in report
    # The winner claim and the selection rule.
    best = max(intervals, key=lambda k: (intervals[k][0], k))
    low = intervals[best][0] - intervals[best][1]
    separated = all(low > m + h for k, (m, h) in intervals.items() if k != best)
    if separated:
        assert found["winner"] == found["selected"] == best
        assert "lies above every other setting's interval" in report
    else:
        assert found["winner"] is None
        tied = [k for k, (m, h) in intervals.items() if m + h >= low]
        assert sorted([found["selected"], *found["tied_with"]]) == sorted(tied)

        def rule(k: str) -> tuple[int, float, str]:
            return (int(k.split("/", maxsplit=1)[0][3:]), -intervals[k][0], k)

        assert found["selected"] == min(tied, key=rule)
        assert f"no difference detected at {found['seeds']} seeds between the best" in report
    # Each factor's matched comparisons.
    for factor, comparisons in found["comparisons"].items():
        for c in comparisons:
            mine = {}
            for value, (mean, _half) in c["exact_match"].items():
                fixed = dict(pair.split(" ") for pair in c["held"].split(", "))
                parts = {**fixed, factor: value}
                label = f"len{parts['prompt_len']}/{parts['init']}/lr{parts['lr']}"
                mine[value] = intervals[label]
                assert math.isclose(mean, mine[value][0], rel_tol=1e-9)
            top = max(mine, key=lambda k: mine[k][0])
            edge = mine[top][0] - mine[top][1]
            apart = all(edge > m + h for k, (m, h) in mine.items() if k != top)
            assert c["winner"] == (top if apart else None), c
    assert found["failure_modes"] == failures
    for kind, count in failures.items():
        assert f"  - {kind}: {count} (" in report
    return found


def test_the_sweep_answers_from_its_own_intervals_and_real_outputs(
    story_project: Project,
) -> None:
    project = story_project("prompt-tuning")
    reply = story_step(ANALYZE, project, "analysis")
    found = check_report_against_runs(project)
    wanted = expected("prompt-tuning")
    assert isinstance(wanted, dict)
    assert {k: found[k] for k in wanted} == wanted
    assert parse_signals(reply).promises == ("COMPLETE",)
    results = project / "results"
    for name in ("variant_table.md", "run_table.md", "curves.svg", "selected_prompt.md"):
        assert (results / name).stat().st_size > 0, name
    assert (results / "selected_prompt.pt").stat().st_size > 0
    assert (results / "curves.svg").read_text().count("<polyline") == 12
    # The frozen model was pre-trained once for the whole sweep, by one run.
    logs = [p.read_text() for p in (project / ".wild" / "runs").glob("*/log")]
    assert sum("pre-training the frozen model" in log for log in logs) == 1
    record = json.loads((project / "pretrained" / "frozen-cpu.json").read_text())
    assert record["exact_match_with_task_token"]["sort"] > 0.9  # it learned the task
    # Every failure example in the report is a real output of some run.
    report = (results / "report.md").read_text()
    outputs = {
        ("".join(map(str, o["input"])), "".join(map(str, o["output"])))
        for _summary, rows in _runs(project)
        for o in rows
    }
    shown = [
        line.split("(e.g. input ")[1].split(",")[0].split(" → ")
        for line in report.splitlines()
        if "(e.g. input " in line
    ]
    assert shown and all(tuple(pair) in outputs for pair in shown)


def _set(project: Path, chosen: str, **changes: float) -> None:
    """Change the metrics.json of the runs of setting `chosen` (every run: "*"), as a changed
    skill would; each seed's value is offset by a little so the seeds still differ."""
    paths = WildPaths(project / ".wild")
    for run in load_results(paths):
        path = paths.run_dir(run.id) / "metrics.json"
        summary = json.loads(path.read_text())
        if chosen in ("*", summary["run"].rsplit("/", 1)[0]):
            new = {k: v + 0.001 * summary["seed"] for k, v in changes.items()}
            path.write_text(json.dumps({**summary, **new}))


def test_a_winner_is_claimed_only_when_its_interval_is_above_every_other(
    story_project: Project,
) -> None:
    project = story_project("prompt-tuning")
    _set(project, "*", exact_match=0.5)
    _set(project, "len16/vocab/lr0.03", exact_match=0.99)
    story_step(ANALYZE, project, "analysis")
    found = conclusions(project)
    assert found["winner"] == found["selected"] == "len16/vocab/lr0.03"
    assert found["best_prompt_len"] == "16" and found["best_init"] == "vocab"
    # All equal: nothing separates, so the shortest prompt is taken by rule, not as a winner.
    _set(project, "len16/vocab/lr0.03", exact_match=0.5)
    story_step(ANALYZE, project, "analysis")
    found = conclusions(project)
    assert found["winner"] is None and found["selected"].startswith("len1/")
    assert len(found["tied_with"]) == 11
    assert found["best_lr"] is None


def test_the_human_is_asked_when_no_prompt_recovers_the_task(story_project: Project) -> None:
    project = story_project("prompt-tuning")
    _set(project, "*", exact_match=0.2)
    signals = parse_signals(story_step(ANALYZE, project, "analysis"))
    assert signals.promises == ("NEEDS_HUMAN",)
    assert signals.reason is not None and "with the task token" in signals.reason
    (project / ".wild").mkdir(exist_ok=True)
    from wild.commands.edits import add_human_input
    from wild.commands.init import init_wild

    paths = WildPaths(project / ".wild")
    init_wild(paths)
    from datetime import UTC, datetime

    add_human_input(paths, "Accept it;\nthe model is tiny.", urgent=False, now=datetime.now(UTC))
    assert parse_signals(story_step(ANALYZE, project, "analysis")).promises == ("COMPLETE",)
    assert (
        '- The human said: "Accept it; the model is tiny.".'
        in (project / "results" / "report.md").read_text()
    )


def test_the_gpu_scale_is_the_story_s_gpu_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # as on a machine with one GPU
    copy_story(EXAMPLES / "prompt-tuning", tmp_path)
    use_scale(EXAMPLES / "prompt-tuning", tmp_path, "gpu")
    spec = json.loads((tmp_path / "sweep.json").read_text())
    assert spec["skill"]["args"]["scale"] == "gpu"
    assert 0 < spec["resources"]["gpus"] < 1  # a share of the GPU per run
    cpu = fresh_project("prompt-tuning", tmp_path / "cpu")
    cpu_spec = json.loads((cpu / "sweep.json").read_text())
    assert cpu_spec["skill"]["args"]["scale"] == "cpu" and cpu_spec["resources"]["gpus"] == 0
    assert spec["parameters"] == cpu_spec["parameters"]
    gpu = skill().SCALES["gpu"]
    small = skill().SCALES["cpu"]
    assert gpu.d_model > small.d_model and gpu.pretrain_steps > small.pretrain_steps


def test_the_exploring_stage_proposes_the_story_sweep(tmp_path: Path) -> None:
    project = fresh_project("prompt-tuning", tmp_path)
    reply = story_step("No sweep is active. Propose one in a <sweep> tag.", project, "sweep")
    spec = json.loads(reply.split("<sweep>", 1)[1].split("</sweep>", 1)[0])
    assert spec == json.loads((project / "sweep.json").read_text())  # the story's, at test size
    assert "36 runs" in reply
