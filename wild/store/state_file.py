"""`.wild/state.json` on disk: loaded once when the loop starts, saved atomically on every change.

What the bytes mean is `wild.parsers.state`; an unreadable file is set aside, never lost.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from wild.clock import Clock, SystemClock
from wild.errors import WildError
from wild.parsers.lines import Problem
from wild.parsers.state import LoadedState, LoopState, Unreadable, parse_state, render_state
from wild.parsers.totals import Totals, from_events, raised
from wild.store import totals_ledger
from wild.store.events_log import read_events
from wild.store.files import atomic_write, read_bytes

_LINKED_OUT = Unreadable(1, "a symbolic link (wild writes this file alone, never through a link)")


def load_state(path: Path, clock: Clock | None = None) -> LoadedState:
    """Read state.json; a missing or empty file is a fresh state, a broken one is set aside.
    The totals the limits count are never below those the ledger outside the project
    recorded (`wild.store.totals_ledger`): a problem says when the ledger's figures won.

    Raises WildError only for a file from a newer wild, which this one must not overwrite.
    """
    if path.is_symlink():  # wild's own file: never read, nor later written, through a link
        found = _set_aside(path, clock or SystemClock(), _LINKED_OUT)
        return _with_recorded_totals(path, found, lost=True)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _with_recorded_totals(path, LoadedState(LoopState(), ()), lost=True)
    parsed = parse_state(data, str(path))
    if isinstance(parsed, Unreadable):
        found = _set_aside(path, clock or SystemClock(), parsed)
        return _with_recorded_totals(path, found, lost=True)
    return _with_recorded_totals(path, parsed)


def _with_recorded_totals(path: Path, found: LoadedState, *, lost: bool = False) -> LoadedState:
    """`found` with the ledger's totals where they are higher; when the state was `lost`
    (missing, unreadable, a link) and the ledger counts nothing either (deleted too),
    events.log's agent runs are added up instead."""
    ledger, source = totals_ledger.recorded(path), str(totals_ledger.ledger_path(path))
    if lost and ledger == Totals():
        with contextlib.suppress(OSError):  # an events.log that cannot be read adds nothing
            ledger = from_events(read_events(path.with_name("events.log"))[0])
            source = "events.log"
    if Totals.of(found.state).covers(ledger):
        return found
    message = (
        f"its totals were below those wild recorded in {source} ({ledger.describe()});"
        " those stand, so --max-cost, --max-tokens, --max-iterations and --max-time still"
        " count what was spent"
    )
    problem = Problem(str(path), 1, message)
    return LoadedState(raised(found.state, ledger), (*found.problems, problem))


def peek_state(path: Path) -> LoopState | None:
    """The state state.json holds, for a look that changes nothing (which loop runs, which
    iteration): None when it is missing, unreadable, or from a newer wild. Only `load_state`,
    which the loop writes back, must refuse a newer file; a look just sees nothing."""
    try:
        loaded = parse_state(read_bytes(path), str(path))
    except (OSError, WildError):
        return None
    return loaded.state if isinstance(loaded, LoadedState) else None


def save_state(
    path: Path, state: LoopState, *, ledger_soon: bool = False, displaced_later: bool = False
) -> None:
    """Write state.json atomically, and raise the ledger's totals to its own (`ledger_soon`:
    fsynced by the next `totals_ledger.settle`); the caller holds the `.wild/.lock` if others
    may write. `displaced_later`: the old file is removed by `files.remove_displaced`."""
    if path.is_symlink():  # wild's own file, replaced by a link (an agent's doing)
        _move_aside(path, SystemClock())  # kept to look at; never written through
    atomic_write(path, render_state(state), displaced_later=displaced_later)
    if ledger_soon:
        totals_ledger.record_soon(path, Totals.of(state))
    else:
        totals_ledger.record(path, Totals.of(state))


def count_soon(path: Path, state: LoopState) -> None:
    """The ledger raised to `state`'s totals now, while state.json keeps the state for a
    write a moment later (the loop's judgment of a run, written with the next decision): the
    run's counts reach the ledger when a `save_state` would have raised it, and
    `totals_ledger.settle` fsyncs them."""
    totals_ledger.record_soon(path, Totals.of(state))


def _aside_path(path: Path, clock: Clock) -> Path:
    stamp = clock.now().strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.corrupt-{stamp}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.corrupt-{stamp}-{number}")
    return candidate


def _move_aside(path: Path, clock: Clock) -> str:
    """Rename the file (or the link itself) to `state.json.corrupt-<time>`; what was done."""
    aside = _aside_path(path, clock)
    try:
        os.replace(path, aside)
    except FileNotFoundError:
        # Another wild process set it aside first: same outcome.
        return "another wild process set it aside"
    return f"moved it to {aside.name}"


def _set_aside(path: Path, clock: Clock, unreadable: Unreadable) -> LoadedState:
    """Keep an unreadable file for the user to inspect and carry on from a fresh state."""
    done = _move_aside(path, clock)
    message = f"{unreadable.what}; {done} and started from a fresh state"
    return LoadedState(LoopState(), (Problem(str(path), unreadable.line, message),))
