"""A sweep parameter drawn from a distribution (`"method": "random"`): validated, and drawn.

`{"distribution": "uniform" | "log_uniform" | "int_uniform" | "q_uniform", "min": …,
"max": …[, "q": …]}`. Draws come from the `random.Random` the caller seeds, so a random
sweep's points are reproducible from its seed. Pure: data in, data out.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Literal, get_args

from wild.record import record

DistributionKind = Literal["uniform", "log_uniform", "int_uniform", "q_uniform"]
DISTRIBUTIONS: tuple[DistributionKind, ...] = get_args(DistributionKind)
_KEYS = ("distribution", "min", "max", "q")


@record
class Distribution:
    """One parameter's distribution; `q` only for `q_uniform` (values are multiples of it)."""

    name: str
    kind: DistributionKind
    low: float
    high: float
    q: float | None = None

    def draw(self, rng: random.Random) -> int | float:
        if self.kind == "uniform":
            return rng.uniform(self.low, self.high)
        if self.kind == "log_uniform":
            return math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        if self.kind == "int_uniform":
            return rng.randint(int(self.low), int(self.high))
        if self.q is None:
            raise ValueError(f"{self.name}: q_uniform needs q (parse_distribution requires it)")
        # Multiples of q inside [min, max] only, so a draw never leaves the range.
        first, last = multiples(self.low, self.high, self.q)
        value = rng.randint(first, last) * self.q
        if isinstance(self.q, int):
            return int(value)
        return min(max(round(value, 12), self.low), self.high)


def multiples(low: float, high: float, q: float) -> tuple[int, int]:
    """The first and last k with k·q in [low, high], forgiving float error (0.3 / 0.05 is
    5.999…); first > last when there is none."""
    slack = 1e-9
    return math.ceil(low / q - slack), math.floor(high / q + slack)


def _number(value: object) -> bool:
    """A finite int or float (not a bool), as a float too: an int past float's range is not."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value) and math.isfinite(float(value))
    except OverflowError:
        return False


def _bounds_problem(where: str, kind: object, low: float, high: float) -> str | None:
    if not low < high:
        return f'{where} "min" {low!r} must be below "max" {high!r}'
    if not math.isfinite(float(high) - float(low)):
        return f'{where}: the range from "min" to "max" is too wide for a float'
    if kind == "log_uniform" and not low > 0:
        return f'{where} is log_uniform: "min" must be above 0, not {low!r}'
    if kind == "int_uniform" and not (isinstance(low, int) and isinstance(high, int)):
        return f'{where} is int_uniform: "min" and "max" must be whole numbers'
    return None


def _q_problem(where: str, low: float, high: float, q: object) -> str | None:
    if not _number(q) or not q > 0:  # type: ignore[operator]
        return f'{where} is q_uniform: give "q", a number above 0, e.g. 0.05'
    try:
        first, last = multiples(low, high, q)  # type: ignore[arg-type]
    except OverflowError:
        return f'{where}: "q" {q!r} is too small for this range'
    if first > last:
        return f'{where} has no multiple of "q" {q!r} between "min" and "max"'
    return None


def parse_distribution(
    name: str, value: Mapping[str, object], errors: list[str]
) -> Distribution | None:
    """The distribution `value` describes, or None with every problem added to `errors`."""
    where = f'"parameters.{name}"'
    before = len(errors)
    for key in value:
        if key not in _KEYS:
            errors.append(f'unknown field "parameters.{name}.{key}"; known: {", ".join(_KEYS)}')
    kind, low, high, q = (value.get(key) for key in _KEYS)
    if kind not in DISTRIBUTIONS:
        errors.append(
            f'"parameters.{name}.distribution" {kind!r} is not one of {", ".join(DISTRIBUTIONS)}'
        )
    bounds = _number(low) and _number(high)
    if not bounds:
        errors.append(f'{where} needs numbers "min" and "max", e.g. {{"min": 0.001, "max": 0.1}}')
    elif problem := _bounds_problem(where, kind, low, high):  # type: ignore[arg-type]
        errors.append(problem)
    if kind == "q_uniform" and bounds and len(errors) == before:
        if problem := _q_problem(where, low, high, q):  # type: ignore[arg-type]
            errors.append(problem)
    elif kind == "q_uniform" and not (_number(q) and q > 0):  # type: ignore[operator]
        errors.append(f'{where} is q_uniform: give "q", a number above 0, e.g. 0.05')
    elif kind != "q_uniform" and "q" in value:
        errors.append(f'{where} has "q", which only "q_uniform" uses')
    if len(errors) > before or kind not in DISTRIBUTIONS:
        return None
    return Distribution(name, kind, low, high, q)  # type: ignore[arg-type]
