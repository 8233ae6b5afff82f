"""JSON lines as bytes: complete lines, a torn tail, and a whole object glued onto a fragment.

The torn tail is a line a writer may still be finishing; the fragment is what a writer left
when it died mid-line, with the next writer's whole line glued onto it.

`loads` is the one decoder of such a line. Appending and reading the files is `wild.store.jsonl`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any

import orjson

NEWLINE = b"\n"


def loads(raw: bytes, *, non_finite: bool = False) -> Any:
    """One JSON text (a line of a JSON-lines file); ValueError when it is not JSON.

    wild's own records never hold NaN or Infinity (orjson writes them as null) and orjson
    refuses them, so there such a line is not valid JSON: a NaN cost could never reach a
    spending cap. A metric log is another matter: Python's json.dumps writes NaN for a
    diverging loss, and with `non_finite` its lines are read, NaN and Infinity included.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        if not non_finite:
            raise
        return json.loads(raw.decode("utf-8", errors="replace"))


def split_complete_lines(data: bytes) -> tuple[list[bytes], int]:
    """Split into complete lines (without their b"\\n") and the byte count they cover.

    Bytes after the last newline are a line still being written (or torn by a crash):
    they are left out, and the returned count tells an incremental reader where to
    resume once the line is finished.
    """
    end = data.rfind(NEWLINE) + 1
    if end == 0:
        return [], 0
    return data[: end - 1].split(NEWLINE), end


def complete_lines(data: bytes) -> tuple[Iterator[bytes], int]:
    """`split_complete_lines`, the lines one at a time: a reader of a file of tens of MB
    (runs.jsonl at 10,000 runs) holds one line's copy at a time, not a second whole file."""
    end = data.rfind(NEWLINE) + 1
    return _lines(data, end), end


def _lines(data: bytes, end: int) -> Iterator[bytes]:
    start = 0
    while start < end:
        stop = data.index(NEWLINE, start)
        yield data[start:stop]
        start = stop + 1


# JSON's four whitespace bytes: what may follow an object's closing brace on its line.
_JSON_SPACE = b" \t\r\n"


# The bytes that change a backward scan's state; everything else is skipped in one jump.
@functools.cache
def _structure() -> re.Pattern[bytes]:
    # Compiled when first used: not on the loop's way to its first agent (issue 22 item 8).
    return re.compile(rb'["{}\[\]]')


_QUOTE, _BACKSLASH, _OPEN_BRACE = b'"'[0], b"\\"[0], b"{"[0]
_CLOSERS = frozenset(b"}]")
# orjson refuses nesting deeper than this, so a deeper object cannot be recovered anyway.
_MAX_DEPTH = 1024


def _escaped(data: bytes, quote: int) -> bool:
    """Whether the quote at `quote` is preceded by an odd run of backslashes."""
    before = quote
    while before and data[before - 1] == _BACKSLASH:
        before -= 1
    return (quote - before) % 2 == 1


def trailing_object_start(line: bytes, limit: int) -> int | None:
    """Where the JSON object that ends `line` would start; None if none can end it.

    A writer that dies mid-line leaves a fragment with no newline, and the next writer's
    whole line is glued onto it: `{"sev` + `{"id":"a",...}`. Scanning backwards from the
    last `}` tracks strings (a quote opens one unless an odd run of backslashes precedes it)
    and bracket depth exactly as a forward parser would, so it stops at the `{` that opens
    the object ending the line, whatever the fragment before it holds. Only that one start is
    a candidate (a proper tail of a valid object is never itself a valid object: tails that
    begin inside a string see an odd number of quotes), so the caller parses one slice.

    Looks back at most `limit` bytes (the largest line worth recovering), so a huge garbage
    line costs O(limit). The slice from the returned offset still has to be parsed.
    """
    end = len(line.rstrip(_JSON_SPACE))
    if not line[:end].endswith(b"}"):
        return None
    depth = 0
    in_string = False
    found = [m.start() for m in _structure().finditer(line, max(0, end - limit), end)]
    for at in reversed(found):
        byte = line[at]
        if byte == _QUOTE:
            # Outside a string any quote ends one (read backwards: enters it); inside, only
            # an unescaped quote is its opening one.
            if not in_string or not _escaped(line, at):
                in_string = not in_string
        elif in_string:
            continue
        elif byte in _CLOSERS:
            depth += 1
            if depth > _MAX_DEPTH:
                return None
        else:
            depth -= 1
            if depth == 0:
                return at if byte == _OPEN_BRACE else None
    return None
