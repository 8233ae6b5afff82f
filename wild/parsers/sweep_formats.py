"""A `wild --sweep` file in any format wild reads: wild's own spec (JSON, or YAML), or a
Weights & Biases sweep (YAML or JSON; wild.parsers.wandb_sweep). Pure: text in, the
validated spec (and the program file it references, which the caller checks exists) or
every problem found out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from wild.parsers.sweeps import JsonError, SweepSpec, load_json, validate_sweep
from wild.parsers.wandb_sweep import Lines, Translated, from_wandb, is_wandb
from wild.record import record


@record
class SweepFile:
    """A validated sweep, and the program file it runs that must exist (a W&B `program`)."""

    spec: SweepSpec
    program: str | None = None


class _Loader(yaml.SafeLoader):
    """YAML 1.2's numbers: `1e-5` is a float (PyYAML's YAML 1.1 reads it as text)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$"),
    list("-+0123456789."),
)


def _lines(node: yaml.Node, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], int]:
    """Each mapping key's path and line (1-based), two levels deep: the keys W&B has."""
    found: dict[tuple[str, ...], int] = {}
    if isinstance(node, yaml.MappingNode) and len(path) < 2:
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                found[(*path, key.value)] = key.start_mark.line + 1
                found.update(_lines(value, (*path, key.value)))
    return found


def _lines_of(text: str) -> Lines:
    try:
        node = yaml.compose(text, Loader=_Loader)
    except (yaml.YAMLError, RecursionError):
        return {}  # JSON that YAML 1.1 does not read: the problems name no line
    return _lines(node) if node is not None else {}


def _decode(text: str) -> Any:
    """JSON (text starting with `{`, as wild's errors for it have always been) or YAML; a
    `JsonError` (the problems) when it reads as neither."""
    if text.lstrip().startswith("{"):
        return load_json(text)
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506  (a SafeLoader)
    except RecursionError:
        return JsonError(["the sweep is nested too deeply to read; send one YAML or JSON object"])
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        return JsonError(
            [f"the sweep is not valid YAML: {problem}{where}; send one YAML or JSON object"]
        )
    return data


def parse_sweep_file(text: str, *, python: str) -> SweepFile | list[str]:
    """The sweep in a `--sweep` file: JSON (text starting with `{`) or YAML, wild's spec or
    a W&B sweep (`program` or `command`), `python` standing for W&B's `${interpreter}`."""
    data = _decode(text)
    if isinstance(data, JsonError):
        return list(data)
    if not isinstance(data, Mapping) or not is_wandb(data):
        spec = validate_sweep(data)
        return SweepFile(spec) if isinstance(spec, SweepSpec) else spec
    # The keys' lines only for a W&B file's problems: composing a 10,000-value grid's text
    # as YAML nodes took ~6 MiB and ~0.5 s of a sweep that has no use for them.
    translated = from_wandb(data, _lines_of(text), python=python)
    if not isinstance(translated, Translated):
        return translated
    spec = validate_sweep(translated.spec)
    return SweepFile(spec, translated.program) if isinstance(spec, SweepSpec) else spec
