"""The parser of barriers.md: each block's fields read into a `Barrier`, problems reported,
never raised, every byte kept."""

from __future__ import annotations

import re
from types import MappingProxyType

from wild.clock import parse_time
from wild.parsers.barriers.blocks import Block, FieldLine, scan
from wild.parsers.barriers.records import (
    BARRIER_TYPES,
    DEFAULT_INTERVAL_S,
    FILE,
    STATUSES,
    Barrier,
    BarrierList,
    BarrierStatus,
)
from wild.parsers.barriers.values import parse_duration, unquote
from wild.parsers.lines import Problem, Span, split_lines
from wild.parsers.numbers import bounded_int

_STATUS: dict[str, BarrierStatus] = {status: status for status in STATUSES}
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


def is_barrier_id(text: str) -> bool:
    """Whether `text` reads as a barrier id in barriers.md (a letter, then letters, digits, _.-)."""
    return _ID.fullmatch(text) is not None


_REQUIRED = {
    "command-check": ("Check",),
    "count-based": ("Check", "Target"),
    "file-exists": ("File",),
}
_TYPES_TEXT = ", ".join(BARRIER_TYPES[:-1]) + " or " + BARRIER_TYPES[-1]


class _Reader:
    """Reads one block's fields into record values, collecting problems instead of raising."""

    def __init__(self, block: Block) -> None:
        self.block, self.id = block, block.id
        self.problems: list[Problem] = []
        self.found: dict[str, FieldLine] = {}
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
        if text is None:
            return None
        number = bounded_int(text) if re.fullmatch(r"[+-]?\d+", text) else None
        if number is not None:
            return number
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


def _barrier(block: Block) -> tuple[Barrier, list[Problem]]:
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
        expect=None if expect is None else unquote(expect),
        interval_s=interval or DEFAULT_INTERVAL_S,
        file=read.value("File"),
        target=read.target(),
        timeout_s=read.duration("Timeout", "30s, 5m or 1h"),
        created=read.time("Created"),
        last_check=read.time("Last check"),
        result=None if result is None else unquote(result),
        satisfied_at=read.time("Satisfied"),
        blocks=tuple(t for t in re.split(r"[,\s]+", read.value("Blocks") or "") if t),
        fields=MappingProxyType(read.raw),
        span=Span(block.header, block.end),
    )
    return record, read.problems


def parse(text: str, file: str = FILE) -> BarrierList:
    """Read every barrier block; never raises, keeps every byte, reports what it cannot use."""
    lines = split_lines(text)
    blocks, problems = scan(lines)
    barriers = []
    for block in blocks:
        record, more = _barrier(block)
        barriers.append(record)
        problems.extend(more)
    problems.sort(key=lambda p: p.line)
    if file != FILE:
        problems = [Problem(file, p.line, p.message) for p in problems]
    return BarrierList(tuple(lines), tuple(barriers), tuple(problems))
