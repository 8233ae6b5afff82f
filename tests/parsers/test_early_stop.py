"""The early-stopping rules (wild.parsers.early_stop): the spec checked, the median rule and
hyperband judged on fed points, divergence, and decisions that depend on the points only,
never on how they were cut into checks."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from wild.parsers.early_stop import (
    EarlyStop,
    Stop,
    SweepStopping,
    early_stop_of,
    early_stopped,
    parse_early_stop,
)
from wild.parsers.metric_summary import Objective
from wild.parsers.sweeps import SweepSpec, validate_sweep

Curves = Mapping[str, Sequence[tuple[float, float]]]


def rule(**fields: object) -> EarlyStop:
    errors: list[str] = []
    found = parse_early_stop({"metric": "loss", **fields}, None, errors)
    assert found is not None, errors
    return found


def decide(stop: EarlyStop, curves: Curves, running: Sequence[str] | None = None) -> list[Stop]:
    state = SweepStopping(stop)
    for run_id, points in curves.items():
        state.add(run_id, points)
    return state.decide(list(curves) if running is None else running)


def steps(values: Sequence[float], start: int = 0) -> list[tuple[float, float]]:
    return [(float(start + i), v) for i, v in enumerate(values)]


# -- the spec --------------------------------------------------------------------------------


def test_metric_and_mode_come_from_the_objective_and_the_defaults_are_rays() -> None:
    found = parse_early_stop({}, Objective("acc", "max"), [])
    assert found == EarlyStop(metric="acc", mode="max", rule="median", min_steps=0, grace_runs=3)


def test_a_sweep_with_a_bad_early_stop_is_refused_with_every_problem() -> None:
    sweep = {
        "name": "s",
        "base_command": "python t.py",
        "parameters": {"lr": [1]},
        "early_stop": {"rule": "asha", "min_steps": -1, "grace_runs": 0, "patience": 3},
    }
    errors = validate_sweep(sweep)
    assert errors == [
        'unknown field "early_stop.patience"; known: rule, metric, mode, min_steps, '
        "grace_runs, max_steps, eta, brackets",
        """"early_stop.rule" 'asha' is not a rule: use "median" or "hyperband\"""",
        '"early_stop" needs "metric", the metric that judges runs (or the sweep\'s "objective")',
        '"early_stop.min_steps" must be a number of steps, at least 0, not -1',
        '"early_stop.grace_runs" must be a whole number, at least 1, not 0',
    ]
    # Today's `{}` object was accepted and ignored; a good one is kept in the spec.
    good = validate_sweep(
        {**sweep, "early_stop": {"min_steps": 5}, "objective": {"metric": "loss"}}
    )
    assert isinstance(good, SweepSpec)
    assert early_stop_of(good.raw) == EarlyStop(metric="loss", min_steps=5)


jsonish = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
fields = st.dictionaries(
    st.sampled_from(
        ["rule", "metric", "mode", "min_steps", "grace_runs", "max_steps", "eta", "brackets", "x"]
    ),
    jsonish | st.sampled_from(["median", "hyperband", "min", "max", "loss"]),
)


@settings(max_examples=300, deadline=None)
@given(fields | jsonish, st.none() | st.builds(Objective, st.just("loss")))
def test_any_early_stop_is_a_rule_or_errors_and_never_raises(
    value: object, objective: Objective | None
) -> None:
    errors: list[str] = []
    found = parse_early_stop(value, objective, errors)
    assert (found is None) == bool(errors)
    if found is not None:
        assert len(found.bands(1e300)) <= 100


def test_huge_or_odd_numbers_are_refused_and_bands_stay_few() -> None:
    errors: list[str] = []
    assert parse_early_stop({"metric": "l", "min_steps": None}, None, errors) is None
    assert errors == ['"early_stop.min_steps" must be a number of steps, at least 0, not None']
    errors.clear()
    assert parse_early_stop({"metric": "l", "min_steps": 10**400}, None, errors) is None
    assert errors == [
        f'"early_stop.min_steps" must be a number of steps, at least 0, not {10**400!r}'
    ]
    near_one = rule(rule="hyperband", min_steps=1, eta=1.000001)
    assert len(near_one.bands(1e300)) == 100
    assert (
        len(rule(rule="hyperband", max_steps=1e300, brackets=10**9, eta=1.000001).bands(1e300))
        == 100
    )


def test_hyperband_needs_a_first_band_and_median_refuses_its_fields() -> None:
    errors: list[str] = []
    parse_early_stop({"metric": "l", "rule": "hyperband"}, None, errors)
    parse_early_stop({"metric": "l", "rule": "hyperband", "max_steps": 9}, None, errors)
    parse_early_stop({"metric": "l", "eta": 2}, None, errors)
    assert errors == [
        'a hyperband "early_stop" needs "min_steps" (its first band) or "max_steps"',
        '"early_stop.max_steps" needs "brackets": how many bands below it',
        '"early_stop.eta" is for "rule": "hyperband"',
    ]


def test_early_stopped_runs_are_known_by_their_reason() -> None:
    assert early_stopped("stopped", "early stop: median rule at step 4: …")
    assert early_stopped("stopped", "diverged: loss nan at step 3")
    assert not early_stopped("stopped", "stopped by the human")
    assert not early_stopped("failed", "diverged: loss nan at step 3")


# -- the median rule -------------------------------------------------------------------------


def test_the_median_rule_stops_the_run_worse_than_the_median_and_no_other() -> None:
    good = [1 / (s + 1) for s in range(10)]
    curves = {
        "a": steps(good),
        "b": steps([v * 1.01 for v in good]),
        "c": steps([v * 0.99 for v in good]),
        "bad": steps([0.9] * 10),
    }
    stops = decide(rule(min_steps=2, grace_runs=2), curves)
    # bad's best 0.9 against the median of the others' running means over steps 2…9.
    others = sorted(statistics.fmean(v * f for v in good[2:]) for f in (1, 1.01, 0.99))
    assert stops == [
        Stop(
            "bad",
            f"early stop: median rule at step 9: best loss 0.9 > median {others[1]:.4g} "
            "of 3 other runs",
        )
    ]


def test_no_decision_before_min_steps_or_before_grace_runs_siblings_reached_the_step() -> None:
    bad = steps([5.0] * 4)
    good = steps([1.0] * 4)
    assert decide(rule(min_steps=4), {"bad": bad, "g1": good, "g2": good, "g3": good}) == []
    # Two siblings where three are needed; then three, but two only reached step 1: the
    # run is judged at step 1, the furthest step three siblings reached.
    assert decide(rule(grace_runs=3), {"bad": bad, "g1": good, "g2": good}) == []
    short = steps([1.0] * 2)
    found = decide(rule(grace_runs=3), {"bad": bad, "g1": good, "g2": short, "g3": short})
    assert [s.reason for s in found] == [
        "early stop: median rule at step 1: best loss 5 > median 1 of 3 other runs"
    ]


def test_a_late_small_value_is_not_lost_to_an_early_large_one() -> None:
    # Averages summed from min_steps: a difference of two long sums would make 1e-88 zero.
    curves = {"e": steps([1.0, 1.4e-88]), "f": steps([1.0, 3.6e-230])}
    assert [s.run_id for s in decide(rule(min_steps=1, grace_runs=1), curves)] == ["e"]


def test_a_run_that_ties_its_siblings_is_never_stopped_by_rounding() -> None:
    # 0.1 + 0.1 + 0.1 is 0.30000000000000004: summed averages of equal runs drift by an ulp.
    same = steps([0.1] * 50)
    for mode in ("min", "max"):
        assert decide(rule(mode=mode, grace_runs=2), {"a": same, "b": same, "c": same}) == []


def test_max_mode_stops_the_lowest() -> None:
    up = steps([0.5, 0.7, 0.9])
    curves = {"a": up, "b": up, "low": steps([0.1, 0.1, 0.1])}
    found = decide(rule(mode="max", grace_runs=2), curves)
    assert [s.run_id for s in found] == ["low"]
    assert "best loss 0.1 < median" in found[0].reason


def test_a_nan_or_inf_objective_stops_the_run_as_diverged_whatever_the_rule() -> None:
    curves = {
        "ok": steps([1.0, 0.9]),
        "nan": steps([1.0, math.nan], start=11),
        "inf": steps([math.inf]),
    }
    found = decide(rule(grace_runs=5), curves)
    assert found == [
        Stop("nan", "diverged: loss nan at step 12"),
        Stop("inf", "diverged: loss inf at step 0"),
    ]


def test_only_running_runs_are_stopped_and_a_forgotten_run_starts_afresh() -> None:
    state = SweepStopping(rule(grace_runs=1))
    state.add("ended", steps([0.1, 0.1]))
    state.add("bad", steps([1.0, math.nan]))
    assert [s.run_id for s in state.decide(["bad"])] == ["bad"]
    state.forget("bad")  # rerun: its new attempt's points only
    state.add("bad", steps([0.05, 0.05]))
    assert state.decide(["bad"]) == []


# -- hyperband, as W&B's `early_terminate` ---------------------------------------------------


def test_hyperband_keeps_the_best_one_over_eta_at_each_band_as_wandb_does() -> None:
    # W&B's own example (sweeps' hyperband_stopping): max_iter 5, eta 2, s 2 → bands 1 and 2;
    # b is stopped at band 1, c passes band 1 but not band 2, d goes on.
    curves = {
        "a": steps([10, 9]),
        "b": steps([10, 10]),
        "c": steps([10, 8, 8]),
        "d": steps([10, 7, 7]),
        "e": steps([10, 6, 6]),
    }
    stop = rule(rule="hyperband", max_steps=5, eta=2, brackets=2)
    assert stop.bands(100) == [1.0, 2.0]
    found = decide(stop, curves, running=["b", "c", "d"])
    cut = "early stop: hyperband at step {}: loss {} > {}, the cut for the best 1/2 of {} runs"
    assert found == [Stop("b", cut.format(1, 10, 8, 5)), Stop("c", cut.format(2, 8, 7, 3))]


def test_hyperband_bands_from_min_steps_grow_by_eta() -> None:
    assert rule(rule="hyperband", min_steps=3, eta=2).bands(30) == [3, 6, 12, 24]
    assert rule(rule="hyperband", min_steps=3).bands(2) == []
    # With max_steps too, its bands win and min_steps is not a gate, as W&B reads them.
    both = rule(rule="hyperband", min_steps=5, max_steps=9, brackets=1)
    assert both.bands(9) == [3]
    assert [s.run_id for s in decide(both, {"a": steps([1.0] * 4), "b": steps([2.0] * 4)})] == ["b"]


# -- properties ------------------------------------------------------------------------------

# Small whole numbers (ties, where a rule's edges are) and eighths: sums of these are exact
# in floats, so the naive reading's exact averages are the rule's to the last bit.
values = st.one_of(
    st.integers(min_value=0, max_value=6).map(float),
    st.integers(min_value=-800, max_value=800).map(lambda i: i / 8),
)
curve = st.lists(values, max_size=12)
sweeps = st.dictionaries(st.sampled_from("abcdef"), curve, min_size=2)
cuts = st.lists(st.integers(min_value=0, max_value=12), max_size=4)


rules = st.builds(
    lambda grace, least, mode: rule(min_steps=least, grace_runs=grace, mode=mode),
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=0, max_value=4),
    st.sampled_from(["min", "max"]),
)


@settings(max_examples=300, deadline=None)
@given(sweeps, st.sampled_from(["", "a", "b"]), cuts, rules)
def test_a_decision_depends_on_the_points_not_on_how_they_came(
    raw: dict[str, list[float]], broken: str, cut: list[int], stop: EarlyStop
) -> None:
    """Fed in chunks, checked after each (as the driver does with new lines), the last
    decision equals the one from all points at once, and equals a naive reading of the rule
    over the whole histories (one run may go NaN at a random point)."""
    if broken in raw:
        raw[broken].insert(len(raw[broken]) // 2, math.nan)
    curves = {run: steps(vals) for run, vals in raw.items()}
    fed = SweepStopping(stop)
    marks = sorted({0, *cut, 12})
    for lo, hi in itertools.pairwise(marks):
        for run, points in curves.items():
            fed.add(run, points[lo:hi])
        fed.decide(list(curves))
    found = fed.decide(list(curves))
    assert found == decide(stop, curves)
    assert [s.run_id for s in found] == [s.run_id for s in naive(stop, curves)]


def naive(stop: EarlyStop, curves: Curves) -> list[Stop]:
    """The median rule read straight from the definition, over whole histories."""
    out = []
    for run, points in curves.items():
        broken = [(s, v) for s, v in points if not math.isfinite(v)]
        if broken:
            out.append(Stop(run, f"diverged: loss {broken[0][1]} at step {int(broken[0][0])}"))
            continue
        finite = {r: [(s, v) for s, v in p if math.isfinite(v)] for r, p in curves.items()}
        if not finite[run]:
            continue
        ahead = sorted((p[-1][0] for r, p in finite.items() if r != run and p), reverse=True)
        if len(ahead) < stop.grace_runs:
            continue
        at = min(finite[run][-1][0], ahead[stop.grace_runs - 1])
        if at < stop.min_steps:
            continue
        means = [
            float(statistics.mean(Fraction(v) for v in window))  # exact, then rounded
            for r, p in finite.items()
            if r != run and p and p[-1][0] >= at
            if (window := [v for s, v in p if stop.min_steps <= s <= at])
        ]
        mine = [v for s, v in finite[run] if s <= at]
        best = min(mine) if stop.mode == "min" else max(mine)
        median = statistics.median(means) if means else 0.0
        gap = best - median if stop.mode == "min" else median - best
        if len(means) >= stop.grace_runs and gap > 1e-9 * max(abs(best), abs(median)):
            out.append(Stop(run, ""))
    return out
