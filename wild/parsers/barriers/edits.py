"""Minimal id-keyed edits of barriers.md: a check's result, a status; text in, text out.

Each changes only the lines it must (a field's value after the human's own prefix, the
header's status word) and adds a missing field after the block's last one, in its style.
"""

from __future__ import annotations

from wild.parsers import masking
from wild.parsers.barriers.blocks import DIALECT
from wild.parsers.barriers.parser import parse
from wild.parsers.barriers.records import BarrierStatus, find
from wild.parsers.blocks import set_fields
from wild.parsers.field_values import clean_result, one_line
from wild.parsers.lines import append_lines, split_lines


def _apply(
    text: str, barrier_id: str, updates: list[tuple[str, str]], status: BarrierStatus | None
) -> str:
    """Set each field in place (or add it after the block's last field) and maybe the status."""
    return set_fields(split_lines(text), DIALECT, barrier_id, updates, status)


def record_check(
    text: str,
    barrier_id: str,
    *,
    checked_at: str,
    result: str,
    status: BarrierStatus | None = None,
    satisfied_at: str | None = None,
) -> str:
    """Write a check's `Last check:`/`Result:` (and `Satisfied:`), changing only those lines.

    `satisfied_at` defaults to `checked_at` when the check moves the barrier to satisfied.
    """
    updates = [("Last check", one_line(checked_at)), ("Result", f'"{clean_result(result)}"')]
    if satisfied_at is None and status == "satisfied":
        satisfied_at = checked_at
    if satisfied_at is not None:
        updates.append(("Satisfied", one_line(satisfied_at)))
    return _apply(text, barrier_id, updates, status)


def set_status(text: str, barrier_id: str, status: BarrierStatus, *, at: str) -> str:
    """Change the header's status; `satisfied` also records `Satisfied: at`."""
    updates = [("Satisfied", one_line(at))] if status == "satisfied" else []
    return _apply(text, barrier_id, updates, status)


def add_barrier(text: str, barrier_id: str, fields: list[tuple[str, str]]) -> str:
    """Append a `## [WAITING] id` block with `- Key: value` fields; unchanged if the id exists.

    A comment or fence left open at the end would hide the block, so it is closed first.
    """
    if find(parse(text), barrier_id) is not None:
        return text
    open_block = masking.left_open(masking.scan(text))
    lines = [] if open_block is None or open_block.closer is None else [open_block.closer]
    lines += ["", f"## [WAITING] {barrier_id}"]
    lines += [f"- {key}: {one_line(value)}" for key, value in fields]
    return append_lines(text, lines)
