"""The parser of checks.md: the strategy and mode above the first check, each block read into
a `Check`; problems reported, never raised, every byte kept."""

from __future__ import annotations

import re
from types import MappingProxyType

from wild.parsers.block_reader import BlockReader, read_blocks
from wild.parsers.blocks import Block, Dialect, FieldLine, scan
from wild.parsers.checks.records import (
    CHECK_TYPES,
    COMMAND_TYPES,
    DEFAULT_TIMEOUT_S,
    FILE,
    MODES,
    STATUSES,
    STRATEGIES,
    Check,
    CheckList,
    CheckStatus,
    Mode,
    Strategy,
)
from wild.parsers.field_values import unquote
from wild.parsers.lines import Problem, Span, split_lines

DIALECT = Dialect(
    file=FILE,
    noun="check",
    example="## [PENDING] check-id",
    canon={
        "type": "Type",
        "command": "Command",
        "cmd": "Command",
        "check": "Command",
        "timeout": "Timeout",
        "file": "File",
        "path": "File",
        "pattern": "Pattern",
        "contains": "Pattern",
        "lastrun": "Last run",
        "result": "Result",
        "strategy": "Strategy",
        "mode": "Mode",
    },
)
_REQUIRED = {
    **dict.fromkeys(COMMAND_TYPES, ("Command",)),
    "file-exists": ("File",),
    "file-contains": ("File", "Pattern"),
}
_STATUS: dict[str, CheckStatus] = {status: status for status in STATUSES}
_STRATEGY: dict[str, Strategy] = {strategy: strategy for strategy in STRATEGIES}
_MODE: dict[str, Mode] = {mode: mode for mode in MODES}


def _setting(
    preamble: list[FieldLine], name: str, allowed: tuple[str, ...], problems: list[Problem]
) -> str:
    """The file-level `- Strategy:` / `- Mode:` value, the first of `allowed` by default."""
    line = next((f for f in preamble if f.canon == name), None)
    if line is None:
        return allowed[0]
    value = line.value.strip().lower()
    if value in allowed:
        return value
    problems.append(
        Problem(
            FILE,
            line.index + 1,
            f'{name} "{line.value}" is not one of {", ".join(allowed)} (using {allowed[0]})',
        )
    )
    return allowed[0]


def _check(block: Block) -> tuple[Check, list[Problem]]:
    read = BlockReader(block, DIALECT)
    status = _STATUS.get(read.header_status(STATUSES), "pending")
    kind = read.kind(CHECK_TYPES, _REQUIRED)
    read.strays()
    pattern = read.value("Pattern")
    if pattern is not None:
        try:
            re.compile(unquote(pattern))
        except re.error as error:
            read.bad("Pattern", f"is not a regular expression ({error}); fix it")
    result = read.value("Result")
    record = Check(
        id=block.id,
        status=status,
        type=kind,
        command=read.value("Command"),
        timeout_s=read.duration("Timeout", "600s, 10m or 1h") or DEFAULT_TIMEOUT_S,
        file=read.value("File"),
        pattern=None if pattern is None else unquote(pattern),
        last_run=read.time("Last run"),
        result=None if result is None else unquote(result),
        fields=MappingProxyType(read.raw),
        span=Span(block.header, block.end),
    )
    return record, read.problems


def parse(text: str, file: str = FILE) -> CheckList:
    """Read the settings and every check block; never raises, keeps every byte."""
    lines = split_lines(text)
    found = scan(lines, DIALECT)
    problems = list(found.problems)
    strategy = _STRATEGY[_setting(found.preamble, "Strategy", STRATEGIES, problems)]
    mode = _MODE[_setting(found.preamble, "Mode", MODES, problems)]
    checks, found_problems = read_blocks(found.blocks, _check, problems, file=file, dialect=DIALECT)
    return CheckList(tuple(lines), strategy, mode, checks, found_problems)
