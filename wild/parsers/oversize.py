"""Shrinking the JSON object of a line over the size limit so it can still be used, visibly.

A job may append a 10 MB alert. Refusing it would stop every loop start (wild's own status
line for it could never be written); using it whole would flood prompts, terminals and every
line wild appends for it. So its long strings are cut, each with a `… (N more bytes)` marker,
and a problem says so. The file keeps the full line: nothing is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wild.output import cut

LONGEST_VALUE_CHARS = 16 * 1024
# When cutting strings is not enough (a huge number of small values), only these are kept.
_ESSENTIAL = ("id", "timestamp", "severity", "source", "type", "description", "status")


def _shortened(value: Any) -> Any:
    if isinstance(value, str):
        return cut(value, LONGEST_VALUE_CHARS)
    if isinstance(value, dict):
        return {cut(key, LONGEST_VALUE_CHARS): _shortened(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shortened(item) for item in value]
    return value


def shrink(obj: dict[str, Any], fits: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """`obj` with strings (keys too) over LONGEST_VALUE_CHARS cut; if `fits(result)` is still
    false, only its essential fields, cut as well."""
    short: dict[str, Any] = _shortened(obj)
    if fits(short):
        return short
    return {key: short[key] for key in _ESSENTIAL if key in short}
