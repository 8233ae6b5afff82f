"""runs.jsonl on disk: append a record, and keep a RunIndex current by reading new lines only.

A minimal reader for the run supervisor; the line format is `wild.parsers.runs`.
"""

from __future__ import annotations

import os
from pathlib import Path

from wild.parsers.jsonl import split_complete_lines
from wild.parsers.lines import Problem
from wild.parsers.runs import Record, RunIndex, encode_record, parse_record
from wild.store.jsonl import append_line


def append_record(path: Path, record: Record) -> None:
    """Append one sweep or run line (the latest line per id wins)."""
    append_line(path, encode_record(record))


class RunsLog:
    """The latest record per id, caught up by `refresh` from where the last read stopped.

    A file replaced or cut shorter (a compaction, a restore) is read again from its start.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.index = RunIndex()
        self.problems: list[Problem] = []
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._lines = 0

    def refresh(self) -> RunIndex:
        try:
            with self.path.open("rb") as source:
                info = os.fstat(source.fileno())
                identity = (info.st_dev, info.st_ino)
                if identity != self._identity or info.st_size < self._offset:
                    self.index, self.problems = RunIndex(), []
                    self._identity, self._offset, self._lines = identity, 0, 0
                source.seek(self._offset)
                data = source.read()
        except FileNotFoundError:
            return self.index
        lines, covered = split_complete_lines(data)  # a line still being written waits
        records: list[Record] = []
        for line in lines:
            self._lines += 1
            if not line.strip():
                continue
            record, problem = parse_record(line, self._lines)
            if record is not None:
                records.append(record)
            if problem is not None:
                self.problems.append(problem)
        self.index.apply(records)
        self._offset += covered
        return self.index

    def append(self, record: Record) -> None:
        append_record(self.path, record)
