"""A Weights & Biases sweep configuration, translated into wild's sweep spec. Pure.

W&B's keys and what they become (https://docs.wandb.ai/guides/sweeps/sweep-config-keys):

- `method`: `grid` or `random` (`bayes` is refused: wild has no Bayesian search);
- `run_cap`: a grid's `max_runs`, a random search's `count` (which it needs: W&B's random
  search runs until stopped, a wild sweep has an end);
- `metric` `{name, goal: minimize|maximize}`: the `objective` `{metric, mode: min|max}`;
- `parameters`: `value` (one value), `values` (a list; `probabilities` are refused), and
  `min`/`max` with a `distribution`: `uniform`, `int_uniform`, `q_uniform` (with `q`,
  default 1), `log_uniform_values` (bounds are the values), `log_uniform` (bounds are
  natural logs), `categorical` (its `values`); without one, whole-number bounds are
  `int_uniform` and others `uniform`, as W&B reads them;
- `program`: a file of the project (it must exist: the caller checks, as for skills);
- `command`: W&B's list of words with `${env}` (`/usr/bin/env`), `${interpreter}` (the
  interpreter wild runs under), `${program}`, and last `${args}` (`--key=value`) or
  `${args_no_hyphens}` (`key=value`, for Hydra apps); default `${env} ${interpreter}
  ${program} ${args}`. It becomes the sweep's `base_command` and `args` style;
- `early_terminate` `{type: hyperband, min_iter, max_iter, eta, s}`: `early_stop`
  `{rule: hyperband, metric, mode, min_steps: min_iter, max_steps: max_iter, eta, brackets:
  s}` (the metric and mode are the sweep's `metric`'s), which wild.parsers.early_stop
  judges as W&B's hyperband does, with W&B's iterations read as the runs' logged steps;
- `name`, `description` as they are; `project` and `entity` (W&B's own) are accepted and
  unused.

Every problem is reported at once, each with the line of the key it is about when known.
"""

from __future__ import annotations

import math
import posixpath
import shlex
from collections.abc import Mapping
from typing import Any

from wild.record import record

_TOP_KEYS = (
    "program",
    "method",
    "parameters",
    "metric",
    "command",
    "early_terminate",
    "run_cap",
    "name",
    "description",
    "project",
    "entity",
)
_ARGS_MACROS = {"${args}": "--key=value", "${args_no_hyphens}": "key=value"}
_DEFAULT_COMMAND = ("${env}", "${interpreter}", "${program}", "${args}")
_GOALS = {"minimize": "min", "maximize": "max"}
_DISTRIBUTIONS = {
    "uniform": "uniform",
    "int_uniform": "int_uniform",
    "q_uniform": "q_uniform",
    "log_uniform_values": "log_uniform",
}
_KNOWN_DISTRIBUTIONS = ("categorical", "log_uniform", *_DISTRIBUTIONS)
_EARLY_KEYS = {"min_iter": "min_steps", "max_iter": "max_steps", "eta": "eta", "s": "brackets"}

Lines = Mapping[tuple[str, ...], int]


@record
class Translated:
    """wild's sweep spec for a W&B file, and the file it runs (which must exist)."""

    spec: Mapping[str, Any]
    program: str | None


def is_wandb(data: Mapping[str, Any]) -> bool:
    """Whether a decoded sweep file is W&B's: `program` or `command` (wild's own spec names
    `base_command` or `skill` instead)."""
    return "program" in data or "command" in data


class _Problems:
    """The errors found, each naming the line of the key it is about when known."""

    def __init__(self, lines: Lines) -> None:
        self.lines = lines
        self.found: list[str] = []

    def add(self, path: tuple[str, ...], text: str) -> None:
        line = self.lines.get(path)
        self.found.append(f"line {line}: {text}" if line else text)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parameter(name: str, value: object, problems: _Problems) -> object:
    """W&B's parameter as wild's: a list of values, or a distribution object."""
    at = ("parameters", name)
    where = f"W&B parameter {name!r}"
    if not isinstance(value, Mapping):
        problems.add(at, f"{where} must be a mapping with value, values or min/max")
        return None
    if "parameters" in value:
        problems.add(at, f"{where}: nested parameters are not supported; flatten them")
        return None
    if "probabilities" in value:
        problems.add(at, f"{where}: probabilities are not supported; list values evenly")
        return None
    kind = value.get("distribution")
    if "value" in value:
        return [value["value"]]
    if "values" in value and kind in (None, "categorical"):
        return value["values"]
    if kind is None and "min" in value and "max" in value:
        whole = isinstance(value["min"], int) and isinstance(value["max"], int)
        kind = "int_uniform" if whole else "uniform"
    if kind not in _KNOWN_DISTRIBUTIONS:
        problems.add(
            at,
            f"{where}: distribution {kind!r} is not supported; use one of "
            + ", ".join(_KNOWN_DISTRIBUTIONS),
        )
        return None
    low: Any = value.get("min")
    high: Any = value.get("max")
    if not _number(low) or not _number(high):
        problems.add(at, f"{where}: give numbers min and max for the {kind} distribution")
        return None
    if kind == "log_uniform":  # W&B's log_uniform bounds are natural logs of the values
        return {"distribution": "log_uniform", "min": math.exp(low), "max": math.exp(high)}
    found: dict[str, Any] = {"distribution": _DISTRIBUTIONS[str(kind)], "min": low, "max": high}
    if kind == "q_uniform":
        found["q"] = value.get("q", 1)
    return found


def _command(
    data: Mapping[str, Any], program: str | None, python: str, problems: _Problems
) -> tuple[str | None, str]:
    """The base command (every word before the args macro) and the args style."""
    given = data.get("command", list(_DEFAULT_COMMAND))
    if not isinstance(given, list) or not given or not all(isinstance(w, str) for w in given):
        problems.add(("command",), "W&B command must be a list of words")
        return None, "--key=value"
    words: list[str] = given
    if "${args_json}" in words:
        problems.add(("command",), "W&B ${args_json} is not supported; use ${args}")
    style = _ARGS_MACROS.get(words[-1])
    if style is None:
        problems.add(
            ("command",),
            "W&B command must end with ${args} or ${args_no_hyphens}: wild passes each "
            "run's parameters there",
        )
        return None, "--key=value"
    if "${program}" in words and program is None:
        problems.add(("command",), "W&B command uses ${program}; give program: FILE")
    macros: dict[str, str] = {
        "${env}": "/usr/bin/env",
        "${interpreter}": python,
        "${program}": program or "",
    }
    out: list[str] = []
    for word in words[:-1]:
        if word in _ARGS_MACROS or word == "${args_json}":
            problems.add(("command",), f"W&B command has {word} before its end; put it last")
            return None, style
        out.append(shlex.quote(macros.get(word, word)))
    return " ".join(out) if out else None, style


def _early_stop(
    value: object, objective: Mapping[str, str] | None, problems: _Problems
) -> dict[str, Any] | None:
    at = ("early_terminate",)
    if not isinstance(value, Mapping) or value.get("type") != "hyperband":
        problems.add(at, "W&B early_terminate must be {type: hyperband, min_iter: …}")
        return None
    unknown = [key for key in value if key not in (*_EARLY_KEYS, "type")]
    if unknown:
        problems.add(at, f"W&B early_terminate has unknown key {unknown[0]!r}")
    if "max_iter" in value and "s" not in value:
        problems.add(at, "W&B early_terminate max_iter needs s: how many bands below it")
    elif "max_iter" not in value and "min_iter" not in value:
        problems.add(at, "W&B early_terminate needs min_iter (its first band) or max_iter and s")
    if objective is None:
        problems.add(at, "W&B early_terminate needs metric: {name, goal} to judge runs by")
        return None
    stop: dict[str, Any] = {"rule": "hyperband", **objective}
    stop.update({_EARLY_KEYS[key]: v for key, v in value.items() if key in _EARLY_KEYS})
    return stop


def _objective(value: object, problems: _Problems) -> dict[str, str] | None:
    if (
        not isinstance(value, Mapping)
        or not isinstance(value.get("name"), str)
        or value.get("goal", "minimize") not in _GOALS
    ):
        problems.add(("metric",), "W&B metric must be {name: NAME, goal: minimize|maximize}")
        return None
    return {"metric": value["name"], "mode": _GOALS[value.get("goal", "minimize")]}


def from_wandb(data: Mapping[str, Any], lines: Lines, *, python: str) -> Translated | list[str]:
    """wild's spec for the W&B sweep `data` (decoded YAML or JSON; `lines` maps a key's path
    to its line), with `python` for `${interpreter}`; or every problem found."""
    problems = _Problems(lines)
    for key in data:
        if key not in _TOP_KEYS:
            problems.add(
                (str(key),), f"unknown W&B sweep key {key!r}; known: {', '.join(_TOP_KEYS)}"
            )
    method = data.get("method")
    if method == "bayes":
        problems.add(
            ("method",),
            'W&B method "bayes" is not supported: wild has no Bayesian search; use method: '
            "random with run_cap (or grid), and let the agent's analysis pick the next sweep",
        )
    elif method not in ("grid", "random"):
        problems.add(("method",), f"W&B method {method!r}: use grid or random")
    program = data.get("program")
    if program is not None and (not isinstance(program, str) or not program.strip()):
        problems.add(("program",), "W&B program must be a file name, e.g. train.py")
        program = None
    spec: dict[str, Any] = {
        "name": data.get("name")
        or (posixpath.splitext(posixpath.basename(program))[0] if program else "wandb-sweep")
    }
    if "description" in data:
        spec["description"] = data["description"]
    base, spec["args"] = _command(data, program, python, problems)
    if base is not None:
        spec["base_command"] = base
    parameters = data.get("parameters")
    if not isinstance(parameters, Mapping) or not parameters:
        problems.add(("parameters",), "W&B parameters must be a non-empty mapping")
    else:
        spec["parameters"] = {
            str(name): _parameter(str(name), value, problems) for name, value in parameters.items()
        }
    if method == "random":
        spec["method"] = "random"
        if "run_cap" not in data:
            problems.add(("method",), "a random W&B sweep needs run_cap: wild runs that many")
        else:
            spec["count"] = data["run_cap"]
    elif "run_cap" in data:
        spec["max_runs"] = data["run_cap"]
    objective = _objective(data["metric"], problems) if "metric" in data else None
    if objective is not None:
        spec["objective"] = objective
    if "early_terminate" in data:
        early = _early_stop(data["early_terminate"], objective, problems)
        if early is not None:
            spec["early_stop"] = early
    if problems.found:
        return problems.found
    return Translated(
        spec, program if "${program}" in data.get("command", _DEFAULT_COMMAND) else None
    )
