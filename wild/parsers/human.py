"""Lossless parser and minimal edits for `.wild/human.md`, the human's input queue.

Code blocks and HTML comments (`wild.parsers.masking`) hold no structure: a `## [PENDING]`,
`###` or `---` line inside one is text, kept in the input it belongs to.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import Literal, get_args

from wild.clock import iso, parse_time
from wild.parsers import masking
from wild.parsers.lines import Problem, Span, append_lines, body, replace_body, split_lines
from wild.record import record

# REPORT sections are wild's progress reports: kept for the human to read, never input.
HumanStatus = Literal["pending", "processed", "question", "answered", "report"]
STATUSES: tuple[HumanStatus, ...] = get_args(HumanStatus)
_STATUS: dict[str, HumanStatus] = {status: status for status in STATUSES}
PRIORITIES = ("urgent", "normal", "low")
FILE = "human.md"

# Only a level-2 heading (or `##[` typed without a space) starts or ends a section, so a
# `# comment` line pasted into an input stays part of it.
_SECTION = re.compile(r"##(?:[ \t]|$|\[)")


class _Grammar:
    """A section's patterns, compiled when the first section is read (`_grammar`): a file
    with no input, wild's template, needs only `_SECTION`, and these cost ~3 ms to compile on
    the way to the first agent's start (issue 22 item 8)."""

    def __init__(self) -> None:
        self.header = re.compile(
            r"##[ \t]*\[[ \t]*(?P<status>[^\]]*?)[ \t]*\][ \t]*(?P<rest>.*?)[ \t]*$"
        )
        self.urgent = re.compile(r"(?P<when>.*?)[ \t]*(?:[-–—][ \t]*)?\burgent", re.IGNORECASE)
        self.subheading = re.compile(r"###(?:[ \t]|$)")
        self.named = re.compile(r"###[ \t]*(?P<name>[^:]*?)[ \t]*(?::[ \t]*(?P<inline>.*?))?[ \t]*")
        self.rule = re.compile(r"-{3,}[ \t]*")
        # `**Type:** x`, `**Type**: x`, `Type: x`, with or without a bullet.
        self.field = re.compile(
            r"[ \t]*(?:[-*+][ \t]+)?"
            r"(?:\*\*[ \t]*(?P<bkey>[A-Za-z][A-Za-z _-]*?)[ \t]*(?::\*\*|\*\*[ \t]*:)"
            r"|(?P<key>[A-Za-z][A-Za-z _-]*?)[ \t]*:)"
            r"[ \t]*(?P<value>.*?)[ \t]*"
        )


@functools.cache
def _grammar() -> _Grammar:
    return _Grammar()


_KEYS = {
    "type": "type",
    "alert": "alert",
    "relatedalert": "alert",
    "related": "alert",
    "priority": "priority",
}


@record
class HumanInput:
    """One `## [STATUS] <timestamp>` section; `key` is the header's timestamp text as written.

    `content` is the text under `### Input:` (`### Question:` for questions wild asked).
    """

    key: str
    timestamp: str  # ISO form when the key reads as a time, else the key itself
    status: HumanStatus
    urgent: bool
    type: str | None
    priority: str
    content: str
    # An input's alert (`**Alert:**`); for a QUESTION wild asked, the work that asked
    # (`**Related:**`: a task id, an alert id, `planning`), so the answer reaches it.
    related_alert: str | None
    span: Span


@record
class HumanQueue:
    """human.md parsed: its lines as read, its entries, and what could not be read."""

    lines: tuple[str, ...]
    inputs: tuple[HumanInput, ...]
    problems: tuple[Problem, ...]


@record
class _Section:
    """Where one `## [STATUS] …` section lies in the file's lines."""

    header: int
    status: str
    status_at: tuple[int, int]
    rest: str
    limit: int  # the section's first `---` line, else where the next section starts
    end: int  # the next section's header (or the end of the file)


def _structural(text: str) -> bool:
    """Lines the parser reads as structure; a human's text must never contain one verbatim."""
    return bool(_SECTION.match(text) or _grammar().subheading.match(text) or text.startswith("---"))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _strip_blank_edges(bodies: list[str]) -> str:
    kept = [i for i, text in enumerate(bodies) if text.strip()]
    return "\n".join(bodies[kept[0] : kept[-1] + 1]) if kept else ""


def _key(rest: str) -> tuple[str, bool]:
    """The header's timestamp text (the edit key) and whether it carries ` - URGENT`."""
    urgent = _grammar().urgent.fullmatch(rest)
    return (urgent["when"], True) if urgent else (rest, False)


def _masked(lines: list[str]) -> list[bool]:
    return masking.masked_lines("".join(lines))


def _sections(lines: list[str], masked: list[bool]) -> list[tuple[int, int]]:
    starts = [i for i, line in enumerate(lines) if not masked[i] and _SECTION.match(body(line))]
    return list(zip(starts, [*starts[1:], len(lines)], strict=False))


def _section(lines: list[str], masked: list[bool], start: int, end: int) -> _Section | None:
    grammar = _grammar()
    header = grammar.header.match(body(lines[start]))
    if header is None:
        return None
    limit = next(
        (
            i
            for i in range(start + 1, end)
            if not masked[i] and grammar.rule.fullmatch(body(lines[i]))
        ),
        end,
    )
    return _Section(start, header["status"], header.span("status"), header["rest"], limit, end)


class _Reader:
    """Reads one section into a record, collecting problems instead of raising."""

    def __init__(self, lines: list[str], masked: list[bool], section: _Section) -> None:
        self.lines, self.section = lines, section
        self.problems: list[Problem] = []
        self.fields: dict[str, str] = {}
        self.free: list[str] = []
        self.content: list[str] | None = None
        status = section.status.lower()
        want = {"question": "question", "answered": "question", "report": "report"}.get(
            status, "input"
        )
        phase = "fields"
        grammar = _grammar()
        for index in range(section.header + 1, section.limit):
            text = body(lines[index])
            structure = not masked[index]
            named = (
                grammar.named.fullmatch(text)
                if structure and grammar.subheading.match(text)
                else None
            )
            if named is not None:
                phase = "other"
                if self.content is None and named["name"].lower() == want:
                    phase, self.content = "content", [named["inline"]] if named["inline"] else []
            elif phase == "content" and self.content is not None:
                self.content.append(text)
            elif phase == "fields" and structure:
                self.field(text)
            elif phase == "fields":
                self.free.append(text)
        for index in range(section.limit + 1, section.end):
            if body(lines[index]).strip() and not masked[index]:
                self.report(
                    index,
                    'text after "---" belongs to no section; move it above '
                    'the "---" line or under a new "## [PENDING] <time>" header',
                )

    def field(self, text: str) -> None:
        match = _grammar().field.fullmatch(text)
        name = (
            _KEYS.get(re.sub(r"[\s_-]+", "", (match["bkey"] or match["key"])).lower())
            if match
            else None
        )
        if match is None or name is None:
            # Text typed without an `### Input:` heading is still the human's input.
            self.free.append(text)
        else:
            self.fields.setdefault(name, match["value"])

    def report(self, index: int, message: str) -> None:
        self.problems.append(Problem(FILE, index + 1, message))

    def record(self, status: HumanStatus) -> HumanInput:
        section = self.section
        key, urgent_header = _key(section.rest)
        when = parse_time(key)
        if not key:
            self.report(
                section.header,
                'section has no timestamp; write it as "## [PENDING] 2026-02-08T12:30:00Z"',
            )
        elif when is None:
            self.report(
                section.header,
                f'"{key}" is not a time; write an ISO time such as 2026-02-08T12:30:00Z',
            )
        priority = self.fields.get("priority", "").lower() or "normal"
        if priority not in PRIORITIES:
            self.report(
                section.header,
                f'unknown priority "{self.fields["priority"]}"; use '
                "urgent, normal or low (read as normal)",
            )
            priority = "normal"
        urgent = urgent_header or priority == "urgent"
        content = _strip_blank_edges(self.free if self.content is None else self.content)
        if status == "pending" and not content:
            self.report(
                section.header, f'pending input "{key}" has no text; write it under "### Input:"'
            )
        alert = self.fields.get("alert", "").split()
        return HumanInput(
            key=key,
            timestamp=iso(when) if when else key,
            status=status,
            urgent=urgent,
            type=self.fields.get("type") or None,
            priority="urgent" if urgent else priority,
            content=content,
            related_alert=(alert[0].strip("(),;.") or None) if alert else None,
            span=Span(section.header, self._end()),
        )

    def _end(self) -> int:
        end = self.section.end
        while end - 1 > self.section.header and not body(self.lines[end - 1]).strip():
            end -= 1
        return end


def parse(text: str, file: str = FILE) -> HumanQueue:
    """Read every section; never raises, keeps every byte, reports what it cannot use."""
    lines = split_lines(text)
    masked = masking.masked_lines(text)
    inputs, problems = [], []
    for start, end in _sections(lines, masked):
        section = _section(lines, masked, start, end)
        if section is None:
            problems.append(
                Problem(
                    FILE,
                    start + 1,
                    f'"{body(lines[start]).strip()}" is not a '
                    'section header; write it as "## [PENDING] <time>"',
                )
            )
            continue
        reader = _Reader(lines, masked, section)
        status = _STATUS.get(section.status.lower())
        if status is None:
            reader.report(
                start,
                f'unknown status "{section.status}"; use PENDING, PROCESSED, '
                "QUESTION, ANSWERED or REPORT (this section is ignored)",
            )
        else:
            inputs.append(reader.record(status))
        problems.extend(reader.problems)
    problems.sort(key=lambda p: p.line)
    return HumanQueue(
        tuple(lines), tuple(inputs), tuple(Problem(file, p.line, p.message) for p in problems)
    )


def render(doc: HumanQueue) -> str:
    return "".join(doc.lines)


def pending(doc: HumanQueue) -> tuple[HumanInput, ...]:
    """Inputs still to act on: urgent first, then oldest timestamp, then file order."""
    never = datetime.max.replace(tzinfo=UTC)  # inputs without a readable time go last

    def order(item: HumanInput) -> tuple[bool, datetime]:
        return (not item.urgent, parse_time(item.timestamp) or never)

    return tuple(sorted((i for i in doc.inputs if i.status == "pending"), key=order))


def _find(lines: list[str], key: str, status: HumanStatus) -> _Section | None:
    """The first section with this key still in `status` (keys may repeat)."""
    masked = _masked(lines)
    for start, end in _sections(lines, masked):
        section = _section(lines, masked, start, end)
        if section is None or _STATUS.get(section.status.lower()) != status:
            continue
        if _key(section.rest)[0] == key:
            return section
    return None


def _restatus(lines: list[str], section: _Section, status: str) -> None:
    head = body(lines[section.header])
    start, end = section.status_at
    lines[section.header] = replace_body(lines[section.header], head[:start] + status + head[end:])


def mark_processed(text: str, key: str, *, processed_at: str, note: str) -> str:
    """PENDING -> PROCESSED, adding `### Processed:` with `<at> - <note>` before the `---`."""
    lines = split_lines(text)
    section = _find(lines, key, "pending")
    if section is None:
        return text
    _restatus(lines, section, "PROCESSED")
    at = section.limit
    while at - 1 > section.header and not body(lines[at - 1]).strip():
        at -= 1
    stamp = f"{_one_line(processed_at)} - {_one_line(note)}"
    head = "".join(lines[:at])
    # Only a block left open to the end of the file can be open here; the note must not hide in it.
    closing = [closer] if (closer := _closer(head)) is not None else []
    return append_lines(head, [*closing, "", "### Processed:", stamp]) + "".join(lines[at:])


def mark_answered(text: str, key: str) -> str:
    """QUESTION -> ANSWERED for the first open question with this key."""
    lines = split_lines(text)
    section = _find(lines, key, "question")
    if section is None:
        return text
    _restatus(lines, section, "ANSWERED")
    return "".join(lines)


def _closer(text: str) -> str | None:
    """The line that closes the code block or comment `text` leaves open, if any."""
    block = masking.left_open(masking.scan(text))
    return None if block is None else block.closer


def _append_section(
    text: str, header: str, fields: list[tuple[str, str | None]], heading: str, content: str
) -> str:
    """Append one section and its `---`; structural lines in `content` get a leading space.

    A code block or comment left open, in the file or in `content`, is closed, or it would
    hide the section, or the sections appended after it.
    """
    lines = split_lines(text)
    shown = [f"**{name}:** {_one_line(value)}" for name, value in fields if value]
    content_bodies = [" " + t if _structural(t) else t for t in map(body, split_lines(content))]
    # Two trailing spaces are Markdown's line break, as in the seed's own example.
    closer = _closer(text)
    bodies = [
        closer,
        "" if closer or (text.strip() and body(lines[-1]).strip()) else None,
        header,
        *[f"{line}  " for line in shown[:-1]],
        *shown[-1:],
        "",
        heading,
        *content_bodies,
        _closer("\n".join(content_bodies)),
        "",
        "---",
    ]
    return append_lines(text, [b for b in bodies if b is not None])


def append_input(
    text: str,
    content: str,
    *,
    timestamp: str,
    urgent: bool = False,
    type: str = "general-instruction",
    related_alert: str | None = None,
) -> str:
    """Queue a PENDING input at the end of the file (what `wild --human-input` writes)."""
    header = f"## [PENDING] {_one_line(timestamp)}" + (" - URGENT" if urgent else "")
    priority = "urgent" if urgent else "normal"
    fields = [("Type", type), ("Alert", related_alert), ("Priority", priority)]
    return _append_section(text, header, fields, "### Input:", content)


def append_report(text: str, *, timestamp: str, report: str) -> str:
    """A progress report from wild: a REPORT section the human reads (never taken as input)."""
    return _append_section(
        text, f"## [REPORT] {_one_line(timestamp)}", [("Type", "progress")], "### Report:", report
    )


def append_question(
    text: str, *, timestamp: str, related: str | None, title: str, body: str
) -> str:
    """Ask the human: a QUESTION section (never taken as input; the answer comes as one).

    The keyword `body` shadows `lines.body` here; this function does not need the latter.
    """
    content = f"{_one_line(title)}\n\n{body}" if body.strip() else _one_line(title)
    fields = [("Type", "question"), ("Related", related)]
    return _append_section(
        text, f"## [QUESTION] {_one_line(timestamp)}", fields, "### Question:", content
    )
