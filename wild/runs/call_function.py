"""Runs a `python_function` skill: `python -m wild.runs.call_function pkg.mod:fn --k=v …`.

It is the subprocess a run executes (wild.runs.resolve): it imports `pkg.mod` from the
current folder (the run's workdir, first on `sys.path` under `-m`) and calls `fn(k=v, …)`.
A value is read as JSON when it parses (`0.2`, `true`, `[1, 2]`), else kept as text; a `-`
in a key becomes `_`, so `--batch-size=8` is `batch_size=8`. A result other than None is
printed as JSON; an exception exits 1 with its traceback in the run's log.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any

USAGE = "usage: python -m wild.runs.call_function package.module:function [--key=value ...]"


def parse_value(text: str) -> Any:
    """JSON when the text parses as JSON, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_arguments(words: Sequence[str]) -> dict[str, Any] | str:
    """Keyword arguments from `--key=value` words, or the error text."""
    kwargs: dict[str, Any] = {}
    for word in words:
        key, sep, value = word.removeprefix("--").partition("=")
        if not word.startswith("--") or not sep or not key:
            return f"{word!r} is not --key=value; {USAGE}"
        kwargs[key.replace("-", "_")] = parse_value(value)
    return kwargs


def main(argv: Sequence[str]) -> int:
    if not argv or ":" not in argv[0]:
        print(USAGE, file=sys.stderr)
        return 2
    module_name, _, function_name = argv[0].partition(":")
    kwargs = parse_arguments(argv[1:])
    if isinstance(kwargs, str):
        print(kwargs, file=sys.stderr)
        return 2
    function = getattr(importlib.import_module(module_name), function_name)
    result = function(**kwargs)
    if result is not None:
        print(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
