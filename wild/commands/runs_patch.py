"""`wild --runs`' kept table patched in place: a run's line replaced by its new line when its
cells fit the table's column widths, so an append that changes one ended run costs one line,
not 10,000 (issue 23); and `wild --runs --json`'s object of a run likewise. Pure:
`wild.commands.runs_listing` keeps the layout in the view's header and decides when to use it.

Each of the first nine columns is its cells padded to the longest (the header's included); the
last is not padded. The layout keeps each padded column's width and how many of its cells
reach it: a new cell longer than the width, or the last cell at the width growing shorter,
would change every line, and the patch declines (the table is drawn whole).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from wild.record import record

PADDED = 9  # the columns padded to their widths (the last, the metrics, is not)
GAP = "  "  # between columns


@record
class Layout:
    """The kept table's padded column widths, how many cells reach each width, and where the
    table's lines end in the text (the stopped-early lines and problems follow)."""

    widths: tuple[int, ...]
    at_width: tuple[int, ...]
    table_end: int

    def to_json(self) -> dict[str, Any]:
        return {"widths": self.widths, "atWidth": self.at_width, "tableEnd": self.table_end}

    @staticmethod
    def from_json(obj: Any) -> Layout | None:
        if not isinstance(obj, dict):
            return None
        widths, at_width, end = obj.get("widths"), obj.get("atWidth"), obj.get("tableEnd")
        if not (isinstance(widths, list) and isinstance(at_width, list) and isinstance(end, int)):
            return None
        numbers = [*widths, *at_width]
        if len(widths) != PADDED or len(numbers) != 2 * PADDED:
            return None
        if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in numbers):
            return None
        return Layout(tuple(widths), tuple(at_width), end)


def layout_of(rows: Sequence[Sequence[str]], text: str, table_end: int) -> Layout | None:
    """The layout of `text`, whose first `table_end` characters are the table of `rows` (the
    header first); None where a line could not be told by its cells: a cell holding a line
    break, or a cell at its column's width ending in a space (its width would be unclear)."""
    if text.count("\n", 0, table_end) != len(rows) - 1:
        return None
    widths: list[int] = []
    at_width: list[int] = []
    for column in list(zip(*rows, strict=True))[:PADDED]:
        lengths = list(map(len, column))
        width = max(lengths)
        widest = [cell for cell, length in zip(column, lengths, strict=True) if length == width]
        if any(cell.endswith(" ") for cell in widest):
            return None
        widths.append(width)
        at_width.append(len(widest))
    return Layout(tuple(widths), tuple(at_width), table_end)


def replace_row(
    text: str, layout: Layout, run_id: str, cells: Sequence[str]
) -> tuple[str, Layout] | None:
    """`text` with the line of `run_id` (its first cell) drawn again from `cells`, and the
    layout after; None when the run has no line, or the new cells would change the widths."""
    key = "\n" + run_id.ljust(layout.widths[0]) + GAP
    end = layout.table_end
    at = text.find(key, 0, end)
    if at < 0 or text.find(key, at + 1, end) >= 0 or "\n" in "".join(cells):
        return None
    start = at + 1
    stop = text.find("\n", start, end)
    stop = end if stop < 0 else stop
    old = text[start:stop]
    if len(old) < sum(layout.widths) + PADDED * len(GAP):  # not a line this layout drew
        return None
    counts = list(layout.at_width)
    column = 0
    for i, width in enumerate(layout.widths):
        cell = cells[i]
        if len(cell) > width or (len(cell) == width and cell.endswith(" ")):
            return None
        counts[i] += (len(cell) == width) - (old[column + width - 1] != " ")
        if counts[i] == 0:  # its widest cell grew shorter: every line would move
            return None
        column += width + len(GAP)
    line = GAP.join(cell.ljust(width) for cell, width in zip(cells, layout.widths, strict=False))
    line += GAP + cells[PADDED]
    patched = text[:start] + line + text[stop:]
    return patched, Layout(layout.widths, tuple(counts), end + len(line) - len(old))


def replace_element(data: bytes, run_id: str, element: bytes) -> bytes | None:
    """`data`, a JSON list of runs' objects as `wild.output.to_json` writes it (two spaces a
    level, keys sorted), with the object whose "id" is `run_id` replaced by the only object
    of `element` (such a list of one); None when the run has no object there. An object's
    own keys are the only lines indented by four spaces, its braces the only by two. Bytes,
    not text: megabytes at 10,000 runs, neither decoded nor encoded again."""
    key = b'\n    "id": ' + orjson.dumps(run_id) + b","
    at = data.find(key)
    if at < 0 or data.find(key, at + 1) >= 0:
        return None
    start = data.rfind(b"\n  {", 0, at)
    stop = data.find(b"\n  }", at)
    inner = element[2:-2]  # "[\n" + the object + "\n]"
    if start < 0 or stop < 0 or not (inner.startswith(b"  {") and inner.endswith(b"\n  }")):
        return None
    kept = memoryview(data)  # its two parts joined as they lie: one copy of megabytes, not three
    return b"".join((kept[: start + 1], inner, kept[stop + len(b"\n  }") :]))
