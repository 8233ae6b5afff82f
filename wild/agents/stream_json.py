"""Reading what agent CLIs print: Claude-style stream-json events, and usage-limit replies.

Claude Code (`-p --output-format stream-json --verbose`) and cursor-agent print one JSON event
per line: `system` (init), `assistant` (one content block per event: text, thinking or tool_use),
`user` (tool_result blocks: what a tool printed, e.g. a `cat` of a file), optionally
`rate_limit_event`, and a closing `result` event with the final reply text, `total_cost_usd`
and `usage`. The agent's own final message is the `result` text, else the text blocks of its
last assistant message; tool input and tool output are never part of it, so a file that merely
contains `<promise>COMPLETE</promise>` cannot end the loop.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson

from wild.clock import later, parse_time, span_of
from wild.record import record


@record
class RateLimit:
    """The agent hit a usage or rate limit; `reset_at` is None when it did not say when."""

    message: str
    reset_at: datetime | None


@record
class StreamSummary:
    """What one stream-json run amounts to."""

    final_text: str
    is_error: bool  # the result event said the run failed (API error, max turns, …)
    cost_usd: float | None
    input_tokens: int | None  # all input the model read: fresh, cache writes and cache reads
    output_tokens: int | None
    rate_limit: RateLimit | None
    events: int
    bad_lines: int  # lines that were not JSON objects (stderr noise, our heartbeats)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _epoch(value: Any) -> datetime | None:
    seconds = _number(value)
    if seconds is None or seconds <= 0:
        return None
    if seconds > 1e11:  # milliseconds
        seconds /= 1000
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _text_blocks(message: Mapping[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


class StreamJsonReader:
    """Folds stream-json events one line at a time, keeping only what the summary needs."""

    def __init__(self) -> None:
        self.events = 0
        self.bad_lines = 0
        self._result_text: str | None = None
        self._result_error = False
        self._api_status: Any = None
        self._cost: float | None = None
        self._usage: Mapping[str, Any] | None = None
        self._message_id: Any = None
        self._message_texts: list[str] = []
        self._assistant_error: str | None = None
        self._limit_event: RateLimit | None = None

    def feed(self, line: bytes | str) -> None:
        """One output line; anything that is not a JSON object is counted and skipped."""
        stripped = line.strip()
        if not stripped:
            return
        if stripped[:1] not in (b"{", "{"):  # not an object: skip it without a failed parse
            self.bad_lines += 1
            return
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            self.bad_lines += 1
            return
        if not isinstance(event, dict):
            self.bad_lines += 1
            return
        self.events += 1
        kind = event.get("type")
        if kind == "assistant":
            self._assistant(event)
        elif kind == "result":
            self._result(event)
        elif kind == "rate_limit_event":
            self._rate_limit_event(event)

    def _assistant(self, event: Mapping[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, dict):
            return
        if isinstance(event.get("error"), str):
            self._assistant_error = event["error"]
        texts = _text_blocks(message)
        if not texts:
            return  # tool_use or thinking: the message's text, if any, came in earlier events
        message_id = message.get("id")
        if message_id is not None and message_id == self._message_id:
            self._message_texts.extend(texts)
        else:
            self._message_id = message_id
            self._message_texts = texts

    def _result(self, event: Mapping[str, Any]) -> None:
        result = event.get("result")
        self._result_text = result if isinstance(result, str) else None
        self._result_error = event.get("is_error") is True
        self._api_status = event.get("api_error_status")
        self._cost = _number(event.get("total_cost_usd"))
        usage = event.get("usage")
        self._usage = usage if isinstance(usage, dict) else None

    def _rate_limit_event(self, event: Mapping[str, Any]) -> None:
        info = event.get("rate_limit_info")
        if isinstance(info, dict) and info.get("status") == "rejected":
            kind = info.get("rateLimitType") or "usage"
            self._limit_event = RateLimit(f"{kind} limit reached", _epoch(info.get("resetsAt")))

    @property
    def final_text(self) -> str:
        if self._result_text is not None:
            return self._result_text
        return "\n".join(self._message_texts)

    def _tokens(self) -> tuple[int | None, int | None]:
        if self._usage is None:
            return None, None
        inputs = [
            value
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            if (value := _number(self._usage.get(key))) is not None
        ]
        output = _number(self._usage.get("output_tokens"))
        return (
            int(sum(inputs)) if inputs else None,
            int(output) if output is not None else None,
        )

    def summary(self, now: datetime, *, failed: bool = False) -> StreamSummary:
        """The run so far; `failed` (e.g. a non-zero exit) lets vaguer limit messages count."""
        text = self.final_text
        api_limited = self._api_status == 429 or self._assistant_error == "rate_limit"
        limit = None
        # Only the CLI's own structured error says "limit", and only on a run that failed:
        # the reply text is the model's words, which may quote a limit (a task title, a
        # summary "the rate limit resets in 5 hours") without being stopped by one.
        if (failed or self._result_error) and (
            self._result_error or api_limited or self._limit_event is not None
        ):
            limit = detect_rate_limit(text, now, failed=True) if self._result_error else None
            if self._limit_event is not None and (limit is None or limit.reset_at is None):
                limit = self._limit_event
            if limit is None and api_limited:
                limit = RateLimit(text.strip()[:300] or "rate limited (HTTP 429)", None)
        inputs, outputs = self._tokens()
        return StreamSummary(
            final_text=text,
            is_error=self._result_error,
            cost_usd=self._cost,
            input_tokens=inputs,
            output_tokens=outputs,
            rate_limit=limit,
            events=self.events,
            bad_lines=self.bad_lines,
        )


_LIMIT_WORDS = re.compile(
    r"usage limit|rate limit|rate_limit|session limit|weekly limit|hour limit|limit reached"
    r"|hit your limit|quota|too many requests|\b429\b",
    re.IGNORECASE,
)
_EPOCH_FORM = re.compile(r"limit reached\|(\d{9,13})", re.IGNORECASE)
_DATE_FORM = re.compile(
    r"(?:regain access|resets?|reset)\s+(?:on|at)\s+(\d{4}-\d{2}-\d{2}[^.;,)]*)", re.IGNORECASE
)
_RELATIVE_FORM = re.compile(
    r"(?:try again|retry|resets?)\s+in\s+(\d+(?:\.\d+)?)\s*"
    r"(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h)\b",
    re.IGNORECASE,
)
_CLOCK_FORM = re.compile(
    r"\bresets?\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*([ap]m)?(?![\d:-])\s*(?:\(([^)]+)\))?",
    re.IGNORECASE,
)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def _zone(name: str | None) -> tzinfo | None:
    """The named zone; None means the machine's local zone (what the CLI printed in)."""
    if not name:
        return None
    if name.strip().upper() in ("UTC", "GMT"):
        return UTC
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _next_clock(match: re.Match[str], now: datetime) -> datetime | None:
    hour, minute, half, zone = match.group(1), match.group(2), match.group(3), match.group(4)
    if half is None and minute is None:
        return None  # a bare number ("resets 5") is not a time of day
    hour_n = int(hour)
    if half:  # 12am is midnight, 12pm noon
        if not 1 <= hour_n <= 12:
            return None
        hour_n = hour_n % 12 + (12 if half.lower() == "pm" else 0)
    if hour_n > 23 or int(minute or 0) > 59:
        return None
    tz = _zone(zone)
    local_now = now.astimezone(tz)
    moment = local_now.replace(hour=hour_n, minute=int(minute or 0), second=0, microsecond=0)
    if moment <= local_now:
        moment += timedelta(days=1)
    return moment.astimezone(UTC)


def reset_time(line: str, now: datetime) -> datetime | None:
    """When a usage-limit line says the limit resets, as an aware UTC time."""
    if match := _EPOCH_FORM.search(line):
        return _epoch(int(match.group(1)))
    if match := _DATE_FORM.search(line):
        return parse_time(match.group(1))
    if match := _RELATIVE_FORM.search(line):
        unit = _UNIT_SECONDS[match.group(2)[0].lower()]
        span = span_of(float(match.group(1)) * unit)
        return None if span is None else later(now, span)
    if match := _CLOCK_FORM.search(line):
        return _next_clock(match, now)
    return None


def detect_rate_limit(text: str, now: datetime, *, failed: bool) -> RateLimit | None:
    """A usage/rate-limit reply near the end of the output of a run that failed.

    A run that did not fail hit no limit, whatever its text says: agents also *work on* rate
    limiters and quote what they read. The line's reset time, if it names one, is used.
    """
    if not failed:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()][-20:]
    vague: str | None = None
    for line in reversed(lines):
        if not _LIMIT_WORDS.search(line):
            continue
        reset = reset_time(line, now)
        if reset is not None:
            return RateLimit(line[:300], reset)
        vague = vague or line[:300]
    return RateLimit(vague, None) if vague is not None else None
