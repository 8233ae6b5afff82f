"""The parser of barriers.md: each block's fields read into a `Barrier`, problems reported,
never raised, every byte kept."""

from __future__ import annotations

import re
from types import MappingProxyType

from wild.parsers.barriers.blocks import DIALECT, Block, scan
from wild.parsers.barriers.records import (
    BARRIER_TYPES,
    DEFAULT_INTERVAL_S,
    FILE,
    STATUSES,
    Barrier,
    BarrierList,
    BarrierStatus,
)
from wild.parsers.block_reader import BlockReader, read_blocks
from wild.parsers.field_values import unquote
from wild.parsers.ids import is_block_id
from wild.parsers.lines import Problem, Span, split_lines
from wild.parsers.numbers import bounded_int

_STATUS: dict[str, BarrierStatus] = {status: status for status in STATUSES}


def is_barrier_id(text: str) -> bool:
    """Whether `text` reads as a barrier id in barriers.md: a block's id."""
    return is_block_id(text)


_REQUIRED = {
    "command-check": ("Check",),
    "count-based": ("Check", "Target"),
    "file-exists": ("File",),
}


class _Reader(BlockReader):
    """Reads one barrier block's fields into record values, collecting problems."""

    def __init__(self, block: Block) -> None:
        super().__init__(block, DIALECT)

    def target(self) -> int | None:
        text = self.value("Target")
        if text is None:
            return None
        number = bounded_int(text) if re.fullmatch(r"[+-]?\d+", text) else None
        if number is not None:
            return number
        self.bad("Target", "is not a whole number; write e.g. 8")
        return None

    def status(self) -> BarrierStatus:
        status = self.header_status(STATUSES)
        return _STATUS.get(status, "waiting")

    def type(self) -> str:
        return self.kind(BARRIER_TYPES, _REQUIRED)


def _barrier(block: Block) -> tuple[Barrier, list[Problem]]:
    """Turn one block into a record, reporting (never raising on) what a human got wrong."""
    read = _Reader(block)
    status, btype = read.status(), read.type()
    read.strays()
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
    barriers, found = read_blocks(blocks, _barrier, problems, file=file, dialect=DIALECT)
    return BarrierList(tuple(lines), barriers, found)
