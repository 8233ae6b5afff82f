"""The records a parse of human-policy.md yields."""

from __future__ import annotations

from collections.abc import Mapping

from wild.parsers.lines import Problem, Span
from wild.record import record

DEFAULT_FILE = "human-policy.md"


@record
class HistoryEntry:
    """One `###` entry of the Policy History: its heading text and the lines under it."""

    heading: str
    lines: tuple[str, ...]  # bodies without endings, trailing blank lines dropped
    span: Span


@record
class PolicyDocument:
    """A parsed human-policy.md; `render(doc)` gives the text back byte for byte."""

    file: str
    lines: tuple[str, ...]
    title: str | None  # text after "## Current Policy:", e.g. "Autonomous Mode (6 hours)"
    title_line: int | None  # 1-based line of that heading
    current: Span | None  # the current-policy section apply_policy replaces
    active_from: str | None
    duration: str | None
    expires_at: str | None
    settings: Mapping[str, str]  # lower-case key -> value, e.g. "max retry attempts" -> "5"
    rules: Mapping[str, str]
    instructions: str
    history_span: Span | None
    history: tuple[HistoryEntry, ...]
    problems: tuple[Problem, ...]


def render(doc: PolicyDocument) -> str:
    """The exact text the document was parsed from."""
    return "".join(doc.lines)
