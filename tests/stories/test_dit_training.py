"""The dit-training story: its skill is a diffusion transformer that learns scikit-learn's
digits, its sample grids are real PNGs, and every answer of its report (the best setting,
the continue/stop recommendation) follows from intervals this test recomputes from the runs'
own metrics files."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from statistics import fmean, stdev
from types import ModuleType
from typing import Any

import pytest
from PIL import Image
from scipy import stats

from tests.stories.conftest import EXAMPLES, TEST_STEPS, Project, expected, fresh_project
from wild.agents.signals import parse_signals
from wild.commands.demo import copy_story
from wild.parsers.alerts import parse_entry
from wild.paths import WildPaths
from wild_stories.agent import story_step
from wild_stories.run import GPU_SWEEP, gpu_sweep, use_scale

STORY = EXAMPLES / "dit-training"
SKILL = STORY / "skills" / "train_dit.py"
ANALYZE = "Analyze the finished sweep."


def skill() -> ModuleType:
    """The story's skill script as a module (its dataclasses need it in sys.modules)."""
    if "train_dit" not in sys.modules:
        spec = importlib.util.spec_from_file_location("train_dit", SKILL)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["train_dit"] = module
        spec.loader.exec_module(module)
    return sys.modules["train_dit"]


def train(run_dir: Path, *flags: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(SKILL), *flags],
        env={**os.environ, "WILD_RUN_DIR": str(run_dir), **(env or {})},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads((run_dir / "metrics.json").read_text())
    return summary


def lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_the_model_is_a_dit_with_adaln_zero_blocks() -> None:
    import torch

    dit = skill()
    torch.manual_seed(0)
    model = dit.DiT(width=32, depth=2, heads=4)
    x = torch.randn(5, 64)
    assert torch.equal(dit.unpatchify(dit.patchify(x)), x)
    assert dit.patchify(x).shape == (5, 16, 4)  # 2x2 patches of the 8x8 image: 16 tokens
    # adaLN-Zero: every block starts as the identity, and the model's first output is zero.
    h, c = torch.randn(5, 16, 32), torch.randn(5, 32)
    assert all(torch.equal(block(h, c), h) for block in model.blocks)
    t, y = torch.rand(5), torch.randint(0, 10, (5,))
    assert torch.count_nonzero(model(x, t, y)) == 0
    # After one step of training, the timestep and the class both change the prediction.
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        loss = dit.flow_loss(model, x, y, t, torch.randn(5, 64))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        out = model(x, t, y)
        assert not torch.allclose(out, model(x, 1 - t, y))
        assert not torch.allclose(out, model(x, t, (y + 1) % 10))


def test_the_skill_learns_the_digits_and_writes_a_grid_per_checkpoint(tmp_path: Path) -> None:
    summary = train(tmp_path, "--lr=0.003", "--steps=200", "--seed=0")
    curve = lines(tmp_path)
    assert [c["step"] for c in curve] == [0, 50, 100, 150, 200]
    keys = {"train_loss", "eval_loss", "sample_score", "sample_confidence", "sample_classes"}
    assert keys | {"sample_label_match", "sample"} <= set(curve[-1])
    assert curve[-1]["eval_loss"] < 0.5 * curve[0]["eval_loss"]
    # The untrained model's samples are noise: the judge reads them as the wanted digit
    # about one time in ten; after 200 steps, most of the time.
    assert curve[0]["sample_label_match"] < 0.3
    assert curve[-1]["sample_label_match"] > 0.6
    assert curve[-1]["sample_score"] > curve[0]["sample_score"]
    assert summary["judge_accuracy"] > 0.9 and summary["diverged"] is False
    assert summary["sample_score"] == curve[-1]["sample_score"]
    grids = []
    for c in curve:
        with Image.open(tmp_path / c["sample"]) as image:
            image.verify()  # a real PNG, every chunk's CRC checked
        with Image.open(tmp_path / c["sample"]) as image:
            assert image.format == "PNG" and image.size == (342, 342)  # 10 x 10 digits
            grids.append(image.tobytes())
    assert len(set(grids)) == len(grids)  # the samples changed at every checkpoint
    with Image.open(tmp_path / "samples" / "progress.png") as progress:
        assert progress.format == "PNG"
        assert progress.size == (12 + 5 * (342 + 12), 342 + 34)  # five grids side by side


def test_a_run_whose_loss_blows_up_stops_and_raises_a_critical_alert(tmp_path: Path) -> None:
    root = tmp_path / ".wild"
    subprocess.run([sys.executable, "-m", "wild", "--init", "--dir", str(root)], check=True)
    env = {"WILD_DIR": str(root), "WILD_RUN_ID": "r-blowup"}
    summary = train(tmp_path / "run", "--lr=10", "--steps=40", env=env)
    assert summary["diverged"] is True and summary["sample_score"] is None
    blown = lines(tmp_path / "run")[-1]
    assert blown["diverged"] is True
    assert not blown["train_loss"] <= 1e3  # NaN, inf or huge
    alerts = [
        parse_entry(line, n)[0]
        for n, line in enumerate((root / "alerts.jsonl").read_bytes().splitlines(), start=1)
    ]
    assert [(a.source, a.severity, a.choices) for a in alerts if a] == [
        ("r-blowup", "critical", ("stop_run", "ignore"))
    ]


def t_interval(values: list[float]) -> tuple[float, float]:
    """Mean and 95 % half-width, from scipy (not wild's table)."""
    n = len(values)
    return fmean(values), float(stats.t.ppf(0.975, n - 1)) * stdev(values) / math.sqrt(n)


def from_files(project: Path) -> dict[str, dict[str, list[float]]]:
    """Per lr: each seed's last score, last eval loss and last score gain, read straight from
    the runs' metrics.jsonl (the sweep spec names which run is which)."""
    out: dict[str, dict[str, list[float]]] = {}
    runs = [
        json.loads(line) for line in (project / ".wild" / "runs.jsonl").read_text().splitlines()
    ]
    for run in {r["id"]: r for r in runs if r["kind"] == "run"}.values():
        metrics = project / ".wild" / "runs" / run["id"] / "metrics.jsonl"
        points = [json.loads(line) for line in metrics.read_text().splitlines()]
        points = [p for p in points if "sample_score" in p]
        group = out.setdefault(f"lr={run['params']['lr']}", {"score": [], "loss": [], "gain": []})
        group["score"].append(points[-1]["sample_score"])
        group["loss"].append(points[-1]["eval_loss"])
        group["gain"].append(points[-1]["sample_score"] - points[-2]["sample_score"])
    return out


def separated_best(groups: dict[str, tuple[float, float]], sign: float = 1.0) -> str | None:
    best = max(groups, key=lambda k: sign * groups[k][0])
    m, h = groups[best]
    others = [groups[k] for k in groups if k != best]
    if sign > 0:
        return best if all(m - h > om + oh for om, oh in others) else None
    return best if all(m + h < om - oh for om, oh in others) else None


def test_every_answer_of_the_report_follows_from_the_runs_metrics(
    story_project: Project,
) -> None:
    project = story_project("dit-training")
    signals = parse_signals(story_step(ANALYZE, project, "analysis"))
    assert signals.promises == ("NOTIFY_HUMAN", "COMPLETE")  # the packet blocks nothing
    results = project / "results"
    found = json.loads((results / "conclusions.json").read_text())
    wanted = expected("dit-training")
    assert isinstance(wanted, dict)
    assert {k: found[k] for k in wanted} == wanted
    data = from_files(project)
    assert sorted(data) == ["lr=0.0003", "lr=0.001", "lr=0.003"]
    score = {k: t_interval(v["score"]) for k, v in data.items()}
    loss = {k: t_interval(v["loss"]) for k, v in data.items()}
    for k, v in data.items():
        got = found["settings"][k]
        assert got["sample_score"] == pytest.approx(list(score[k]), rel=1e-3)
        assert got["eval_loss"] == pytest.approx(list(loss[k]), rel=1e-3)
        assert got["last_gain"] == pytest.approx(list(t_interval(v["gain"])), rel=1e-3, abs=1e-9)
    best = separated_best(score)
    assert found["best_setting"] == best
    assert found["lowest_loss_setting"] == separated_best(loss, sign=-1.0)
    followed = best or max(score, key=lambda k: score[k][0])
    assert found["followed_setting"] == followed
    gain_mean, gain_half = t_interval(data[followed]["gain"])
    verdict = "continue" if gain_mean - gain_half > 0 else "stop"
    assert found["recommendation"] == verdict
    report = (results / "report.md").read_text()
    assert f"**Recommendation: {verdict}.**" in report
    ahead = [k for k, (m, h) in score.items() if not any(o - w > m + h for o, w in score.values())]
    assert found["leading_settings"] == ahead
    first = report.split("\n- ")[1]
    if best:
        assert first.startswith(f"**Which setting gives the best samples?** `{best}`: ")
    elif len(ahead) == len(score):
        assert "no difference detected at 3 seeds" in first
    else:
        names = ", ".join(f"`{k}`" for k in ahead)
        assert f"no single best: {names} lead, not separated from each other at 3" in first
    for k, (m, h) in score.items():
        assert f"{k} {m:.2f} ± {h:.2f}" in first
    assert f"rose {gain_mean:.2f} ± {gain_half:.2f}" in report


def test_the_packet_shows_every_run_from_step_0_to_its_last_checkpoint(
    story_project: Project,
) -> None:
    project = story_project("dit-training")
    story_step(ANALYZE, project, "analysis")
    results = project / "results"
    packet = (results / "human-check.md").read_text()
    pictures = sorted((results / "human-check").iterdir())
    assert len(pictures) == 9
    for picture in pictures:
        assert f"](human-check/{picture.name})" in packet
        with Image.open(picture) as image:
            image.verify()
        with Image.open(picture) as image:  # step 0 and 4 checkpoints, side by side
            assert image.format == "PNG" and image.size == (12 + 5 * (342 + 12), 342 + 34)
    assert re.search(r"\| 0, 50, 100, 150, 200 \| \d\.\d\d → ", packet)
    assert (results / "curves.svg").read_text().count("<polyline") == 2 * 3


def test_the_recommendation_follows_the_numbers(story_project: Project) -> None:
    """The same runs with one setting's last two checkpoints rewritten in every seed, well
    above every other setting: a flat last stage says stop, a rise says continue."""
    project = story_project("dit-training")
    paths = WildPaths(project / ".wild")
    runs = [json.loads(line) for line in paths.runs_log.read_text().splitlines()]
    ids = {r["id"] for r in runs if r["kind"] == "run" and r["params"]["lr"] == 0.0003}
    for before, last, verdict in ((9.5, 9.5, "stop"), (9.0, 9.5, "continue")):
        for run_id in ids:
            metrics = paths.run_dir(run_id) / "metrics.jsonl"
            points = [json.loads(line) for line in metrics.read_text().splitlines()]
            points[-2]["sample_score"], points[-1]["sample_score"] = before, last
            metrics.write_text("".join(json.dumps(p) + "\n" for p in points))
        story_step(ANALYZE, project, "analysis")
        found = json.loads((project / "results" / "conclusions.json").read_text())
        assert (found["best_setting"], found["recommendation"]) == ("lr=0.0003", verdict)
        assert f"**Recommendation: {verdict}.**" in (project / "results" / "report.md").read_text()


def test_the_gpu_scale_runs_the_larger_sweep(tmp_path: Path) -> None:
    for scale in ("gpu", "cpu"):
        (tmp_path / scale).mkdir()
    copy_story(STORY, tmp_path / "gpu")
    use_scale(STORY, tmp_path / "gpu", "gpu")
    spec = json.loads((tmp_path / "gpu" / "sweep.json").read_text())
    assert spec["skill"]["args"] == {"scale": "gpu"}
    copy_story(STORY, tmp_path / "cpu")
    use_scale(STORY, tmp_path / "cpu", "cpu")
    assert json.loads((tmp_path / "cpu" / "sweep.json").read_text())["skill"]["args"] == {
        "scale": "cpu"
    }
    full = json.loads((STORY / GPU_SWEEP).read_text())
    assert gpu_sweep(full, ("0",)) == full  # two runs share the GPU
    assert full["resources"]["gpus"] == 0.5
    # With no GPU the runs ask for none, or they would wait for one forever.
    assert gpu_sweep(full, ())["resources"]["gpus"] == 0
    dit = skill()
    assert dit.SCALES["gpu"].width > dit.SCALES["cpu"].width
    assert dit.SCALES["gpu"].steps > dit.SCALES["cpu"].steps
    assert TEST_STEPS["dit-training"] < dit.SCALES["cpu"].steps


def test_the_story_kit_and_its_dit_analysis_import_no_torch() -> None:
    """wild itself (the analysis, the scripted agent, `wild demo`) never imports torch."""
    code = (
        "import sys, wild_stories.agent, wild_stories.dit_training, wild_stories.run; "
        "print('torch' in sys.modules, 'sklearn' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES)}  # the story kit, as run.sh finds it
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    assert done.stdout == "False False\n"


def test_a_fresh_project_is_the_test_size_sweep(tmp_path: Path) -> None:
    spec = json.loads((fresh_project("dit-training", tmp_path) / "sweep.json").read_text())
    assert spec["skill"]["args"] == {"scale": "cpu", "steps": TEST_STEPS["dit-training"]}
