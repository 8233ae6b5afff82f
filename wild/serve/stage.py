"""The banner's stage (SPEC §7): exploring, running, analyzing; paused, idle or working besides."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wild.parsers.runs import RunIndex


def stage_of(loop: Mapping[str, Any], index: RunIndex | None) -> str:
    """The stage seed 000's banner shows, derived from the loop and the runs.

    A paused loop is `paused`; with an active sweep, `running` while any of its runs is not
    terminal and `analyzing` once all are; a project that has run sweeps and has none active
    is `exploring`; a project without sweeps is `working` while its loop runs, else `idle`.
    """
    if loop.get("paused"):
        return "paused"
    sweeps = list(index.sweeps.values()) if index is not None else []
    active = [s for s in sweeps if s.status == "active"]
    if active and index is not None:
        runs = [run for sweep in active for run in index.of_sweep(sweep.id)]
        return "running" if any(not run.terminal for run in runs) else "analyzing"
    if sweeps:
        return "exploring"
    return "working" if loop.get("state") in ("running", "elsewhere") else "idle"
