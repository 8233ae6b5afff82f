"""Warn when the disk under `.wild/` runs low: a flooding agent or run, checkpoints, logs.

The decision is pure (`low_disk`, on statvfs figures); `DiskWatch` takes the figures and, once
per low spell, prints one line and raises one alert. The loop checks at every agent heartbeat,
when a flood fills a disk fastest. The threshold is `WILD_MIN_FREE_BYTES` (default 1 GB).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from wild.record import record

MIN_FREE_ENV = "WILD_MIN_FREE_BYTES"
DEFAULT_MIN_FREE = 1000 * 1000 * 1000
ALERT_TYPE = "disk-low"


@record
class DiskSpace:
    """statvfs figures of the disk holding a folder: bytes an unprivileged user may still
    write, and the disk's size."""

    free: int
    total: int


def min_free(environ: Mapping[str, str] | None = None) -> int:
    raw = (os.environ if environ is None else environ).get(MIN_FREE_ENV, "").strip()
    try:
        return max(0, int(raw.replace("_", "")))
    except ValueError:
        return DEFAULT_MIN_FREE


def low_disk(space: DiskSpace, folder: Path, threshold: int) -> str | None:
    """What to tell the human when less than `threshold` bytes are free; None otherwise."""
    if space.free >= threshold:
        return None
    mb = 1000 * 1000
    return (
        f"{folder}: only {space.free // mb} MB free on its disk (of {space.total // mb} MB;"
        f" {MIN_FREE_ENV} asks for {threshold // mb} MB): wild's logs, state and runs may soon"
        " fail to be written. Free some space; a flooding log in logs/ or runs/ is capped"
        " at WILD_MAX_LOG_BYTES each"
    )


def measure(folder: Path) -> DiskSpace | None:
    try:
        figures = os.statvfs(folder)
    except OSError:
        return None
    return DiskSpace(figures.f_bavail * figures.f_frsize, figures.f_blocks * figures.f_frsize)


class DiskWatch:
    """Says it once per low spell: again only after the disk had room in between."""

    def __init__(self, folder: Path, out: Callable[[str], None], alert: Callable[[str], None]):
        self._folder = folder
        self._out = out
        self._alert = alert
        self._warned = False

    def check(self) -> None:
        space = measure(self._folder)
        if space is None:
            return
        message = low_disk(space, self._folder, min_free())
        if message is None:
            self._warned = False
        elif not self._warned:
            self._warned = True
            self._out(f"⚠️  {message}")
            self._alert(message)
