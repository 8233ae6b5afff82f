"""The `<sweep>` spec: validation errors, grid expansion (property tests), run time formats."""

from __future__ import annotations

import json
import math
import tracemalloc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.sweep_grid import MAX_RUNS, Axis
from wild.parsers.sweeps import SweepSpec, parse_run_time, parse_sweep, validate_sweep

SPEC_EXAMPLE = """{"name": "clip-vs-offpolicy",
 "base_command": "python train.py",
 "parameters": {"clip_coef": [0.2, 0.28],
                "offpolicy": [{"batch_size": 64, "mini_batch_size": 64},
                              {"batch_size": 64, "mini_batch_size": 16}]},
 "max_runs": 12, "workdir": ".", "backend": "local",
 "resources": {"cpus": 1, "gpus": 0, "memory_gb": 1, "time": "00:10:00"}}"""


def valid(data: dict[str, Any]) -> SweepSpec:
    spec = validate_sweep(data)
    assert isinstance(spec, SweepSpec), spec
    return spec


def errors_of(data: object) -> list[str]:
    found = validate_sweep(data)
    assert isinstance(found, list), found
    return found


def sweep(**fields: Any) -> dict[str, Any]:
    return {"name": "s", "base_command": "python t.py", "parameters": {"lr": [1]}, **fields}


def test_the_spec_example_expands_to_four_runs_with_the_pairs_varied_together() -> None:
    spec = parse_sweep(SPEC_EXAMPLE)
    assert isinstance(spec, SweepSpec)
    grid = spec.grid()
    assert [dict(p) for p in grid.points] == [
        {"clip_coef": 0.2, "batch_size": 64, "mini_batch_size": 64},
        {"clip_coef": 0.2, "batch_size": 64, "mini_batch_size": 16},
        {"clip_coef": 0.28, "batch_size": 64, "mini_batch_size": 64},
        {"clip_coef": 0.28, "batch_size": 64, "mini_batch_size": 16},
    ]
    assert (grid.total, grid.cut) == (4, 0)
    assert spec.resources.time_s == 600.0
    assert spec.resources.memory_gb == 1.0


def test_max_runs_cuts_the_grid_in_order_and_reports_the_cut() -> None:
    grid = valid(sweep(parameters={"a": [1, 2, 3], "b": ["x", "y"]}, max_runs=4)).grid()
    assert [dict(p) for p in grid.points] == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
    ]
    assert (grid.total, grid.cut) == (6, 2)


def test_malformed_json_names_line_and_column() -> None:
    assert parse_sweep('{"name": "s",\n "parameters": }') == [
        "the sweep is not valid JSON: unexpected character, expected a JSON value at line 2, "
        "column 16; "
        "send one JSON object"
    ]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ([1], "the sweep must be one JSON object, not list"),
        (
            {"base_command": "x", "parameters": {"a": [1]}},
            'missing "name": give a non-empty string',
        ),
        ({"name": "s", "base_command": "x"}, 'missing "parameters": give e.g. {"lr": [0.1, 0.01]}'),
        (
            {"name": "s", "parameters": {"a": [1]}},
            'missing "base_command" or "skill": say what each run executes',
        ),
        (
            sweep(parameters={}),
            '"parameters" must be a non-empty object of value lists, e.g. '
            '{"lr": [0.1, 0.01], "seed": [1, 2]}',
        ),
        (
            sweep(parameters={"a": []}),
            '"parameters.a" must be a non-empty list of values, e.g. [0.1, 0.01]',
        ),
        (
            sweep(parameters={"a": 3}),
            '"parameters.a" must be a non-empty list of values, e.g. [0.1, 0.01]',
        ),
        (
            sweep(parameters={"p": [{"x": 1}, {"y": 2}]}),
            "\"parameters.p[1]\" has keys ['y'] but \"parameters.p[0]\" has ['x']; objects of "
            "one parameter vary the same keys together",
        ),
        (
            sweep(parameters={"p": [{"x": 1}, 2]}),
            '"parameters.p" mixes objects and plain values; use one kind per parameter',
        ),
        (
            sweep(parameters={"x": [1], "p": [{"x": 1}]}),
            '"parameters.p" sets \'x\', which "parameters.x" sets too; give each run parameter '
            "one source",
        ),
        (sweep(max_runs=0), f'"max_runs" must be a whole number from 1 to {MAX_RUNS}, not 0'),
        (sweep(max_runs=True), f'"max_runs" must be a whole number from 1 to {MAX_RUNS}, not True'),
        (
            sweep(resources={"time": "1 fortnight"}),
            '"resources.time" \'1 fortnight\' is not a duration: write "HH:MM:SS", '
            '"D-HH:MM:SS", "MM:SS" or seconds',
        ),
        (
            sweep(resources={"cpus": 0}),
            '"resources.cpus" must be a whole number, at least 1, not 0',
        ),
        (
            sweep(max_run=3),
            'unknown field "max_run"; known: name, parameters, base_command, skill, fallback, '
            "max_runs, max_attempts, method, count, seed, sample, args, early_stop, workdir, "
            "backend, resources, slurm, goal, description, metrics, objective, total_steps",
        ),
        (
            sweep(objective={"metric": "val_loss", "mode": "lowest"}),
            '"objective" must be {"metric": NAME, "mode": "min" or "max"}, '
            'e.g. {"metric": "val_loss", "mode": "min"}',
        ),
        (
            sweep(metrics=["logs/{run}/metrics.csv"]),
            "\"metrics\" path 'logs/{run}/metrics.csv' names {run}; use {run_id} or a "
            "parameter (lr, run_id)",
        ),
        (
            sweep(metrics="logs/metrics.csv"),
            '"metrics" must be a list of paths or globs, e.g. ["logs/**/metrics.csv"]',
        ),
        (
            sweep(metrics=["../elsewhere/metrics.csv"]),
            "\"metrics\" path '../elsewhere/metrics.csv' must stay inside the run folder or "
            "workdir",
        ),
        (
            sweep(total_steps=0),
            '"total_steps" must be a whole number of steps, at least 1 (for the ETA)',
        ),
        (
            sweep(base_command="python - <<EOF\nprint(1)\nEOF"),
            '"base_command" must be one line; put multi-line code in a script file and '
            "reference it",
        ),
    ],
)
def test_each_mistake_gets_its_exact_message(data: object, error: str) -> None:
    assert errors_of(data) == [error]


def skill_sweep(**skill: Any) -> dict[str, Any]:
    return {"name": "s", "parameters": {"lr": [1]}, "skill": skill}


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (
            skill_sweep(kind="docker", target="x"),
            "unknown \"skill.kind\" 'docker'; use one of python_function, python_script, "
            "shell_script, prompt_playbook",
        ),
        (
            skill_sweep(kind="python_script", target="t.py", code="print(1)"),
            '"skill.code": inline code is refused; put it in a file in the project and '
            'reference it with "skill": {"kind": …, "target": …}',
        ),
        (
            skill_sweep(kind="python_function", target="import os; os.system('x')"),
            '"skill.target" "import os; os.system(\'x\')" is not a reference '
            '"package.module:function"',
        ),
        (
            skill_sweep(kind="shell_script", target="rm -rf /; echo"),
            "\"skill.target\" 'rm -rf /; echo' looks like code, not a reference: name a file "
            "in the project (inline code is refused)",
        ),
        (
            skill_sweep(kind="prompt_playbook", target="playbooks/tune.md"),
            'a "prompt_playbook" skill is guidance, not a command: add "fallback": '
            '{"instruction_text": "the command each run executes"}',
        ),
        (
            {**skill_sweep(kind="python_script", target="t.py"), "base_command": "x"},
            'give "base_command" or "skill", not both',
        ),
    ],
)
def test_skills_are_references_only(data: object, error: str) -> None:
    assert errors_of(data) == [error]


def test_all_errors_are_reported_at_once() -> None:
    assert len(errors_of({"parameters": {"a": []}, "max_runs": -1})) == 4


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("00:10:00", 600.0),
        ("1-02:00:00", 93600.0),
        ("10:30", 630.0),
        (90, 90.0),
        ("90", 90.0),
        ("10m", 600.0),
        ("00:00:00", None),
        ("00:61:00", None),
        ("1-10:00", None),
        ("1-25:00:00", None),
        (True, None),
        (-5, None),
    ],
)
def test_run_time_formats(text: object, seconds: float | None) -> None:
    assert parse_run_time(text) == seconds


# ------------------------------------------------------------------------ property tests

KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
SCALARS = st.one_of(
    st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5)
)


@st.composite
def parameters(draw: st.DrawFn) -> dict[str, list[Any]]:
    names = draw(st.lists(KEYS, min_size=1, max_size=4, unique=True))
    out: dict[str, list[Any]] = {}
    for name in names:
        if draw(st.booleans()):
            out[name] = draw(st.lists(SCALARS, min_size=1, max_size=3))
        else:
            inner = [f"{name}__{i}" for i in range(draw(st.integers(1, 2)))]
            out[name] = draw(
                st.lists(st.fixed_dictionaries({k: SCALARS for k in inner}), min_size=1, max_size=3)
            )
    return out


@given(parameters(), st.one_of(st.none(), st.integers(1, 100)))
def test_grid_is_the_product_in_key_order_cut_by_max_runs(
    params: dict[str, list[Any]], max_runs: int | None
) -> None:
    grid = valid(sweep(parameters=params, max_runs=max_runs)).grid()
    total = math.prod(len(values) for values in params.values())
    kept = total if max_runs is None else min(total, max_runs)
    assert (grid.total, len(grid.points), grid.cut) == (total, kept, total - kept)
    # Each point's index, read as mixed-radix digits in key order, picks its values.
    sizes = [len(values) for values in params.values()]
    for index, point in enumerate(grid.points):
        expected: dict[str, Any] = {}
        rest = index
        digits = []
        for size in reversed(sizes):
            rest, digit = divmod(rest, size)
            digits.append(digit)
        for (name, values), digit in zip(params.items(), reversed(digits), strict=True):
            value = values[digit]
            # An object's keys are varied together and flattened into the run's params.
            expected.update(value if isinstance(value, dict) else {name: value})
        assert dict(point) == expected
        # Made from its index when asked for (the recorder asks one at a time), the same.
        assert dict(grid.points[index]) == expected == dict(grid.points[index - kept])


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
FIELDS = st.sampled_from(
    ["name", "parameters", "base_command", "skill", "fallback", "max_runs", "resources", "x"]
)


@given(st.one_of(JSON, st.dictionaries(FIELDS, JSON)))
def test_validation_never_raises_on_arbitrary_json(data: object) -> None:
    found = validate_sweep(data)
    assert isinstance(found, SweepSpec) or (found and all(isinstance(e, str) for e in found))
    reread = parse_sweep(json.dumps(data))
    assert isinstance(reread, SweepSpec) or all(isinstance(e, str) for e in reread)


@given(st.text(max_size=60))
def test_parsing_never_raises_on_arbitrary_text(text: str) -> None:
    assert parse_sweep(text) is not None


def test_gpus_may_be_a_share_of_one_gpu_but_not_a_mixed_number() -> None:
    assert valid(sweep(resources={"gpus": 0.25})).resources.gpus == 0.25
    assert valid(sweep(resources={"gpus": 2})).resources.gpus == 2
    for bad in (1.5, -0.5, True, "half"):
        assert errors_of(sweep(resources={"gpus": bad})) == [
            '"resources.gpus" must be a whole number of GPUs (0, 1, 2, …) or a share of one '
            f"GPU between 0 and 1 (0.25: four runs share a GPU), not {bad!r}"
        ]


def test_a_list_parameter_holds_its_values_not_a_mapping_per_value() -> None:
    # A parameter's list of values was held as one {name: value} mapping per value from the
    # parse to the end of the sweep's recording: 266 bytes a value (2.6 MB for a 10,000-run
    # grid, at the peak of the loop that records it; issue 23). Now ~43.
    values = list(range(10_000))
    text = json.dumps({"name": "n", "base_command": "true", "parameters": {"i": values}})
    parse_sweep(text)  # what is made once (compiled patterns, ...) is not counted
    tracemalloc.start()
    try:
        spec = parse_sweep(text)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(spec, SweepSpec)
    assert held < 100 * len(values)
    points = spec.grid().points
    assert [dict(p) for p in points[:2]] == [{"i": 0}, {"i": 1}] and dict(points[-1]) == {"i": 9999}
    axis = spec.axes[0]
    assert isinstance(axis, Axis) and axis.points == tuple({"i": v} for v in values)
    assert spec == parse_sweep(text)
