"""The real trackers inside a real wild sweep: Lightning's CSVLogger, transformers' Trainer
(a tiny BERT built from a config, nothing downloaded) and torch's SummaryWriter each write
their own files while wild's runs machinery runs them; wild reads every metric they wrote."""

from __future__ import annotations

import math
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from wild import prompts
from wild.cli import cli
from wild.commands.init import init_wild
from wild.metrics.comparison import sweep_metrics
from wild.metrics.follow import run_summary
from wild.parsers.metric_summary import RunSummary
from wild.parsers.runs import RunIndex
from wild.paths import WildPaths
from wild.serve.runs_view import runs_view
from wild.store.runs_log import read_runs
from wild_stories.direct import run_sweep

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
SCRIPTS = Path(__file__).parent / "scripts"


@dataclass(frozen=True)
class Trained:
    paths: WildPaths
    sweeps: dict[str, str]  # library → sweep id

    @property
    def index(self) -> RunIndex:
        return read_runs(self.paths.runs_log).index


def _sweep(name: str, script: str, lrs: list[float], objective: str) -> dict[str, object]:
    return {
        "name": name,
        "base_command": f"{sys.executable} {script}",
        "parameters": {"lr": lrs, "seed": [0, 1]},
        "objective": {"metric": objective, "mode": "min"},
    }


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trained]:
    root = tmp_path_factory.mktemp("trackers")
    for script in SCRIPTS.glob("*.py"):
        shutil.copy(script, root / script.name)
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HF_HUB_OFFLINE", "1")
        env.setenv("TRANSFORMERS_OFFLINE", "1")
        sweeps = {
            "lightning": run_sweep(
                root,
                _sweep("lightning", "train_lightning.py", [0.05], "val_loss"),
                out=lambda _: None,
            ),
            "hf": run_sweep(
                root, _sweep("hf", "train_hf.py", [0.01], "eval_loss"), out=lambda _: None
            ),
            # lr 5.0 makes the loss overflow to inf and then NaN: a diverged run.
            "tensorboard": run_sweep(
                root,
                _sweep("tensorboard", "train_tensorboard.py", [0.05, 5.0], "train/loss"),
                out=lambda _: None,
            ),
        }
    yield Trained(paths, sweeps)


def _summaries(trained: Trained, library: str) -> list[tuple[dict[str, object], RunSummary]]:
    index = trained.index
    sweep = index.sweeps[trained.sweeps[library]]
    out = []
    for run in index.of_sweep(sweep.id):
        assert run.status == "finished", (run.id, run.reason)
        out.append((dict(run.params), run_summary(trained.paths, run, sweep.spec)))
    return out


def test_lightning_csv_logger_metrics_are_read(trained: Trained) -> None:
    for _params, summary in _summaries(trained, "lightning"):
        assert {"train_loss", "val_loss"} <= set(summary.last)
        assert summary.best is not None and summary.best_step is not None


def test_hf_trainer_state_is_read_with_its_total_steps(trained: Trained) -> None:
    for _params, summary in _summaries(trained, "hf"):
        assert {"loss", "eval_loss", "train_loss"} <= set(summary.last)
        assert summary.total_steps == 8


def test_tensorboard_scalars_are_read_and_the_huge_lr_diverged(trained: Trained) -> None:
    found = _summaries(trained, "tensorboard")
    for params, summary in found:
        assert {"train/loss", "val/loss"} <= set(summary.last)
        assert summary.step == 19
        assert summary.diverged is (params["lr"] == 5.0)
    big = [s for p, s in found if p["lr"] == 5.0]
    assert all(not math.isfinite(s.last["train/loss"]) for s in big)


def _cli(trained: Trained, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--dir", str(trained.paths.root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_wild_runs_shows_each_trackers_objective(trained: Trained) -> None:
    listed = _cli(trained, "--runs")
    assert listed.count("  val_loss=") == 2 and listed.count("  eval_loss=") == 2
    assert listed.count("  train/loss=") == 4 and listed.count("DIVERGED") == 2
    assert "running" not in listed


def test_compare_groups_each_sweep_across_seeds(trained: Trained) -> None:
    table = _cli(trained, "--compare", trained.sweeps["tensorboard"])
    assert "| lr=0.05 * | 2 |" in table and "| lr=5.0 | 0 | - | - | - | 2 | 0 | 0 |" in table
    hf = orjson.loads(_cli(trained, "--compare", "hf", "--json"))
    assert hf["metric"] == "eval_loss" and hf["groups"][0]["n"] == 2


def test_the_analysis_prompt_names_the_files_the_trackers_wrote(trained: Trained) -> None:
    index = trained.index
    for library, name in (
        ("lightning", "logs/version_0/metrics.csv"),
        ("hf", "hf/trainer_state.json"),
        ("tensorboard", "tb/events.out.tfevents."),
    ):
        sweep = index.sweeps[trained.sweeps[library]]
        values = prompts.analysis_values(
            sweep,
            index.of_sweep(sweep.id),
            lambda r: str(trained.paths.run_dir(r)),
            "r.md",
            sweep_metrics(trained.paths, index, sweep),
        )
        assert str(values["metric_paths"]).count(f"`{name}") == len(sweep.run_ids)
        assert "metrics.jsonl" not in str(values["metric_paths"])
        assert "| 2 |" in str(values["comparison"])


def test_the_dashboard_draws_their_curves_and_marks_the_diverged_runs(trained: Trained) -> None:
    index = trained.index
    view, problems = runs_view(trained.paths, index, offset=0, limit=100)
    assert problems == []
    rows = {row["id"]: row for row in view["runs"]["rows"]}
    for library, key in (
        ("lightning", "val_loss"),
        ("hf", "eval_loss"),
        ("tensorboard", "val/loss"),
    ):
        for run_id in index.sweeps[trained.sweeps[library]].run_ids:
            assert len(rows[run_id]["curves"][key]) >= 2
    marked = [r for r in rows.values() if r["diverged"]]
    assert len(marked) == 2 and all(r["params"]["lr"] == 5.0 for r in marked)
