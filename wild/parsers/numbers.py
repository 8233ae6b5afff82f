"""Whole numbers read from files, bounded: a 5000-digit value is a problem, not a ValueError.

`int()` refuses strings of over 4300 digits (and is quadratic below that), and a huge count or
priority only overflows whatever uses it later, so every reader of a number in a file that
anyone can edit goes through `bounded_int`.
"""

from __future__ import annotations

MOST = 10**15  # beyond any count, priority or task number a person means


def bounded_int(digits: str, most: int = MOST) -> int | None:
    """`digits` (ASCII 0-9, an optional sign) as an int, or None when not one or over `most`
    in size."""
    body = digits.lstrip("+-")
    if not body or not body.isascii() or not body.isdigit():
        return None
    body = body.lstrip("0") or "0"
    if len(body) > len(str(most)):  # checked before int(), which could refuse or be slow
        return None
    number = int(body)
    if number > most:
        return None
    return -number if digits.startswith("-") else number
