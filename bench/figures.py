"""One way for every bench script to report a figure, and for `run_all.py` to read it back.

A script calls `report(...)` once per figure it measures; the line it prints starts with
`figure: ` and holds JSON (figure, value, goal, ok), so `run_all.py` can gate on it while a
person reading the output sees the same facts. A goal is checked in the script that knows
what it measured; `run_all.py` only counts the misses.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import orjson

PREFIX = "figure: "
# The exit status of a script that cannot measure on this machine (automake's "skipped"):
# `run_all.py` lists it with the reason it printed instead of counting it as failed.
SKIPPED = 77
SKIP_PREFIX = "skipped: "


@dataclass(frozen=True)
class Figure:
    """One measured figure against its goal; `ok` is None for figures with no goal."""

    figure: str
    value: str
    goal: str
    ok: bool | None


def report(figure: str, value: str, goal: str, ok: bool | None) -> None:
    """Print one figure's line; `ok=None` marks a figure shown for information only."""
    data = {"figure": figure, "value": value, "goal": goal, "ok": ok}
    print(PREFIX + orjson.dumps(data).decode(), flush=True)


def skip(reason: str) -> NoReturn:
    """End a script that cannot measure here, saying why and what to install."""
    print(SKIP_PREFIX + reason, flush=True)
    sys.exit(SKIPPED)


def skip_reason(output: str) -> str:
    """What a skipped script said it lacks."""
    lines = [line for line in output.splitlines() if line.startswith(SKIP_PREFIX)]
    return lines[-1].removeprefix(SKIP_PREFIX) if lines else "no reason given"


def parse_figures(output: str) -> list[Figure]:
    """Every figure line a script printed (other lines are its human-readable report)."""
    found = []
    for line in output.splitlines():
        if not line.startswith(PREFIX):
            continue
        try:
            data = orjson.loads(line[len(PREFIX) :])
        except orjson.JSONDecodeError:
            continue
        if isinstance(data, dict):
            ok = data.get("ok")
            found.append(
                Figure(
                    str(data.get("figure", "?")),
                    str(data.get("value", "?")),
                    str(data.get("goal", "")),
                    ok if isinstance(ok, bool) else None,
                )
            )
    return found


def timed_wild(state_dir: Path, *args: str) -> float:
    """Seconds one `wild --dir STATE_DIR ARGS…` process takes, start to exit, as a user runs it."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "wild", "--dir", str(state_dir), *args],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start
