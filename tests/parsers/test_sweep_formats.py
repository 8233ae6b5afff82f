"""Sweeps in the formats people have: W&B sweep files (YAML or JSON), wild's spec in YAML,
Hydra multirun command lines, and the argument style each run's values take."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.hydra_multirun import from_hydra
from wild.parsers.sweep_formats import SweepFile, parse_sweep_file
from wild.parsers.sweeps import SweepSpec, validate_sweep
from wild.runs.resolve import resolve_instruction

PY = "/opt/py/bin/python"

WANDB = """\
program: train.py
name: lr-search
method: random
run_cap: 5
metric:
  name: val_loss
  goal: maximize
parameters:
  lr:
    distribution: log_uniform_values
    min: 1e-5
    max: 1e-1
  wd:
    distribution: log_uniform
    min: -9.2
    max: -2.3
  opt:
    values: [adam, sgd]
  layers:
    min: 1
    max: 4
  dropout:
    min: 0.0
    max: 0.5
  batch:
    distribution: q_uniform
    min: 16
    max: 128
    q: 16
  epochs:
    value: 3
  act:
    distribution: categorical
    values: [relu, gelu]
early_terminate:
  type: hyperband
  min_iter: 3
  eta: 2
project: mine
entity: me
"""


def parsed(text: str) -> SweepFile:
    found = parse_sweep_file(text, python=PY)
    assert isinstance(found, SweepFile), found
    return found


def problems(text: str) -> list[str]:
    found = parse_sweep_file(text, python=PY)
    assert isinstance(found, list), found
    return found


def test_a_wandb_yaml_becomes_wilds_spec() -> None:
    sweep = parsed(WANDB)
    spec = sweep.spec
    assert sweep.program == "train.py"
    assert (spec.name, spec.method, spec.count, spec.args_style) == (
        "lr-search",
        "random",
        5,
        "--key=value",
    )
    raw = dict(spec.raw)
    assert raw["base_command"] == f"/usr/bin/env {PY} train.py"
    assert raw["objective"] == {"metric": "val_loss", "mode": "max"}
    assert raw["early_stop"] == {
        "rule": "hyperband",
        "metric": "val_loss",
        "mode": "max",
        "min_steps": 3,
        "eta": 2,
    }
    params = raw["parameters"]
    assert params["lr"] == {"distribution": "log_uniform", "min": 1e-5, "max": 1e-1}
    # W&B's log_uniform bounds are natural logs: wild's are the values themselves.
    assert params["wd"]["min"] == pytest.approx(math.exp(-9.2))
    assert params["layers"] == {"distribution": "int_uniform", "min": 1, "max": 4}
    assert params["dropout"] == {"distribution": "uniform", "min": 0.0, "max": 0.5}
    assert params["batch"] == {"distribution": "q_uniform", "min": 16, "max": 128, "q": 16}
    assert (params["opt"], params["epochs"], params["act"]) == (
        ["adam", "sgd"],
        [3],
        ["relu", "gelu"],
    )
    points = [dict(p) for p in spec.grid().points]
    assert len(points) == 5 and all(p["batch"] % 16 == 0 and p["epochs"] == 3 for p in points)


def test_the_same_wandb_sweep_as_json_is_read_the_same() -> None:
    import yaml

    plain = WANDB.replace("1e-5", "0.00001").replace("1e-1", "0.1")  # YAML 1.1: 1e-5 is text
    as_json = orjson.dumps(yaml.safe_load(plain)).decode()
    assert dict(parsed(as_json).spec.raw) == dict(parsed(WANDB).spec.raw)


def test_a_hydra_style_wandb_command_passes_key_value_words() -> None:
    text = (
        "program: app.py\nmethod: grid\nparameters:\n  optimizer.lr:\n    values: [0.1, 0.01]\n"
        "command:\n  - ${env}\n  - python3\n  - ${program}\n  - +trainer=cpu\n"
        "  - ${args_no_hyphens}\n"
    )
    spec = parsed(text).spec
    assert [resolve_instruction(spec, p, python=PY) for p in spec.grid().points] == [
        "/usr/bin/env python3 app.py +trainer=cpu optimizer.lr=0.1",
        "/usr/bin/env python3 app.py +trainer=cpu optimizer.lr=0.01",
    ]


def test_bayes_is_refused_with_one_line_naming_what_to_use() -> None:
    assert problems(WANDB.replace("method: random", "method: bayes")) == [
        'line 3: W&B method "bayes" is not supported: wild has no Bayesian search; use '
        "method: random with run_cap (or grid), and let the agent's analysis pick the next sweep"
    ]


def test_every_problem_in_a_wandb_file_is_reported_at_once_with_its_line() -> None:
    text = (
        "program: train.py\nmethod: random\nparameters:\n  lr:\n    distribution: normal\n"
        "    mu: 0\n  b:\n    parameters:\n      c: {value: 1}\ncommand:\n  - python\n"
        "  - ${args_json}\n"
        "colour: blue\n"
    )
    assert problems(text) == [
        "line 13: unknown W&B sweep key 'colour'; known: program, method, parameters, metric, "
        "command, early_terminate, run_cap, name, description, project, entity",
        "line 10: W&B ${args_json} is not supported; use ${args}",
        "line 10: W&B command must end with ${args} or ${args_no_hyphens}: wild passes each "
        "run's parameters there",
        "line 4: W&B parameter 'lr': distribution 'normal' is not supported; use one of "
        "categorical, log_uniform, uniform, int_uniform, q_uniform, log_uniform_values",
        "line 7: W&B parameter 'b': nested parameters are not supported; flatten them",
        "line 2: a random W&B sweep needs run_cap: wild runs that many",
    ]


def test_wilds_own_spec_may_be_yaml_and_bad_yaml_names_its_line() -> None:
    spec = parsed("name: s\nbase_command: python t.py\nparameters:\n  lr: [0.1, 1e-3]\n").spec
    assert [dict(p) for p in spec.grid().points] == [{"lr": 0.1}, {"lr": 0.001}]
    assert problems("name: s\nparameters: [1\n") == [
        "the sweep is not valid YAML: expected ',' or ']', but got '<stream end>' at line 3, "
        "column 1; send one YAML or JSON object"
    ]


def test_wilds_own_json_spec_is_not_composed_as_yaml_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The keys' lines serve only a W&B file's problems: a 10,000-value grid's text
    composed as YAML nodes held ~6 MiB (and took ~0.5 s) of a sweep with no use for them."""
    import yaml

    composed: list[str] = []
    real = yaml.compose

    def compose(text: str, **options: Any) -> Any:
        composed.append(text)
        return real(text, **options)

    monkeypatch.setattr(yaml, "compose", compose)
    text = orjson.dumps(
        {"name": "big", "base_command": "python t.py", "parameters": {"i": list(range(10_000))}}
    ).decode()
    assert len(parsed(text).spec.grid().points) == 10_000
    assert composed == []
    assert isinstance(parse_sweep_file(WANDB, python=PY), SweepFile)
    assert len(composed) == 1  # a W&B file's keys still get their lines


@pytest.mark.parametrize(
    ("style", "words"),
    [
        ("--key=value", "--lr=0.1 '--name=a b'"),
        ("--key value", "--lr 0.1 --name 'a b'"),
        ("key=value", "lr=0.1 'name=a b'"),
    ],
)
def test_each_argument_style_reaches_the_command(style: str, words: str) -> None:
    spec = validate_sweep(
        {"name": "s", "base_command": "python t.py", "parameters": {"lr": [0.1]}, "args": style}
    )
    assert not isinstance(spec, list), spec
    assert resolve_instruction(spec, {"lr": 0.1, "name": "a b"}, python=PY) == (
        f"python t.py {words}"
    )


def test_an_unknown_argument_style_is_refused() -> None:
    assert validate_sweep(
        {"name": "s", "base_command": "x", "parameters": {"a": [1]}, "args": "-k v"}
    ) == ['"args" \'-k v\' is not an argument style: use "--key=value", "--key value", "key=value"']


def test_a_hydra_multirun_becomes_a_grid_with_key_value_words() -> None:
    found = from_hydra(
        [
            "python",
            "train.py",
            "-m",
            "lr=0.1,0.01",
            "seed=range(0,3)",
            "model=choice(small,'big one')",
            "trainer.epochs=3",
            "+extra=[1,2]",
            "--config-name=base",
        ]
    )
    assert found == {
        "name": "train",
        "base_command": "python train.py trainer.epochs=3 '+extra=[1,2]' --config-name=base",
        "parameters": {
            "lr": [0.1, 0.01],
            "seed": [0, 1, 2],
            "model": ["small", "big one"],
        },
        "args": "key=value",
    }
    spec = validate_sweep(found)
    assert not isinstance(spec, list), spec
    assert resolve_instruction(spec, spec.grid().points[-1], python=PY) == (
        "python train.py trainer.epochs=3 '+extra=[1,2]' --config-name=base lr=0.01 seed=2 "
        "'model=big one'"
    )
    assert len(spec.grid().points) == 12


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["range(1,7,2)"], [1, 3, 5]),
        (["range(3)"], [0, 1, 2]),
        (["range(2,0,-1)"], [2, 1]),
        (["a,b"], ["a", "b"]),
        (["[1,2],[3,4]"], ["[1,2]", "[3,4]"]),
    ],
)
def test_hydra_sweep_values(words: list[str], expected: list[Any]) -> None:
    found = from_hydra(["python", "app.py", "-m", f"x={words[0]}"])
    assert isinstance(found, dict), found
    assert found["parameters"] == {"x": expected}


def test_hydra_problems_are_all_reported() -> None:
    assert from_hydra(["python", "app.py", "lr=interval(0,1)", "+b=1,2", "c=range(5,5)"]) == [
        "a Hydra sweep is a multirun: add -m, e.g. wild --sweep -- python train.py -m "
        "lr=0.1,0.01 seed=0,1",
        "lr=interval(0,1): this Hydra sweep needs a sweeper plug-in; wild sweeps comma lists, "
        'range(…) and choice(…) (for distributions write a sweep file with "method": "random")',
        "+b=1,2: a swept override must name a key of the app's config, without + or ~ (they "
        "add or remove keys)",
        "c=range(5,5) is empty",
    ]
    assert from_hydra(["python", "app.py", "-m", "lr=0.1"]) == [
        "no override sweeps anything: give a key a comma list (lr=0.1,0.01) or range(start,stop)"
    ]


_JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats()
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(st.text(max_size=200))
def test_any_sweep_file_text_is_read_without_raising(text: str) -> None:
    assert parse_sweep_file(text, python=PY) is not None


@given(
    st.fixed_dictionaries(
        {"program": st.sampled_from(["train.py", ""]), "parameters": _JSONISH},
        optional={
            "method": st.sampled_from(["grid", "random", "bayes"]) | _JSONISH,
            "command": _JSONISH,
            "metric": _JSONISH,
            "early_terminate": _JSONISH,
            "run_cap": _JSONISH,
        },
    )
)
def test_any_wandb_shaped_sweep_is_translated_or_refused_without_raising(
    data: dict[str, Any],
) -> None:
    found = parse_sweep_file(orjson.dumps(data).decode(), python=PY)
    assert isinstance(found, list | SweepFile)


@given(st.lists(st.text(max_size=12), max_size=6))
def test_any_hydra_command_line_is_read_without_raising(words: list[str]) -> None:
    found = from_hydra(["python", "app.py", "-m", *words])
    if isinstance(found, dict):
        assert isinstance(validate_sweep(found), list | SweepSpec)


def test_a_yaml_nested_too_deeply_is_refused_not_a_crash() -> None:
    assert problems("a: " + "[" * 5000 + "]" * 5000) == [
        "the sweep is nested too deeply to read; send one YAML or JSON object"
    ]


def test_wandb_hyperband_becomes_a_rule_the_stopper_honours_or_is_refused_with_its_line() -> None:
    from wild.parsers.early_stop import EarlyStop, early_stop_of

    stop = early_stop_of(parsed(WANDB).spec.raw)
    assert stop == EarlyStop(metric="val_loss", mode="max", rule="hyperband", min_steps=3, eta=2)
    assert stop.bands(30) == [3, 6, 12, 24]  # min_iter 3 times eta 2 to the k, as W&B's
    text = WANDB.replace("  min_iter: 3\n", "  max_iter: 27\n")
    assert problems(text) == [
        "line 35: W&B early_terminate max_iter needs s: how many bands below it"
    ]
    assert problems(WANDB.replace("  min_iter: 3\n", "")) == [
        "line 35: W&B early_terminate needs min_iter (its first band) or max_iter and s"
    ]
