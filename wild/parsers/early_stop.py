"""A sweep's `"early_stop"`: which runs to stop before they end, decided from their metric
points as they come. Pure: points in, decisions out; the driver (wild.runs.early_stopping)
follows the metric files and stops the runs.

The rules judge the objective `metric` (minimised or maximised, `mode`):

- `median`, the median stopping rule of Google Vizier (as Ray Tune's MedianStoppingRule): a
  run at step s (its furthest) is stopped when its best value by s is strictly worse than the
  median of its siblings' running averages up to s, each averaged over steps from
  `min_steps` on (Ray's `grace_period`); s is the furthest step the run and `grace_runs`
  siblings (Ray's `min_samples_required`) all reached, and at least `min_steps`. So a run
  that is ahead is judged where its siblings are, and the outcome never hangs on the pace.
- `hyperband`, W&B's hyperband early termination (`early_terminate`): bands at `min_steps`
  times `eta` to the k (or `max_steps` divided by `eta` to the 1 … `brackets`); at each band
  the runs that reached it are ranked by their value there, and a run whose value at the
  last band it reached is strictly worse than the value of rank ⌊n/eta⌋ (the best 1/eta
  pass) is stopped.

Whatever the rule, a run whose objective is NaN or ±inf is stopped as diverged.
Each point is taken once: a run's curve keeps running sums and bests, so a decision costs
a few binary searches per sibling, never a pass over anyone's history.
"""

from __future__ import annotations

import bisect
import heapq
import math
import statistics
from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, get_args

from wild.parsers.metric_formats import diverged
from wild.parsers.metric_summary import Mode, Objective, objective_of
from wild.record import record

Rule = Literal["median", "hyperband"]
RULES: tuple[Rule, ...] = get_args(Rule)
_KEYS = ("rule", "metric", "mode", "min_steps", "grace_runs", "max_steps", "eta", "brackets")
_HYPERBAND_ONLY = ("max_steps", "eta", "brackets")
DEFAULT_GRACE_RUNS = 3  # Ray Tune's min_samples_required
DEFAULT_ETA = 3.0  # W&B's and the Hyperband paper's
MAX_BANDS = 100  # as W&B computes them: an eta near 1 must not make a decision endless
# Values this close (relative) are a tie: running sums of a long curve drift by far less.
TIE = 1e-9
# A run's reason starts so when an early-stopping rule ended it (never rerun by default).
EARLY_STOP = "early stop"
DIVERGED = "diverged"


@record
class EarlyStop:
    """A validated `"early_stop"`."""

    metric: str
    mode: Mode = "min"
    rule: Rule = "median"
    min_steps: float = 0.0
    grace_runs: int = DEFAULT_GRACE_RUNS
    max_steps: float | None = None
    eta: float = DEFAULT_ETA
    brackets: int | None = None

    def worse(self, a: float, b: float) -> bool:
        """Whether `a` is strictly worse than `b`, by more than float rounding (a run that
        ties its siblings, its average summed in another order, is never worse)."""
        gap = a - b if self.mode == "min" else b - a
        return gap > TIE * max(abs(a), abs(b))

    def better(self, a: float, b: float) -> bool:
        return a < b if self.mode == "min" else a > b

    def bands(self, up_to: float) -> list[float]:
        """Hyperband's bands (steps) up to `up_to`, in order."""
        if self.max_steps is not None:
            found: list[float] = []
            band = self.max_steps
            for _ in range(min(self.brackets or 0, MAX_BANDS)):
                band /= self.eta
                if band < 1:
                    break
                found.append(float(int(band)))  # whole steps, as W&B's bands
            return sorted(b for b in found if b <= up_to)
        out: list[float] = []
        band = max(self.min_steps, 1.0)
        while band <= up_to and len(out) < MAX_BANDS:
            out.append(float(int(band)))
            band *= self.eta
        return out


def parse_early_stop(
    value: object, objective: Objective | None, errors: list[str]
) -> EarlyStop | None:
    """A sweep's `"early_stop"` (its metric and mode default to the sweep's `objective`), or
    None with the errors added."""
    if not isinstance(value, Mapping):
        errors.append('"early_stop" must be an object such as {"rule": "median", "metric": …}')
        return None
    before = len(errors)
    for key in value:
        if key not in _KEYS:
            errors.append(f'unknown field "early_stop.{key}"; known: {", ".join(_KEYS)}')
    rule = value.get("rule", "median")
    if rule not in RULES:
        errors.append(f'"early_stop.rule" {rule!r} is not a rule: use "median" or "hyperband"')
    metric = value.get("metric", objective.metric if objective is not None else None)
    if not isinstance(metric, str) or not metric.strip():
        errors.append(
            '"early_stop" needs "metric", the metric that judges runs (or the sweep\'s "objective")'
        )
    same = objective is not None and objective.metric == metric
    mode = value.get("mode", objective.mode if same and objective is not None else "min")
    if mode not in ("min", "max"):
        errors.append(f'"early_stop.mode" must be "min" or "max", not {mode!r}')
    min_steps = _number(value, "min_steps", 0.0, errors)
    grace = value.get("grace_runs", DEFAULT_GRACE_RUNS)
    if isinstance(grace, bool) or not isinstance(grace, int) or grace < 1:
        errors.append(f'"early_stop.grace_runs" must be a whole number, at least 1, not {grace!r}')
    max_steps = _number(value, "max_steps", None, errors)
    eta = _number(value, "eta", DEFAULT_ETA, errors)
    if eta is not None and eta <= 1:
        errors.append(f'"early_stop.eta" must be more than 1, not {eta!r}')
    brackets = value.get("brackets")
    if brackets is not None and (
        isinstance(brackets, bool) or not isinstance(brackets, int) or brackets < 1
    ):
        errors.append(f'"early_stop.brackets" must be a whole number, at least 1: {brackets!r}')
    if rule == "median":
        given = [key for key in _HYPERBAND_ONLY if key in value]
        if given:
            errors.append(f'"early_stop.{given[0]}" is for "rule": "hyperband"')
    elif rule == "hyperband" and max_steps is not None and brackets is None:
        errors.append('"early_stop.max_steps" needs "brackets": how many bands below it')
    elif rule == "hyperband" and max_steps is None and "min_steps" not in value:
        errors.append('a hyperband "early_stop" needs "min_steps" (its first band) or "max_steps"')
    if len(errors) > before or not isinstance(metric, str) or min_steps is None or eta is None:
        return None
    return EarlyStop(
        metric=metric.strip(),
        mode=mode,
        rule=rule,
        min_steps=min_steps,
        grace_runs=grace,
        max_steps=max_steps,
        eta=eta,
        brackets=brackets,
    )


def _number(
    value: Mapping[str, Any], key: str, default: float | None, errors: list[str]
) -> float | None:
    if key not in value:
        return default
    got = value[key]
    number = float(got) if isinstance(got, float) else math.inf
    if isinstance(got, int) and not isinstance(got, bool) and abs(got) < 2**63:
        number = float(got)
    if not 0 <= number < math.inf:
        errors.append(f'"early_stop.{key}" must be a number of steps, at least 0, not {got!r}')
        return None
    return number


def early_stop_of(spec: Mapping[str, Any]) -> EarlyStop | None:
    """The early stopping a recorded sweep's spec asks for (None: none)."""
    if "early_stop" not in spec:
        return None
    return parse_early_stop(spec["early_stop"], objective_of(spec), [])


def early_stopped(status: str, reason: str | None) -> bool:
    """Whether a run with this status and reason was ended by early stopping."""
    return status == "stopped" and reason is not None and reason.startswith((EARLY_STOP, DIVERGED))


def stopped_early_lines(runs: Iterable[tuple[str, str, str | None]]) -> list[str]:
    """The lines `wild --runs` and `wild --compare` end with: each run (id, status, reason)
    an early-stopping rule ended, and why (none: no lines)."""
    found = [
        f"- {run_id}: {reason}" for run_id, status, reason in runs if early_stopped(status, reason)
    ]
    if not found:
        return []
    return ["", "Stopped early (never rerun unless you ask: `wild --rerun ID`):", *found]


class Curve:
    """One run's objective as it comes: its finite points in step order, with running sums
    (for averages over any span) and running bests, so any question is a binary search."""

    def __init__(self) -> None:
        # Arrays of doubles (8 bytes a point each): a sweep's curves are held while it runs.
        self.steps = array("d")
        self.values = array("d")
        # sums[i]: the sum of values[0..i] logged at `min_steps` or later. Summed from there
        # and never subtracted: a difference of two long sums loses a late, small loss.
        self.sums = array("d")
        self.bests = array("d")  # bests[i]: the best of values[0..i] (by the mode)

    @property
    def reached(self) -> float | None:
        return self.steps[-1] if self.steps else None

    def add(self, step: float, value: float, rule: EarlyStop) -> None:
        at = bisect.bisect_right(self.steps, step)
        self.steps.insert(at, step)
        self.values.insert(at, value)
        del self.sums[at:], self.bests[at:]  # out-of-order points are rare: redo the tail
        for i in range(at, len(self.values)):
            v = self.values[i]
            counted = v if self.steps[i] >= rule.min_steps else 0.0
            self.sums.append(counted + (self.sums[i - 1] if i else 0.0))
            best = self.bests[i - 1] if i else v
            self.bests.append(v if rule.better(v, best) else best)

    def mean(self, start: float, end: float) -> float | None:
        """The average of the values logged at steps `start` (the rule's `min_steps`, which
        the sums start from) … `end` (None: none there)."""
        lo = bisect.bisect_left(self.steps, start)
        hi = bisect.bisect_right(self.steps, end)
        if hi <= lo:
            return None
        return self.sums[hi - 1] / (hi - lo)

    def best(self, end: float) -> float | None:
        hi = bisect.bisect_right(self.steps, end)
        return self.bests[hi - 1] if hi else None

    def value_at(self, step: float) -> float | None:
        """The value logged last at or before `step`."""
        hi = bisect.bisect_right(self.steps, step)
        return self.values[hi - 1] if hi else None


@record
class Stop:
    """A run to stop, and the reason its line will say."""

    run_id: str
    reason: str


class SweepStopping:
    """The early-stopping state of one sweep: every run's curve, fed new points only."""

    def __init__(self, rule: EarlyStop) -> None:
        self.rule = rule
        self.curves: dict[str, Curve] = {}
        self.broke: dict[str, str] = {}  # run id → why it diverged

    def add(self, run_id: str, points: Iterable[tuple[float, float]]) -> None:
        """New (step, value) points of the run's objective."""
        curve = self.curves.setdefault(run_id, Curve())
        for step, value in points:
            if diverged(value):
                self.broke.setdefault(
                    run_id, f"{DIVERGED}: {self.rule.metric} {value} at step {_num(step)}"
                )
            else:
                curve.add(step, value, self.rule)

    def forget(self, run_id: str) -> None:
        """The run starts again (a rerun, or its files rewritten): its points go."""
        self.curves.pop(run_id, None)
        self.broke.pop(run_id, None)

    def decide(self, running: Sequence[str]) -> list[Stop]:
        """Which of the `running` runs to stop now."""
        stops = []
        for run_id in running:
            why = self.broke.get(run_id) or self._judge(run_id)
            if why is not None:
                stops.append(Stop(run_id, why))
        return stops

    def _judge(self, run_id: str) -> str | None:
        curve = self.curves.get(run_id)
        step = curve.reached if curve is not None else None
        if curve is None or step is None:
            return None
        if self.rule.rule == "hyperband":
            # Its bands say when it judges (with max_steps, W&B ignores min_iter: so here).
            return self._hyperband(curve, step)
        return self._median(run_id, curve, step)

    def _median(self, run_id: str, curve: Curve, latest: float) -> str | None:
        # Judged at its furthest step that `grace_runs` siblings reached too: a run ahead of
        # the others is judged where they are, so the outcome does not hang on the pace.
        furthest = heapq.nlargest(
            self.rule.grace_runs,
            (c.steps[-1] for other, c in self.curves.items() if other != run_id and c.steps),
        )
        if len(furthest) < self.rule.grace_runs:
            return None
        step = min(latest, furthest[-1])
        if step < self.rule.min_steps:
            return None
        means = []
        for other, theirs in self.curves.items():
            reached = theirs.reached
            if other == run_id or reached is None or reached < step:
                continue
            mean = theirs.mean(self.rule.min_steps, step)
            if mean is not None:
                means.append(mean)
        best = curve.best(step)
        if len(means) < self.rule.grace_runs or best is None:
            return None
        median = statistics.median(means)
        if not self.rule.worse(best, median):
            return None
        sign = ">" if self.rule.mode == "min" else "<"
        return (
            f"{EARLY_STOP}: median rule at step {_num(step)}: best {self.rule.metric} "
            f"{_num(best)} {sign} median {_num(median)} of {len(means)} other runs"
        )

    def _hyperband(self, curve: Curve, step: float) -> str | None:
        bands = self.rule.bands(step)
        if not bands:
            return None
        band = bands[-1]
        ranked = []
        for theirs in self.curves.values():
            reached = theirs.reached
            value = theirs.value_at(band) if reached is not None and reached >= band else None
            if value is not None:
                ranked.append(value)
        mine = curve.value_at(band)
        if mine is None:
            return None
        ranked.sort(reverse=self.rule.mode == "max")
        threshold = ranked[int(len(ranked) / self.rule.eta)]
        if not self.rule.worse(mine, threshold):
            return None
        sign = ">" if self.rule.mode == "min" else "<"
        return (
            f"{EARLY_STOP}: hyperband at step {_num(band)}: {self.rule.metric} {_num(mine)} "
            f"{sign} {_num(threshold)}, the cut for the best 1/{_num(self.rule.eta)} of "
            f"{len(ranked)} runs"
        )


def _num(value: float) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e6 else f"{value:.4g}"
