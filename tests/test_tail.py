"""wild/tail.py, the one tail reader: a tail starts at a line, never mid-line or mid-character,
for a command's captured output, an agent's final text and the dashboard's file tails."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from wild.process import OUTPUT_CAP, run_captured
from wild.serve.events_view import read_tail
from wild.tail import tail_of

TEXT = b"first\nsecond\nthird\n"


@pytest.mark.parametrize(
    ("most", "start", "end", "expected"),
    [
        (100, 0, None, TEXT),
        (13, 0, None, b"second\nthird\n"),  # the cut falls where a line starts: kept
        (10, 0, None, b"third\n"),  # the cut falls inside "second": that line is dropped
        (4, 0, None, b"ird\n"),  # no line starts in it: the bytes there are
        (100, 6, 13, b"second\n"),
        (5, 6, 13, b"cond\n"),
    ],
)
def test_a_tail_starts_where_a_line_does(
    most: int, start: int, end: int | None, expected: bytes
) -> None:
    assert tail_of(io.BytesIO(TEXT), most, start=start, end=end) == expected


def test_a_commands_output_tail_never_opens_mid_character(tmp_path: Path) -> None:
    # 7-byte lines ending in a 2-byte character: the cut at OUTPUT_CAP falls inside one.
    script = (
        "import sys\n"
        "sys.stdout.buffer.write(b''.join(b'%04d\\xc3\\xa9\\n' % i for i in range(9999)))"
    )
    result = run_captured([sys.executable, "-c", script], timeout_s=60, cwd=tmp_path)
    assert result.exit_code == 0 and len(result.output.encode()) <= OUTPUT_CAP
    assert "\ufffd" not in result.output
    lines = result.output.splitlines()
    assert all(len(line) == 5 and line.endswith("é") for line in lines)
    assert lines[-1] == "9998é"


def test_the_dashboards_tail_keeps_a_line_that_starts_at_the_cut(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    path.write_bytes(TEXT)
    assert read_tail(path, 13) == b"second\nthird\n"  # it used to drop "second"
    assert read_tail(path, 10) == b"third\n"
