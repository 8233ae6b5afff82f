"""Field values of barriers.md and checks.md: durations as read, and the one-line and quoting
rules for the values wild writes."""

from __future__ import annotations

import functools
import re

from wild.clock import span_of

# A `Result:` wild writes is one short line: the end of a long output is in the logs.
RESULT_MAX_CHARS = 200


@functools.cache
def _duration() -> re.Pattern[str]:
    # Compiled when first used: not on the loop's way to its first agent (issue 22 item 8).
    return re.compile(r"(?P<n>\d+(?:\.\d*)?|\.\d+)[ \t]*(?P<unit>[A-Za-z]*)")


_UNIT_S = {
    **dict.fromkeys(("", "s", "sec", "secs", "second", "seconds"), 1.0),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60.0),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600.0),
    **dict.fromkeys(("d", "day", "days"), 86400.0),
}


def parse_duration(text: str) -> float | None:
    """Seconds in `60s`, `5m`, `1.5h`, `2 days` or a bare `90`; None unless a positive duration
    of at most LONGEST_SPAN (a longer one overflows the dates and timeouts it is added to)."""
    match = _duration().fullmatch(text.strip())
    if match is None or match["unit"].lower() not in _UNIT_S:
        return None
    span = span_of(float(match["n"]) * _UNIT_S[match["unit"].lower()])
    return span.total_seconds() if span is not None and span else None


def clean_result(result: str) -> str:
    """A check's output as one short line that cannot break the `Result: "..."` quoting."""
    flat = " ".join(result.split()).replace('"', "'")
    return flat if len(flat) <= RESULT_MAX_CHARS else flat[: RESULT_MAX_CHARS - 1] + "…"


def one_line(text: str) -> str:
    """The text on one line: values wild writes must stay on theirs, or could forge a header."""
    return re.sub(r"[\r\n]+", " ", text).strip()


def unquote(value: str) -> str:
    """The value without one pair of surrounding double quotes."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value
