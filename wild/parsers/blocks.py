"""`## [STATUS] id` blocks of `- Key: value` fields, the shape barriers.md and checks.md share.

`scan` says which lines form each block (and which fields stand above the first one);
`set_fields` rewrites a block's field values and status word in place. Each file's parser
gives its `Dialect`: its name, what a block is called, and its canonical field names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field

from wild.parsers import masking
from wild.parsers.ids import BLOCK_ID
from wild.parsers.lines import Problem, append_lines, body, replace_body
from wild.record import record

# `## [WAITING] some-id`: status case-insensitive, spaces tolerated anywhere a human puts them.
HEADER = re.compile(
    r"##[ \t]*\[[ \t]*(?P<status>[^\]]*?)[ \t]*\][ \t]*(?P<id>\S*)[ \t]*(?P<rest>.*?)[ \t]*$"
)
ID = BLOCK_ID  # a block's id (wild.parsers.ids)
# A `#`/`##` heading (or `##[` typed without a space) ends the block above it.
_BOUNDARY = re.compile(r"#{1,2}(?:[ \t]|$)|##\[")
# `- Key: value` or `- **Key:** value` (also `**Key**:`), any bullet, any indent.
_FIELD = re.compile(
    r"(?P<lead>[ \t]*[-*+][ \t]+)"
    r"(?:\*\*[ \t]*(?P<bkey>[A-Za-z][^*:]*?)[ \t]*(?::\*\*|\*\*[ \t]*:)"
    r"|(?P<key>[A-Za-z][A-Za-z0-9 _-]*?)[ \t]*:)"
    r"[ \t]*(?P<value>.*?)[ \t]*$"
)


@record
class Dialect:
    """What differs between the files of this shape."""

    file: str  # e.g. "barriers.md", for problems
    noun: str  # "barrier", "check": what one block is called in messages
    example: str  # the header to suggest, e.g. "## [WAITING] barrier-id"
    # Normalised key (lower case, no spaces, "_" or "-") -> the canonical name wild writes.
    canon: Mapping[str, str]


@record
class FieldLine:
    """One `- Key: value` line, with what an edit needs to rewrite its value."""

    index: int
    key: str  # as written
    canon: str | None  # canonical name for known keys
    value: str
    value_at: int  # offset of the value in the line's body, so edits keep the human's prefix
    lead: str
    bold: bool


@record(frozen=False)
class Block:
    """The lines from one `## [STATUS] id` header to the last line that belongs to it."""

    header: int
    status: str
    id: str
    rest: str
    end: int
    fields: list[FieldLine] = field(default_factory=list)
    stray: list[int] = field(default_factory=list)

    def first(self, canon: str) -> FieldLine | None:
        """The block's first field with this canonical name, or None."""
        return next((f for f in self.fields if f.canon == canon), None)


@record
class Scan:
    """The blocks with a usable id (first of each id), the fields above the first heading,
    and the structural problems."""

    blocks: list[Block]
    preamble: list[FieldLine]
    problems: list[Problem]


def canon_of(dialect: Dialect, key: str) -> str | None:
    return dialect.canon.get(re.sub(r"[\s_-]+", "", key).lower())


def _hidden(lines: list[str], dialect: Dialect) -> tuple[list[bool], Problem | None]:
    """Which lines sit in a code block or an HTML comment (examples there are not blocks),
    and the problem of one left open at the end of the file, if any."""
    text = "".join(lines)
    spans = masking.scan(text)
    hidden = masking.masked_lines(text, spans)
    left = masking.left_open(spans)
    if left is None:
        return hidden, None
    return hidden, Problem(
        dialect.file,
        left.start + 1,
        f"{left.kind} opened here is never closed; nothing "
        f"after it is read as a {dialect.noun} until a closing {left.closer}",
    )


def _field_of(index: int, text: str, dialect: Dialect) -> FieldLine | None:
    match = _FIELD.match(text)
    if match is None:
        return None
    key = (match["bkey"] or match["key"]).strip()
    return FieldLine(
        index,
        key,
        canon_of(dialect, key),
        match["value"],
        match.start("value"),
        match["lead"],
        match["bkey"] is not None,
    )


def _group(
    lines: list[str], hidden: list[bool], dialect: Dialect
) -> tuple[list[Block], list[FieldLine], list[Problem]]:
    """Group lines into blocks; a block runs to the next `#`/`##` heading."""
    blocks: list[Block] = []
    preamble: list[FieldLine] = []
    problems: list[Problem] = []
    current: Block | None = None
    for index, line in enumerate(lines):
        if hidden[index]:
            continue
        text = body(line)
        if _BOUNDARY.match(text):
            current = None
            header = HEADER.match(text)
            if header is None:
                if text.startswith("##"):
                    problems.append(
                        Problem(
                            dialect.file,
                            index + 1,
                            f'"{text.strip()}" is not a {dialect.noun} '
                            f'header; write it as "{dialect.example}"',
                        )
                    )
                continue
            current = Block(index, header["status"], header["id"], header["rest"], index + 1)
            blocks.append(current)
            continue
        if not text.strip():
            continue
        parsed = _field_of(index, text, dialect)
        if current is None:
            if parsed is not None and not blocks:
                preamble.append(parsed)
            continue
        current.end = index + 1
        if parsed is not None:
            current.fields.append(parsed)
        elif not text.startswith("#") and not re.fullmatch(r"-{3,}[ \t]*", text):
            current.stray.append(index)
    return blocks, preamble, problems


def scan(lines: list[str], dialect: Dialect) -> Scan:
    """Blocks with a usable id, first of each id only; the preamble; the problems."""
    hidden, unclosed = _hidden(lines, dialect)
    blocks, preamble, problems = _group(lines, hidden, dialect)
    problems.extend([unclosed] if unclosed else [])
    kept: dict[str, Block] = {}
    noun = dialect.noun
    for block in blocks:
        if not block.id:
            problems.append(
                Problem(
                    dialect.file,
                    block.header + 1,
                    f'{noun} header has no id; write it as "{dialect.example}"',
                )
            )
        elif block.id in kept:
            problems.append(
                Problem(
                    dialect.file,
                    block.header + 1,
                    f'duplicate {noun} id "{block.id}" '
                    f"(first at line {kept[block.id].header + 1}); this block is "
                    "ignored, rename it",
                )
            )
        else:
            kept[block.id] = block
    return Scan(list(kept.values()), preamble, problems)


def set_fields(
    lines: list[str],
    dialect: Dialect,
    block_id: str,
    updates: list[tuple[str, str]],
    status: str | None,
) -> str:
    """Set each field of one block in place (or add it after the block's last field, in its
    style) and maybe the header's status word; every other byte stays."""
    block = next((b for b in scan(lines, dialect).blocks if b.id == block_id), None)
    if block is None:
        return "".join(lines)
    lines = list(lines)
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
    at = (last.index if last is not None else block.header) + 1
    return append_lines("".join(lines[:at]), bodies) + "".join(lines[at:])
