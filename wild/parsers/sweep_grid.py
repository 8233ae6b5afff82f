"""A sweep's `parameters`: validated into axes, and expanded into its grid of run params.

A parameter is a list of values (`[0.1, 0.01]` or `{"values": [...]}`), or a distribution
(wild.parsers.search_space) that only a random search draws from. The grid is the cartesian
product in key order (the first key varies slowest, as `itertools.product`); a parameter
whose values are objects varies their keys together, and each run's params hold those keys
flattened (`{"batch_size": 64, "mini_batch_size": 16}`), not the parameter's own name.
A random search draws `count` points, each parameter independently (a list: one of its
values; a distribution: a draw), and a sampled grid draws `max_runs` distinct grid points;
both from `random.Random(seed)`, so the same seed gives the same points. Pure: text and data
in, data out.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from wild.parsers.search_space import Distribution, parse_distribution
from wild.record import record

# The most runs one sweep may hold: a typo in a grid (one list too many) should be an error
# the agent can read, not 10^9 lines in runs.jsonl.
MAX_RUNS = 10_000

# A parameter is passed as `--key=value` and as `WILD_PARAM_<KEY>`: a letter or `_` first,
# then letters, digits, `_` or `-`; dots too, for a Hydra app's nested keys (`optimizer.lr`).
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")

Scalar = str | int | float | bool


@record
class Axis:
    """One parameter: its name and its values, each as the params it sets in a run."""

    name: str
    points: Sequence[Mapping[str, Scalar]]


class PointsOnRequest(Sequence[Mapping[str, Scalar]]):
    """Points made from their index when asked for, not held (`ValuePoints`, `GridPoints`):
    a subclass says how many there are and how the one at an index is made."""

    def _made(self, index: int) -> Mapping[str, Scalar]:
        raise NotImplementedError

    @overload
    def __getitem__(self, at: int) -> Mapping[str, Scalar]: ...

    @overload
    def __getitem__(self, at: slice) -> Sequence[Mapping[str, Scalar]]: ...

    def __getitem__(self, at: int | slice) -> Mapping[str, Scalar] | Sequence[Mapping[str, Scalar]]:
        count = len(self)
        if isinstance(at, slice):
            return tuple(self._made(index) for index in range(*at.indices(count)))
        if not -count <= at < count:
            raise IndexError(at)
        return self._made(at % count)


class ValuePoints(PointsOnRequest):
    """A list parameter's points (`{name: value}` each), each made when it is asked for: a
    mapping per value held from the sweep's parse to the end of its recording was ~0.22 KB a
    value (2.2 MB for a 10,000-value list, at the peak of the loop that records it, issue
    23). Equal to any sequence of the same points."""

    __slots__ = ("_name", "_values")

    def __init__(self, name: str, values: Sequence[Scalar]) -> None:
        self._name, self._values = name, tuple(values)

    def _point(self, value: Scalar) -> Mapping[str, Scalar]:
        return types.MappingProxyType({self._name: value})

    def _made(self, index: int) -> Mapping[str, Scalar]:
        return self._point(self._values[index])

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Mapping[str, Scalar]]:
        return (self._point(value) for value in self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ValuePoints):
            return (self._name, self._values) == (other._name, other._values)
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._name, self._values))

    def __repr__(self) -> str:
        return repr(tuple(self))


Parameter = Axis | Distribution


@record
class Grid:
    """The runs' params in grid order, after `max_runs`; `cut` counts the points left out,
    and `sampled` says they were left out at random (`"sample": true`), not from the end."""

    points: Sequence[Mapping[str, Scalar]]
    total: int
    cut: int
    sampled: bool = False


def is_scalar(value: object) -> bool:
    """A value a run's params may hold: text, a number or a boolean (not null, not a list)."""
    return isinstance(value, str | int | float | bool)


def _bad_key(where: str, key: str) -> str:
    return (
        f"{where} {key!r} is not a usable name: start with a letter or _, then letters, "
        "digits, _ or - (it becomes --key=value and WILD_PARAM_<KEY>)"
    )


def _object_point(name: str, index: int, value: Mapping[str, Any], errors: list[str]) -> bool:
    where = f'"parameters.{name}[{index}]"'
    if not value:
        errors.append(f'{where} is an empty object; give the keys it sets, e.g. {{"bs": 64}}')
        return False
    ok = True
    for key, inner in value.items():
        if not KEY.fullmatch(key):
            errors.append(_bad_key(f"{where} key", key))
            ok = False
        elif not is_scalar(inner):
            errors.append(f"{where}.{key} must be a string, number or boolean, not {inner!r}")
            ok = False
    return ok


def _axis(name: str, values: object, errors: list[str]) -> Parameter | None:
    where = f'"parameters.{name}"'
    if not KEY.fullmatch(name):
        errors.append(_bad_key('"parameters" name', name))
        return None
    if isinstance(values, Mapping) and "distribution" in values:
        return parse_distribution(name, values, errors)
    if isinstance(values, Mapping) and set(values) == {"values"}:
        values = values["values"]
    if not isinstance(values, list) or not values:
        errors.append(f"{where} must be a non-empty list of values, e.g. [0.1, 0.01]")
        return None
    objects = [isinstance(v, Mapping) for v in values]
    if any(objects) and not all(objects):
        errors.append(f"{where} mixes objects and plain values; use one kind per parameter")
        return None
    if not all(objects):
        bad = [v for v in values if not is_scalar(v)]
        if bad:
            errors.append(f"{where} values must be strings, numbers or booleans, not {bad[0]!r}")
            return None
        return Axis(name, ValuePoints(name, values))
    if not all([_object_point(name, i, v, errors) for i, v in enumerate(values)]):
        return None
    first = list(values[0])
    for index, value in enumerate(values[1:], start=1):
        if set(value) != set(first):
            errors.append(
                f'"parameters.{name}[{index}]" has keys {sorted(value)} but '
                f'"parameters.{name}[0]" has '
                f"{sorted(first)}; objects of one parameter vary the same keys together"
            )
            return None
    return Axis(name, tuple(types.MappingProxyType(dict(v)) for v in values))


def parse_axes(parameters: object, errors: list[str]) -> tuple[Parameter, ...] | None:
    """The parameters' axes in key order, or None with the reasons added to `errors`."""
    if not isinstance(parameters, Mapping) or not parameters:
        errors.append(
            '"parameters" must be a non-empty object of value lists, e.g. '
            '{"lr": [0.1, 0.01], "seed": [1, 2]}'
        )
        return None
    axes = [_axis(str(name), values, errors) for name, values in parameters.items()]
    if any(a is None for a in axes):
        return None
    found = tuple(a for a in axes if a is not None)
    owner: dict[str, str] = {}
    for axis in found:
        for key in param_names((axis,)):
            if key in owner:
                errors.append(
                    f'"parameters.{axis.name}" sets {key!r}, which "parameters.{owner[key]}" '
                    "sets too; give each run parameter one source"
                )
                return None
            owner[key] = axis.name
    return found


def param_names(parameters: tuple[Parameter, ...]) -> list[str]:
    """The keys a run's params hold, in order."""
    return [
        key
        for p in parameters
        for key in ((p.name,) if isinstance(p, Distribution) else p.points[0])
    ]


def grid_size(axes: tuple[Axis, ...]) -> int:
    return math.prod(len(axis.points) for axis in axes)


def _flat(parts: tuple[Mapping[str, Scalar], ...]) -> Mapping[str, Scalar]:
    return types.MappingProxyType({k: v for part in parts for k, v in part.items()})


def random_points(parameters: tuple[Parameter, ...], count: int, seed: int) -> Grid:
    """`count` points, each parameter drawn independently, reproducible from `seed`."""
    rng = random.Random(seed)  # noqa: S311  (reproducible search, not secrets)

    def draw(p: Parameter) -> Mapping[str, Scalar]:
        if isinstance(p, Distribution):
            return {p.name: p.draw(rng)}
        return p.points[rng.randrange(len(p.points))]

    points = tuple(_flat(tuple(draw(p) for p in parameters)) for _ in range(count))
    return Grid(points, count, 0)


def _point_at(axes: tuple[Axis, ...], index: int) -> Mapping[str, Scalar]:
    """The grid point at `index` in grid order (the last axis varies fastest)."""
    parts: list[Mapping[str, Scalar]] = []
    for axis in reversed(axes):
        index, digit = divmod(index, len(axis.points))
        parts.append(axis.points[digit])
    return _flat(tuple(reversed(parts)))


def sample_grid(axes: tuple[Axis, ...], keep: int, seed: int) -> Grid:
    """`keep` distinct grid points drawn from `random.Random(seed)`, kept in grid order.

    Lazy: a grid far larger than `keep` costs only the points kept.
    """
    total = grid_size(axes)
    if keep >= total:
        return expand(axes, None)
    rng = random.Random(seed)  # noqa: S311  (reproducible search, not secrets)
    chosen = sorted(rng.sample(range(total), keep))
    points = tuple(_point_at(axes, index) for index in chosen)
    return Grid(points, total, total - keep, sampled=True)


class GridPoints(PointsOnRequest):
    """The first `count` points of a grid, each made from its index when asked for: a
    10,000-run sweep's params are not all held while it is recorded (~2 MB of mappings)."""

    def __init__(self, axes: tuple[Axis, ...], count: int) -> None:
        self._axes, self._count = axes, count

    def _made(self, index: int) -> Mapping[str, Scalar]:
        return _point_at(self._axes, index)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Mapping[str, Scalar]]:
        product = itertools.product(*(axis.points for axis in self._axes))
        return (_flat(combo) for combo in itertools.islice(product, self._count))


def expand(axes: tuple[Axis, ...], max_runs: int | None) -> Grid:
    """The first `max_runs` points of the product (all of them when None), in grid order.

    Lazy: a point is made when it is asked for (`GridPoints`), so a grid far larger than
    `max_runs` costs only the points kept, and those only one at a time.
    """
    total = grid_size(axes)
    keep = total if max_runs is None else min(total, max_runs)
    return Grid(GridPoints(axes, keep), total, total - keep)
