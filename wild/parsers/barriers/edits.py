"""Minimal id-keyed edits of barriers.md: a check's result, a status; text in, text out.

Each changes only the lines it must (a field's value after the human's own prefix, the
header's status word) and adds a missing field after the block's last one, in its style.
"""

from __future__ import annotations

from wild.parsers.barriers.blocks import HEADER, Block, scan
from wild.parsers.barriers.records import BarrierStatus
from wild.parsers.barriers.values import clean_result, one_line
from wild.parsers.lines import append_lines, body, replace_body, split_lines


def _block(lines: list[str], barrier_id: str) -> Block | None:
    return next((b for b in scan(lines)[0] if b.id == barrier_id), None)


def _insert(lines: list[str], at: int, bodies: list[str]) -> str:
    return append_lines("".join(lines[:at]), bodies) + "".join(lines[at:])


def _apply(
    text: str, barrier_id: str, updates: list[tuple[str, str]], status: BarrierStatus | None
) -> str:
    """Set each field in place (or add it after the block's last field) and maybe the status."""
    lines = split_lines(text)
    block = _block(lines, barrier_id)
    if block is None:
        return text
    missing = []
    for name, new in updates:
        f = block.first(name)
        if f is None:
            missing.append((name, new))
            continue
        prefix = body(lines[f.index])[: f.value_at]
        prefix += "" if prefix.endswith((" ", "\t")) else " "
        lines[f.index] = replace_body(lines[f.index], prefix + new)
    header = HEADER.match(body(lines[block.header]))
    if status is not None and header is not None and header["status"].lower() != status:
        head = body(lines[block.header])
        start, end = header.span("status")
        lines[block.header] = replace_body(
            lines[block.header], head[:start] + status.upper() + head[end:]
        )
    if not missing:
        return "".join(lines)
    last = block.fields[-1] if block.fields else None
    lead, bold = (last.lead, last.bold) if last is not None else ("- ", False)
    bodies = [
        f"{lead}**{name}:** {new}" if bold else f"{lead}{name}: {new}" for name, new in missing
    ]
    return _insert(lines, (last.index if last is not None else block.header) + 1, bodies)


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
