"""Which lines of a Markdown text are code blocks or HTML comments, which parsers must skip.

One rule for every `.wild/` file (tasks.md, barriers.md, human.md, human-policy.md) and for
an agent's reply, close to CommonMark:

* A code block opens on a line whose first non-blank text is a run of 3 or more backticks or
  tildes (after a backtick run, no other backtick on the line: "```x```" is inline code). It
  closes at the next line that holds only a run of the same character at least as long.
  Any indentation is allowed, since these files nest code under list items.
* An HTML comment opens on a line whose first non-blank text is `<!--` and closes at the
  first `-->` after it; a `<!--` later on that closing line opens the comment again (as a
  browser reads it). A `<!--` after other text on a line opens nothing.
* The opening and closing lines belong to the block; nothing opens inside a block.
* A block left open runs to the end of the text; `Block.closer` is the line that closes it.

Lines end at "\\n" only, as in `wild.parsers.lines.split_lines`. The scan looks only at the
places where a marker occurs (`str.find`), so a big file without any costs next to nothing.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

from wild.record import record

BlockKind = Literal["code block", "HTML comment"]

_MARKERS = ("<!--", "```", "~~~")
_BLANK = frozenset(" \t")


@functools.cache
def _fence_run() -> re.Pattern[str]:
    # Compiled when first used: not on the loop's way to its first agent (issue 22 item 8).
    return re.compile(r"`{3,}|~{3,}")


@record
class Block:
    """One code block or HTML comment: its lines, its text offsets, and how to close it."""

    kind: BlockKind
    start: int  # index of its opening line
    end: int  # index after its last line (the number of lines when it is left open)
    start_at: int  # offset of its opening line in the text
    end_at: int  # offset after its last line, ending included
    closer: str | None  # None when closed, else the line that would close it ("```", "-->")


@functools.lru_cache(maxsize=64)
def _fence_close(char: str, length: int) -> re.Pattern[str]:
    """A line holding only a run of `char` at least `length` long (blanks around allowed)."""
    return re.compile(rf"^[^\S\n]*{re.escape(char)}{{{length},}}[^\S\n]*$", re.MULTILINE)


def _find(text: str, marker: str, start: int, stop: int) -> int:
    """`text.find(marker, start, stop)`, searched from the marker's first character: finding
    one character is several times faster than finding three (memchr), and most files hold no
    backtick, tilde or `<` (a 10,000-task tasks.md: 0.2 ms, not 1.8)."""
    first = text.find(marker[0], start, stop)
    return first if first < 0 else text.find(marker, first, stop)


def _line_end(text: str, at: int) -> int:
    """The offset after the line holding `at`, its ending included."""
    end = text.find("\n", at)
    return len(text) if end < 0 else end + 1


def _comment_end(text: str, at: int) -> int | None:
    """Where the comment opened at `at` ends (the offset after the line closing it), or None."""
    while True:
        close = text.find("-->", at + 2)  # `<!-->` and `<!--->` are whole comments too
        if close < 0:
            return None
        end = _line_end(text, close)
        reopen = text.find("<!--", close + 3, end)
        if reopen < 0:
            return end
        at = reopen


def _fence_end(text: str, run: str, line_end: int) -> int | None:
    """Where the code block opened by `run` ends (after its closing line), or None."""
    found = _fence_close(run[0], len(run)).search(text, line_end)
    return None if found is None else _line_end(text, found.start())


def _opener(text: str, at: int, line_start: int) -> tuple[BlockKind, str] | None:
    """The block the marker at `at` opens, with its closer, when it starts the line."""
    if any(char not in _BLANK for char in text[line_start:at]):
        return None
    if text.startswith("<!--", at):
        return "HTML comment", "-->"
    run = _fence_run().match(text, at)
    if run is None:
        return None
    fence = run.group()
    if fence[0] == "`" and "`" in text[run.end() : _line_end(text, at)]:
        return None  # an inline code span, not a fence
    return "code block", fence


def scan(text: str, *, until: int | None = None) -> tuple[Block, ...]:
    """The blocks of `text` in order; with `until`, only those opening before that offset."""
    stop = len(text) if until is None else until
    blocks: list[Block] = []
    nearest = {marker: _find(text, marker, 0, stop) for marker in _MARKERS}
    line, counted = 0, 0  # the line index at offset `counted`
    pos = 0
    while True:
        found = [at for at in nearest.values() if at >= 0]
        if not found:
            break
        at = min(found)
        line_start = text.rfind("\n", 0, at) + 1
        opened = _opener(text, at, line_start)
        if opened is None:
            pos = _line_end(text, at)  # nothing later on this line starts it either
        else:
            kind, closer = opened
            end_at = (
                _comment_end(text, at)
                if kind == "HTML comment"
                else _fence_end(text, closer, _line_end(text, at))
            )
            line += text.count("\n", counted, line_start)
            counted = line_start
            closed = end_at is not None
            end_at = len(text) if end_at is None else end_at
            lines = text.count("\n", line_start, end_at) + (text[end_at - 1] != "\n")
            blocks.append(
                Block(kind, line, line + lines, line_start, end_at, None if closed else closer)
            )
            if not closed:
                break
            pos = end_at
        for marker, next_at in nearest.items():
            if 0 <= next_at < pos:
                nearest[marker] = _find(text, marker, pos, stop)
    return tuple(blocks)


def masked_lines(text: str, blocks: tuple[Block, ...] | None = None) -> list[bool]:
    """One flag per line of `split_lines(text)`: True for a line inside a block.

    `blocks` is `scan(text)`, for a caller that has it already."""
    count = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    flags = [False] * count
    for block in scan(text) if blocks is None else blocks:
        flags[block.start : block.end] = [True] * (block.end - block.start)
    return flags


def left_open(blocks: tuple[Block, ...]) -> Block | None:
    """The block that runs to the end of the text unclosed, if any (only the last one can)."""
    return blocks[-1] if blocks and blocks[-1].closer is not None else None
