"""The records a parse of barriers.md yields, the barrier types, and lookups on them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from wild.parsers.lines import Problem, Span
from wild.record import record

BarrierStatus = Literal["waiting", "satisfied", "failed"]
STATUSES: tuple[BarrierStatus, ...] = get_args(BarrierStatus)
BarrierType = Literal["command-check", "file-exists", "count-based", "webhook", "manual"]
BARRIER_TYPES: tuple[BarrierType, ...] = get_args(BarrierType)
# Types whose check runs the shell command on their `Check:` line.
COMMAND_TYPES: frozenset[str] = frozenset({"command-check", "count-based"})
# Types wild checks by itself; webhook and manual barriers change only from outside.
CHECKABLE_TYPES: frozenset[str] = COMMAND_TYPES | {"file-exists"}
EXTERNAL_TYPES: frozenset[str] = frozenset(BARRIER_TYPES) - CHECKABLE_TYPES
DEFAULT_INTERVAL_S = 60.0
FILE = "barriers.md"


@record
class Barrier:
    """One `## [STATUS] id` block; `fields` holds every `Key: value` line as written."""

    id: str
    status: BarrierStatus
    type: str
    check: str | None
    expect: str | None
    interval_s: float
    file: str | None
    target: int | None
    timeout_s: float | None
    created: str | None
    last_check: str | None
    result: str | None
    satisfied_at: str | None
    blocks: tuple[str, ...]
    fields: Mapping[str, str]
    span: Span


@record
class BarrierList:
    """The whole file: its lines (lossless), its barriers in file order, what was not understood."""

    lines: tuple[str, ...]
    barriers: tuple[Barrier, ...]
    problems: tuple[Problem, ...]


def render(doc: BarrierList) -> str:
    """The exact text the document was parsed from."""
    return "".join(doc.lines)


def find(doc: BarrierList, barrier_id: str) -> Barrier | None:
    """The barrier with this id, or None."""
    return next((b for b in doc.barriers if b.id == barrier_id), None)
