"""The one edit of human-policy.md: swap the current policy and append a history entry,
leaving every other byte as it was."""

from __future__ import annotations

from wild.parsers.lines import body, dominant_ending, split_lines
from wild.parsers.policy import structure
from wild.parsers.policy.parser import parse


def _text_lines(text: str) -> list[str]:
    """Bodies of a generated block, without its trailing blank lines."""
    bodies = [body(line) for line in split_lines(text)]
    while bodies and not bodies[-1].strip():
        bodies.pop()
    return bodies


def apply_policy(text: str, section: str, *, history_entry: str) -> str:
    """Replace the current-policy section with `section` and append `history_entry` to history.

    Every line outside the replaced section stays byte for byte (a last line without an ending
    gets one when something is added after it). With no current section, the section goes
    before `## Policy History`, or at the end under a `# Human Policy` title when there is
    none, so whatever the file held stays above it.
    """
    doc = parse(text)
    lines = list(doc.lines)
    bodies = [body(line) for line in lines]
    eol = dominant_ending(lines)
    new_section = _text_lines(section)
    entry = _text_lines(history_entry)
    edits: list[tuple[int, int, list[str]]] = []

    if doc.current is not None:
        start, end = doc.current.start, doc.current.end
        edits.append((start, end, new_section + ([""] if end < len(lines) else [])))
    else:
        at = doc.history_span.start if doc.history_span is not None else len(lines)
        titled = any(b.strip().lower() == "# human policy" for b in bodies[:at])
        title = [] if titled else ["# Human Policy", ""]
        edits.append((at, at, [*title, *new_section, "", "---", ""]))

    if doc.history_span is not None:
        edits.append((doc.history_span.end, doc.history_span.end, entry))
    else:
        # A new history goes at the very end; a `---` closes the policy unless one already
        # does or another section follows it.
        frame = ["---", ""] if doc.current is not None and doc.current.end == len(lines) else []
        edits.append((len(lines), len(lines), [*frame, "## Policy History", "", *entry]))

    # Text added at the end of a file whose last code block or comment never closes would
    # be hidden in it.
    closer = structure.scan(lines, bodies).closer
    replaced_to_end = doc.current is not None and doc.current.end == len(lines)
    return _splice(lines, edits, eol, close_with=None if replaced_to_end else closer)


def _splice(
    lines: list[str], edits: list[tuple[int, int, list[str]]], eol: str, close_with: str | None
) -> str:
    """Apply (start, end, new bodies) edits; an insert at a point goes before a replacement
    starting there. Inserted blocks get a blank line on each side where they touch text, and
    `close_with` is written before the first block added at the end."""
    out: list[str] = []
    position = 0
    for start, end, new in sorted(edits, key=lambda edit: (edit[0], edit[1])):
        out.extend(lines[position:start])
        if out and not out[-1].endswith("\n"):
            out[-1] += eol
        if close_with is not None and start == len(lines):
            out.append(close_with + eol)
            close_with = None
        block = list(new)
        if start == end and block:
            if out and body(out[-1]).strip() and block[0].strip():
                block.insert(0, "")
            if start < len(lines) and block[-1].strip():
                block.append("")
        out.extend(line + eol for line in block)
        position = max(position, end)
    out.extend(lines[position:])
    return "".join(out)
