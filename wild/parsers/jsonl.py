"""JSON lines as bytes: complete lines and the torn tail a writer may still be finishing.

Appending and reading the files is `wild.store.jsonl`.
"""

from __future__ import annotations

NEWLINE = b"\n"


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
