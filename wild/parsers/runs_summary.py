"""The runs summary as data: what `wild --status` needs of runs.jsonl, kept small.

`--status` shows the stage and the run counts and names queued runs waiting for an approval.
For that it needs every sweep (few), each run's status (one short string per run) and the
records of runs not yet ended; not every run's whole record, rebuilt from every line of its
history (2.9 s at 10,000 runs). The summary holds exactly that and how far the file was read,
so a status after a run's line was appended costs what reading that line costs. Pure:
`wild.store.runs_summary` reads, checks and writes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import orjson

from wild.parsers.alerts_file import AlertCursor
from wild.parsers.lines import Problem
from wild.parsers.runs import (
    RUN_STATUSES,
    TERMINAL,
    Record,
    RunIndex,
    RunRecord,
    RunStatus,
    SweepRecord,
    encode_record,
    parse_record,
)
from wild.record import record as frozen_record

# Bumped whenever the meaning of a field changes: a summary of another version is rebuilt.
VERSION = 1


@frozen_record
class RunState:
    """A run as the summary keeps it once it ended: its status (`terminal` as RunRecord's)."""

    status: RunStatus

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


_STATES = {status: RunState(status) for status in RUN_STATUSES}  # one each: 10,000 runs, 6 states


@frozen_record
class RunsSummary:
    """runs.jsonl up to `cursor`: every sweep, every run's status, the records of the runs
    not ended (`open`), and the problems in its complete lines (named by the reader)."""

    cursor: AlertCursor
    sweeps: Mapping[str, SweepRecord]
    statuses: Mapping[str, RunStatus]  # every run, in the order of its first line
    open: Mapping[str, RunRecord]
    problems: tuple[tuple[int, str], ...]  # (line, message), in file order

    def problems_in(self, file: str) -> tuple[Problem, ...]:
        return tuple(Problem(file, line, message) for line, message in self.problems)

    def states(self) -> dict[str, RunRecord | RunState]:
        """Each run: its record while open, else its state (enough for the stage)."""
        states: dict[str, RunRecord | RunState] = {
            r: _STATES[status] for r, status in self.statuses.items()
        }
        states.update(self.open)
        return states

    def open_index(self) -> RunIndex:
        """The sweeps and the runs not ended, as an index (what a status names of them), in
        the order a full read gives them."""
        runs = {r: self.open[r] for r in self.statuses if r in self.open}
        return RunIndex(runs=runs, sweeps=dict(self.sweeps))


def empty(cursor: AlertCursor) -> RunsSummary:
    return RunsSummary(cursor, {}, {}, {}, ())


def advance(
    summary: RunsSummary,
    records: Iterable[Record],
    problems: Iterable[Problem],
    cursor: AlertCursor,
) -> RunsSummary:
    """The summary once the complete lines holding `records` and `problems` are read too."""
    sweeps, statuses, still_open = dict(summary.sweeps), dict(summary.statuses), dict(summary.open)
    for record in records:
        if isinstance(record, SweepRecord):
            sweeps[record.id] = record
            continue
        statuses[record.id] = record.status
        if record.terminal:
            still_open.pop(record.id, None)
        else:
            still_open[record.id] = record
    found = (*summary.problems, *((p.line, p.message) for p in problems))
    return RunsSummary(cursor, sweeps, statuses, still_open, found)


def encode_summary(summary: RunsSummary) -> bytes:
    return orjson.dumps(summary_obj(summary))


def summary_obj(summary: RunsSummary) -> dict[str, Any]:
    """The summary as a JSON object (`encode_summary`'s, to keep inside another file)."""
    records: list[Record] = [*summary.sweeps.values(), *summary.open.values()]
    lines = [encode_record(r).decode() for r in records]
    return {
        "version": VERSION,
        "cursor": summary.cursor.to_json(),
        "statuses": summary.statuses,
        "records": lines,
        "problems": [list(p) for p in summary.problems],
    }


def decode_summary(data: bytes) -> RunsSummary | None:
    """The summary in `data`; None when it is not one wild can trust (then the log is read)."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return summary_from(obj)


def summary_from(obj: Any) -> RunsSummary | None:
    """The summary in the JSON object `obj` (`summary_obj`'s); None as `decode_summary`."""
    if not isinstance(obj, dict) or obj.get("version") != VERSION:
        return None
    cursor = AlertCursor.from_json(obj.get("cursor"))
    statuses, lines, problems = obj.get("statuses"), obj.get("records"), obj.get("problems")
    if cursor is None or not isinstance(statuses, dict) or not isinstance(lines, list):
        return None
    if not all(status in RUN_STATUSES for status in statuses.values()):
        return None
    records = [_record(line) for line in lines]
    kept = [p for p in problems if _problem(p)] if isinstance(problems, list) else None
    if any(r is None for r in records) or kept is None or len(kept) != len(problems or []):
        return None
    sweeps = {r.id: r for r in records if isinstance(r, SweepRecord)}
    still_open = {r.id: r for r in records if isinstance(r, RunRecord)}
    return RunsSummary(
        cursor,
        sweeps,
        cast(dict[str, RunStatus], statuses),
        still_open,
        tuple((int(line), str(message)) for line, message in kept),
    )


def _record(line: object) -> Record | None:
    return parse_record(line.encode(), 0)[0] if isinstance(line, str) else None


def _problem(entry: Any) -> bool:
    return (
        isinstance(entry, list)
        and len(entry) == 2
        and isinstance(entry[0], int)
        and isinstance(entry[1], str)
    )
