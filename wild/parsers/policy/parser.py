"""The parser of human-policy.md: the current policy's fields and instructions, the history.

The format it reads is described in `wild.parsers.policy`.
"""

from __future__ import annotations

from wild.parsers.lines import Problem, Span, body, split_lines
from wild.parsers.policy import structure
from wild.parsers.policy.document import DEFAULT_FILE, PolicyDocument
from wild.parsers.policy.fields import KNOWN, field, unknown_key_message, value_problem

_SUBSECTIONS = {
    "settings": "settings",
    "escalation rules": "rules",
    "rules": "rules",
    "escalation": "rules",
    "instructions": "instructions",
}


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
        if lower not in KNOWN[part]:
            self.problem(index, unknown_key_message(part, key))
            return
        if (part, lower) in self.first_line:
            first = self.first_line[(part, lower)]
            self.problem(index, f'duplicate "{key}"; the first one (line {first}) applies')
            return
        self.first_line[(part, lower)] = index + 1
        self.values[part][lower] = value
        problem = value_problem(part, key, value)
        if problem is not None:
            self.problem(index, problem)


def _read_current(bodies: list[str], scan: structure.Scan, span: Span, reading: _Reading) -> None:
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
            found = field(line)
            if found is None:
                reading.problem(index, 'not a "- **Key:** value" line; wild ignores it')
            else:
                reading.add(part, index, *found)


def parse(text: str, file: str = DEFAULT_FILE) -> PolicyDocument:
    """Parse any text; never raises. Problems say what wild could not use, with the line."""
    lines = tuple(split_lines(text))
    bodies = [body(line) for line in lines]
    scan = structure.scan(lines, bodies)
    heads = scan.heads
    reading = _Reading(file)
    found = structure.current_span(bodies, scan)
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
    history_span, history = structure.history(bodies, heads)
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
