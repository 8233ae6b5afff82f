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

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import orjson

from wild.clock import RACY_NS
from wild.metrics.follow import RunMetrics
from wild.metrics.kept_views import inputs_hold, load_cache, save_cache
from wild.parsers.metric_formats import number
from wild.parsers.metric_summary import RunSummary, json_number, objective_of, summarize
from wild.parsers.runs import RunIndex, RunRecord
from wild.paths import WildPaths
from wild.record import replace


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
    keep: Callable[[RunSummary], RunSummary] = lambda summary: summary,
) -> dict[str, RunSummary]:
    """Each of `runs`' summary (what `keep` keeps of it: a caller that reads only some of it
    holds only that): kept where its files stand unchanged, read afresh (and kept for the
    next command) where they changed.

    A fresh entry waits for the cache's write as its encoded bytes in a scratch file, not as
    its objects: nothing here reads it again, and at the end of a 10,000-run sweep the
    entries' objects (key, inputs, signatures, the encoded summary) were most of the final
    table's memory."""
    return {
        run_id: keep(summary) for run_id, summary, _ in _each_summary(paths, index, runs, clock_ns)
    }


def summary_entries(
    paths: WildPaths,
    index: RunIndex,
    runs: Iterable[RunRecord],
    clock_ns: Callable[[], int] = time.time_ns,
) -> dict[str, tuple[RunSummary, dict[str, Any]]]:
    """Each of `runs`' summary with its kept entry, as `summaries`."""
    return {
        run_id: (summary, entry)
        for run_id, summary, entry in _each_summary(paths, index, runs, clock_ns, entries=True)
    }


def _each_summary(
    paths: WildPaths,
    index: RunIndex,
    runs: Iterable[RunRecord],
    clock_ns: Callable[[], int],
    *,
    entries: bool = False,
) -> Iterator[tuple[str, RunSummary, dict[str, Any]]]:
    """Each run's id, summary and (with `entries`; else an empty dict) kept entry, one at a
    time; once the last is taken, the cache is written if any entry changed."""
    cache = load_cache(paths)
    kept = cache["runs"]
    changed = False
    with _Spill() as spill:
        for run in runs:
            entry = kept.get(run.id, {})
            found = kept_summary(entry, index, run)
            if found is None:
                found, entry = fresh_entry(paths, index, run, clock_ns)
                kept[run.id] = entry if entries else spill.put(entry)
                changed = True
            yield run.id, found, entry if entries else {}
        if changed:
            save_cache(paths, cache, default=spill.text)


class _Spilled:
    """A fresh entry waiting for the cache's write in the spill file: where its JSON is."""

    __slots__ = ("at", "size")

    def __init__(self, at: int, size: int) -> None:
        self.at, self.size = at, size


class _Spill:
    """Fresh entries wait for the cache's write as their JSON in an unnamed scratch file, not
    in memory: at the end of a 10,000-run sweep their text (~0.4 KB a run, held until the
    one write) was most of the final table's memory above the loop's. The cache's write
    reads each back as it reaches it (`text`, orjson's `default` hook). Where no scratch
    file can be made or written, an entry waits as its text (a str: orjson's bytes sit in an
    allocation several times their size); one that does not encode waits as it is, so the
    cache's write fails as it would have."""

    def __init__(self) -> None:
        self._fd: int | None = None
        self._end = 0

    def __enter__(self) -> _Spill:
        return self

    def __exit__(self, *_: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def put(self, entry: dict[str, Any]) -> Any:
        try:
            data = orjson.dumps(entry)
        except orjson.JSONEncodeError:
            return entry
        try:
            if self._fd is None:
                self._fd = _scratch_fd()
            written = os.pwrite(self._fd, data, self._end)
        except OSError:
            written = -1
        if written != len(data):  # no file, or a short write: kept in memory
            return orjson.Fragment(data.decode())
        spilled = _Spilled(self._end, written)
        self._end += written
        return spilled

    def text(self, value: Any) -> orjson.Fragment:
        """A spilled entry's JSON, read back (a value of any other type does not encode)."""
        if not isinstance(value, _Spilled) or self._fd is None:
            raise TypeError(f"not JSON: {type(value).__name__}")
        data = os.pread(self._fd, value.size, value.at)
        if len(data) != value.size:
            raise OSError(f"the metrics cache's scratch file ended early at {value.at}")
        return orjson.Fragment(data)


def _scratch_fd() -> int:
    """An unnamed file in the temporary folder, gone when closed (or the process ends)."""
    import tempfile  # noqa: PLC0415 (only once a summary is read afresh)

    scratch = tempfile.TemporaryFile()  # noqa: SIM115 (its descriptor outlives the object)
    try:
        return os.dup(scratch.fileno())
    finally:
        scratch.close()
