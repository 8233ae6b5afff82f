"""Lossless parser and minimal id-keyed edits for `.wild/checks.md` (the project's definition
of done: what must hold before the loop may end).

The package: `records` (Check, CheckList, kinds, strategy, mode), `parser` (parse, in the
block shape of `wild.parsers.blocks`) and `edits` (record_result).
"""

from wild.parsers.checks.edits import record_result
from wild.parsers.checks.parser import parse
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
    CheckType,
    Mode,
    Strategy,
    find,
    render,
)

__all__ = [
    "CHECK_TYPES",
    "COMMAND_TYPES",
    "DEFAULT_TIMEOUT_S",
    "FILE",
    "MODES",
    "STATUSES",
    "STRATEGIES",
    "Check",
    "CheckList",
    "CheckStatus",
    "CheckType",
    "Mode",
    "Strategy",
    "find",
    "parse",
    "record_result",
    "render",
]
