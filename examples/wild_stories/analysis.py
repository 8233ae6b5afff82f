"""What a story's analysis returns: the report, its answers as data, and the files to write."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Analysis:
    """`conclusions` are compared with the story's expected/; `files` are written under
    results/ by name; `copies` maps a results/ name to a file of the project to copy there.
    `need_human` says why the story cannot complete before the human decides; `notify` is a
    note for the human that blocks nothing."""

    report: str
    conclusions: Mapping[str, Any]
    files: Mapping[str, str] = field(default_factory=dict)
    copies: Mapping[str, str] = field(default_factory=dict)
    need_human: str | None = None
    notify: str | None = None


def table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def number(values: Mapping[str, Any], key: str) -> float | None:
    """A metric as a finite float, or None when a run wrote it missing, non-numeric or NaN:
    a run's files are its own, so the analysis takes nothing in them on trust."""
    value = values.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
