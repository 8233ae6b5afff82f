"""Search spaces: distributions, random search from a seed, and a grid cut or sampled."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.sweeps import SweepSpec, validate_sweep


def spec(parameters: dict[str, Any], **fields: Any) -> SweepSpec:
    found = validate_sweep(
        {"name": "s", "base_command": "python t.py", "parameters": parameters, **fields}
    )
    assert isinstance(found, SweepSpec), found
    return found


def errors_of(parameters: dict[str, Any], **fields: Any) -> list[str]:
    found = validate_sweep(
        {"name": "s", "base_command": "python t.py", "parameters": parameters, **fields}
    )
    assert isinstance(found, list), found
    return found


SPACE = {
    "lr": {"distribution": "log_uniform", "min": 1e-5, "max": 1e-1},
    "dropout": {"distribution": "uniform", "min": 0.0, "max": 0.5},
    "layers": {"distribution": "int_uniform", "min": 1, "max": 8},
    "wd": {"distribution": "q_uniform", "min": 0.0, "max": 0.3, "q": 0.05},
    "opt": {"values": ["adam", "sgd"]},
    "seed": [0, 1, 2],
}


def points(parameters: dict[str, Any], **fields: Any) -> list[dict[str, Any]]:
    return [dict(p) for p in spec(parameters, **fields).grid().points]


def test_a_random_search_is_reproducible_from_its_seed() -> None:
    first = points(SPACE, method="random", count=20, seed=7)
    assert len(first) == 20
    assert first == points(SPACE, method="random", count=20, seed=7)
    assert first != points(SPACE, method="random", count=20, seed=8)
    # Every run's params hold every parameter's drawn value.
    assert all(set(p) == set(SPACE) for p in first)


def test_the_seed_defaults_to_zero_so_a_search_without_one_is_reproducible_too() -> None:
    assert points(SPACE, method="random", count=5) == points(
        SPACE, method="random", count=5, seed=0
    )


def test_log_uniform_spans_the_decades() -> None:
    drawn = [p["lr"] for p in points(SPACE, method="random", count=2000, seed=1)]
    decades = {math.floor(math.log10(v)) for v in drawn}
    assert decades == {-5, -4, -3, -2}  # 1e-5 … 1e-1: each decade about equally often
    per_decade = [sum(math.floor(math.log10(v)) == d for v in drawn) for d in range(-5, -1)]
    assert min(per_decade) > 0.7 * max(per_decade)


def test_q_uniform_is_quantised_and_int_uniform_whole() -> None:
    drawn = points(SPACE, method="random", count=300, seed=2)
    assert {p["wd"] for p in drawn} == {0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3}
    assert {p["layers"] for p in drawn} == set(range(1, 9))
    assert all(isinstance(p["layers"], int) for p in drawn)
    assert {p["opt"] for p in drawn} == {"adam", "sgd"}


@given(
    kind=st.sampled_from(["uniform", "log_uniform", "int_uniform", "q_uniform"]),
    low=st.integers(1, 1000),
    width=st.integers(1, 1000),
    q=st.sampled_from([1, 2, 0.5, 0.25]),
    seed=st.integers(0, 2**32),
)
def test_draws_stay_in_their_range(kind: str, low: int, width: int, q: float, seed: int) -> None:
    bounds: dict[str, Any] = {"distribution": kind, "min": low, "max": low + width}
    if kind == "q_uniform":
        bounds["q"] = q
    for p in points({"x": bounds}, method="random", count=20, seed=seed):
        assert low <= p["x"] <= low + width
        if kind == "q_uniform":
            assert p["x"] / q == round(p["x"] / q)
        if kind == "int_uniform":
            assert isinstance(p["x"], int)


def test_a_grid_cut_by_max_runs_says_so_and_keeps_the_first_points() -> None:
    grid = spec({"a": [1, 2, 3], "b": [1, 2]}, max_runs=2).grid()
    assert [dict(p) for p in grid.points] == [{"a": 1, "b": 1}, {"a": 1, "b": 2}]
    assert (grid.total, grid.cut, grid.sampled) == (6, 4, False)


def test_sample_true_draws_distinct_grid_points_from_the_seed() -> None:
    params = {"a": list(range(10)), "b": list(range(10))}
    grid = spec(params, max_runs=10, sample=True, seed=4).grid()
    drawn = [(p["a"], p["b"]) for p in grid.points]
    assert (grid.total, grid.cut, grid.sampled) == (100, 90, True)
    assert len(set(drawn)) == 10 and drawn == sorted(drawn)  # distinct, in grid order
    assert drawn != [(0, b) for b in range(10)]  # not the first ten
    again = spec(params, max_runs=10, sample=True, seed=4).grid()
    assert [dict(p) for p in again.points] == [dict(p) for p in grid.points]
    other = spec(params, max_runs=10, sample=True, seed=5).grid()
    assert [dict(p) for p in other.points] != [dict(p) for p in grid.points]


def test_a_huge_grid_can_be_sampled_lazily() -> None:
    params = {f"p{i}": list(range(10)) for i in range(8)}  # 10^8 points
    grid = spec(params, max_runs=5, sample=True).grid()
    assert (len(grid.points), grid.total) == (5, 10**8)


@pytest.mark.parametrize(
    ("parameters", "fields", "error"),
    [
        (
            {"lr": {"distribution": "uniform", "min": 0, "max": 1}},
            {},
            '"parameters.lr" is a distribution, which a grid cannot list: set "method": '
            '"random" and "count", or give a list of values',
        ),
        (
            {"lr": [1]},
            {"method": "random"},
            'a random search needs "count": how many points to draw, e.g. 20',
        ),
        (
            {"lr": [1]},
            {"method": "random", "count": 2, "max_runs": 1},
            'a random search draws "count" points; "max_runs" and "sample" are for a grid',
        ),
        ({"lr": [1]}, {"method": "bayes"}, "\"method\" 'bayes' is not one of grid, random"),
        (
            {"lr": [1]},
            {"sample": True},
            '"sample": true draws "max_runs" grid points; set "max_runs"',
        ),
        (
            {"lr": [1]},
            {"count": 3},
            '"count" is for "method": "random"; a grid runs every point (or "max_runs")',
        ),
        ({"lr": [1]}, {"seed": 1.5}, '"seed" must be a whole number, not 1.5'),
        (
            {"lr": {"distribution": "log_uniform", "min": 0, "max": 1}},
            {"method": "random", "count": 1},
            '"parameters.lr" is log_uniform: "min" must be above 0, not 0',
        ),
        (
            {"lr": {"distribution": "normal", "min": 0, "max": 1}},
            {"method": "random", "count": 1},
            "\"parameters.lr.distribution\" 'normal' is not one of uniform, log_uniform, "
            "int_uniform, q_uniform",
        ),
        (
            {"lr": {"distribution": "uniform", "min": 1, "max": 1}},
            {"method": "random", "count": 1},
            '"parameters.lr" "min" 1 must be below "max" 1',
        ),
        (
            {"n": {"distribution": "int_uniform", "min": 1, "max": 2.5}},
            {"method": "random", "count": 1},
            '"parameters.n" is int_uniform: "min" and "max" must be whole numbers',
        ),
        (
            {"w": {"distribution": "q_uniform", "min": 0.01, "max": 0.04, "q": 0.05}},
            {"method": "random", "count": 1},
            '"parameters.w" has no multiple of "q" 0.05 between "min" and "max"',
        ),
        (
            {"w": {"distribution": "uniform", "min": 0, "max": 1, "q": 0.05}},
            {"method": "random", "count": 1},
            '"parameters.w" has "q", which only "q_uniform" uses',
        ),
    ],
)
def test_each_search_mistake_gets_its_message(
    parameters: dict[str, Any], fields: dict[str, Any], error: str
) -> None:
    assert errors_of(parameters, **fields) == [error]


def test_every_search_mistake_is_reported_at_once() -> None:
    found = errors_of(
        {
            "lr": {"distribution": "uniform", "min": 2, "max": 1},
            "n": {"distribution": "int_uniform", "max": 3},
        },
        method="random",
        count=0,
    )
    assert len(found) == 3, found


_ANY_NUMBER = st.one_of(
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
)


@given(
    kind=st.one_of(
        st.sampled_from(["uniform", "log_uniform", "int_uniform", "q_uniform"]), st.text()
    ),
    low=_ANY_NUMBER,
    high=_ANY_NUMBER,
    q=_ANY_NUMBER,
    seed=st.integers(),
)
def test_any_distribution_is_validated_without_raising_and_a_valid_one_draws_in_range(
    kind: str, low: object, high: object, q: object, seed: int
) -> None:
    distribution = {"distribution": kind, "min": low, "max": high}
    if q is not None:  # None: no "q" at all
        distribution["q"] = q
    found = validate_sweep(
        {
            "name": "s",
            "base_command": "x",
            "method": "random",
            "count": 3,
            "seed": seed,
            "parameters": {"x": distribution},
        }
    )
    if isinstance(found, SweepSpec):
        for point in found.grid().points:
            assert low <= point["x"] <= high  # type: ignore[operator]
