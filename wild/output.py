"""Shared output conventions: one JSON document on stdout for --json, human text otherwise, and
a cap on any line shown to a person (files hold text from jobs and agents, of any size)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TextIO

import orjson

_JSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


# How a byte that is not UTF-8 comes out of a file read with surrogateescape.
@functools.cache
def _lone_surrogate() -> re.Pattern[str]:
    # Compiled when first used: not on the loop's way to its first agent (issue 22 item 8).
    return re.compile("[\ud800-\udfff]")


# C0 (but tab and newline), DEL and C1: ESC, CSI and OSC start terminal escape sequences.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# The longest line wild prints to a terminal: a 10 MB alert description must not flood it.
SHOWN_LINE_CHARS = 1000


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 iteration`, `3 iterations` (`nouns` for an irregular plural): the one way every
    message counts things, so none says `1 iterations`."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def to_json(data: Any) -> str:
    """Pretty, stable JSON (sorted keys) so scripts and tests can rely on its exact form."""
    return _dumps(data, _JSON_OPTIONS)


def to_json_line(data: Any) -> str:
    """The same JSON on one line (sorted keys, no indent): one record of a JSON-lines stream."""
    return _dumps(data, orjson.OPT_SORT_KEYS)


def _dumps(data: Any, option: int) -> str:
    try:
        return orjson.dumps(data, option=option).decode()
    except TypeError:  # text from a file with bytes that are not UTF-8: JSON must be UTF-8
        return orjson.dumps(_replace_lone_surrogates(data), option=option).decode()


def _replace_lone_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate in its strings (keys too) turned into U+FFFD."""
    if isinstance(value, str):
        return _lone_surrogate().sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replace_lone_surrogates(k): _replace_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_lone_surrogates(item) for item in value]
    return value


def escape_undecodable(value: Any) -> Any:
    """`value` with each byte that is not UTF-8 in its strings (keys too) written `\\xNN`:
    for the JSON wild writes for itself (events.log, state.json), which must be UTF-8 and
    should still say which bytes they were."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {escape_undecodable(k): escape_undecodable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [escape_undecodable(item) for item in value]
    return value


def cut(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and a visible `… (N more bytes)`."""
    if len(text) <= limit:
        return text
    rest = len(text[limit:].encode("utf-8", "surrogatepass"))
    return f"{text[:limit]}… ({rest} more bytes)"


def without_controls(text: str) -> str:
    """`text` without control characters (newline and tab kept): text from the files (an
    alert's description, a task's title) must not move the cursor, retitle the window or
    recolour the terminal."""
    return _CONTROL.sub("", text)


def capped(text: str, limit: int = SHOWN_LINE_CHARS) -> str:
    """Human text for the terminal: no control characters, every line of it at most `limit`
    characters (plus the marker). Every place that prints text from the files goes through
    this."""
    text = without_controls(text)
    if len(text) <= limit:  # the common case: nothing to split
        return text
    return "\n".join(cut(line, limit) for line in text.split("\n"))


class Console:
    """The loop's terminal: lines, and status lines (one per sweep, keyed by what precedes
    the first colon) that a TTY redraws in place as a block; elsewhere every status line
    is printed as a plain line, so a log file keeps each."""

    def __init__(self, line: Callable[[str], None], stream: TextIO, *, tty: bool) -> None:
        self._line, self._stream, self._tty = line, stream, tty
        self._block: dict[str, str] = {}  # the status lines on screen, by key

    def __call__(self, text: str) -> None:
        if self._block:
            self._stream.write("\n")  # the block stays above as it last was
            self._stream.flush()
            self._block = {}
        self._line(text)

    def status(self, text: str) -> None:
        if not self._tty:
            self._line(text)
            return
        shown = len(self._block)
        self._block[text.split(":", 1)[0]] = text
        up = f"\x1b[{shown - 1}A" if shown > 1 else ""
        lines = "\n".join(f"\x1b[2K{capped(line)}" for line in self._block.values())
        self._stream.write(("\r" + up if shown else "") + lines)
        self._stream.flush()
