"""`wild --compare SWEEP [--metric KEY] [--group-by PARAM …] [--plot FILE.png]`: a sweep's
runs grouped across seeds (wild.parsers.run_compare), from the kept summaries."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from wild.metrics import kept_views
from wild.metrics.comparison import find_sweep, sweep_comparison
from wild.output import escape_undecodable
from wild.parsers.run_compare import comparison_json, format_comparison
from wild.paths import WildPaths
from wild.store.runs_log import read_runs
from wild.workspace import require_initialised


def compare_action(paths: WildPaths, opts: Mapping[str, Any], *, as_json: bool) -> str:
    from wild.output import to_json  # noqa: PLC0415

    require_initialised(paths)
    asked = [opts["compare"], opts["metric"], list(opts["group_by"]), as_json]
    # The key of the kept listing: what was asked, any bytes that are not UTF-8 as \xNN.
    name = "compare " + orjson.dumps(escape_undecodable(asked)).decode()
    if not opts.get("plot") and (kept := kept_views.kept_view(paths, name)) is not None:
        return kept
    taken, runs_log = time.time_ns(), kept_views.runs_log_signature(paths)  # before the read
    index = read_runs(paths.runs_log).index
    sweep = find_sweep(paths, index, opts["compare"])
    result = sweep_comparison(paths, index, sweep, opts["metric"], tuple(opts["group_by"]))
    if as_json:
        text = to_json(comparison_json(result, sweep.id))
    else:
        text = format_comparison(result, f"{sweep.id} ({sweep.name})")
    # Runs that are going on change their files, and an ended run its line: either is seen.
    ids = list(sweep.run_ids)
    kept_views.keep_view(paths, name, text, run_ids=ids, runs_log=runs_log, taken_ns=taken)
    if opts.get("plot"):
        from wild.commands.compare_plot import plot_comparison  # noqa: PLC0415

        plot_comparison(paths, index, sweep, result, Path(opts["plot"]))
        text += f"\nWrote {opts['plot']}"
    return text
