"""The runs still open (queued or running), kept current from the records read since the
last step, so a supervisor step costs what it starts and ends, not the sweep's size.

A 10,000-run sweep made every step walk every run (queued ones filtered, running ones
filtered, each queued line's signature and program checked), so steps grew with the
sweep. This keeps the open runs' ids by status, each in the order runs.jsonl first named
them (the queue's order), and, per sweep and program, the
queued runs that ask the command gate the same question.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator

from wild.parsers.runs import Record, RunIndex, RunRecord
from wild.runs.signing import command_to_approve

Program = tuple[str, str]  # (sweep id, the command the gate is asked about)


class OpenRuns:
    """The queued and running run ids of one `RunIndex`, fed the records applied to it."""

    def __init__(self) -> None:
        # Which index this follows, by a weak reference: holding it kept a replaced index
        # (the whole sweep's records) alive while its successor was read.
        self._index: weakref.ref[RunIndex] | None = None
        self._reset()

    def _reset(self) -> None:
        self._position: dict[str, int] = {}  # each run id's place in runs.jsonl, first seen
        self.queued: dict[str, None] = {}  # in queue order once `queued_ids` has sorted it
        self.running: dict[str, None] = {}
        self.programs: dict[Program, dict[str, None]] = {}  # queued ids by what they ask
        self.backends: dict[str, int] = {}  # how many queued runs each backend has
        self._queued_on: dict[str, tuple[Program, str]] = {}
        self._unordered = False  # a run came back to the queue (a rerun): sort before use

    def follow(self, index: RunIndex, records: Iterable[Record]) -> None:
        """Bring this up to date with `index`, to which `records` were just applied (a
        different index than last time: it was read again from the start, so start over)."""
        if self._index is None or index is not self._index():
            self._index = weakref.ref(index)
            self._reset()
            records = index.runs.values()
        for record in records:
            if isinstance(record, RunRecord):
                self._apply(record)

    def _apply(self, run: RunRecord) -> None:
        if run.id not in self._position:
            self._position[run.id] = len(self._position)
        elif run.status == "queued" and run.id not in self.queued and self.queued:
            self._unordered = True  # back in the queue at its old place, not at the end
        self.running.pop(run.id, None)
        self._unqueue(run.id)
        if run.status == "queued":
            self.queued[run.id] = None
            program = (run.sweep, command_to_approve(run))
            self.programs.setdefault(program, {})[run.id] = None
            self.backends[run.backend] = self.backends.get(run.backend, 0) + 1
            self._queued_on[run.id] = (program, run.backend)
        elif run.status == "running":
            self.running[run.id] = None

    def _unqueue(self, run_id: str) -> None:
        if run_id not in self.queued:
            return
        del self.queued[run_id]
        program, backend = self._queued_on.pop(run_id)
        ids = self.programs[program]
        del ids[run_id]
        if not ids:
            del self.programs[program]
        self.backends[backend] -= 1
        if not self.backends[backend]:
            del self.backends[backend]

    def queued_ids(self) -> Iterator[str]:
        """The queued run ids in queue order (a copy: the caller may start them meanwhile)."""
        if self._unordered:
            self.queued = dict.fromkeys(sorted(self.queued, key=self._position.__getitem__))
            self._unordered = False
        return iter(list(self.queued))

    def __bool__(self) -> bool:
        return bool(self.queued or self.running)
