"""Splitting JSON lines: complete lines, and the torn tail a writer may still be finishing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.jsonl import split_complete_lines


@pytest.mark.parametrize(
    ("data", "lines", "covered"),
    [
        (b"", [], 0),
        (b"partial", [], 0),
        (b"a\n", [b"a"], 2),
        (b"a\nb\n", [b"a", b"b"], 4),
        (b"a\n\nb", [b"a", b""], 3),
        (b"a\r\nb\n", [b"a\r", b"b"], 5),
    ],
)
def test_split_complete_lines(data: bytes, lines: list[bytes], covered: int) -> None:
    assert split_complete_lines(data) == (lines, covered)


no_newline = st.binary().map(lambda b: b.replace(b"\n", b""))


@given(st.lists(no_newline, max_size=6), no_newline)
def test_split_keeps_whole_lines_and_leaves_the_tail(lines: list[bytes], tail: bytes) -> None:
    data = b"".join(line + b"\n" for line in lines) + tail
    got, covered = split_complete_lines(data)
    assert got == lines
    assert data[covered:] == tail
