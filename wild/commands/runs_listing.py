"""`wild --runs`' table kept in `.wild/runs.listing.json` and patched from the lines appended
to runs.jsonl since, so the listing at 10,000 runs costs about what it costs at 10 (issue 23).

The file holds the runs summary of runs.jsonl up to a cursor (`wild.parsers.runs_summary`:
every sweep, each run's status, the records of the runs not ended) and, for each ended run,
its row's cells with a digest of what decided them (its record, its sweep's metric keys).
A command reads only the bytes after the cursor: a run named there is drawn again when its
record differs from the one its row was drawn from; the runs not ended are drawn every time
(a running run's step, elapsed time and ETA move). An ended run's row is kept only once its
metric files had settled when read (`wild.metrics.kept.settled`): its files are not looked at
again, since a run writes nothing after it ended and anything new about it (a rerun) comes
as a line of runs.jsonl. Until then the row's record and its metric entry wait in the file
(`pending`, `entries`) and it is drawn again.

The file is a cache of runs.jsonl and the runs' files, never trusted over them: one that is
missing, damaged or another wild's, or a runs.jsonl replaced, truncated or compacted since
(its cursor no longer continues), means runs.jsonl is read whole; rows whose digest still
matches are kept even then. Writing is an atomic replace that takes no lock; failing to write
loses nothing but time. It is apart from metrics.cache.json, which holds every run's metric
summary (5 MB at 10,000 runs) and is loaded only when many runs must be drawn.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import orjson

from wild import __version__
from wild.clock import iso
from wild.commands import runs_patch
from wild.commands.runs_table import (
    HEADS,
    elapsed_s,
    eta_s,
    row_cells,
    table_text,
    tail_lines,
    total_steps,
)
from wild.errors import WildError
from wild.metrics import kept
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.early_stop import early_stopped
from wild.parsers.metric_summary import RunSummary
from wild.parsers.runs import RunIndex, RunRecord, SweepRecord, encode_record, parse_record
from wild.parsers.runs_summary import RunsSummary, advance, empty, summary_from, summary_obj
from wild.paths import WildPaths
from wild.record import record as frozen_record
from wild.record import replace
from wild.runs.judge import judged
from wild.store.files import write_cache
from wild.store.offset_read import OffsetRead, read_on
from wild.store.runs_log import Parsed, parse_appended

FORMAT = 1
FEW = 16  # runs drawn from their own files; more are summed up through metrics.cache.json
_SPEC_KEYS = ("metrics", "objective", "total_steps")  # what of a sweep a row depends on

Notes = Callable[[list[RunRecord]], dict[str, str]]
# A kept row: [digest, sweep, status, reason, elapsed seconds, cells]
Row = list[Any]


def digest(run: RunRecord, sweep: SweepRecord | None) -> str:
    """What decided an ended run's row: its record and its sweep's metric keys."""
    data = encode_record(run) + (metric_keys(sweep) if sweep is not None else b"")
    return hashlib.blake2b(data, digest_size=12).hexdigest()


@frozen_record
class Kept:
    """What the file keeps: the runs summary up to its cursor (None: read runs.jsonl whole),
    the ended runs' rows, the ended runs not yet settled (their lines) and the metric entries
    of the runs drawn last time."""

    summary: RunsSummary | None
    rows: dict[str, Row]
    pending: dict[str, str]
    entries: dict[str, Any]


NOTHING_KEPT = Kept(None, {}, {}, {})


def _load(paths: WildPaths) -> Kept:
    try:
        data = orjson.loads(paths.runs_listing.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return NOTHING_KEPT
    if not isinstance(data, dict) or (data.get("format"), data.get("wild")) != (
        FORMAT,
        __version__,
    ):
        return NOTHING_KEPT
    summary = data.get("summary")
    rows, pending, entries = data.get("rows"), data.get("pending"), data.get("entries")
    if not isinstance(rows, dict):
        return NOTHING_KEPT
    if not (isinstance(pending, dict) and isinstance(entries, dict)):
        return NOTHING_KEPT
    found = summary_from(summary)
    if found is None:
        return NOTHING_KEPT
    # Rows are checked as they are used (a row that is not one: everything read afresh).
    lines = {k: v for k, v in pending.items() if isinstance(v, str)}
    return Kept(found, rows, lines, entries)


def _is_row(row: Any) -> bool:
    return (
        isinstance(row, list)
        and len(row) == 6
        and isinstance(row[0], str)
        and isinstance(row[1], str)
        and isinstance(row[2], str)
        and isinstance(row[5], list)
        and len(row[5]) == 10
        and all(isinstance(cell, str) for cell in row[5])
    )


def _save(paths: WildPaths, kept_now: Kept) -> None:
    if kept_now.summary is None:
        return
    payload = {
        "format": FORMAT,
        "wild": __version__,
        "summary": summary_obj(kept_now.summary),
        "rows": kept_now.rows,
        "pending": kept_now.pending,
        "entries": kept_now.entries,
    }
    with contextlib.suppress(OSError, orjson.JSONEncodeError):  # a cache: losing it costs time
        write_cache(paths.runs_listing, orjson.dumps(payload))


def listing_text(
    paths: WildPaths, sweep_id: str | None, now: datetime, notes_of: Notes
) -> str | None:
    """The table of `wild --runs [--sweep ID]`, or None when runs.jsonl cannot be read here
    (the caller reads it the usual way and says why). `notes_of` says why each of the runs
    drawn waits or failed (a note in its status)."""
    name = sweep_id or "*"
    shown = _shown(paths, name, now, notes_of)
    if shown is not None:  # runs.jsonl as it was when this table was drawn of ended runs
        return shown
    stored = _load(paths)
    read = _read(paths, stored)
    if read is None and stored.summary is not None:  # what was kept no longer fits: afresh
        read = _read(paths, replace(stored, summary=None))
    if read is None:
        return None
    kept_now, need, torn = read
    summary = kept_now.summary
    assert summary is not None  # noqa: S101  (_read returns the summary it read)
    if sweep_id is not None and sweep_id not in summary.sweeps:
        known = ", ".join(summary.sweeps) or "none yet"
        raise WildError(
            f"{paths.runs_log}: no sweep {sweep_id} (known: {known}); "
            "list them all with `wild --runs`"
        )
    current, cells = _draw(paths, kept_now, need, now, notes_of)
    rows = kept_now.rows
    try:
        order = (
            list(summary.statuses)
            if sweep_id is None  # in file order; one sweep's in its grid order, as a full read
            else [r for r in summary.sweeps[sweep_id].run_ids if r in summary.statuses]
        )
        early = [
            (r, current[r].status, current[r].reason)
            if r in current
            else (r, rows[r][2], rows[r][3])
            for r in order
        ]
        problems = [str(p) for p in summary.problems_in(str(paths.runs_log))] + torn
        table = [cells[r] if r in cells else rows[r][5] for r in order]
        text = table_text(table, early, problems)
    except (TypeError, ValueError, KeyError, IndexError):  # a kept row that is not one
        if stored.summary is None:
            return None
        paths.runs_listing.unlink(missing_ok=True)
        return listing_text(paths, sweep_id, now, notes_of)
    # A listing of settled ended runs depends on the lines read alone; a live one also on
    # now and the runs' files (their entries are kept).
    _save(paths, kept_now)
    with contextlib.suppress(OSError, ValueError):  # a cache: losing it costs time
        if kept_now.entries:
            paths.runs_view.unlink(missing_ok=True)
        else:
            tail = tail_lines(early, problems)
            end = len(text) - (len("\n".join(tail)) + 1 if tail else 0)
            # A torn last line's problem goes once its writer ends the line: no patching.
            layout = runs_patch.layout_of([HEADS, *table], text, end) if not torn else None
            stopped = [run_id for run_id, status, reason in early if early_stopped(status, reason)]
            specs = {sweep_id: dict(sweep.spec) for sweep_id, sweep in summary.sweeps.items()}
            basis = Basis(layout, specs, stopped) if table and layout is not None else None
            _keep_view(paths, name, summary.cursor, text, basis)
    return text


@frozen_record
class Basis:
    """What patching a kept table needs besides its text: its layout, each sweep's spec (what
    of a sweep its rows depend on) and the runs stopped early (named after the table)."""

    layout: runs_patch.Layout
    specs: dict[str, Any]
    stopped: Sequence[str]

    def to_json(self) -> dict[str, Any]:
        return {"layout": self.layout.to_json(), "specs": self.specs, "stopped": self.stopped}

    @staticmethod
    def from_json(obj: Any) -> Basis | None:
        if not isinstance(obj, dict):
            return None
        layout = runs_patch.Layout.from_json(obj.get("layout"))
        specs, stopped = obj.get("specs"), obj.get("stopped")
        if layout is None or not isinstance(specs, dict) or not isinstance(stopped, list):
            return None
        if not all(isinstance(spec, dict) for spec in specs.values()):
            return None
        return Basis(layout, specs, stopped)


def _keep_view(
    paths: WildPaths, name: str, cursor: AlertCursor, text: str, basis: Basis | None
) -> None:
    """runs.view.json: the table, and when it can be patched the `Basis` of a patch."""
    write_view(paths.runs_view, name, cursor, text.encode(), basis.to_json() if basis else None)


def write_view(
    path: Path, name: str, cursor: AlertCursor, data: bytes, patch: dict[str, Any] | None
) -> None:
    """A kept listing: a JSON header line (what it was drawn from and, when it can be patched,
    what a patch needs), then the text."""
    head: dict[str, Any] = {"format": FORMAT, "wild": __version__, "name": name}
    head["cursor"] = cursor.to_json()
    head["bytes"] = len(data)  # a file cut short (a power cut) is no view
    if patch is not None:
        head["patch"] = patch
    write_cache(path, orjson.dumps(head) + b"\n", data)  # the text not copied behind it


@frozen_record
class View:
    """A kept listing that runs.jsonl still continues: its text, what a patch needs (None
    when it cannot be patched) and the complete lines appended since (none: it stands)."""

    data: bytes
    patch: Any
    appended: OffsetRead[Parsed]

    @property
    def text(self) -> str:
        return self.data.decode(errors="replace")

    @property
    def stands(self) -> bool:
        return not self.appended.parsed.lines


def read_view(paths: WildPaths, path: Path, name: str) -> View | None:
    """The listing kept in `path` under `name`, if runs.jsonl continues the file it was drawn
    from with complete, good lines (a bad or torn one is reported: drawn whole). The header
    is checked before the text is read."""
    log = paths.runs_log
    try:
        with path.open("rb") as kept_file:
            head = orjson.loads(kept_file.readline())
            if not _fits(head, name):
                return None
            since = AlertCursor.from_json(head.get("cursor"))
            if since is None:
                return None
            found = read_on(
                log, since, lambda data, base: parse_appended(data, base, str(log)), str(log)
            )
            if found.fresh or found.unreadable is not None or found.parsed.problems:
                return None
            if found.parsed.lines and head.get("patch") is None:
                return None
            data = kept_file.read()
    except (OSError, orjson.JSONDecodeError):
        return None
    if len(data) != head.get("bytes"):
        return None
    return View(data, head.get("patch"), found)


def _shown(paths: WildPaths, name: str, now: datetime, notes_of: Notes) -> str | None:
    """The table kept under `name`, if it was drawn of ended, settled runs alone and
    runs.jsonl continues with nothing after the line it was drawn from; or patched in place
    when what was appended since only ended runs it shows (`_patched`)."""
    view = read_view(paths, paths.runs_view, name)
    if view is None or view.stands:
        return view.text if view is not None else None
    basis = Basis.from_json(view.patch)
    if basis is None:
        return None
    found = view.appended
    return _patched(paths, view.text, found, name=name, basis=basis, now=now, notes_of=notes_of)


def ended_runs(found: OffsetRead[Parsed]) -> list[RunRecord] | None:
    """The runs named by the lines appended, at their latest, if each line is an ended run's
    and none was stopped early (a patch redraws them); None otherwise."""
    latest: dict[str, RunRecord] = {}
    for record in found.parsed.records:
        if not isinstance(record, RunRecord) or not record.terminal:
            return None  # a sweep's line, or a run not ended: drawn whole
        if early_stopped(record.status, record.reason):
            return None  # the lines after the table would change
        latest[record.id] = record
    return list(latest.values())


def spec_index(runs: Sequence[RunRecord], specs: Mapping[str, Any]) -> RunIndex:
    """`runs` with their sweeps as far as a row depends on them: their specs (their metrics,
    objective, total steps), kept in a view's header instead of the sweeps' lines."""
    sweeps = {k: SweepRecord(k, "", spec, "active") for k, spec in specs.items()}
    return RunIndex(runs={run.id: run for run in runs}, sweeps=sweeps)


def _fits(head: Any, name: str) -> bool:
    return isinstance(head, dict) and (
        head.get("format"),
        head.get("wild"),
        head.get("name"),
    ) == (FORMAT, __version__, name)


def _patched(
    paths: WildPaths,
    text: str,
    found: OffsetRead[Parsed],
    *,
    name: str,
    basis: Basis,
    now: datetime,
    notes_of: Notes,
) -> str | None:
    """The kept table with the lines of the runs appended since redrawn in place, when each
    of them is a run it shows, ended as it was and not by early stopping, with settled files
    and cells that fit the widths; else None (the table is drawn from the kept rows)."""
    appended = ended_runs(found)
    if appended is None or any(run.id in basis.stopped for run in appended):
        return None  # drawn from the kept rows
    stamp = iso(now)
    runs = [judged(paths, run, stamp) for run in appended]
    index = spec_index(runs, basis.specs)
    notes = notes_of(runs)
    layout = basis.layout
    for run in runs:
        summary, entry = kept.fresh_entry(paths, index, run)
        if not kept.settled(entry):
            return None
        cells = row_cells(run, summary, elapsed_s(run, now), None, notes.get(run.id))
        replaced = runs_patch.replace_row(text, layout, run.id, cells)
        if replaced is None:
            return None
        text, layout = replaced
    with contextlib.suppress(OSError, ValueError):  # a cache: losing it costs time
        _keep_view(paths, name, found.cursor, text, replace(basis, layout=layout))
    return text


def _read(paths: WildPaths, stored: Kept) -> tuple[Kept, dict[str, RunRecord], list[str]] | None:
    """What was kept brought up to date with the lines appended since (all of runs.jsonl
    when it continues no more), the records of the runs to draw now, and a torn last line's
    problem; None when runs.jsonl cannot be read or the kept rows do not fit it."""
    log = paths.runs_log
    since = stored.summary.cursor if stored.summary is not None else None
    found = read_on(log, since, lambda data, base: parse_appended(data, base, str(log)), str(log))
    if found.unreadable is not None or found.cursor.ino == 0:
        return None
    base = stored.summary if stored.summary is not None and not found.fresh else None
    complete = [p for p in found.parsed.problems if p.line <= found.cursor.line_count]
    torn = [str(p) for p in found.parsed.problems if p.line > found.cursor.line_count]
    summary = advance(base or empty(found.cursor), found.parsed.records, complete, found.cursor)
    latest = {r.id: r for r in found.parsed.records if isinstance(r, RunRecord)}
    old_sweeps = base.sweeps if base is not None else {}
    for sweep in found.parsed.records:
        old = old_sweeps.get(sweep.id) if isinstance(sweep, SweepRecord) else None
        if old is not None and metric_keys(old) != metric_keys(cast(SweepRecord, sweep)):
            return None  # rows of its runs were drawn for other metrics: read afresh
    rows = (
        stored.rows if base is not None else {r: v for r, v in stored.rows.items() if r in latest}
    )
    pending = stored.pending if base is not None else {}
    for run_id, run in latest.items():
        if run_id in rows and rows[run_id][0] != digest(run, summary.sweeps.get(run.sweep)):
            del rows[run_id]
        pending.pop(run_id, None)
    need: dict[str, RunRecord] = {}
    for run_id in summary.statuses:
        if run_id in summary.open:
            need[run_id] = summary.open[run_id]
        elif run_id in rows:
            continue
        elif (record := latest.get(run_id) or _pending(pending, run_id)) is not None:
            need[run_id] = record
        else:
            return None  # an ended run with neither row nor record: read afresh
    return Kept(summary, rows, pending, stored.entries), need, torn


def _draw(
    paths: WildPaths, kept_now: Kept, need: Mapping[str, RunRecord], now: datetime, notes_of: Notes
) -> tuple[dict[str, RunRecord], dict[str, list[str]]]:
    """The runs of `need` judged now and their cells; an ended one's row kept once its
    files had settled, else its line and its metric entry kept for the next command."""
    summary = kept_now.summary
    assert summary is not None  # noqa: S101
    stamp = iso(now)
    current = {r: judged(paths, run, stamp) for r, run in need.items()}
    index = RunIndex(runs=current, sweeps=dict(summary.sweeps))
    figures = _summaries(paths, index, kept_now.entries)
    took: dict[str, list[float]] = {}
    running = any(run.status == "running" for run in current.values())
    for row in kept_now.rows.values() if running else ():  # only an ETA asks for them
        if row[2] == "finished" and isinstance(row[4], (int, float)):
            took.setdefault(row[1], []).append(float(row[4]))
    for run in current.values():
        if run.status == "finished" and (spent := elapsed_s(run, now)) is not None:
            took.setdefault(run.sweep, []).append(spent)
    notes = notes_of(list(current.values()))
    cells: dict[str, list[str]] = {}
    kept_now.entries.clear()  # only the runs drawn now keep theirs
    for run_id, run in current.items():
        found, entry = figures[run_id]
        spent = elapsed_s(run, now)
        left = _left(run, found, spent, index, took)
        cells[run_id] = row_cells(run, found, spent, left, notes.get(run_id))
        ended = run_id not in summary.open
        if ended and kept.settled(entry):
            line = digest(run, summary.sweeps.get(run.sweep))
            kept_now.rows[run_id] = [line, run.sweep, run.status, run.reason, spent, cells[run_id]]
            kept_now.pending.pop(run_id, None)
            continue
        if ended:
            kept_now.pending[run_id] = encode_record(run).decode()
        kept_now.entries[run_id] = entry
    return current, cells


def metric_keys(sweep: SweepRecord) -> bytes:
    """What of a sweep its runs' rows depend on (the metrics, objective and total steps)."""
    return orjson.dumps({k: sweep.spec.get(k) for k in _SPEC_KEYS}, option=orjson.OPT_SORT_KEYS)


def _pending(pending: Mapping[str, str], run_id: str) -> RunRecord | None:
    line = pending.get(run_id)
    found = parse_record(line.encode(), 0)[0] if line is not None else None
    return found if isinstance(found, RunRecord) else None


def _summaries(
    paths: WildPaths, index: RunIndex, entries: Mapping[str, Any]
) -> dict[str, tuple[RunSummary, dict[str, Any]]]:
    """Each run's metric summary and its entry: the entry kept here while its files stand,
    else read from the run's files (a few runs) or through metrics.cache.json (many)."""
    out: dict[str, tuple[RunSummary, dict[str, Any]]] = {}
    missing: list[RunRecord] = []
    for run_id, run in index.runs.items():
        entry = entries.get(run_id)
        found = kept.kept_summary(entry, index, run) if isinstance(entry, dict) else None
        if found is not None and isinstance(entry, dict):
            out[run_id] = (found, entry)
        else:
            missing.append(run)
    if len(missing) > FEW:
        out.update(kept.summary_entries(paths, index, missing))
    else:
        out.update({run.id: kept.fresh_entry(paths, index, run) for run in missing})
    return out


def _left(
    run: RunRecord,
    summary: RunSummary,
    spent: float | None,
    index: RunIndex,
    took: Mapping[str, list[float]],
) -> float | None:
    if run.status != "running":
        return None
    sweep = index.sweeps.get(run.sweep)
    total = total_steps(summary, sweep.spec if sweep is not None else None)
    return eta_s(summary.step, spent, total, took.get(run.sweep, []))


def listing_json(
    paths: WildPaths,
    sweep_id: str | None,
    now: datetime,
    repeated_of: Callable[[list[RunRecord]], set[str]],
) -> bytes | None:
    """`wild --runs --json [--sweep ID]` as kept in runs.json-view.json: as it stands, or
    with the objects of the ended runs appended since redrawn in place (their files settled);
    None when it must be drawn whole (`keep_json` keeps it then). `repeated_of` names the
    deterministic failures among the runs redrawn. Bytes, as kept: 9 MB at 10,000 runs go
    out as they are, neither decoded nor encoded again (issue 23)."""
    from wild.commands.runs_table import live_json  # noqa: PLC0415
    from wild.output import to_json  # noqa: PLC0415

    name = sweep_id or "*"
    view = read_view(paths, paths.runs_json_view, name)
    if view is None or view.stands:
        return view.data if view is not None else None
    specs = view.patch.get("specs") if isinstance(view.patch, dict) else None
    if not isinstance(specs, dict) or not all(isinstance(s, dict) for s in specs.values()):
        return None
    appended = ended_runs(view.appended)
    if appended is None:
        return None
    runs = [judged(paths, run, iso(now)) for run in appended]
    index = spec_index(runs, specs)
    repeated = repeated_of(runs)
    data: bytes | None = view.data
    for run in runs:
        summary, entry = kept.fresh_entry(paths, index, run)
        if not kept.settled(entry) or data is None:
            return None
        element = to_json(live_json([(run, summary, elapsed_s(run, now), None)], {}, repeated))
        data = runs_patch.replace_element(data, run.id, element.encode())
    if data is None:
        return None
    with contextlib.suppress(OSError, ValueError):  # a cache: losing it costs time
        write_view(paths.runs_json_view, name, view.appended.cursor, data, {"specs": specs})
    return data


def keep_json(
    paths: WildPaths,
    sweep_id: str | None,
    cursor: AlertCursor,
    text: str,
    sweeps: Mapping[str, SweepRecord],
) -> None:
    """Keep `wild --runs --json`'s `text`, drawn whole from runs.jsonl up to `cursor` of ended
    runs whose files had settled, for `listing_json` to show or patch."""
    specs = {sweep_id: dict(sweep.spec) for sweep_id, sweep in sweeps.items()}
    with contextlib.suppress(OSError, ValueError):  # a cache: losing it costs time
        data = text.encode()
        write_view(paths.runs_json_view, sweep_id or "*", cursor, data, {"specs": specs})
