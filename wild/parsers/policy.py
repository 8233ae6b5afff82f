"""Parse and edit `.wild/human-policy.md`: the current policy's fields, instructions and history.

The format is seed 001's, read tolerantly:

    # Human Policy

    ## Current Policy: Autonomous Mode (6 hours)

    **Active From:** 2026-02-08T10:00:00Z
    **Duration:** 6 hours
    **Expires At:** 2026-02-08T16:00:00Z

    ### Settings
    - **Mode:** autonomous
    ### Escalation Rules
    - **Repeated Failures:** Escalate after 5 failed attempts
    ### Instructions
    Free text for the agent.

    ---

    ## Policy History
    ### 2026-02-08 09:00 - Interactive Mode
    - Mode: interactive

* The current policy runs from the first `## Current Policy` heading to the next heading of
  level 1 or 2; a closing `---` (and the blank lines before that heading) is not part of it.
  The history runs from `## Policy History` to the next level 1 or 2 heading; each `###`
  heading in it starts one entry. Code blocks and HTML comments (`wild.parsers.masking`) hold
  no headings and no fields; under ### Instructions they are kept as text.
* Field lines are `- **Key:** value`, also `**Key**: value`, `*`/`+` bullets and `- Key: value`;
  keys are matched case-insensitively. Values are read tolerantly ("Every 30 minutes", "30m",
  "none", "Always escalate", "Escalate after 5 failed attempts") by the `read_*` functions,
  which `wild.policy.model` uses too, so a value this module accepts is the value the policy
  gets.
* Problems, never exceptions: an unknown key, a value no reader accepts, a line in Settings or
  Escalation Rules that is not a field, an unknown `###` section, a duplicate key (the first
  applies) and a file with no current policy are reported with their line.

`apply_policy` is the one edit: it swaps the current-policy section and appends a history entry,
leaving every other byte as it was.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal, TypeVar

from wild.clock import parse_time
from wild.parsers import masking
from wild.parsers.lines import Problem, Span, body, dominant_ending, split_lines

Mode = Literal["interactive", "semi-autonomous", "autonomous", "hands-off"]
AutonomyLevel = Literal["low", "medium", "high"]
EscalationThreshold = Literal["all", "warnings", "critical-only", "never"]
CommandApproval = Literal["required", "trusted"]

MODES: tuple[Mode, ...] = ("interactive", "semi-autonomous", "autonomous", "hands-off")
AUTONOMY_LEVELS: tuple[AutonomyLevel, ...] = ("low", "medium", "high")
THRESHOLDS: tuple[EscalationThreshold, ...] = ("all", "warnings", "critical-only", "never")
APPROVALS: tuple[CommandApproval, ...] = ("required", "trusted")
# Seed 002's interruption modes; the presets module maps each to a full policy.
INTERRUPTION_MODES: tuple[str, ...] = ("wild_night", "balanced", "page_on_alert", "away_but_ping")

DEFAULT_FILE = "human-policy.md"

_T = TypeVar("_T", bound=str)


# --------------------------------------------------------------------------- value readers


def _norm(value: str) -> str:
    """Lower case, spaces and underscores as hyphens: `Semi Autonomous` -> `semi-autonomous`."""
    return re.sub(r"[\s_]+", "-", value.strip().strip("`*.").strip().lower())


def _choose(value: str, choices: tuple[_T, ...], aliases: Mapping[str, _T]) -> _T | None:
    key = _norm(value)
    for choice in choices:
        if choice == key:
            return choice
    return aliases.get(key)


_OFF = re.compile(
    r"\b(?:never|no|not|don'?t|don’t|do\s+not|off|false|none|disabled?|ignore|skip)\b|^-$|^0+$",
    re.IGNORECASE,
)
_ON = re.compile(
    r"\b(?:always|yes|true|on|enabled?|escalate|notify|page|tell|ping)\b", re.IGNORECASE
)
_INT = re.compile(r"\d+")
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = r"(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])"
_PART_RE = re.compile(_PART, re.IGNORECASE)
_WHOLE_DURATION = re.compile(rf"\s*(?:{_PART}[\s,]*(?:and\s+)?)+", re.IGNORECASE)


def read_mode(value: str) -> Mode | None:
    return _choose(
        _norm(value).removesuffix("-mode"),
        MODES,
        {"semiautonomous": "semi-autonomous", "semi": "semi-autonomous", "handsoff": "hands-off"},
    )


def read_level(value: str) -> AutonomyLevel | None:
    return _choose(value, AUTONOMY_LEVELS, {"med": "medium", "mid": "medium"})


def read_threshold(value: str) -> EscalationThreshold | None:
    return _choose(
        value,
        THRESHOLDS,
        {
            "warning": "warnings",
            "critical": "critical-only",
            "critical-alerts-only": "critical-only",
            "every": "all",
            "any": "all",
            "everything": "all",
            "none": "never",
            "off": "never",
        },
    )


def read_approval(value: str) -> CommandApproval | None:
    return _choose(value, APPROVALS, {"require": "required", "trust": "trusted"})


def read_preset(value: str) -> str | None:
    name = _norm(value).replace("-", "_")
    return name if name in INTERRUPTION_MODES else None


def read_command(value: str) -> str:
    """A notify command; "" means none. One pair of surrounding backticks is Markdown."""
    command = value.strip()
    if len(command) >= 2 and command.startswith("`") and command.endswith("`"):
        command = command[1:-1].strip()
    return "" if _OFF.fullmatch(command) else command


def read_count(value: str) -> int | None:
    """The first whole number ("Escalate after 5 failed attempts" -> 5); "never" is 0."""
    number = _INT.search(value)
    if number is not None:
        return int(number.group())
    return 0 if _OFF.search(value) else None


def read_duration(value: str, *, whole: bool = False) -> timedelta | None:
    """Sum of `<number><unit>` parts ("6 hours", "1h30m"); `whole` demands nothing else."""
    if whole and not _WHOLE_DURATION.fullmatch(value):
        return None
    parts = _PART_RE.findall(value)
    if not parts:
        return None
    seconds = sum(float(amount) * _UNIT_SECONDS[unit[0].lower()] for amount, unit in parts)
    return timedelta(seconds=seconds)


def read_minutes(value: str) -> int | None:
    """Whole minutes ("Every 30 minutes", "30m", "1h30m", "hourly", "45"); "none"/"never" is 0."""
    duration = read_duration(value)
    if duration is not None:
        return math.ceil(duration.total_seconds() / 60)
    number = _INT.search(value)
    if number is not None:
        return int(number.group())
    if re.search(r"\bhour(?:ly)?\b", value, re.IGNORECASE):
        return 60
    return 0 if _OFF.search(value) else None


def read_flag(value: str) -> bool | None:
    """ "Always escalate" / "Notify me" -> True; "Never" / "Don't notify me" -> False."""
    if _OFF.search(value):
        return False
    return True if _ON.search(value) else None


_Reader = Callable[[str], object]

_SETTINGS: Mapping[str, tuple[_Reader, str]] = {
    "mode": (read_mode, "one of " + ", ".join(MODES)),
    "preset": (read_preset, "one of " + ", ".join(INTERRUPTION_MODES)),
    "autonomy level": (read_level, "one of " + ", ".join(AUTONOMY_LEVELS)),
    "max retry attempts": (read_count, "a whole number like 3"),
    "escalation threshold": (read_threshold, "one of " + ", ".join(THRESHOLDS)),
    "progress reports": (read_minutes, 'a time like "Every 30 minutes", "45m" or "none"'),
    "context switch penalty": (read_minutes, 'a time like "15 minutes" or "none"'),
    "command approval": (read_approval, "required or trusted"),
    "notify command": (read_command, "a shell command"),
}
_RULES: Mapping[str, tuple[_Reader, str]] = {
    "repeated failures": (read_count, '"Escalate after 5 failed attempts" or "never"'),
    "stuck duration": (read_minutes, '"Escalate if no progress for 60 minutes" or "never"'),
    "critical alerts": (read_flag, '"Always escalate" or "Never escalate"'),
    "unexpected success": (read_flag, '"Notify me of breakthroughs" or "Don\'t notify me"'),
}
_HEADER_KEYS = ("active from", "duration", "expires at")
_KNOWN: Mapping[str, Collection[str]] = {
    "header": _HEADER_KEYS,
    "settings": _SETTINGS,
    "rules": _RULES,
}


# --------------------------------------------------------------------------- document


@dataclass(frozen=True)
class HistoryEntry:
    """One `###` entry of the Policy History: its heading text and the lines under it."""

    heading: str
    lines: tuple[str, ...]  # bodies without endings, trailing blank lines dropped
    span: Span


@dataclass(frozen=True)
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


_HEADING = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*\Z")
_RULE_LINE = re.compile(r"[ ]{0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})\Z")
_BOLD_FIELD = re.compile(
    r"[ \t]*(?:[-*+][ \t]+)?\*\*(?P<key>[^*]+?)[ \t]*(?::[ \t]*\*\*|\*\*[ \t]*:)[ \t]*(?P<value>.*)"
)
_PLAIN_FIELD = re.compile(
    r"[ \t]*[-*+][ \t]+(?P<key>[A-Za-z][A-Za-z \t-]*?)[ \t]*:[ \t]*(?P<value>.*)"
)
_CURRENT = re.compile(r"current[ \t]+policy\b[ \t]*:?[ \t]*(?P<title>.*)", re.IGNORECASE)
_HISTORY = re.compile(r"policy[ \t]+history\b", re.IGNORECASE)
_SUBSECTIONS = {
    "settings": "settings",
    "escalation rules": "rules",
    "rules": "rules",
    "escalation": "rules",
    "instructions": "instructions",
}


@dataclass(frozen=True)
class _Scan:
    """Markdown structure per line: headings, what is masked, and a block left open."""

    heads: list[tuple[int, str] | None]  # (level, text) of a heading line
    masked: list[bool]  # inside a code block or an HTML comment, marker lines included
    closer: str | None  # the line that closes a block left open at the end of the text


def _scan(lines: tuple[str, ...] | list[str], bodies: list[str]) -> _Scan:
    text = "".join(lines)
    blocks = masking.scan(text)
    masked = masking.masked_lines(text, blocks)
    heads: list[tuple[int, str] | None] = []
    for line, hidden in zip(bodies, masked, strict=True):
        heading = None if hidden else _HEADING.match(line)
        heads.append((len(heading.group(1)), (heading.group(2) or "").strip()) if heading else None)
    block = masking.left_open(blocks)
    return _Scan(heads, masked, None if block is None else block.closer)


def _field(line: str) -> tuple[str, str] | None:
    match = _BOLD_FIELD.match(line) or _PLAIN_FIELD.match(line)
    if match is None:
        return None
    return " ".join(match.group("key").split()), match.group("value").strip()


def _section_end(heads: list[tuple[int, str] | None], start: int) -> int:
    """Index of the next level 1-2 heading after `start`, or the end."""
    for index in range(start + 1, len(heads)):
        head = heads[index]
        if head is not None and head[0] <= 2:
            return index
    return len(heads)


def _current_span(bodies: list[str], scan: _Scan) -> tuple[Span, str] | None:
    """The current-policy section and its title, e.g. "Autonomous Mode (6 hours)"."""
    heads = scan.heads
    for index, head in enumerate(heads):
        match = _CURRENT.match(head[1]) if head is not None and head[0] == 2 else None
        if match is not None:
            stop = _section_end(heads, index)
            last = stop - 1
            while last > index and not bodies[last].strip():
                last -= 1
            # A closing `---` belongs to the document's frame, not to the policy.
            closed = last > index and not scan.masked[last] and _RULE_LINE.match(bodies[last])
            end = last if closed else stop
            return Span(index, end), match.group("title").strip()
    return None


def _history(
    bodies: list[str], heads: list[tuple[int, str] | None]
) -> tuple[Span | None, tuple[HistoryEntry, ...]]:
    for index, head in enumerate(heads):
        if head is not None and head[0] == 2 and _HISTORY.match(head[1]):
            stop = _section_end(heads, index)
            starts = [(i, h[1]) for i in range(index + 1, stop) if (h := heads[i]) and h[0] == 3]
            entries = []
            for number, (first, heading) in enumerate(starts):
                end = starts[number + 1][0] if number + 1 < len(starts) else stop
                content = bodies[first + 1 : end]
                while content and not content[-1].strip():
                    content.pop()
                entries.append(HistoryEntry(heading, tuple(content), Span(first, end)))
            return Span(index, stop), tuple(entries)
    return None, ()


class _Reading:
    """Mutable collector while walking the current section; frozen into the document after."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.values: dict[str, dict[str, str]] = {"header": {}, "settings": {}, "rules": {}}
        self.first_line: dict[tuple[str, str], int] = {}
        self.instructions: list[str] = []
        self.problems: list[Problem] = []

    def problem(self, index: int, message: str) -> None:
        self.problems.append(Problem(self.file, index + 1, message))

    def add(self, part: str, index: int, key: str, value: str) -> None:
        lower = key.lower()
        if lower not in _KNOWN[part]:
            self.problem(index, _unknown_key_message(part, key))
            return
        if (part, lower) in self.first_line:
            first = self.first_line[(part, lower)]
            self.problem(index, f'duplicate "{key}"; the first one (line {first}) applies')
            return
        self.first_line[(part, lower)] = index + 1
        self.values[part][lower] = value
        self._check_value(part, index, key, value)

    def _check_value(self, part: str, index: int, key: str, value: str) -> None:
        lower = key.lower()
        if part == "header":
            if lower == "duration":
                ok = read_duration(value) is not None or _OFF.search(value) is not None
                hint = 'a duration like "6 hours"'
            else:
                ok = parse_time(value) is not None or _OFF.search(value) is not None
                hint = "a time like 2026-02-08T16:00:00Z"
            if not ok:
                self.problem(index, f'{key} "{value}" is not {hint}; wild ignores it')
            return
        reader, hint = (_SETTINGS if part == "settings" else _RULES)[lower]
        if reader(value) is None:
            self.problem(index, f'{key} "{value}" is not {hint}; the mode\'s default applies')


def _unknown_key_message(part: str, key: str) -> str:
    lower = key.lower()
    if part != "settings" and lower in _SETTINGS:
        return f'"{key}" belongs under ### Settings; wild ignores it here'
    if part != "rules" and lower in _RULES:
        return f'"{key}" belongs under ### Escalation Rules; wild ignores it here'
    if part == "header":
        return f'unknown field "{key}"; wild reads Active From, Duration and Expires At here'
    names = _SETTINGS if part == "settings" else _RULES
    known = ", ".join(name.title() for name in names)
    return f'unknown {"setting" if part == "settings" else "rule"} "{key}"; wild knows {known}'


def _read_current(bodies: list[str], scan: _Scan, span: Span, reading: _Reading) -> None:
    part = "header"
    for index in range(span.start + 1, span.end):
        line, head = bodies[index], scan.heads[index]
        if head is not None and head[0] == 3:
            part = _SUBSECTIONS.get(head[1].rstrip(":").strip().lower(), "unknown")
            if part == "unknown":
                reading.problem(index, f'unknown section "{head[1]}"; wild ignores it')
            continue
        if part == "instructions":
            reading.instructions.append(line)
        elif part != "unknown" and line.strip() and not scan.masked[index]:
            field = _field(line)
            if field is None:
                reading.problem(index, 'not a "- **Key:** value" line; wild ignores it')
            else:
                reading.add(part, index, *field)


def parse(text: str, file: str = DEFAULT_FILE) -> PolicyDocument:
    """Parse any text; never raises. Problems say what wild could not use, with the line."""
    lines = tuple(split_lines(text))
    bodies = [body(line) for line in lines]
    scan = _scan(lines, bodies)
    heads = scan.heads
    reading = _Reading(file)
    found = _current_span(bodies, scan)
    current, title = found if found is not None else (None, None)
    if current is None:
        reading.problem(
            0,
            'no "## Current Policy" section; the default semi-autonomous policy '
            "applies (run wild --update-policy MODE to write one)",
        )
    else:
        _read_current(bodies, scan, current, reading)
        if "mode" not in reading.values["settings"]:
            reading.problem(
                current.start,
                "the current policy has no Mode setting; "
                'add "- **Mode:** semi-autonomous" under ### Settings',
            )
    instructions = reading.instructions
    while instructions and not instructions[0].strip():
        instructions.pop(0)
    while instructions and not instructions[-1].strip():
        instructions.pop()
    history_span, history = _history(bodies, heads)
    header = reading.values["header"]
    return PolicyDocument(
        file=file,
        lines=lines,
        title=title,
        title_line=None if current is None else current.start + 1,
        current=current,
        active_from=header.get("active from"),
        duration=header.get("duration"),
        expires_at=header.get("expires at"),
        settings=reading.values["settings"],
        rules=reading.values["rules"],
        instructions="\n".join(instructions),
        history_span=history_span,
        history=history,
        problems=tuple(sorted(reading.problems, key=lambda p: p.line)),
    )


def render(doc: PolicyDocument) -> str:
    return "".join(doc.lines)


# --------------------------------------------------------------------------- the edit


def _text_lines(text: str) -> list[str]:
    """Bodies of a generated block, without its trailing blank lines."""
    bodies = [body(line) for line in split_lines(text)]
    while bodies and not bodies[-1].strip():
        bodies.pop()
    return bodies


def apply_policy(text: str, section: str, *, history_entry: str) -> str:
    """Replace the current-policy section with `section` and append `history_entry` to history.

    Every line outside the replaced section stays byte for byte (a last line without an ending
    gets one when something is added after it). With no current section, the section goes
    before `## Policy History`, or at the end under a `# Human Policy` title when there is
    none, so whatever the file held stays above it.
    """
    doc = parse(text)
    lines = list(doc.lines)
    bodies = [body(line) for line in lines]
    eol = dominant_ending(lines)
    new_section = _text_lines(section)
    entry = _text_lines(history_entry)
    edits: list[tuple[int, int, list[str]]] = []

    if doc.current is not None:
        start, end = doc.current.start, doc.current.end
        edits.append((start, end, new_section + ([""] if end < len(lines) else [])))
    else:
        at = doc.history_span.start if doc.history_span is not None else len(lines)
        titled = any(b.strip().lower() == "# human policy" for b in bodies[:at])
        title = [] if titled else ["# Human Policy", ""]
        edits.append((at, at, [*title, *new_section, "", "---", ""]))

    if doc.history_span is not None:
        edits.append((doc.history_span.end, doc.history_span.end, entry))
    else:
        # A new history goes at the very end; a `---` closes the policy unless one already
        # does or another section follows it.
        frame = ["---", ""] if doc.current is not None and doc.current.end == len(lines) else []
        edits.append((len(lines), len(lines), [*frame, "## Policy History", "", *entry]))

    # Text added at the end of a file whose last code block or comment never closes would
    # be hidden in it.
    closer = _scan(lines, bodies).closer
    replaced_to_end = doc.current is not None and doc.current.end == len(lines)
    return _splice(lines, edits, eol, close_with=None if replaced_to_end else closer)


def _splice(
    lines: list[str], edits: list[tuple[int, int, list[str]]], eol: str, close_with: str | None
) -> str:
    """Apply (start, end, new bodies) edits; an insert at a point goes before a replacement
    starting there. Inserted blocks get a blank line on each side where they touch text, and
    `close_with` is written before the first block added at the end."""
    out: list[str] = []
    position = 0
    for start, end, new in sorted(edits, key=lambda edit: (edit[0], edit[1])):
        out.extend(lines[position:start])
        if out and not out[-1].endswith("\n"):
            out[-1] += eol
        if close_with is not None and start == len(lines):
            out.append(close_with + eol)
            close_with = None
        block = list(new)
        if start == end and block:
            if out and body(out[-1]).strip() and block[0].strip():
                block.insert(0, "")
            if start < len(lines) and block[-1].strip():
                block.append("")
        out.extend(line + eol for line in block)
        position = max(position, end)
    out.extend(lines[position:])
    return "".join(out)
