"""Early stopping end to end: a sweep of scripted learning curves whose right answer is known,
run by `wild --sweep FILE --run` in a real `python -m wild` process with the real local
backend. The median rule stops exactly the clearly bad runs, divergence stops the runs that
go NaN, the good runs finish; `wild --runs` and `wild --compare` say why."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from wild.barriers.approvals import approve
from wild.commands.init import init_wild
from wild.parsers.sweep_formats import SweepFile, parse_sweep_file
from wild.parsers.sweeps import SweepSpec, parse_sweep
from wild.paths import WildPaths
from wild.runs.resolve import program
from wild.store.runs_log import read_runs

pytestmark = pytest.mark.timeout(180)

BOUND_S = 150.0
# good: 1/(step+1) for 30 steps, then it ends. bad: 5.0 at every step; nan: good until step
# 8, then NaN. A bad or NaN run "keeps training" (up to 3,000 steps, a bound and no
# timing) until wild stops it: one that is not stopped ends `finished`, and the test fails.
CURVE = """
import json, os, sys, time
args = dict(a[2:].split("=", 1) for a in sys.argv[1:])
kind = args["curve"]
path = os.path.join(os.environ["WILD_RUN_DIR"], "metrics.jsonl")
with open(path, "a") as out:
    for step in range(30 if kind == "good" else 3000):
        loss = 5.0 if kind == "bad" else 1.0 / (step + 1)
        if kind == "nan" and step >= 8:
            loss = float("nan")
        out.write(json.dumps({"step": step, "loss": loss}) + "\\n")
        out.flush()
        time.sleep(0.02)
"""
SWEEP = {
    "name": "curves",
    "base_command": "python curve.py",
    "parameters": {"curve": ["good", "bad", "nan"], "seed": [0, 1]},
    "objective": {"metric": "loss", "mode": "min"},
    "early_stop": {"rule": "median", "min_steps": 5, "grace_runs": 2},
    "resources": {"cpus": 1, "time": "00:03:00"},
}


def make_project(tmp_path: Path, sweep: Mapping[str, object]) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "curve.py").write_text(CURVE)
    text = json.dumps(sweep)
    (root / "sweep.json").write_text(text)
    init_wild(WildPaths(root / ".wild"))
    spec = parse_sweep(text)
    assert isinstance(spec, SweepSpec), spec
    approve(root, program(spec, python=sys.executable))  # as `wild --approve` would
    return root


def wild(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wild", *args],
        cwd=root, env=dict(os.environ), stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=BOUND_S, check=False,
    )  # fmt: skip


def test_the_median_rule_stops_exactly_the_bad_runs_and_divergence_the_nan_ones(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, SWEEP)
    ran = wild(root, "--sweep", "sweep.json", "--run", "--run-slots", "6")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    runs = read_runs(root / ".wild" / "runs.jsonl").index.runs.values()
    ended = {(run.params["curve"], run.params["seed"]): run for run in runs}
    assert {key: run.status for key, run in ended.items()} == {
        ("good", 0): "finished",
        ("good", 1): "finished",
        ("bad", 0): "stopped",
        ("bad", 1): "stopped",
        ("nan", 0): "stopped",
        ("nan", 1): "stopped",
    }
    for seed in (0, 1):
        assert ended["nan", seed].reason == "diverged: loss nan at step 8"
        reason = ended["bad", seed].reason or ""
        assert reason.startswith("early stop: median rule at step "), reason
        assert "best loss 5 > median " in reason, reason
    bad = ended["bad", 0]
    # `wild --runs` says why; `wild --compare` counts them apart and names them.
    listing = wild(root, "--runs")
    assert listing.returncode == 0, listing.stderr
    assert "Stopped early (never rerun unless you ask: `wild --rerun ID`):" in listing.stdout
    assert f"- {bad.id}: {bad.reason}" in listing.stdout, listing.stdout
    compared = wild(root, "--compare", "curves")
    assert compared.returncode == 0, compared.stderr
    assert f"- {bad.id}: {bad.reason}" in compared.stdout, compared.stdout
    assert f"- {ended['nan', 1].id}: diverged: loss nan at step 8" in compared.stdout
    as_json = json.loads(wild(root, "--compare", "curves", "--json").stdout)
    assert {e["run"]: e["reason"] for e in as_json["stopped_early"]} == {
        ended[kind, seed].id: ended[kind, seed].reason for kind in ("bad", "nan") for seed in (0, 1)
    }
    # No alert offers to rerun them.
    alerts = (root / ".wild" / "alerts.jsonl").read_text()
    assert not any(run.id in alerts for run in ended.values()), alerts


WANDB = """\
program: curve.py
method: grid
metric:
  name: loss
  goal: minimize
parameters:
  curve:
    values: [good, bad]
  seed:
    values: [0, 1]
early_terminate:
  type: hyperband
  max_iter: 27
  eta: 3
  s: 2
"""


def test_a_wandb_hyperband_early_terminate_stops_the_bad_runs_of_a_wandb_sweep(
    tmp_path: Path,
) -> None:
    """W&B's bands for max_iter 27, eta 3, s 2 are steps 3 and 9: at each, a run worse than
    the best third of the runs that reached it is stopped. The good runs tie, so only the
    bad ones can be, and they are, whichever band judged them."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "curve.py").write_text(CURVE)
    (root / "sweep.yaml").write_text(WANDB)
    init_wild(WildPaths(root / ".wild"))
    found = parse_sweep_file(WANDB, python=sys.executable)
    assert isinstance(found, SweepFile), found
    approve(root, program(found.spec, python=sys.executable))
    ran = wild(root, "--sweep", "sweep.yaml", "--run", "--run-slots", "4")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    runs = read_runs(root / ".wild" / "runs.jsonl").index.runs.values()
    ended = {(run.params["curve"], run.params["seed"]): run for run in runs}
    assert {key: run.status for key, run in ended.items()} == {
        ("good", 0): "finished",
        ("good", 1): "finished",
        ("bad", 0): "stopped",
        ("bad", 1): "stopped",
    }
    cut = re.compile(
        r"early stop: hyperband at step (3: loss 5 > 0\.25|9: loss 5 > 0\.1), the cut for "
        r"the best 1/3 of [234] runs"
    )
    for seed in (0, 1):
        assert cut.fullmatch(ended["bad", seed].reason or ""), ended["bad", seed].reason
