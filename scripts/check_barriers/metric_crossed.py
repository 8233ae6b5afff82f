#!/usr/bin/env python3
"""Barrier check: a metric in a JSON-lines file (a run's `metrics.jsonl`) crossed a threshold.

usage: metric_crossed.py FILE KEY OP VALUE [last|best]

Each line of FILE is a JSON object such as `{"step": 200, "val_loss": 0.31}`. OP is one of
`>` `>=` `<` `<=` (quote it in a shell). `last` (the default) judges the last line that has a
number under KEY; `best` judges the best such number (the largest for `>`/`>=`, the smallest
for `<`/`<=`). Lines that are not JSON objects, or torn by a writer that is still writing, are
skipped. Exit 0 when the value crossed, 1 when not yet (or the file or key is not there yet),
2 on a usage error; one line of output says why.
"""

from __future__ import annotations

import json
import math
import operator
import sys
from collections.abc import Callable

USAGE = "usage: metric_crossed.py FILE KEY OP VALUE [last|best]"
OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


def numbers(path: str, key: str) -> list[tuple[int, float]]:
    """(line number, value) of every line whose KEY holds a finite number, in file order."""
    found = []
    with open(path, "rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):  # torn, garbage, not UTF-8, nested too deep
                continue
            value = record.get(key) if isinstance(record, dict) else None
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if math.isfinite(value):
                found.append((number, float(value)))
    return found


def judge(argv: list[str]) -> tuple[int, str]:
    if argv[:1] in (["-h"], ["--help"]):
        return 0, USAGE
    if len(argv) not in (4, 5):
        return 2, USAGE
    path, key, op, value_text = argv[:4]
    mode = argv[4] if len(argv) == 5 else "last"
    if op not in OPS:
        return 2, f"metric_crossed.py: OP must be one of > >= < <=, not {op!r}"
    if mode not in ("last", "best"):
        return 2, f"metric_crossed.py: the last argument must be last or best, not {mode!r}"
    try:
        threshold = float(value_text)
    except ValueError:
        return 2, f"metric_crossed.py: VALUE must be a number, not {value_text!r}"
    if not math.isfinite(threshold):
        return 2, f"metric_crossed.py: VALUE must be a finite number, not {value_text!r}"
    try:
        seen = numbers(path, key)
    except FileNotFoundError:
        return 1, f"{path} does not exist yet"
    except OSError as exc:
        return 1, f"cannot read {path}: {exc.strerror or exc}"
    if not seen:
        return 1, f"no line of {path} has a number under {key!r} yet"
    if mode == "last":
        line, value = seen[-1]
    else:
        pick = max if op in (">", ">=") else min
        line, value = pick(seen, key=lambda pair: pair[1])
    where = f"{key} = {value:g} ({mode}, line {line})"
    if OPS[op](value, threshold):
        return 0, f"{where} {op} {threshold:g}"
    return 1, f"{where}, waiting for {op} {threshold:g}"


if __name__ == "__main__":
    code, line = judge(sys.argv[1:])
    print(line, file=sys.stderr if code == 2 else sys.stdout)
    sys.exit(code)
