"""The block structure of barriers.md: which lines form each `## [STATUS] id` block, and its
field lines; the parser reads records from these, the edits rewrite their lines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from wild.parsers import masking
from wild.parsers.barriers.records import FILE
from wild.parsers.lines import Problem, body

# `## [WAITING] barrier-id`: status case-insensitive, spaces tolerated anywhere a human puts them.
HEADER = re.compile(
    r"##[ \t]*\[[ \t]*(?P<status>[^\]]*?)[ \t]*\][ \t]*(?P<id>\S*)[ \t]*(?P<rest>.*?)[ \t]*$"
)
# A `#`/`##` heading (or `##[` typed without a space) ends the block above it.
_BOUNDARY = re.compile(r"#{1,2}(?:[ \t]|$)|##\[")
# `- Key: value` or `- **Key:** value` (also `**Key**:`), any bullet, any indent.
_FIELD = re.compile(
    r"(?P<lead>[ \t]*[-*+][ \t]+)"
    r"(?:\*\*[ \t]*(?P<bkey>[A-Za-z][^*:]*?)[ \t]*(?::\*\*|\*\*[ \t]*:)"
    r"|(?P<key>[A-Za-z][A-Za-z0-9 _-]*?)[ \t]*:)"
    r"[ \t]*(?P<value>.*?)[ \t]*$"
)
# Normalised key (lower case, no spaces, "_" or "-") -> the canonical name wild writes.
# The camelCase aliases are the seed's interface names, which agents tend to copy.
_CANON = {
    "type": "Type",
    "check": "Check",
    "command": "Check",
    "checkcommand": "Check",
    "updatecommand": "Check",
    "expect": "Expect",
    "interval": "Interval",
    "checkinterval": "Interval",
    "file": "File",
    "waitforfile": "File",
    "target": "Target",
    "timeout": "Timeout",
    "created": "Created",
    "createdat": "Created",
    "lastcheck": "Last check",
    "result": "Result",
    "lastcheckresult": "Result",
    "satisfied": "Satisfied",
    "satisfiedat": "Satisfied",
    "blocks": "Blocks",
}


@dataclass(frozen=True)
class FieldLine:
    """One `- Key: value` line of a block, with what an edit needs to rewrite its value."""

    index: int
    key: str  # as written
    canon: str | None  # canonical name for known keys
    value: str
    value_at: int  # offset of the value in the line's body, so edits keep the human's prefix
    lead: str
    bold: bool


@dataclass
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


def _canon(key: str) -> str | None:
    return _CANON.get(re.sub(r"[\s_-]+", "", key).lower())


def _hidden(lines: list[str]) -> tuple[list[bool], Problem | None]:
    """Which lines sit in a code block or an HTML comment (examples there are not barriers),
    and the problem of one left open at the end of the file, if any."""
    text = "".join(lines)
    blocks = masking.scan(text)
    hidden = masking.masked_lines(text, blocks)
    block = masking.left_open(blocks)
    if block is None:
        return hidden, None
    return hidden, Problem(
        FILE,
        block.start + 1,
        f"{block.kind} opened here is never closed; nothing "
        f"after it is read as a barrier until a closing {block.closer}",
    )


def _field_of(index: int, text: str) -> FieldLine | None:
    match = _FIELD.match(text)
    if match is None:
        return None
    key = (match["bkey"] or match["key"]).strip()
    return FieldLine(
        index,
        key,
        _canon(key),
        match["value"],
        match.start("value"),
        match["lead"],
        match["bkey"] is not None,
    )


def _blocks(lines: list[str], hidden: list[bool]) -> tuple[list[Block], list[Problem]]:
    """Group lines into barrier blocks; a block runs to the next `#`/`##` heading."""
    blocks: list[Block] = []
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
                            FILE,
                            index + 1,
                            f'"{text.strip()}" is not a barrier '
                            'header; write it as "## [WAITING] barrier-id"',
                        )
                    )
                continue
            current = Block(index, header["status"], header["id"], header["rest"], index + 1)
            blocks.append(current)
            continue
        if current is None or not text.strip():
            continue
        current.end = index + 1
        parsed = _field_of(index, text)
        if parsed is not None:
            current.fields.append(parsed)
        elif not text.startswith("#") and not re.fullmatch(r"-{3,}[ \t]*", text):
            current.stray.append(index)
    return blocks, problems


def scan(lines: list[str]) -> tuple[list[Block], list[Problem]]:
    """Blocks with a usable id, first of each id only; plus the structural problems."""
    hidden, unclosed = _hidden(lines)
    blocks, problems = _blocks(lines, hidden)
    problems.extend([unclosed] if unclosed else [])
    kept: dict[str, Block] = {}
    for block in blocks:
        if not block.id:
            problems.append(
                Problem(
                    FILE,
                    block.header + 1,
                    'barrier header has no id; write it as "## [WAITING] barrier-id"',
                )
            )
        elif block.id in kept:
            problems.append(
                Problem(
                    FILE,
                    block.header + 1,
                    f'duplicate barrier id "{block.id}" '
                    f"(first at line {kept[block.id].header + 1}); this block is "
                    "ignored, rename it",
                )
            )
        else:
            kept[block.id] = block
    return list(kept.values()), problems
