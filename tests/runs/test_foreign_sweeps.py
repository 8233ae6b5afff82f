"""A W&B sweep file and a Hydra multirun command line, each run as a sweep of a real Python
script through wild's real run machinery (record, local backend, supervisor, wrapper): each
run gets its arguments in the style its program reads."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir, invoke
from wild.commands.sweep_input import read_sweep
from wild.parsers.hydra_multirun import from_hydra
from wild.paths import WildPaths
from wild.store.runs_log import read_runs
from wild_stories.direct import run_sweep

pytestmark = pytest.mark.timeout(120)

# argparse, as a W&B program reads its `${args}`: --lr=0.1 --opt=adam.
ARGPARSE_APP = """\
import argparse, json, os, pathlib
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, required=True)
parser.add_argument("--opt", required=True)
args = parser.parse_args()
out = pathlib.Path(os.environ["WILD_DIR"]).parent / "out"
out.mkdir(exist_ok=True)
(out / (os.environ["WILD_RUN_ID"] + ".json")).write_text(json.dumps(vars(args)))
"""

# A real Hydra app (hydra-core, in the test extra): its config in conf/config.yaml, its
# overrides `key=value` words; Hydra refuses wild's default `--key=value` arguments.
HYDRA_APP = """\
import json, os, pathlib
import hydra
from omegaconf import OmegaConf

@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg):
    out = pathlib.Path(os.environ["WILD_DIR"]).parent / "out"
    out.mkdir(exist_ok=True)
    config = OmegaConf.to_container(cfg)
    (out / (os.environ["WILD_RUN_ID"] + ".json")).write_text(json.dumps(config))

main()
"""
HYDRA_CONFIG = "optimizer:\n  lr: 1.0\nseed: 0\ntrainer:\n  epochs: 1\n"


WANDB = """\
program: train.py
method: grid
metric:
  name: val_loss
  goal: minimize
parameters:
  lr:
    values: [0.1, 0.01]
  opt:
    values: [adam, sgd]
"""


def _results(project: Path, sweep_id: str) -> dict[str, object]:
    index = read_runs(WildPaths(project / ".wild").runs_log).index
    runs = list(index.of_sweep(sweep_id))
    assert [run.status for run in runs] == ["finished"] * len(runs), runs
    return {run.id: json.loads((project / "out" / f"{run.id}.json").read_text()) for run in runs}


def test_a_wandb_yaml_runs_as_a_sweep_of_a_real_script(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(ARGPARSE_APP)
    (tmp_path / "sweep.yaml").write_text(WANDB)
    paths = WildPaths(tmp_path / ".wild")
    spec = read_sweep(paths, str(tmp_path / "sweep.yaml"), io.StringIO())
    assert spec.raw["objective"] == {"metric": "val_loss", "mode": "min"}
    sweep_id = run_sweep(tmp_path, dict(spec.raw), out=lambda _: None)
    results = _results(tmp_path, sweep_id)
    assert list(results.values()) == [
        {"lr": 0.1, "opt": "adam"},
        {"lr": 0.1, "opt": "sgd"},
        {"lr": 0.01, "opt": "adam"},
        {"lr": 0.01, "opt": "sgd"},
    ]
    run = next(iter(read_runs(paths.runs_log).index.of_sweep(sweep_id)))
    assert run.resolved_instruction == (
        f"/usr/bin/env {shlex.quote(sys.executable)} train.py --lr=0.1 --opt=adam"
    )


def test_a_hydra_command_line_runs_as_a_sweep_of_a_real_hydra_app(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(HYDRA_APP)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "config.yaml").write_text(HYDRA_CONFIG)
    spec = from_hydra(
        [
            sys.executable,
            "app.py",
            "-m",
            "optimizer.lr=0.1,0.01",
            "seed=range(0,2)",
            "trainer.epochs=3",
        ]
    )
    assert isinstance(spec, dict), spec
    sweep_id = run_sweep(tmp_path, spec, out=lambda _: None)
    assert list(_results(tmp_path, sweep_id).values()) == [
        {"optimizer": {"lr": lr}, "seed": seed, "trainer": {"epochs": 3}}
        for lr in (0.1, 0.01)
        for seed in (0, 1)
    ]


def test_wild_sweep_dash_dash_records_a_hydra_multirun(tmp_path: Path) -> None:
    wild_dir = init_wild_dir(tmp_path)
    result = invoke(
        "--dir",
        str(wild_dir),
        "--sweep",
        "--",
        "python",
        "app.py",
        "-m",
        "lr=0.1,0.01",
        "db.user=me",
    )
    assert result.exit_code == 0, result.output
    runs = list(read_runs(WildPaths(wild_dir).runs_log).index.runs.values())
    assert [run.resolved_instruction for run in runs] == [
        "python app.py db.user=me lr=0.1",
        "python app.py db.user=me lr=0.01",
    ]


def test_a_wandb_file_with_bayes_is_refused_with_one_clear_line(tmp_path: Path) -> None:
    wild_dir = init_wild_dir(tmp_path)
    (tmp_path / "train.py").write_text(ARGPARSE_APP)
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(WANDB.replace("method: grid", "method: bayes"))
    result = invoke("--dir", str(wild_dir), "--sweep", str(sweep))
    assert result.exit_code == 2
    assert result.output == (
        f"Error: the sweep in {sweep} launched nothing; fix these and run again:\n"
        '  - line 2: W&B method "bayes" is not supported: wild has no Bayesian search; use '
        "method: random with run_cap (or grid), and let the agent's analysis pick the next "
        "sweep\n"
    )
    assert (
        not WildPaths(wild_dir).runs_log.exists()
        or not read_runs(WildPaths(wild_dir).runs_log).index.runs
    )


def test_a_wandb_file_whose_program_is_missing_is_refused(tmp_path: Path) -> None:
    wild_dir = init_wild_dir(tmp_path)
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(WANDB)
    result = invoke("--dir", str(wild_dir), "--sweep", str(sweep))
    assert result.exit_code == 2
    assert result.output == (
        f"Error: the sweep in {sweep} launched nothing; fix these and run again:\n"
        f"  - W&B program 'train.py': no file {tmp_path}/train.py; name a file of the "
        "project\n"
    )
