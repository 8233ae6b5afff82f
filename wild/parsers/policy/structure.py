"""The Markdown structure of human-policy.md: headings, masked lines, and where the current
policy and the history sections are."""

from __future__ import annotations

import re

from wild.parsers import masking
from wild.parsers.lines import Span
from wild.parsers.policy.document import HistoryEntry
from wild.record import record

_HEADING = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*\Z")
_RULE_LINE = re.compile(r"[ ]{0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})\Z")
_CURRENT = re.compile(r"current[ \t]+policy\b[ \t]*:?[ \t]*(?P<title>.*)", re.IGNORECASE)
_HISTORY = re.compile(r"policy[ \t]+history\b", re.IGNORECASE)


@record
class Scan:
    """Markdown structure per line: headings, what is masked, and a block left open."""

    heads: list[tuple[int, str] | None]  # (level, text) of a heading line
    masked: list[bool]  # inside a code block or an HTML comment, marker lines included
    closer: str | None  # the line that closes a block left open at the end of the text


def scan(lines: tuple[str, ...] | list[str], bodies: list[str]) -> Scan:
    """The structure of the lines (`bodies` are the same lines without their endings)."""
    text = "".join(lines)
    blocks = masking.scan(text)
    masked = masking.masked_lines(text, blocks)
    heads: list[tuple[int, str] | None] = []
    for line, hidden in zip(bodies, masked, strict=True):
        heading = None if hidden else _HEADING.match(line)
        heads.append((len(heading.group(1)), (heading.group(2) or "").strip()) if heading else None)
    block = masking.left_open(blocks)
    return Scan(heads, masked, None if block is None else block.closer)


def _section_end(heads: list[tuple[int, str] | None], start: int) -> int:
    """Index of the next level 1-2 heading after `start`, or the end."""
    for index in range(start + 1, len(heads)):
        head = heads[index]
        if head is not None and head[0] <= 2:
            return index
    return len(heads)


def current_span(bodies: list[str], scan: Scan) -> tuple[Span, str] | None:
    """The current-policy section and its title, e.g. "Autonomous Mode (6 hours)"."""
    heads = scan.heads
    for index, head in enumerate(heads):
        match = _CURRENT.match(head[1]) if head is not None and head[0] == 2 else None
        if match is not None:
            stop = _section_end(heads, index)
            last = stop - 1
            while last > index and not bodies[last].strip():
                last -= 1
            # A closing `---` belongs to the document's frame, not to the policy.
            closed = last > index and not scan.masked[last] and _RULE_LINE.match(bodies[last])
            end = last if closed else stop
            return Span(index, end), match.group("title").strip()
    return None


def history(
    bodies: list[str], heads: list[tuple[int, str] | None]
) -> tuple[Span | None, tuple[HistoryEntry, ...]]:
    """The `## Policy History` section and its `###` entries; (None, ()) when there is none."""
    for index, head in enumerate(heads):
        if head is not None and head[0] == 2 and _HISTORY.match(head[1]):
            stop = _section_end(heads, index)
            starts = [(i, h[1]) for i in range(index + 1, stop) if (h := heads[i]) and h[0] == 3]
            entries = []
            for number, (first, heading) in enumerate(starts):
                end = starts[number + 1][0] if number + 1 < len(starts) else stop
                content = bodies[first + 1 : end]
                while content and not content[-1].strip():
                    content.pop()
                entries.append(HistoryEntry(heading, tuple(content), Span(first, end)))
            return Span(index, stop), tuple(entries)
    return None, ()
