"""A lean table of runs by id (the loop's `RunIndex.runs`, issue 23: its memory flat with the
sweep's size), and the facts a sweep's progress line needs, from either kind of index.

A plain index holds every run's latest record: at 10,000 runs, tens of MB. `RunTable` holds
the record only of the runs running (the ones each step looks at); for every other run it
keeps where its latest line is in runs.jsonl (byte offset and line number), its sweep and its
status, packed in one int, and reads the line again when the record is asked for (a start,
a stop, a rerun, the final table). Per sweep it keeps what the progress line shows: the runs
counted by status and each finished run's duration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping, Sequence
from datetime import datetime

from wild.clock import parse_time
from wild.parsers.runs import RUN_STATUSES, RunIndex, RunRecord, RunStatus
from wild.record import record, replace

# Where a run's line is: (sweep's number, status's number, line number, byte offset).
Load = Callable[[str, int, int], RunRecord | None]  # (run id, byte offset, line number)

_STATUS_BITS = 3
_SWEEP_BITS = 20
_LINE_BITS = 40


@record
class SweepFacts:
    """What a sweep's progress line and ETA need: its runs counted by status, the durations
    (seconds) of its finished runs, and its running runs' records."""

    counts: dict[str, int]
    took: tuple[float, ...]
    running: tuple[RunRecord, ...]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def took_s(run: RunRecord) -> float | None:
    """A finished run's duration in seconds (None: not finished, or a time is missing)."""
    if run.status != "finished":
        return None
    start, end = parse_time(run.started_at), parse_time(run.ended_at)
    return (end - start).total_seconds() if start is not None and end is not None else None


def facts_of(runs: Sequence[RunRecord]) -> SweepFacts:
    """The facts of runs at hand (a plain index's, a test's)."""
    counts: dict[str, int] = dict.fromkeys(RUN_STATUSES, 0)
    for run in runs:
        counts[run.status] += 1
    took = tuple(t for run in runs if (t := took_s(run)) is not None)
    return SweepFacts(counts, took, tuple(run for run in runs if run.status == "running"))


def sweep_facts(index: RunIndex, sweep_id: str) -> SweepFacts:
    """A sweep's facts: kept by a `RunTable`, counted from the records by a plain index."""
    if isinstance(index.runs, RunTable):
        return index.runs.facts(sweep_id)
    return facts_of(index.of_sweep(sweep_id))


def running_runs(index: RunIndex) -> Iterator[RunRecord]:
    """The runs running, without reading every run's line from a `RunTable`."""
    if isinstance(index.runs, RunTable):
        return index.runs.running()
    return (run for run in index.runs.values() if run.status == "running")


def run_ids_of(index: RunIndex, sweep_id: str, status: RunStatus) -> list[str]:
    """A sweep's runs with `status`, in its order, without reading a `RunTable`'s lines."""
    sweep = index.sweeps.get(sweep_id)
    runs = index.runs
    if sweep is None:
        return []
    if isinstance(runs, RunTable):
        return [run_id for run_id in sweep.run_ids if runs.status(run_id) == status]
    return [run_id for run_id in sweep.run_ids if (r := runs.get(run_id)) and r.status == status]


class RunTable(MutableMapping[str, RunRecord]):
    """Runs by id: the running ones' records, the others' places in the file (`load` reads
    a record again from its place). A record set without a place (`table[id] = run`) is
    kept whole."""

    def __init__(self, load: Load) -> None:
        self._load = load
        self._kept: dict[str, RunRecord | int] = {}
        self._whole: dict[str, None] = {}  # the ids kept as records (the running runs)
        self._at: dict[str, int] = {}  # where those records' lines are, when put with one
        self._sweep_ids: list[str] = []
        self._sweep_no: dict[str, int] = {}
        self._counts: dict[str, dict[str, int]] = {}
        self._took: dict[str, dict[str, float]] = {}
        # Where the sweeps' lines are (byte offset → sweep id), each line read, a few per
        # file: a compaction need not parse them again (a 10,000-run sweep's is ~0.3 MB).
        self.sweep_lines: dict[int, str] = {}

    def put(self, run: RunRecord, offset: int | None) -> None:
        """`run` is its id's latest line, at byte `offset` of the file `load` reads (None:
        keep the record itself)."""
        self._forget(run.id)
        counts = self._counts.setdefault(run.sweep, dict.fromkeys(RUN_STATUSES, 0))
        counts[run.status] += 1
        took = took_s(run)
        if took is not None:
            self._took.setdefault(run.sweep, {})[run.id] = took
        if offset is None or run.status == "running":
            self._kept[run.id] = run
            self._whole[run.id] = None
            if offset is not None:
                self._at[run.id] = offset
            return
        self._kept[run.id] = self._pack(run, offset)

    def _pack(self, run: RunRecord, offset: int) -> int:
        number = self._sweep_no.get(run.sweep)
        if number is None:
            number = self._sweep_no[run.sweep] = len(self._sweep_ids)
            self._sweep_ids.append(run.sweep)
        return _packed(number, RUN_STATUSES.index(run.status), offset, run.line)

    def _place(self, packed: int) -> tuple[str, RunStatus, int, int]:
        status = RUN_STATUSES[packed & ((1 << _STATUS_BITS) - 1)]
        packed >>= _STATUS_BITS
        sweep = self._sweep_ids[packed & ((1 << _SWEEP_BITS) - 1)]
        packed >>= _SWEEP_BITS
        return sweep, status, packed >> _LINE_BITS, packed & ((1 << _LINE_BITS) - 1)

    def _forget(self, run_id: str) -> None:
        old = self._kept.get(run_id)
        if old is None:
            return
        if isinstance(old, RunRecord):
            sweep, status = old.sweep, old.status
            del self._whole[run_id]
            self._at.pop(run_id, None)
        else:
            sweep, status, _offset, _line = self._place(old)
        self._counts[sweep][status] -= 1
        self._took.get(sweep, {}).pop(run_id, None)

    def _offset(self, run_id: str, kept: RunRecord | int) -> int | None:
        """Where a run's line is (None: a record put without a place)."""
        if isinstance(kept, RunRecord):
            return self._at.get(run_id)
        return self._place(kept)[2]

    def move(self, lines: Callable[[], Iterator[tuple[int, int, int]]]) -> bool:
        """The file was rewritten with each run's line moved: `lines()` gives (old offset,
        new offset, new line number) of every run line of the new file, in its order. Each
        run takes its new place, if the runs held are exactly those, in that order (the
        order a read of the new file from its start would hold them in); else nothing
        changes and False. Two walks, the first only compares: no second table is built."""
        held = iter(self._kept.items())
        for old, _new, _line in lines():
            entry = next(held, None)
            if entry is None or self._offset(*entry) != old:
                return False
        if next(held, None) is not None:
            return False
        for run_id, (_old, new, line) in zip(list(self._kept), lines(), strict=True):
            kept = self._kept[run_id]
            if isinstance(kept, RunRecord):
                self._kept[run_id] = replace(kept, line=line)
                self._at[run_id] = new
            else:
                sweep_no = kept >> _STATUS_BITS & _SWEEP_MASK
                self._kept[run_id] = _packed(sweep_no, kept & _STATUS_MASK, new, line)
        return True

    def status(self, run_id: str) -> RunStatus | None:
        """A run's status without reading its line (None: unknown)."""
        kept = self._kept.get(run_id)
        if kept is None:
            return None
        return kept.status if isinstance(kept, RunRecord) else self._place(kept)[1]

    def running(self) -> Iterator[RunRecord]:
        for run_id in list(self._whole):
            run = self._kept[run_id]
            if isinstance(run, RunRecord) and run.status == "running":
                yield run

    def facts(self, sweep_id: str) -> SweepFacts:
        running = tuple(run for run in self.running() if run.sweep == sweep_id)
        counts = dict(self._counts.get(sweep_id, dict.fromkeys(RUN_STATUSES, 0)))
        return SweepFacts(counts, tuple(self._took.get(sweep_id, {}).values()), running)

    def __getitem__(self, run_id: str) -> RunRecord:
        kept = self._kept[run_id]
        if isinstance(kept, RunRecord):
            return kept
        _sweep, _status, offset, line = self._place(kept)
        run = self._load(run_id, offset, line)
        if run is None:
            raise KeyError(run_id)
        return run

    def __setitem__(self, run_id: str, run: RunRecord) -> None:
        if run_id != run.id:
            raise KeyError(f"{run_id}: the record is {run.id}'s")
        self.put(run, None)

    def __delitem__(self, run_id: str) -> None:
        self._forget(run_id)
        del self._kept[run_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._kept


_STATUS_MASK = (1 << _STATUS_BITS) - 1
_SWEEP_MASK = (1 << _SWEEP_BITS) - 1


def _packed(sweep_no: int, status_no: int, offset: int, line: int) -> int:
    """A run's place packed in one int: (offset, line number, sweep's number, status's)."""
    place = (offset << _LINE_BITS) | line
    return (((place << _SWEEP_BITS) | sweep_no) << _STATUS_BITS) | status_no


def eta_s(facts: SweepFacts, now: datetime) -> float | None:
    """Seconds until a sweep's last run ends: its finished runs' median time for each run
    still to go, as many at once as run now, less what the running ones have done."""
    if not facts.took:
        return None
    import math  # noqa: PLC0415
    import statistics  # noqa: PLC0415 (fractions and decimal: not on the loop's start path)

    each = statistics.median(facts.took)
    waiting = facts.counts.get("queued", 0) + facts.counts.get("planned", 0)
    done = [
        (now - start).total_seconds()
        for r in facts.running
        if (start := parse_time(r.started_at)) is not None
    ]
    current = max((each - spent for spent in done), default=0.0)
    waves = math.ceil(waiting / max(len(facts.running), 1))
    return max(0.0, current) + waves * each
