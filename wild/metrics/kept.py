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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from wild.metrics.follow import RunMetrics
from wild.metrics.kept_views import inputs_hold, load_cache, save_cache
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


def summaries(
    paths: WildPaths,
    index: RunIndex,
    runs: Sequence[RunRecord],
    clock_ns: Callable[[], int] = time.time_ns,
) -> dict[str, RunSummary]:
    """Each of `runs`' summary: kept where its files stand unchanged, read afresh (and kept
    for the next command) where they changed."""
    cache = load_cache(paths)
    kept = cache["runs"]
    out: dict[str, RunSummary] = {}
    changed = False
    for run in runs:
        spec = _spec_of(index, run)
        key = _key(run, spec)
        entry = kept.get(run.id, {})
        found = decode(entry.get("summary")) if _holds(entry, key) else None
        if found is None:
            taken = clock_ns()  # before the signatures: what they show is at least this new
            reader = RunMetrics(paths, run, spec)
            view = reader.refresh()
            objective = objective_of(spec) if spec is not None else None
            found = replace(
                summarize(view.series, view.final, objective, view.total_steps), files=view.files
            )
            kept[run.id] = {
                "key": key,
                "inputs": reader.inputs(),
                "takenNs": taken,
                "summary": encode(found),
            }
            changed = True
        out[run.id] = found
    if changed:
        save_cache(paths, cache)
    return out
