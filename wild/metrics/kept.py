"""Each run's metrics summary kept in `.wild/metrics.cache.json` and used again while the
files it was read from stand unchanged, so `wild --runs` and `wild --compare` over 1,000
runs of 10,000 steps each cost little more than over 10 (issue 21).

An entry is keyed by what decides the summary besides the files (the sweep's `metrics`,
`objective` and `total_steps`, the run's params, workdir and attempt) and holds the stat
signature of every folder walked and file read. It is never trusted over the files: a file
or folder changed less than `RACY_NS` before its signature was taken is read again next time
(a later write in the same timestamp tick could keep size and time, git's "racy" rule), and
an entry of another format or wild version is no entry. Writing is an atomic replace that
takes no lock; failing to write loses nothing but time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import orjson

from wild.metrics.follow import RunMetrics
from wild.metrics.kept_views import RACY_NS, inputs_hold, load_cache, save_cache
from wild.parsers.metric_formats import number
from wild.parsers.metric_summary import RunSummary, json_number, objective_of, summarize
from wild.parsers.runs import RunIndex, RunRecord
from wild.paths import WildPaths


def _spec_of(index: RunIndex, run: RunRecord) -> Mapping[str, Any] | None:
    sweep = index.sweeps.get(run.sweep)
    return sweep.spec if sweep is not None else None


def _key(run: RunRecord, spec: Mapping[str, Any] | None) -> str:
    said = {k: spec.get(k) for k in ("metrics", "objective", "total_steps")} if spec else {}
    return orjson.dumps(
        [said, dict(run.params), run.workdir, run.attempt], option=orjson.OPT_SORT_KEYS
    ).decode()


def _holds(entry: Any, key: str) -> bool:
    """Whether a kept entry is still this run's summary: same key, every input as it was."""
    return isinstance(entry, dict) and entry.get("key") == key and inputs_hold(entry)


def encode(summary: RunSummary) -> dict[str, Any]:
    def num(value: float | None) -> float | str | None:
        return None if value is None else json_number(value)

    return {
        "last": {key: json_number(value) for key, value in summary.last.items()},
        "step": num(summary.step),
        "metric": summary.metric,
        "best": num(summary.best),
        "bestStep": num(summary.best_step),
        "diverged": summary.diverged,
        "totalSteps": summary.total_steps,
        "files": list(summary.files),
    }


def decode(data: Any) -> RunSummary | None:
    """A kept summary; None when it is not one (then it is read again)."""
    if not isinstance(data, dict) or not isinstance(data.get("last"), dict):
        return None
    last = {str(k): v for k, raw in data["last"].items() if (v := number(raw)) is not None}
    metric, total, files = data.get("metric"), data.get("totalSteps"), data.get("files")
    return RunSummary(
        last,
        number(data.get("step")),
        metric if isinstance(metric, str) else None,
        number(data.get("best")),
        number(data.get("bestStep")),
        data.get("diverged") is True,
        total if isinstance(total, int) and not isinstance(total, bool) else None,
        tuple(f for f in files if isinstance(f, str)) if isinstance(files, list) else (),
    )


def kept_summary(entry: Any, index: RunIndex, run: RunRecord) -> RunSummary | None:
    """The summary in a kept `entry` while it is still `run`'s and its files stand."""
    return decode(entry.get("summary")) if _holds(entry, _key(run, _spec_of(index, run))) else None


def fresh_entry(
    paths: WildPaths, index: RunIndex, run: RunRecord, clock_ns: Callable[[], int] = time.time_ns
) -> tuple[RunSummary, dict[str, Any]]:
    """`run`'s summary read from its files now, and the entry that keeps it."""
    spec = _spec_of(index, run)
    taken = clock_ns()  # before the signatures: what they show is at least this new
    reader = RunMetrics(paths, run, spec)
    view = reader.refresh()
    objective = objective_of(spec) if spec is not None else None
    found = replace(
        summarize(view.series, view.final, objective, view.total_steps), files=view.files
    )
    entry = {"key": _key(run, spec), "inputs": reader.inputs(), "takenNs": taken}
    return found, {**entry, "summary": encode(found)}


def settled(entry: Mapping[str, Any]) -> bool:
    """Whether every input of `entry` had settled (changed over `RACY_NS` before it was
    read): a summary no later same-tick write can hide."""
    taken = entry.get("takenNs")
    inputs = entry.get("inputs")
    if not isinstance(taken, int) or not isinstance(inputs, list):
        return False
    return all(
        isinstance(item, list) and len(item) == 2
        and (item[1] is None or (isinstance(item[1], list) and item[1][2] < taken - RACY_NS))
        for item in inputs
    )  # fmt: skip


def summaries(
    paths: WildPaths,
    index: RunIndex,
    runs: Iterable[RunRecord],
    clock_ns: Callable[[], int] = time.time_ns,
) -> dict[str, RunSummary]:
    """Each of `runs`' summary: kept where its files stand unchanged, read afresh (and kept
    for the next command) where they changed."""
    found: dict[str, RunSummary] = {}

    def keep(run_id: str, summary: RunSummary, _entry: dict[str, Any]) -> None:
        found[run_id] = summary

    _each_summary(paths, index, runs, clock_ns, keep)
    return found


def summary_entries(
    paths: WildPaths,
    index: RunIndex,
    runs: Iterable[RunRecord],
    clock_ns: Callable[[], int] = time.time_ns,
) -> dict[str, tuple[RunSummary, dict[str, Any]]]:
    """Each of `runs`' summary with its kept entry, as `summaries`."""
    found: dict[str, tuple[RunSummary, dict[str, Any]]] = {}

    def keep(run_id: str, summary: RunSummary, entry: dict[str, Any]) -> None:
        found[run_id] = (summary, entry)

    _each_summary(paths, index, runs, clock_ns, keep)
    return found


class _Unchanged(Exception):
    """Every run's kept entry held: the cache's write is dropped, nothing replaced."""


class _Failed(Exception):
    """Reading a run's summary failed: the cache's write is dropped, the error goes on to
    the caller as it was raised."""


def _each_summary(
    paths: WildPaths,
    index: RunIndex,
    runs: Iterable[RunRecord],
    clock_ns: Callable[[], int],
    keep: Callable[[str, RunSummary, dict[str, Any]], None],
) -> None:
    """Give each run's id, summary and kept entry to `keep`, in order, and write the cache
    if any entry changed.

    The cache is written as the runs are read, not after: from the first run whose entry
    changed on, each run's entry goes to the file as it is made and is not held (at the end
    of a 10,000-run sweep every run's fresh entry waiting for one write was ~0.5 KB a run,
    most of the final table's memory). A write that fails (it loses nothing but time) or is
    dropped leaves the runs after it read all the same."""
    cache = load_cache(paths)
    kept = cache["runs"]
    pending = iter(runs)
    changed = False
    failures: list[Exception] = []

    def summary_of(run: RunRecord) -> dict[str, Any]:
        nonlocal changed
        entry: dict[str, Any] = kept.get(run.id, {})
        found = kept_summary(entry, index, run)
        if found is None:
            found, entry = fresh_entry(paths, index, run, clock_ns)
            changed = True
        keep(run.id, found, entry)
        return entry

    def written() -> Iterator[tuple[str, Any]]:
        try:
            for run in pending:
                entry = summary_of(run)
                if changed:  # written from here on; the kept ones before it, after
                    kept.pop(run.id, None)
                    yield run.id, entry
        except Exception as error:
            failures.append(error)
            raise _Failed from error
        if not changed:
            raise _Unchanged

    try:
        save_cache(paths, cache, written())
    except _Unchanged:
        pass
    except _Failed:
        raise failures[0] from None
    for run in pending:  # the cache could not be written: the rest read all the same
        summary_of(run)
