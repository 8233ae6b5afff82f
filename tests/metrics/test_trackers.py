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

import pytest

from wild.commands.init import init_wild
from wild.metrics.follow import run_summary
from wild.parsers.metric_summary import RunSummary
from wild.parsers.runs import RunIndex
from wild.paths import WildPaths
from wild.store.runs_log import read_runs
from wild.stories.direct import run_sweep

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
