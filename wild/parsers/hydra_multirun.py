"""A Hydra multirun command line (`python train.py -m lr=0.1,0.01 seed=range(0,3)`) as
wild's sweep spec. Pure.

Hydra's basic sweeper takes the cartesian product of every swept override; so does wild's
grid. An override `key=a,b,c` (a comma list, outside brackets and quotes), `key=range(start,
stop[, step])` (stop excluded, as Python's) or `key=choice(a,b)` is a parameter; any other
word, fixed overrides included (`trainer.epochs=3`, `+extra=1`), stays in the command as it
is. `-m`/`--multirun` is dropped: each run is one plain Hydra run, given its values as
`key=value` words (the sweep's `"args": "key=value"` style), so the app runs unchanged.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from typing import Any

from wild.parsers.sweep_grid import MAX_RUNS

_MULTIRUN = ("-m", "--multirun")
_OVERRIDE = re.compile(r"(?P<key>[+~]{0,2}[A-Za-z_][\w.\-/@]*)=(?P<value>.*)", re.DOTALL)
_RANGE = re.compile(r"range\((?P<args>[^()]*)\)")
_CHOICE = re.compile(r"choice\((?P<args>.*)\)", re.DOTALL)
_UNSUPPORTED = re.compile(r"(interval|glob|tag|sort|shuffle)\(")


def _split(text: str) -> list[str]:
    """Split on commas outside brackets and quotes, as Hydra reads a sweep's values."""
    parts, depth, quote, current = [], 0, "", ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[({":
            depth += 1
        elif char in "])}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += char
    return [*parts, current]


def _scalar(text: str) -> Any:
    """A number as a number (runs group and compare by it); other text as written, which
    Hydra reads itself."""
    text = text.strip()
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _range(key: str, args: str, errors: list[str]) -> list[Any]:
    """Hydra's `range(stop)`, `range(start, stop)` or `range(start, stop, step)`."""
    try:
        numbers = [_number(part) for part in args.split(",")]
    except ValueError:
        numbers = []
    if not 1 <= len(numbers) <= 3 or (len(numbers) == 3 and numbers[2] == 0):
        errors.append(f"{key}=range({args}): give range(stop), range(start,stop) or a step too")
        return []
    start, stop, step = [0, *numbers, 1] if len(numbers) == 1 else [*numbers, 1][:3]

    values: list[Any] = []
    value = start
    # One past the most runs a sweep may hold: the grid's own check then says it is too big.
    while (value < stop if step > 0 else value > stop) and len(values) <= MAX_RUNS:
        values.append(value)
        value += step
    if not values:
        errors.append(f"{key}=range({args}) is empty")
    return values


def _number(text: str) -> int | float:
    value = _scalar(text)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(text)
    return value


def _swept(key: str, value: str, errors: list[str]) -> list[Any] | None:
    """The values of a swept override, or None when the override is fixed."""
    if match := _RANGE.fullmatch(value.strip()):
        return _range(key, match["args"], errors)
    if match := _CHOICE.fullmatch(value.strip()):
        return [_scalar(part) for part in _split(match["args"])]
    if _UNSUPPORTED.match(value.strip()):
        errors.append(
            f"{key}={value}: this Hydra sweep needs a sweeper plug-in; wild sweeps comma lists, "
            'range(…) and choice(…) (for distributions write a sweep file with "method": "random")'
        )
        return None
    parts = _split(value)
    return [_scalar(part) for part in parts] if len(parts) > 1 else None


def from_hydra(argv: Sequence[str]) -> dict[str, Any] | list[str]:
    """wild's sweep spec for a Hydra multirun command line, or every problem found."""
    errors: list[str] = []
    if not any(word in _MULTIRUN for word in argv):
        errors.append(
            "a Hydra sweep is a multirun: add -m, e.g. wild --sweep -- python train.py -m "
            "lr=0.1,0.01 seed=0,1"
        )
    words = [word for word in argv if word not in _MULTIRUN]
    command: list[str] = []
    parameters: dict[str, list[Any]] = {}
    for index, word in enumerate(words):
        match = _OVERRIDE.fullmatch(word) if index > 0 else None
        values = _swept(match["key"], match["value"], errors) if match else None
        if match is None or values is None:
            command.append(shlex.quote(word))
        elif match["key"][0] in "+~":
            errors.append(
                f"{word}: a swept override must name a key of the app's config, without "
                "+ or ~ (they add or remove keys)"
            )
        elif match["key"] in parameters:
            errors.append(f"{word}: {match['key']} is swept twice; give its values once")
        else:
            parameters[match["key"]] = values
    if not command:
        errors.append("give the command to sweep, e.g. wild --sweep -- python train.py -m lr=1,2")
    if not parameters:
        errors.append(
            "no override sweeps anything: give a key a comma list (lr=0.1,0.01) or "
            "range(start,stop)"
        )
    if errors:
        return errors
    program = next((w for w in words if w.endswith(".py")), words[0])
    return {
        "name": posixpath.splitext(posixpath.basename(program))[0] or "hydra",
        "base_command": " ".join(command),
        "parameters": parameters,
        "args": "key=value",
    }
