"""The records a parse of checks.md yields: the check kinds, strategy and mode, and lookups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from wild.parsers.lines import Problem, Span
from wild.record import record

CheckStatus = Literal["pending", "passing", "failing"]
STATUSES: tuple[CheckStatus, ...] = get_args(CheckStatus)
CheckType = Literal[
    "tests-pass",
    "build-succeeds",
    "lint-passes",
    "type-checks",
    "command-succeeds",
    "file-exists",
    "file-contains",
]
CHECK_TYPES: tuple[CheckType, ...] = get_args(CheckType)
# Kinds that pass when their `Command:` exits 0; they differ only in what they say they check.
COMMAND_TYPES: frozenset[str] = frozenset(CHECK_TYPES[:5])
Strategy = Literal["all", "any"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
# verify: COMPLETE needs the agent's word and the checks; override: the checks alone decide;
# assist: the checks only inform the next prompt.
Mode = Literal["verify", "override", "assist"]
MODES: tuple[Mode, ...] = get_args(Mode)
DEFAULT_TIMEOUT_S = 600.0
FILE = "checks.md"


@record
class Check:
    """One `## [STATUS] id` block; `fields` holds every `Key: value` line as written."""

    id: str
    status: CheckStatus
    type: str
    command: str | None
    timeout_s: float
    file: str | None
    pattern: str | None
    last_run: str | None
    result: str | None
    fields: Mapping[str, str]
    span: Span


@record
class CheckList:
    """The whole file: its lines (lossless), the strategy and mode, its checks in file order,
    and what was not understood."""

    lines: tuple[str, ...]
    strategy: Strategy
    mode: Mode
    checks: tuple[Check, ...]
    problems: tuple[Problem, ...]


def render(doc: CheckList) -> str:
    """The exact text the document was parsed from."""
    return "".join(doc.lines)


def find(doc: CheckList, check_id: str) -> Check | None:
    """The check with this id, or None."""
    return next((c for c in doc.checks if c.id == check_id), None)
