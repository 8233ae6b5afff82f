"""The banner's stage (SPEC §7): exploring, running, analyzing; paused, idle or working besides."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def stage_of(loop: Mapping[str, Any], research: Mapping[str, Any]) -> str:
    """The stage seed 000's banner shows: a paused loop is `paused`; a project that has run
    sweeps shows its research stage (wild.runs.stage, as `--status` does); one without
    sweeps is `working` while its loop runs, else `idle`."""
    if loop.get("paused"):
        return "paused"
    if research.get("sweeps"):
        return str(research["stage"])
    return "working" if loop.get("state") in ("running", "elsewhere") else "idle"
