"""Minimal id-keyed edits of checks.md: one check's result and status; text in, text out."""

from __future__ import annotations

from wild.parsers.blocks import set_fields
from wild.parsers.checks.parser import DIALECT
from wild.parsers.checks.records import CheckStatus
from wild.parsers.field_values import clean_result, one_line
from wild.parsers.lines import split_lines


def record_result(
    text: str, check_id: str, *, ran_at: str, result: str, status: CheckStatus
) -> str:
    """Write a run's `Last run:`/`Result:` and the header's status, changing only those lines."""
    updates = [("Last run", one_line(ran_at)), ("Result", f'"{clean_result(result)}"')]
    return set_fields(split_lines(text), DIALECT, check_id, updates, status)
