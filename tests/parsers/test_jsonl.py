"""jsonl helpers: whole-line appends and splitting off a torn tail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.jsonl import append_line, split_complete_lines


def test_append_creates_the_file_and_adds_a_missing_newline(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    append_line(path, b'{"a":1}')
    append_line(path, b'{"b":2}\n')
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n'


def test_append_closes_a_torn_last_line_first(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    append_line(path, b'{"c":3}')
    assert path.read_bytes() == b'{"a":1}\n{"b":\n{"c":3}\n'


def test_append_refuses_an_embedded_newline(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with pytest.raises(
        ValueError, match=r"a\.jsonl: a JSON line must not contain a newline before its end"
    ):
        append_line(path, b'{"a":\n1}\n')
    assert not path.exists()


def test_append_lands_after_a_writer_that_already_moved_the_end(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"1\n")
    with path.open("ab") as other:
        other.write(b"2\n")
        other.flush()
        append_line(path, b"3")
        other.write(b"4\n")
    assert path.read_bytes() == b"1\n2\n3\n4\n"


def test_append_retries_a_short_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.jsonl"
    real_write = os.write
    sizes: list[int] = []

    def short_write(fd: int, data: bytes | memoryview) -> int:
        sizes.append(len(data))
        return real_write(fd, bytes(data)[:3])

    monkeypatch.setattr(os, "write", short_write)
    append_line(path, b"abcdefgh")
    assert path.read_bytes() == b"abcdefgh\n"
    assert sizes == [9, 6, 3]


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
