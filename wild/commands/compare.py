"""`wild --compare SWEEP [--metric KEY] [--group-by PARAM …] [--plot FILE.png]`: a sweep's
runs grouped across seeds (wild.parsers.run_compare), from the kept summaries."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wild.metrics.comparison import find_sweep, sweep_comparison
from wild.parsers.run_compare import comparison_json, format_comparison
from wild.paths import WildPaths
from wild.store.runs_log import read_runs
from wild.workspace import require_initialised


def compare_action(paths: WildPaths, opts: Mapping[str, Any], *, as_json: bool) -> str:
    from wild.output import to_json  # noqa: PLC0415

    require_initialised(paths)
    index = read_runs(paths.runs_log).index
    sweep = find_sweep(paths, index, opts["compare"])
    result = sweep_comparison(paths, index, sweep, opts["metric"], tuple(opts["group_by"]))
    note = ""
    if opts.get("plot"):
        from wild.commands.compare_plot import plot_comparison  # noqa: PLC0415

        plot_comparison(paths, index, sweep, result, Path(opts["plot"]))
        note = f"\nWrote {opts['plot']}"
    if as_json:
        return to_json(comparison_json(result, sweep.id))
    return format_comparison(result, f"{sweep.id} ({sweep.name})") + note
