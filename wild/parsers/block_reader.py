"""Reading one `## [STATUS] id` block's fields into values, with problems instead of errors;
the part the barriers.md and checks.md parsers share."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from wild.clock import parse_time
from wild.parsers.blocks import ID, Block, Dialect, FieldLine
from wild.parsers.field_values import parse_duration
from wild.parsers.lines import Problem

Record = TypeVar("Record")


class BlockReader:
    """One block's fields by canonical name (the first of each), and the problems found."""

    def __init__(self, block: Block, dialect: Dialect) -> None:
        self.block, self.id, self.dialect = block, block.id, dialect
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
                    f'{dialect.noun} "{self.id}" sets {f.canon} twice (first at line '
                    f"{self.found[f.canon].index + 1}); the first one is used",
                )
                continue
            self.found[f.canon] = f

    def report(self, index: int, message: str) -> None:
        self.problems.append(Problem(self.dialect.file, index + 1, message))

    def value(self, name: str) -> str | None:
        f = self.found.get(name)
        return f.value if f is not None and f.value else None

    def bad(self, name: str, message: str) -> None:
        self.report(
            self.found[name].index,
            f'{self.dialect.noun} "{self.id}" {name} "{self.value(name)}" {message}',
        )

    def duration(self, name: str, example: str) -> float | None:
        text = self.value(name)
        seconds = None if text is None else parse_duration(text)
        if text is not None and seconds is None:
            self.bad(name, f"is not a duration; write e.g. {example}")
        return seconds

    def time(self, name: str) -> str | None:
        text = self.value(name)
        if text is not None and parse_time(text) is None:
            self.bad(name, "is not a time; write an ISO time such as 2026-02-08T10:00:00Z")
        return text

    def header_status(self, statuses: tuple[str, ...]) -> str:
        """The header's status word in lower case, checked with the id; the first of
        `statuses` (read instead) when it is none of them."""
        block, noun = self.block, self.dialect.noun
        if not ID.fullmatch(self.id):
            self.report(
                block.header,
                f'{noun} id "{self.id}" should start with a letter and '
                'use only letters, digits, "_", "." and "-"',
            )
        if block.rest:
            self.report(
                block.header, f'text after {noun} id "{self.id}" is ignored: "{block.rest}"'
            )
        status = block.status.lower()
        if status in statuses:
            return status
        words = ", ".join(s.upper() for s in statuses[:-1]) + " or " + statuses[-1].upper()
        self.report(
            block.header,
            f'{noun} "{self.id}" has unknown status '
            f'"{block.status}"; use {words} (read as {statuses[0].upper()})',
        )
        return statuses[0]

    def kind(self, kinds: tuple[str, ...], required: Mapping[str, tuple[str, ...]]) -> str:
        """The block's `Type:` in canonical spelling, and a problem for each field that type
        needs and lacks."""
        raw = self.value("Type")
        kind = re.sub(r"[\s_]+", "-", (raw or "").lower())
        listed = ", ".join(kinds[:-1]) + " or " + kinds[-1]
        if raw is None:
            self.report(
                self.block.header,
                f'{self.dialect.noun} "{self.id}" has no "- Type:" line; add one ({listed})',
            )
        elif kind not in kinds:
            self.bad("Type", f"is not a {self.dialect.noun} type; use {listed}")
        self.require(required.get(kind, ()), kind)
        return kind

    def require(self, names: tuple[str, ...], kind: str) -> None:
        """Report each of `names` the block lacks (they are required for its `kind`)."""
        for name in names:
            if self.value(name) is None:
                self.report(
                    self.block.header,
                    f'{self.dialect.noun} "{self.id}" ({kind}) has no {name}; '
                    f'add a "- {name}: ..." line',
                )

    def strays(self) -> None:
        for index in self.block.stray:
            self.report(
                index,
                f'line is not a "- Key: value" field of {self.dialect.noun} "{self.id}"; '
                "it is kept and ignored",
            )


def read_blocks(
    blocks: Iterable[Block],
    read: Callable[[Block], tuple[Record, list[Problem]]],
    problems: list[Problem],
    *,
    file: str,
    dialect: Dialect,
) -> tuple[tuple[Record, ...], tuple[Problem, ...]]:
    """Every block read into its record; all problems in line order, named after `file`."""
    records = []
    for block in blocks:
        record, more = read(block)
        records.append(record)
        problems.extend(more)
    problems.sort(key=lambda p: p.line)
    if file != dialect.file:
        problems = [Problem(file, p.line, p.message) for p in problems]
    return tuple(records), tuple(problems)
