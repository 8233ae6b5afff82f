"""The direct runner's pure parts: the grid in key order and each run's exact command."""

from __future__ import annotations

import json

from tests.stories.conftest import EXAMPLES
from wild.stories.direct import flags, grid, instruction


def test_the_rl_grid_is_the_12_runs_of_seed_002() -> None:
    spec = json.loads((EXAMPLES / "rl-training" / "sweep.json").read_text())
    points = grid(spec["parameters"])
    assert len(points) == 12
    assert points[0] == {
        "model": "qwen2.5-7b-base",
        "clip_coef": 0.2,
        "offpolicy": {"batch_size": 64, "mini_batch_size": 64},
    }
    # Key order: the last parameter varies fastest.
    assert [p["offpolicy"]["mini_batch_size"] for p in points[:3]] == [64, 32, 16]
    assert points[-1]["model"] == "qwen2.5-7b-math-base"


def test_an_object_value_becomes_flags_that_vary_together() -> None:
    point = {"clip_coef": 0.28, "offpolicy": {"batch_size": 64, "mini_batch_size": 16}}
    assert flags(point) == ["--clip_coef=0.28", "--batch_size=64", "--mini_batch_size=16"]
    assert flags({"model": "a b", "on": True}) == ["--model=a b", "--on=true"]


def test_the_command_names_the_skill_and_quotes_what_the_shell_would_split() -> None:
    spec = {"skill": {"kind": "python_script", "target": "skills/t.py", "args": {"steps": 3}}}
    assert instruction(spec, {"model": "a b"}, python="/py") == (
        "/py skills/t.py --steps=3 '--model=a b'"
    )
    assert instruction({"base_command": "make run"}, {"n": 1}) == "make run --n=1"
