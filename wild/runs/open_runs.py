"""The runs still open (queued or running), kept current from the records read since the
last step, so a supervisor step costs what it starts and ends, not the sweep's size.

A 10,000-run sweep made every step walk every run (queued ones filtered, running ones
filtered, each queued line's signature and program checked), so steps grew with the
sweep. This keeps the open runs' ids by status, each in the order runs.jsonl first named
them (the queue's order), and, per sweep and program, the queued runs that ask the command
gate the same question; the supervisor's lean runs log feeds it each line as it is read.
"""

from __future__ import annotations

from collections.abc import Iterator

from wild.parsers.runs import RunRecord
from wild.runs.signing import command_to_approve

Program = tuple[str, str]  # (sweep id, the command the gate is asked about)


class OpenRuns:
    """The queued and running run ids of the supervisor's runs log, fed each run record as
    the log reads it (`wild.store.runs_log.RunListener`)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """The log is read again from its start: forget every run."""
        # Each run id, in the order runs.jsonl first named it (its place: a dict keeps its
        # keys' order); no int per run (~30 bytes each of a 10,000-run sweep's, held twice
        # while a compacted file is read again), counted only to sort a queue a rerun upset.
        self._seen: dict[str, None] = {}
        # The queued ids, in queue order once `queued_ids` has sorted it, each with its
        # (program, backend): one tuple shared by the runs that ask the same (a tuple per run
        # was ~120 bytes of a 10,000-run queue's each; a second dict by id ~30 bytes more).
        self.queued: dict[str, tuple[Program, str]] = {}
        self.running: dict[str, None] = {}
        self.programs: dict[Program, dict[str, None]] = {}  # queued ids by what they ask
        self.backends: dict[str, int] = {}  # how many queued runs each backend has
        self._shared: dict[tuple[Program, str], tuple[Program, str]] = {}
        self._unordered = False  # a run came back to the queue (a rerun): sort before use

    def fresh(self) -> OpenRuns:
        """An empty one, fed a read of the log from its start apart from this one."""
        return OpenRuns()

    def adopt(self, fed: OpenRuns) -> None:
        """Become `fed`, a read from the start that succeeded."""
        vars(self).update(vars(fed))

    def record(self, run: RunRecord) -> None:
        """`run` is its id's latest line."""
        self._apply(run)

    def _apply(self, run: RunRecord) -> None:
        if run.id not in self._seen:
            self._seen[run.id] = None
        elif run.status == "queued" and run.id not in self.queued and self.queued:
            self._unordered = True  # back in the queue at its old place, not at the end
        self.running.pop(run.id, None)
        self._unqueue(run.id)
        if run.status == "queued":
            on = (run.sweep, command_to_approve(run)), run.backend
            on = self._shared.setdefault(on, on)
            program = on[0]
            self.programs.setdefault(program, {})[run.id] = None
            self.backends[run.backend] = self.backends.get(run.backend, 0) + 1
            self.queued[run.id] = on
        elif run.status == "running":
            self.running[run.id] = None

    def _unqueue(self, run_id: str) -> None:
        if run_id not in self.queued:
            return
        program, backend = self.queued.pop(run_id)
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
            place = {run_id: n for n, run_id in enumerate(self._seen)}
            ordered = sorted(self.queued, key=place.__getitem__)
            self.queued = {run_id: self.queued[run_id] for run_id in ordered}
            self._unordered = False
        return iter(list(self.queued))

    def __bool__(self) -> bool:
        return bool(self.queued or self.running)
