"""Promise signals and structured tags read from an agent's final message (seeds 000, 001, 002).

Only what the agent *says* counts: a tag inside a fenced code block or an HTML comment (the
rule of `wild.parsers.masking`, as in every `.wild/` file), an inline code span or a `> `
quoted line is an example or an echo, and a promise that shares its line with prose is a
mention ("I will print <promise>COMPLETE</promise> when done"), not a signal. Whatever is
ignored is reported in `Signals.problems`, so the loop can tell the agent what went wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, cast, get_args

import orjson

from wild.parsers import masking
from wild.parsers.lines import body, split_lines
from wild.record import record

PromiseWord = Literal[
    "TASK_COMPLETE",
    "ALERT_RESOLVED",
    "MONITORING_COMPLETE",
    "NEED_HUMAN_INPUT",
    "NOTIFY_HUMAN",
    "HUMAN_INPUT_PROCESSED",
    "COMPLETE",
    "NEEDS_HUMAN",
    "CONTINUE",
]
PROMISE_WORDS: tuple[PromiseWord, ...] = get_args(PromiseWord)
EventStatus = Literal["ok", "retry", "needs_human", "failed"]
EVENT_STATUSES: tuple[EventStatus, ...] = get_args(EventStatus)


@record
class AlertResolution:
    """A `<resolve_alert>`: which alert, and the chosen option and/or a free-text note."""

    alert_id: str
    choice: str | None
    note: str | None


@record
class EventOutput:
    """Seed 002's `<event_output>` envelope, validated."""

    status: EventStatus
    summary: str
    new_events: tuple[Any, ...]
    artifacts: tuple[Any, ...]


@record
class Signals:
    """Everything the agent signalled, in the order written; `problems` lists what was ignored."""

    promises: tuple[PromiseWord, ...] = ()
    reason: str | None = None
    urgency: str | None = None
    resolutions: tuple[AlertResolution, ...] = ()
    event_output: EventOutput | None = None
    problems: tuple[str, ...] = ()

    def has(self, word: PromiseWord) -> bool:
        return word in self.promises


_QUOTE = re.compile(r"^ {0,3}>")
# A code span opens with a run of N backticks and closes at the next run of exactly N.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)")
_PROMISE = re.compile(r"<promise>\s*([^<>]*?)\s*</promise>", re.IGNORECASE)
# Elements allowed to share a line with a promise; an unclosed <reason> may run to the next line.
_LINE_ELEMENTS = re.compile(
    r"<promise>[^<>]*</promise>|<(reason|urgency)>.*?(</\1>|$)", re.IGNORECASE
)


def _block_tag(name: str) -> re.Pattern[str]:
    return re.compile(rf"<{name}>(.*?)</{name}>", re.IGNORECASE | re.DOTALL)


_REASON = _block_tag("reason")
_URGENCY = _block_tag("urgency")
_RESOLVE = _block_tag("resolve_alert")
_EVENT_OUTPUT = _block_tag("event_output")
_ANY_TAG = re.compile(r"<(promise|resolve_alert|event_output)>", re.IGNORECASE)


def _mask_line(line: str) -> str:
    """The line with inline code spans blanked out (same length, so offsets still match)."""
    return _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def visible_text(text: str) -> str:
    """`text` with code blocks, comments, code spans and quoted lines replaced by spaces,
    newlines kept."""
    out: list[str] = []
    hidden = masking.masked_lines(text)
    for index, line in enumerate(split_lines(text)):
        content = body(line)
        if hidden[index] or _QUOTE.match(content):
            out.append(" " * len(content) + line[len(content) :])
        else:
            out.append(_mask_line(content) + line[len(content) :])
    return "".join(out)


def line_number(text: str, offset: int) -> int:
    """The 1-based line of `text` that holds the character at `offset`."""
    return text.count("\n", 0, offset) + 1


def _line_at(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start : end if end != -1 else len(text)]


def _unfenced(body: str) -> str:
    """A tag body without a surrounding ```json fence, which agents like to add."""
    stripped = body.strip()
    blocks = masking.scan(stripped)
    whole = len(blocks) == 1 and blocks[0].end_at == len(stripped) and blocks[0].closer is None
    if whole and blocks[0].kind == "code block" and blocks[0].start_at == 0:
        return stripped[stripped.find("\n") + 1 : stripped.rfind("\n")].strip()
    return stripped


def _promises(text: str, visible: str, problems: list[str]) -> tuple[PromiseWord, ...]:
    found: list[PromiseWord] = []
    for match in _PROMISE.finditer(visible):
        word = match.group(1).strip().upper()
        line = line_number(visible, match.start())
        if _LINE_ELEMENTS.sub("", _line_at(visible, match.start())).strip():
            problems.append(
                f"line {line}: <promise>{word}</promise> shares its line with other text, so it "
                "is a mention, not a signal; put the tag alone on its own line"
            )
            continue
        if word not in PROMISE_WORDS:
            problems.append(
                f"line {line}: unknown promise {word!r}; known: {', '.join(PROMISE_WORDS)}"
            )
            continue
        known = cast(PromiseWord, word)
        if known not in found:
            found.append(known)
    return tuple(found)


def _first_body(pattern: re.Pattern[str], text: str, visible: str) -> str | None:
    match = pattern.search(visible)
    return text[match.start(1) : match.end(1)].strip() if match else None


def _bodies(pattern: re.Pattern[str], text: str, visible: str) -> list[tuple[int, str]]:
    return [
        (line_number(text, m.start()), _unfenced(text[m.start(1) : m.end(1)]))
        for m in pattern.finditer(visible)
    ]


def tag_bodies(name: str, text: str) -> list[tuple[int, str]]:
    """Each visible `<name>…</name>` body in `text` with its line (a ```json fence around it
    removed); tags in code blocks, comments, code spans or quotes are not signals."""
    return _bodies(_block_tag(name), text, visible_text(text))


def _json_object(body: str, tag: str, line: int, problems: list[str]) -> Mapping[str, Any] | None:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        problems.append(f"line {line}: <{tag}> is not valid JSON ({error}); it was ignored")
        return None
    if not isinstance(data, dict):
        problems.append(f"line {line}: <{tag}> must hold a JSON object; it was ignored")
        return None
    return data


def _optional_str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


_KEY_LINE = re.compile(r"^\s*(alert_id|alert|id|choice|note)\s*[:=]\s*(.*?)\s*$", re.IGNORECASE)


def _resolution_from_text(body: str) -> dict[str, str]:
    """`alert_id: X` / `choice: Y` / `note: Z` lines, or `ID free text` (the text is the note)."""
    fields: dict[str, str] = {}
    for raw in body.splitlines():
        match = _KEY_LINE.match(raw)
        if match:
            key = match.group(1).lower()
            fields["alert_id" if key in ("alert", "id") else key] = match.group(2)
    if not fields and body.strip():
        head, _, rest = body.strip().partition(" ")
        fields = {"alert_id": head.rstrip(":"), "note": rest}
    return fields


def _resolution(body: str, line: int, problems: list[str]) -> AlertResolution | None:
    if body.startswith(("{", "[")):
        data = _json_object(body, "resolve_alert", line, problems)
        if data is None:
            return None
        fields = {
            "alert_id": data.get("alert_id", data.get("id")),
            "choice": data.get("choice"),
            "note": data.get("note"),
        }
    else:
        fields = dict(_resolution_from_text(body))
    alert_id = _optional_str(fields.get("alert_id"))
    if alert_id is None:
        problems.append(f"line {line}: <resolve_alert> names no alert_id; it was ignored")
        return None
    return AlertResolution(
        alert_id, _optional_str(fields.get("choice")), _optional_str(fields.get("note"))
    )


def _as_tuple(data: Mapping[str, Any], key: str, line: int, problems: list[str]) -> tuple[Any, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(f"line {line}: <event_output> {key} must be a list; it was ignored")
        return ()
    return tuple(value)


def _event_output(body: str, line: int, problems: list[str]) -> EventOutput | None:
    data = _json_object(body, "event_output", line, problems)
    if data is None:
        return None
    status = data.get("status")
    if status not in EVENT_STATUSES:
        problems.append(
            f"line {line}: <event_output> status {status!r} is not one of "
            f"{', '.join(EVENT_STATUSES)}; it was ignored"
        )
        return None
    summary = data.get("summary")
    return EventOutput(
        status=status,
        summary=summary if isinstance(summary, str) else "" if summary is None else str(summary),
        new_events=_as_tuple(data, "new_events", line, problems),
        artifacts=_as_tuple(data, "artifacts", line, problems),
    )


def _ignored_tags(text: str, visible: str, problems: list[str]) -> None:
    """Report tags that sit in code or quotes, so an agent that fenced its answer learns why."""
    for match in _ANY_TAG.finditer(text):
        if visible[match.start()] != "<":
            problems.append(
                f"line {line_number(text, match.start())}: <{match.group(1).lower()}> inside a "
                "code block, an HTML comment, inline code or a quote is not a signal"
            )


def parse_signals(final_text: str) -> Signals:
    """Read the signals of one agent reply; never raises, whatever the text."""
    visible = visible_text(final_text)
    problems: list[str] = []
    _ignored_tags(final_text, visible, problems)
    promises = _promises(final_text, visible, problems)
    resolutions = tuple(
        r
        for line, body in _bodies(_RESOLVE, final_text, visible)
        if (r := _resolution(body, line, problems)) is not None
    )
    outputs = [
        out
        for line, body in _bodies(_EVENT_OUTPUT, final_text, visible)
        if (out := _event_output(body, line, problems)) is not None
    ]
    if len(outputs) > 1:
        problems.append(f"{len(outputs)} <event_output> blocks; only the last one is used")
    urgency = _first_body(_URGENCY, final_text, visible)
    return Signals(
        promises=promises,
        reason=_first_body(_REASON, final_text, visible) or None,
        urgency=urgency.lower() if urgency else None,
        resolutions=resolutions,
        event_output=outputs[-1] if outputs else None,
        problems=tuple(problems),
    )
