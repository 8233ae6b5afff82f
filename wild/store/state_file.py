"""`.wild/state.json` on disk: loaded once when the loop starts, saved atomically on every change.

What the bytes mean is `wild.parsers.state`; an unreadable file is set aside, never lost.
"""

from __future__ import annotations

import os
from pathlib import Path

from wild.clock import Clock, SystemClock
from wild.parsers.lines import Problem
from wild.parsers.state import LoadedState, LoopState, Unreadable, parse_state, render_state
from wild.store.files import atomic_write


def load_state(path: Path, clock: Clock | None = None) -> LoadedState:
    """Read state.json; a missing or empty file is a fresh state, a broken one is set aside.

    Raises WildError only for a file from a newer wild, which this one must not overwrite.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LoadedState(LoopState(), ())
    found = parse_state(data, str(path))
    if isinstance(found, Unreadable):
        return _set_aside(path, clock or SystemClock(), found)
    return found


def save_state(path: Path, state: LoopState) -> None:
    """Write state.json atomically; the caller holds the `.wild/.lock` if others may write."""
    atomic_write(path, render_state(state))


def _aside_path(path: Path, clock: Clock) -> Path:
    stamp = clock.now().strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.corrupt-{stamp}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.corrupt-{stamp}-{number}")
    return candidate


def _set_aside(path: Path, clock: Clock, unreadable: Unreadable) -> LoadedState:
    """Keep an unreadable file for the user to inspect and carry on from a fresh state."""
    aside = _aside_path(path, clock)
    try:
        os.replace(path, aside)
    except FileNotFoundError:
        # Another wild process set it aside first: same outcome.
        done = "another wild process set it aside"
    else:
        done = f"moved it to {aside.name}"
    message = f"{unreadable.what}; {done} and started from a fresh state"
    return LoadedState(LoopState(), (Problem(str(path), unreadable.line, message),))
