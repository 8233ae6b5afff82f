"""A `<sweep>` JSON text (SPEC §7, seed 002 §5.1) read into a validated `SweepSpec`, or the
exact one-line errors an agent or a human can act on. Pure: it never raises on any input.

Required: `name`, `parameters`, and `base_command` or `skill` (not both). Optional:
`fallback`, `max_runs`, `method` (`grid` or `random`), `count`, `seed`, `sample`, `args`
(how each value reaches the command line), `early_stop`, `workdir`, `backend`, `resources`,
`slurm`, `goal`, `description`,
and what wild reads of the runs' metrics: `metrics`, `objective`, `total_steps`.
`max_attempts` (default 3) caps each run's attempts (wild.runs.retry).
Unknown keys are errors, so a misspelt `max_run` does not silently launch the whole grid.
Skills are reference-only: a target names a function, script or playbook that must exist
(checked by wild.runs.skill_targets, which does the I/O) and inline code is refused.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal, get_args

import orjson

from wild.parsers.early_stop import parse_early_stop
from wild.parsers.field_values import parse_duration
from wild.parsers.metric_summary import parse_metric_globs, parse_objective, parse_total_steps
from wild.parsers.runs import Resources, is_gpu_request
from wild.parsers.sweep_grid import (
    KEY,
    MAX_RUNS,
    Axis,
    Grid,
    Parameter,
    expand,
    grid_size,
    param_names,
    parse_axes,
    random_points,
    sample_grid,
)
from wild.record import record

SkillKind = Literal["python_function", "python_script", "shell_script", "prompt_playbook"]
SKILL_KINDS: tuple[SkillKind, ...] = get_args(SkillKind)
Method = Literal["grid", "random"]
METHODS: tuple[Method, ...] = get_args(Method)
# How each value reaches the command line: `--lr=0.1` (argparse, click), `--lr 0.1`, or
# `lr=0.1` (a Hydra app's overrides).
ArgsStyle = Literal["--key=value", "--key value", "key=value"]
ARGS_STYLES: tuple[ArgsStyle, ...] = get_args(ArgsStyle)

_TOP_KEYS = (
    "name",
    "parameters",
    "base_command",
    "skill",
    "fallback",
    "max_runs",
    # How many attempts each run gets (wild.runs.retry): a run alert offers `rerun` until then.
    "max_attempts",
    # The search: a grid (cut or sampled by max_runs) or `count` random points, from `seed`.
    "method",
    "count",
    "seed",
    "sample",
    "args",
    # Early stopping of bad runs (wild.parsers.early_stop); a W&B sweep's `early_terminate`
    # arrives here.
    "early_stop",
    "workdir",
    "backend",
    "resources",
    "slurm",
    "goal",
    "description",
    # What wild reads of each run's metrics (wild.parsers.metric_summary).
    "metrics",
    "objective",
    "total_steps",
)
_SKILL_KEYS = ("kind", "target", "args", "workdir", "timeout_s", "resources")
_FALLBACK_KEYS = ("instruction_text", "target_hint", "args")
_RESOURCE_KEYS = ("cpus", "gpus", "memory_gb", "time")
# Fields that would carry executable text instead of a reference (seed 002 §5.1: refused).
_INLINE_KEYS = frozenset(
    {"code", "body", "source", "script", "inline", "content", "program", "function_body"}
)
_FUNCTION = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")
# Characters a file reference never needs and a line of shell or Python code usually has.
_CODE_CHARS = re.compile(r"[\n\r;|&$`()<>{}'\"=]")
_BACKEND = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
MAX_ATTEMPTS = 100  # a run failing more often than this is not going to pass by retrying
_CLOCK = re.compile(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)")


@record
class Skill:
    """A reference to what each run executes (seed 002 §5.1)."""

    kind: SkillKind
    target: str
    args: Mapping[str, Any] = field(default_factory=dict)
    workdir: str | None = None


@record
class Fallback:
    """The instruction text used when the skill has no command of its own (a playbook)."""

    instruction_text: str
    args: Mapping[str, Any] = field(default_factory=dict)


@record
class SweepSpec:
    """A validated sweep: what to run, over which grid, where and with what."""

    name: str
    axes: tuple[Parameter, ...]
    base_command: str | None
    skill: Skill | None
    fallback: Fallback | None
    max_runs: int | None
    workdir: str
    backend: str | None
    resources: Resources
    raw: Mapping[str, Any]
    method: Method = "grid"
    count: int | None = None
    seed: int = 0
    sample: bool = False
    args_style: ArgsStyle = "--key=value"

    def grid(self) -> Grid:
        """The runs' params: the grid (cut or sampled by `max_runs`), or the random points."""
        if self.method == "random":
            return random_points(self.axes, self.count or 0, self.seed)
        axes = tuple(a for a in self.axes if isinstance(a, Axis))  # validate_sweep: all are
        if self.sample and self.max_runs is not None:
            return sample_grid(axes, self.max_runs, self.seed)
        return expand(axes, self.max_runs)


def parse_sweep(text: str) -> SweepSpec | list[str]:
    """The spec in a `<sweep>` body or a `--sweep` file, or the errors found in it."""
    data = load_json(text)
    return data if isinstance(data, JsonError) else validate_sweep(data)


class JsonError(list[str]):
    """Why a sweep's text is not JSON: one line naming where."""


def load_json(text: str) -> object:
    """The JSON value in `text`, or a `JsonError`."""
    try:
        return orjson.loads(text.strip().encode("utf-8", "surrogatepass"))
    except orjson.JSONDecodeError as error:
        return JsonError(
            [
                f"the sweep is not valid JSON: {error.msg} at line {error.lineno}, column "
                f"{error.colno}; send one JSON object"
            ]
        )


def validate_sweep(data: object) -> SweepSpec | list[str]:
    """The spec a decoded JSON value describes, or every error found in it."""
    if not isinstance(data, Mapping):
        return [f"the sweep must be one JSON object, not {type(data).__name__}"]
    errors: list[str] = []
    _unknown_keys(data, "", _TOP_KEYS, errors)
    name = _line(data, "name", errors, required=True)
    axes = parse_axes(data.get("parameters"), errors) if "parameters" in data else None
    if "parameters" not in data:
        errors.append('missing "parameters": give e.g. {"lr": [0.1, 0.01]}')
    command = _line(data, "base_command", errors)
    skill = _skill(data["skill"], errors) if "skill" in data else None
    fallback = _fallback(data["fallback"], errors) if "fallback" in data else None
    _choice(data, skill, errors)
    max_runs = _max_runs(data.get("max_runs"), errors)
    _max_attempts(data.get("max_attempts"), errors)
    method, count, seed, sample = _search(data, axes, max_runs, errors)
    args_style = data.get("args", "--key=value")
    if args_style not in ARGS_STYLES:
        errors.append(
            f'"args" {args_style!r} is not an argument style: use '
            + ", ".join(f'"{style}"' for style in ARGS_STYLES)
        )
    if skill is not None and skill.kind == "python_function" and args_style != "--key=value":
        errors.append('a "python_function" skill reads --key=value arguments; drop "args"')
    if "early_stop" in data:
        # The objective's own errors are _metric_keys'; here it only lends its metric.
        objective = parse_objective(data["objective"], []) if "objective" in data else None
        parse_early_stop(data["early_stop"], objective, errors)
    workdir = _line(data, "workdir", errors) or "."
    backend = _line(data, "backend", errors)
    if backend is not None and not _BACKEND.fullmatch(backend):
        errors.append(f'"backend" {backend!r} is not a backend name such as "local" or "slurm"')
    resources = _resources(data.get("resources", {}), '"resources"', errors)
    _metric_keys(data, axes, errors)
    if errors or name is None or axes is None:
        return errors
    return SweepSpec(
        name=name,
        axes=axes,
        base_command=command,
        skill=skill,
        fallback=fallback,
        max_runs=max_runs,
        workdir=skill.workdir if skill is not None and skill.workdir else workdir,
        backend=backend,
        resources=resources if resources is not None else Resources(),
        raw=types.MappingProxyType(dict(data)),
        method=method,
        count=count,
        seed=seed,
        sample=sample,
        args_style=args_style,
    )


def _search(
    data: Mapping[str, Any],
    axes: tuple[Parameter, ...] | None,
    max_runs: int | None,
    errors: list[str],
) -> tuple[Method, int | None, int, bool]:
    """The method, count, seed and sample flag, each checked against the others."""
    method = data.get("method", "grid")
    if method not in METHODS:
        errors.append(f'"method" {method!r} is not one of {", ".join(METHODS)}')
        method = "grid"
    count = data.get("count")
    if count is not None and (
        isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_RUNS
    ):
        errors.append(f'"count" must be a whole number from 1 to {MAX_RUNS}, not {count!r}')
        count = None
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        errors.append(f'"seed" must be a whole number, not {seed!r}')
        seed = 0
    sample = data.get("sample", False)
    if not isinstance(sample, bool):
        errors.append(f'"sample" must be true or false, not {sample!r}')
        sample = False
    if method == "random":
        if "count" not in data:
            errors.append('a random search needs "count": how many points to draw, e.g. 20')
        if "max_runs" in data or "sample" in data:
            errors.append(
                'a random search draws "count" points; "max_runs" and "sample" are for a grid'
            )
        return method, count, seed, sample
    if "count" in data:
        errors.append('"count" is for "method": "random"; a grid runs every point (or "max_runs")')
    if sample and "max_runs" not in data:
        errors.append('"sample": true draws "max_runs" grid points; set "max_runs"')
    for axis in axes or ():
        if not isinstance(axis, Axis):
            errors.append(
                f'"parameters.{axis.name}" is a distribution, which a grid cannot list: set '
                '"method": "random" and "count", or give a list of values'
            )
    lists = tuple(a for a in axes or () if isinstance(a, Axis))
    full = axes is not None and len(lists) == len(axes)
    if full and max_runs is None and grid_size(lists) > MAX_RUNS:
        errors.append(
            f"the grid has {grid_size(lists)} runs, more than {MAX_RUNS}; set "
            '"max_runs" (with "sample": true to draw them at random) or use fewer values'
        )
    return method, count, seed, sample


def _metric_keys(
    data: Mapping[str, Any], axes: tuple[Parameter, ...] | None, errors: list[str]
) -> None:
    params = param_names(axes or ())
    if "metrics" in data:
        parse_metric_globs(data["metrics"], params, errors)
    if "objective" in data:
        parse_objective(data["objective"], errors)
    if "total_steps" in data:
        parse_total_steps(data["total_steps"], errors)


def _unknown_keys(
    data: Mapping[Any, Any], prefix: str, known: tuple[str, ...], errors: list[str]
) -> None:
    for key in data:
        if key in _INLINE_KEYS:
            errors.append(
                f'"{prefix}{key}": inline code is refused; put it in a file in the project '
                'and reference it with "skill": {"kind": …, "target": …}'
            )
        elif key not in known:
            errors.append(f'unknown field "{prefix}{key}"; known: {", ".join(known)}')


def _line(
    data: Mapping[str, Any], key: str, errors: list[str], *, required: bool = False
) -> str | None:
    """A one-line, non-empty text field; None when absent (an error when required)."""
    value = data.get(key)
    if value is None:
        if required or key in data:
            errors.append(f'missing "{key}": give a non-empty string')
        return None
    if not isinstance(value, str) or not value.strip():
        errors.append(f'"{key}" must be a non-empty string, not {value!r}')
        return None
    if "\n" in value or "\r" in value:
        errors.append(
            f'"{key}" must be one line; put multi-line code in a script file and reference it'
        )
        return None
    return value.strip()


def _args(data: Mapping[str, Any], where: str, errors: list[str]) -> Mapping[str, Any]:
    args = data.get("args", {})
    if not isinstance(args, Mapping):
        errors.append(f'"{where}.args" must be an object of --key=value arguments')
        return {}
    bad = [key for key in args if not KEY.fullmatch(key)]
    if bad:
        errors.append(f'"{where}.args" key {bad[0]!r} is not a usable --key name')
    return types.MappingProxyType(dict(args))


def _target_error(kind: SkillKind, target: str) -> str | None:
    if kind == "python_function":
        if _FUNCTION.fullmatch(target):
            return None
        return f'"skill.target" {target!r} is not a reference "package.module:function"'
    if _CODE_CHARS.search(target) or not target.strip():
        return (
            f'"skill.target" {target!r} looks like code, not a reference: name a file in the '
            "project (inline code is refused)"
        )
    return None


def _skill(value: object, errors: list[str]) -> Skill | None:
    if not isinstance(value, Mapping):
        errors.append('"skill" must be an object {"kind": …, "target": …, "args": {…}}')
        return None
    before = len(errors)
    _unknown_keys(value, "skill.", _SKILL_KEYS, errors)
    kind, target = value.get("kind"), value.get("target")
    if kind not in SKILL_KINDS:
        errors.append(f'unknown "skill.kind" {kind!r}; use one of {", ".join(SKILL_KINDS)}')
    if not isinstance(target, str):
        errors.append(
            '"skill.target" must be a string: "module:function", a script path or a playbook'
        )
    elif kind in SKILL_KINDS and (problem := _target_error(kind, target)):
        errors.append(problem)
    args = _args(value, "skill", errors)
    workdir = _line(value, "workdir", errors)
    if "resources" in value or "timeout_s" in value:
        errors.append('put "resources" (and the time limit "time") at the top of the sweep')
    if len(errors) > before or kind not in SKILL_KINDS or not isinstance(target, str):
        return None
    return Skill(kind, target, args, workdir)


def _fallback(value: object, errors: list[str]) -> Fallback | None:
    if not isinstance(value, Mapping):
        errors.append('"fallback" must be an object {"instruction_text": "…"}')
        return None
    before = len(errors)
    _unknown_keys(value, "fallback.", _FALLBACK_KEYS, errors)
    text = _line(value, "instruction_text", errors, required=True)
    args = _args(value, "fallback", errors)
    return Fallback(text, args) if text is not None and len(errors) == before else None


def _choice(data: Mapping[str, Any], skill: Skill | None, errors: list[str]) -> None:
    """Exactly one of base_command and skill; a playbook needs a fallback to run."""
    if "base_command" in data and "skill" in data:
        errors.append('give "base_command" or "skill", not both')
    elif "base_command" not in data and "skill" not in data:
        errors.append('missing "base_command" or "skill": say what each run executes')
    if "fallback" in data and "skill" not in data:
        errors.append('"fallback" goes with a "skill"; with "base_command" it is not used')
    if skill is not None and skill.kind == "prompt_playbook" and "fallback" not in data:
        errors.append(
            'a "prompt_playbook" skill is guidance, not a command: add '
            '"fallback": {"instruction_text": "the command each run executes"}'
        )


def _max_runs(value: object, errors: list[str]) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RUNS:
        errors.append(f'"max_runs" must be a whole number from 1 to {MAX_RUNS}, not {value!r}')
        return None
    return value


def _max_attempts(value: object, errors: list[str]) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ATTEMPTS:
        errors.append(
            f'"max_attempts" must be a whole number from 1 to {MAX_ATTEMPTS} (attempts per run, '
            f"the first included), not {value!r}"
        )


def parse_run_time(value: object) -> float | None:
    """Seconds from `"HH:MM:SS"`, `"D-HH:MM:SS"`, `"MM:SS"`, a number of seconds, or a
    barrier-style `"90s"`, `"10m"`, `"1.5h"`; None if unreadable or not positive."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) if 0 < value < float("inf") else None
    if not isinstance(value, str):
        return None
    match = _CLOCK.fullmatch(value.strip())
    if match is None:
        return parse_duration(value)
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    if match.group(1) and not match.group(2):
        return None  # "1-10:00" is ambiguous; Slurm's D-HH:MM is not accepted here
    if (match.group(2) and minutes >= 60) or seconds >= 60 or (days and hours >= 24):
        return None
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    return float(total) if total > 0 else None


def _count(value: object, key: str, least: int, errors: list[str]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        errors.append(f'"resources.{key}" must be a whole number, at least {least}, not {value!r}')
        return None
    return value


def _gpus(value: object, errors: list[str]) -> float | None:
    if not is_gpu_request(value):
        errors.append(
            '"resources.gpus" must be a whole number of GPUs (0, 1, 2, …) or a share of one '
            f"GPU between 0 and 1 (0.25: four runs share a GPU), not {value!r}"
        )
        return None
    return value


def _resources(value: object, where: str, errors: list[str]) -> Resources | None:
    if not isinstance(value, Mapping):
        errors.append(f'{where} must be an object such as {{"cpus": 1, "time": "00:10:00"}}')
        return None
    before = len(errors)
    _unknown_keys(value, "resources.", _RESOURCE_KEYS, errors)
    cpus = _count(value.get("cpus", 1), "cpus", 1, errors)
    gpus = _gpus(value.get("gpus", 0), errors)
    memory = value.get("memory_gb")
    if memory is not None and (
        isinstance(memory, bool) or not isinstance(memory, int | float) or not memory > 0
    ):
        errors.append(f'"resources.memory_gb" must be a positive number, not {memory!r}')
    time_s = None
    if value.get("time") is not None:
        time_s = parse_run_time(value["time"])
        if time_s is None:
            errors.append(
                f'"resources.time" {value["time"]!r} is not a duration: write "HH:MM:SS", '
                '"D-HH:MM:SS", "MM:SS" or seconds'
            )
    if len(errors) > before or cpus is None or gpus is None:
        return None
    return Resources(
        cpus=cpus,
        gpus=gpus,
        memory_gb=float(memory) if memory is not None else None,
        time_s=time_s,
    )
