"""The end of a file, read in one place: the last bytes before an offset, starting at a line.

A tail cut at a byte count would open mid-line, or mid-character (a replacement character
in the text a human or an agent reads): the cut line is dropped instead, unless it is the
only line there is.
"""

from __future__ import annotations

import os
from typing import IO


def tail_of(handle: IO[bytes], most: int, *, start: int = 0, end: int | None = None) -> bytes:
    """At most `most` bytes of `handle` before `end` (its size when None) and not before
    `start`, beginning where a line begins."""
    if end is None:
        end = handle.seek(0, os.SEEK_END)
    begin = max(start, end - most)
    if begin <= start:
        handle.seek(start)
        return handle.read(end - start)
    handle.seek(begin - 1)  # one byte more: whether `begin` is itself where a line starts
    data = handle.read(end - begin + 1)
    newline = data.find(b"\n")
    if 0 <= newline < len(data) - 1:
        return data[newline + 1 :]
    return data[1:]  # the cut line is the only one: its bytes are all there is
