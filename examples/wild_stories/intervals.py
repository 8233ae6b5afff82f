"""Means with 95 % t-intervals across seeds, and the only winner claim they allow: a group
wins when its interval lies wholly above every other group's; otherwise no difference is
detected at that many seeds."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, stdev

# Student's t, 97.5 % quantile, by degrees of freedom (scipy.stats.t.ppf(0.975, df)).
T_975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.306, 2.2622, 2.2281,
    2.201, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.093, 2.086,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip
T_975_BEYOND_30 = 2.0423  # larger df: the df-30 value, slightly wider than the exact one


def t_975(df: int) -> float:
    return T_975[df - 1] if df <= len(T_975) else T_975_BEYOND_30


@dataclass(frozen=True)
class Interval:
    """The mean of `n` values and the half-width of its 95 % t-interval (inf below 2)."""

    mean: float
    half: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half

    @property
    def high(self) -> float:
        return self.mean + self.half

    def text(self, digits: int = 1) -> str:
        half = "∞" if math.isinf(self.half) else f"{self.half:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {half}"


def interval(values: Sequence[float]) -> Interval | None:
    """The mean ± 95 % t-interval of `values`; None for no values, or values so large that
    their sum overflows (a run's files are its own: nothing in them is taken on trust)."""
    if not values:
        return None
    if len(values) < 2:
        return Interval(values[0], math.inf, 1)
    try:
        half = t_975(len(values) - 1) * stdev(values) / math.sqrt(len(values))
        return Interval(fmean(values), half, len(values))
    except OverflowError:
        return None


def winner(groups: Mapping[str, Interval]) -> str | None:
    """The group whose interval lies above every other's, if one does (and there are two or
    more groups); None means no difference detected."""
    if len(groups) < 2:
        return None
    best = max(groups, key=lambda k: groups[k].mean)
    above = all(groups[best].low > g.high for k, g in groups.items() if k != best)
    return best if above else None
