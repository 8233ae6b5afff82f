"""Lossless parser and minimal id-keyed edits for `.wild/barriers.md` (what wild waits on)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, get_args

from wild.clock import parse_time
from wild.parsers import masking
from wild.parsers.lines import Problem, Span, append_lines, body, replace_body, split_lines

BarrierStatus = Literal["waiting", "satisfied", "failed"]
STATUSES: tuple[BarrierStatus, ...] = get_args(BarrierStatus)
_STATUS: dict[str, BarrierStatus] = {status: status for status in STATUSES}
BarrierType = Literal["command-check", "file-exists", "count-based", "webhook", "manual"]
BARRIER_TYPES: tuple[BarrierType, ...] = get_args(BarrierType)
# Types whose check runs the shell command on their `Check:` line.
COMMAND_TYPES: frozenset[str] = frozenset({"command-check", "count-based"})
# Types wild checks by itself; webhook and manual barriers change only from outside.
CHECKABLE_TYPES: frozenset[str] = COMMAND_TYPES | {"file-exists"}
EXTERNAL_TYPES: frozenset[str] = frozenset(BARRIER_TYPES) - CHECKABLE_TYPES
DEFAULT_INTERVAL_S = 60.0
RESULT_MAX_CHARS = 200
FILE = "barriers.md"

# `## [WAITING] barrier-id`: status case-insensitive, spaces tolerated anywhere a human puts them.
_HEADER = re.compile(
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
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


def is_barrier_id(text: str) -> bool:
    """Whether `text` reads as a barrier id in barriers.md (a letter, then letters, digits, _.-)."""
    return _ID.fullmatch(text) is not None


_DURATION = re.compile(r"(?P<n>\d+(?:\.\d*)?|\.\d+)[ \t]*(?P<unit>[A-Za-z]*)")
_UNIT_S = {
    **dict.fromkeys(("", "s", "sec", "secs", "second", "seconds"), 1.0),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60.0),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600.0),
    **dict.fromkeys(("d", "day", "days"), 86400.0),
}
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
_REQUIRED = {
    "command-check": ("Check",),
    "count-based": ("Check", "Target"),
    "file-exists": ("File",),
}
_TYPES_TEXT = ", ".join(BARRIER_TYPES[:-1]) + " or " + BARRIER_TYPES[-1]


@dataclass(frozen=True)
class Barrier:
    """One `## [STATUS] id` block; `fields` holds every `Key: value` line as written."""

    id: str
    status: BarrierStatus
    type: str
    check: str | None
    expect: str | None
    interval_s: float
    file: str | None
    target: int | None
    timeout_s: float | None
    created: str | None
    last_check: str | None
    result: str | None
    satisfied_at: str | None
    blocks: tuple[str, ...]
    fields: Mapping[str, str]
    span: Span


@dataclass(frozen=True)
class BarrierList:
    lines: tuple[str, ...]
    barriers: tuple[Barrier, ...]
    problems: tuple[Problem, ...]


@dataclass(frozen=True)
class _Field:
    index: int
    key: str  # as written
    canon: str | None  # canonical name for known keys
    value: str
    value_at: int  # offset of the value in the line's body, so edits keep the human's prefix
    lead: str
    bold: bool


@dataclass
class _Block:
    header: int
    status: str
    id: str
    rest: str
    end: int
    fields: list[_Field] = field(default_factory=list)
    stray: list[int] = field(default_factory=list)

    def first(self, canon: str) -> _Field | None:
        return next((f for f in self.fields if f.canon == canon), None)


def parse_duration(text: str) -> float | None:
    """Seconds in `60s`, `5m`, `1.5h`, `2 days` or a bare `90`; None unless a positive duration."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or match["unit"].lower() not in _UNIT_S:
        return None
    seconds = float(match["n"]) * _UNIT_S[match["unit"].lower()]
    return seconds if seconds > 0 else None


def clean_result(result: str) -> str:
    """A check's output as one short line that cannot break the `Result: "..."` quoting."""
    flat = " ".join(result.split()).replace('"', "'")
    return flat if len(flat) <= RESULT_MAX_CHARS else flat[: RESULT_MAX_CHARS - 1] + "…"


def _one_line(text: str) -> str:
    # Values wild writes must stay on their line, or a value could forge a header.
    return re.sub(r"[\r\n]+", " ", text).strip()


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


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


def _field(index: int, text: str) -> _Field | None:
    match = _FIELD.match(text)
    if match is None:
        return None
    key = (match["bkey"] or match["key"]).strip()
    return _Field(
        index,
        key,
        _canon(key),
        match["value"],
        match.start("value"),
        match["lead"],
        match["bkey"] is not None,
    )


def _blocks(lines: list[str], hidden: list[bool]) -> tuple[list[_Block], list[Problem]]:
    """Group lines into barrier blocks; a block runs to the next `#`/`##` heading."""
    blocks: list[_Block] = []
    problems: list[Problem] = []
    current: _Block | None = None
    for index, line in enumerate(lines):
        if hidden[index]:
            continue
        text = body(line)
        if _BOUNDARY.match(text):
            current = None
            header = _HEADER.match(text)
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
            current = _Block(index, header["status"], header["id"], header["rest"], index + 1)
            blocks.append(current)
            continue
        if current is None or not text.strip():
            continue
        current.end = index + 1
        parsed = _field(index, text)
        if parsed is not None:
            current.fields.append(parsed)
        elif not text.startswith("#") and not re.fullmatch(r"-{3,}[ \t]*", text):
            current.stray.append(index)
    return blocks, problems


class _Reader:
    """Reads one block's fields into record values, collecting problems instead of raising."""

    def __init__(self, block: _Block) -> None:
        self.block, self.id = block, block.id
        self.problems: list[Problem] = []
        self.found: dict[str, _Field] = {}
        self.raw: dict[str, str] = {}
        for f in block.fields:
            self.raw.setdefault(f.key, f.value)
            if f.canon is None:
                continue
            if f.canon in self.found:
                self.report(
                    f.index,
                    f'barrier "{self.id}" sets {f.canon} twice (first at line '
                    f"{self.found[f.canon].index + 1}); the first one is used",
                )
                continue
            self.found[f.canon] = f

    def report(self, index: int, message: str) -> None:
        self.problems.append(Problem(FILE, index + 1, message))

    def value(self, name: str) -> str | None:
        f = self.found.get(name)
        return f.value if f is not None and f.value else None

    def bad(self, name: str, message: str) -> None:
        self.report(
            self.found[name].index, f'barrier "{self.id}" {name} "{self.value(name)}" {message}'
        )

    def duration(self, name: str, example: str) -> float | None:
        text = self.value(name)
        seconds = None if text is None else parse_duration(text)
        if text is not None and seconds is None:
            self.bad(name, f"is not a duration; write e.g. {example}")
        return seconds

    def target(self) -> int | None:
        text = self.value("Target")
        if text is None or re.fullmatch(r"[+-]?\d+", text):
            return None if text is None else int(text)
        self.bad("Target", "is not a whole number; write e.g. 8")
        return None

    def time(self, name: str) -> str | None:
        text = self.value(name)
        if text is not None and parse_time(text) is None:
            self.bad(name, "is not a time; write an ISO time such as 2026-02-08T10:00:00Z")
        return text

    def status(self) -> BarrierStatus:
        block = self.block
        if not _ID.fullmatch(self.id):
            self.report(
                block.header,
                f'barrier id "{self.id}" should start with a letter and '
                'use only letters, digits, "_", "." and "-"',
            )
        if block.rest:
            self.report(
                block.header, f'text after barrier id "{self.id}" is ignored: "{block.rest}"'
            )
        status = _STATUS.get(block.status.lower())
        if status is None:
            self.report(
                block.header,
                f'barrier "{self.id}" has unknown status '
                f'"{block.status}"; use WAITING, SATISFIED or FAILED (read as WAITING)',
            )
        return status or "waiting"

    def type(self) -> str:
        raw = self.value("Type")
        btype = re.sub(r"[\s_]+", "-", (raw or "").lower())
        if raw is None:
            self.report(
                self.block.header,
                f'barrier "{self.id}" has no "- Type:" line; add one ({_TYPES_TEXT})',
            )
        elif btype not in BARRIER_TYPES:
            self.bad("Type", f"is not a barrier type; use {_TYPES_TEXT}")
        for name in _REQUIRED.get(btype, ()):
            if self.value(name) is None:
                self.report(
                    self.block.header,
                    f'barrier "{self.id}" ({btype}) has no {name}; add a "- {name}: ..." line',
                )
        return btype


def _barrier(block: _Block) -> tuple[Barrier, list[Problem]]:
    """Turn one block into a record, reporting (never raising on) what a human got wrong."""
    read = _Reader(block)
    status, btype = read.status(), read.type()
    for index in block.stray:
        read.report(
            index,
            f'line is not a "- Key: value" field of barrier "{block.id}"; it is kept and ignored',
        )
    interval = read.duration("Interval", "60s, 5m or 1h (using 60s)")
    expect, result = read.value("Expect"), read.value("Result")
    record = Barrier(
        id=block.id,
        status=status,
        type=btype,
        check=read.value("Check"),
        expect=None if expect is None else _unquote(expect),
        interval_s=interval or DEFAULT_INTERVAL_S,
        file=read.value("File"),
        target=read.target(),
        timeout_s=read.duration("Timeout", "30s, 5m or 1h"),
        created=read.time("Created"),
        last_check=read.time("Last check"),
        result=None if result is None else _unquote(result),
        satisfied_at=read.time("Satisfied"),
        blocks=tuple(t for t in re.split(r"[,\s]+", read.value("Blocks") or "") if t),
        fields=MappingProxyType(read.raw),
        span=Span(block.header, block.end),
    )
    return record, read.problems


def _scan(lines: list[str]) -> tuple[list[_Block], list[Problem]]:
    """Blocks with a usable id, first of each id only; plus the structural problems."""
    hidden, unclosed = _hidden(lines)
    blocks, problems = _blocks(lines, hidden)
    problems.extend([unclosed] if unclosed else [])
    kept: dict[str, _Block] = {}
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


def parse(text: str, file: str = FILE) -> BarrierList:
    """Read every barrier block; never raises, keeps every byte, reports what it cannot use."""
    lines = split_lines(text)
    blocks, problems = _scan(lines)
    barriers = []
    for block in blocks:
        record, more = _barrier(block)
        barriers.append(record)
        problems.extend(more)
    problems.sort(key=lambda p: p.line)
    if file != FILE:
        problems = [Problem(file, p.line, p.message) for p in problems]
    return BarrierList(tuple(lines), tuple(barriers), tuple(problems))


def render(doc: BarrierList) -> str:
    return "".join(doc.lines)


def find(doc: BarrierList, barrier_id: str) -> Barrier | None:
    return next((b for b in doc.barriers if b.id == barrier_id), None)


def _block(lines: list[str], barrier_id: str) -> _Block | None:
    return next((b for b in _scan(lines)[0] if b.id == barrier_id), None)


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
    header = _HEADER.match(body(lines[block.header]))
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
    updates = [("Last check", _one_line(checked_at)), ("Result", f'"{clean_result(result)}"')]
    if satisfied_at is None and status == "satisfied":
        satisfied_at = checked_at
    if satisfied_at is not None:
        updates.append(("Satisfied", _one_line(satisfied_at)))
    return _apply(text, barrier_id, updates, status)


def set_status(text: str, barrier_id: str, status: BarrierStatus, *, at: str) -> str:
    """Change the header's status; `satisfied` also records `Satisfied: at`."""
    updates = [("Satisfied", _one_line(at))] if status == "satisfied" else []
    return _apply(text, barrier_id, updates, status)
