"""Splitting JSON lines: complete lines, and the torn tail a writer may still be finishing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.jsonl import split_complete_lines, trailing_object_start


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


@pytest.mark.parametrize(
    ("line", "start"),
    [
        (b'{"sev{"id":"a"}', 5),
        (b'{"id":"a"}', 0),
        (b'{"a":1}{"id":"b"}\r', 7),
        (b'x{"a":{"b":[1,{"c":2}]}}  ', 1),
        (b'{"d":"\\\\"}', 0),  # an escaped backslash ends the string
        (b'{"d":"\\"}"}', 0),  # an escaped quote does not
        (b'{"d":"a}"}', 0),  # a brace inside a string is text
        (b'{"id":"a"', None),
        (b'{"id":"a"}x', None),
        (b'[{"id":"a"}]', None),
        (b'{"a":1}]', None),
        (b"", None),
        (b"x{" + b"[" * 1000 + b"]" * 1000 + b"}", 1),
        (b"x{" + b"[" * 1100 + b"]" * 1100 + b"}", None),  # deeper than orjson parses
    ],
)
def test_trailing_object_start(line: bytes, start: int | None) -> None:
    assert trailing_object_start(line, 1 << 20) == start


def test_trailing_object_start_looks_back_only_as_far_as_it_is_told() -> None:
    line = b'{"sev' + b'{"id":"a"}'
    assert trailing_object_start(line, 10) == 5
    assert trailing_object_start(line, 9) is None
