"""`.wild/metrics.cache.json` read and written, and whole listings kept in it: the text of a
`wild --runs` or `wild --compare` shown again without reading runs.jsonl or any summary,
while runs.jsonl and every listed run's inputs (wild.metrics.kept) stand unchanged and
settled. Light on imports, since a kept listing is all such a command does."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from wild import __version__
from wild.clock import RACY_NS
from wild.paths import WildPaths
from wild.store.files import atomic_write_parts, stat_signature

FORMAT = 1


def load_cache(paths: WildPaths) -> dict[str, Any]:
    """The cache's `runs` and `views`; empty ones when it is missing, damaged or another
    wild's."""
    try:
        data = orjson.loads(paths.metrics_cache.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        data = None
    fits = isinstance(data, dict) and (data.get("format"), data.get("wild")) == (
        FORMAT,
        __version__,
    )
    runs = data.get("runs") if fits and isinstance(data, dict) else None
    views = data.get("views") if fits and isinstance(data, dict) else None
    return {
        "runs": runs if isinstance(runs, dict) else {},
        "views": views if isinstance(views, dict) else {},
    }


def save_cache(
    paths: WildPaths, cache: dict[str, Any], default: Callable[[Any], Any] | None = None
) -> None:
    """Write it whole (an atomic replace, no lock: a lost race loses only time); `default`
    encodes what JSON does not (orjson's hook: an entry kept outside the cache's objects).

    Encoded a run's entry at a time as it is written, never as one text: at 10,000 runs the
    cache is megabytes, and its text beside the entries was the peak of the loop's memory at
    the end of `wild --sweep FILE --run`."""
    payload = {"format": FORMAT, "wild": __version__, **cache}
    # A value that does not encode stops the write before the rename: nothing is replaced.
    with contextlib.suppress(OSError, orjson.JSONEncodeError):
        atomic_write_parts(paths.metrics_cache, _encoded(payload, default))


def _encoded(payload: dict[str, Any], default: Callable[[Any], Any] | None) -> Iterator[bytes]:
    """`orjson.dumps(payload)`, in parts: its `runs` object one entry at a time."""
    yield b"{"
    for n, (key, value) in enumerate(payload.items()):
        yield (b"," if n else b"") + orjson.dumps(key) + b":"
        if key != "runs" or not isinstance(value, dict):
            yield orjson.dumps(value)
            continue
        yield b"{"
        for m, (run_id, entry) in enumerate(value.items()):
            entry_text = orjson.dumps(entry, default=default)
            yield (b"," if m else b"") + orjson.dumps(run_id) + b":" + entry_text
        yield b"}"
    yield b"}"


def stands(path: str, kept: Any, taken_ns: int) -> bool:
    """Whether `path` still has the signature `kept` (a list, or None: absent) and had it
    settled when it was taken (a same-tick write could otherwise hide)."""
    found = stat_signature(path)
    if (list(found) if found else None) != kept:
        return False
    return found is None or found[2] < taken_ns - RACY_NS


def inputs_hold(entry: Any) -> bool:
    """Whether a run's kept entry was read from files that all stand as they were."""
    if not isinstance(entry, dict):
        return False
    taken, inputs = entry.get("takenNs"), entry.get("inputs")
    if not isinstance(taken, int) or not isinstance(inputs, list):
        return False
    return all(
        isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
        and stands(item[0], item[1], taken)
        for item in inputs
    )  # fmt: skip


def kept_view(paths: WildPaths, name: str) -> str | None:
    """The listing kept under `name`, if runs.jsonl and each listed run's files stand."""
    cache = load_cache(paths)
    view = cache["views"].get(name)
    if not isinstance(view, dict) or not isinstance(view.get("text"), str):
        return None
    taken, ids = view.get("takenNs"), view.get("runs")
    if not isinstance(taken, int) or not isinstance(ids, list):
        return None
    if not stands(str(paths.runs_log), view.get("runsLog"), taken):
        return None
    runs = cache["runs"]
    if not all(isinstance(i, str) and inputs_hold(runs.get(i)) for i in ids):
        return None
    text: str = view["text"]
    return text


def keep_view(
    paths: WildPaths, name: str, text: str, *, run_ids: list[str], runs_log: Any, taken_ns: int
) -> None:
    """Keep `text` under `name`: good while runs.jsonl has the signature `runs_log` (taken
    at `taken_ns`, before it was read) and the runs' entries hold."""
    cache = load_cache(paths)
    cache["views"][name] = {"text": text, "runs": run_ids, "runsLog": runs_log, "takenNs": taken_ns}
    save_cache(paths, cache)


def runs_log_signature(paths: WildPaths) -> list[int] | None:
    found = stat_signature(paths.runs_log)
    return list(found) if found else None
