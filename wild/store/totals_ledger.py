"""The run's totals, kept outside the project where an agent's damage to state.json cannot
reach them: `$XDG_CONFIG_HOME/wild/totals/<digest>.json`, beside the approvals store, a file
per project real path (what the figures mean: `wild.parsers.totals`). A file per project, not
one for the machine: a raise rewrote every project the machine ever ran (~1,000 on a bench
machine, 240 KB and ~1-2 ms per loop iteration); now it costs the same at the thousandth
project as at the first. The one file of wild 0.1 (`totals.json`) is still read, for a project
that has no file of its own yet.

Every save of state.json that raises a count or an amount records it here too; the running
time alone is recorded when it moved by TIME_GRAIN_S (state.json holds it to 0.1 s and moves
it at almost every save: recording each move cost a ledger write, two fsyncs, per save).
Loading state.json takes the higher figure of the two, so `echo garbage > .wild/state.json`,
a link set aside or a deleted file never starts the limits from zero again; the loop says when
the ledger's figures won.

A raise appends one JSON line (`ledger_line`: its figures, with the higher ones this process
knew), fsynced at once (`record`) or by the loop's next `settle` (`record_soon`); a reader
takes each figure's highest over the lines, a line torn by a crash skipped. Rewriting the file
whole at every raise (a temp file, two fsyncs, a rename, an unlink, a read and a lock), in a
thread of its own, cost the loop ~1 ms per iteration on a 2-CPU machine (issue 22 item 8).
The process's first raise of a project's file, and the first after its appends reached
COMPACT_BYTES, write the file whole as one line instead (a crash-safe swap), which also turns
wild 0.2's one indented document into lines.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import stat
import threading
from pathlib import Path

from wild.parsers.totals import Totals, ledger_entry, ledger_line, project_ledger
from wild.paths import approvals_path
from wild.procfs import real_folder
from wild.store.files import atomic_write, pread_all, read_bytes, wild_lock
from wild.store.jsonl import KeptAppender
from wild.store.project_files import project_file

# What this process last recorded for each project: a save that raises nothing writes nothing.
# Read and written under `_writing`, as every file the ledger keeps.
_recorded: dict[str, Totals] = {}
# How far the ledger's running time may lag state.json's: the grain at which the loop itself
# writes the time alone (`wild.loop.limits.TIME_GRAIN_S`); --max-time after a damaged
# state.json counts at most this much less.
TIME_GRAIN_S = 30.0


def ledger_folder() -> Path:
    """`$XDG_CONFIG_HOME/wild/totals/`: a ledger file per project."""
    return approvals_path().with_name("totals")


def machine_ledger_path() -> Path:
    """wild 0.1's one ledger of every project (`totals.json`): read, never written."""
    return approvals_path().with_name("totals.json")


def project_of(state_path: Path) -> str:
    """The project a state.json belongs to: the real path of the folder holding `.wild/`."""
    return real_folder(state_path.parent.parent)  # the kernel's answer: twice per iteration


def _ledger_of(project: str) -> Path:
    return project_file(ledger_folder(), project)


def ledger_path(state_path: Path) -> Path:
    """The ledger file of the project of `state_path`."""
    return _ledger_of(project_of(state_path))


def _read(project: str) -> Totals:
    """The project's totals: its own file's, else (no file yet) wild 0.1's machine ledger's."""
    try:
        fd = _open_ledger(_ledger_of(project))
    except FileNotFoundError:
        return ledger_entry(read_bytes(machine_ledger_path()), project)  # b"" when missing
    try:
        return project_ledger(_ledger_bytes(fd), project)
    finally:
        os.close(fd)


def _open_ledger(path: Path) -> int:
    """The ledger file open for reading, never waiting: O_NONBLOCK, so that a FIFO put at its
    name (the store is in an agent's reach) cannot hold the loop at its open."""
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)


def _ledger_bytes(fd: int) -> bytes:
    """The open ledger's bytes; b"" (it counts nothing) when it is not a regular file."""
    return pread_all(fd, 0) if stat.S_ISREG(os.fstat(fd).st_mode) else b""


def recorded(state_path: Path) -> Totals:
    """The ledger's totals for the project of `state_path` (none recorded: all zero)."""
    return _read(project_of(state_path))


# Bytes this process appended to each ledger file since it last wrote the file whole (a file
# it never wrote, another `$XDG_CONFIG_HOME`'s included: its next raise writes whole). At
# COMPACT_BYTES (~50 raises) the next raise writes it whole again: a reader parses a few KB
# at most.
COMPACT_BYTES = 8 * 1024
_appended: dict[Path, int] = {}
# The open file each project's raises are appended through (the loop raises one project's).
_appenders: dict[Path, KeptAppender] = {}
_MAX_APPENDERS = 4
# The files appended to by `record_soon` and not fsynced yet (`settle` does), and what a raise
# raised (told by `settle`, one at a time).
_unsynced: set[Path] = set()
_soon_failed: list[BaseException] = []
# One raise at a time in this process.
_writing = threading.Lock()


def record(state_path: Path, totals: Totals) -> None:
    """Raise the ledger's figures for the project to `totals` where they are higher, on disk
    (fsynced) when it returns."""
    _raise(state_path, totals, durable=True)


def record_soon(state_path: Path, totals: Totals) -> None:
    """`record`, its line appended now and fsynced by the next `settle`: the loop settles
    before an agent's program runs (only an agent could damage state.json meanwhile) and when
    it ends; until then state.json, durable first, holds the higher figures, which a restart
    takes, and a kill of the loop meanwhile loses nothing (the line is in the kernel's cache).
    A failure is kept for `settle` to raise, in order. Before, a thread of its own made the
    raise while the loop decided; on a 2-CPU machine it took the CPU and the interpreter from
    the loop's next decision, ~0.5 ms per iteration (issue 22 item 8)."""
    try:
        _raise(state_path, totals, durable=False)
    except BaseException as error:  # told by `settle`, as a failed write of the loop's own
        _soon_failed.append(error)


def settle(*, durable: bool = True) -> None:
    """Fsync the lines `record_soon` appended (`durable`), then raise what a raise raised, if
    one did (an OSError: the loop's own handling of a failed write). `durable=False`: only
    the failure, the lines left for the next `settle` (one fsync where two would do)."""
    if durable:
        with _writing:
            while _unsynced:
                _appender(_unsynced.pop()).sync()
    if _soon_failed:
        raise _soon_failed.pop(0)


def _raise(state_path: Path, totals: Totals, *, durable: bool) -> None:
    key = project_of(state_path)
    with _writing:
        known = _recorded.get(key)
        if (known or Totals()).covers(totals, TIME_GRAIN_S):
            return
        path = _ledger_of(key)
        appended = _appended.get(path)
        now = None
        if known is not None and appended is not None and appended < COMPACT_BYTES:
            now = known.at_least(totals)
            line = ledger_line(key, now)
            try:
                append_raise(path, line, durable=durable)
            except FileNotFoundError:  # its folder was deleted since: written whole, anew
                now = None
            else:
                if not durable:
                    _unsynced.add(path)
                _appended[path] = appended + len(line)
        if now is None:
            now = _write_whole(key, totals)
            _appended[path] = 0
        _recorded[key] = now


def _write_whole(key: str, totals: Totals) -> Totals:
    """The project's file written whole as one line of its figures raised to `totals`; the
    figures now recorded. Under the ledger's lock (another process's whole write), and an
    exclusive flock on the file before it is read: appends under way land first and are
    read, and those after the swap go to the new file (`KeptAppender`'s protocol)."""
    path = _ledger_of(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with wild_lock(path.with_name(path.name + ".lock")):
        try:
            fd = _open_ledger(path)
        except FileNotFoundError:
            now = _read(key).at_least(totals)  # wild 0.1's entry, if any
            atomic_write(path, ledger_line(key, now))
            return now
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            now = project_ledger(_ledger_bytes(fd), key).at_least(totals)
            atomic_write(path, ledger_line(key, now))
        finally:
            os.close(fd)
    _unsynced.discard(path)  # what was appended is in the file written whole, fsynced
    return now


def append_raise(path: Path, line: bytes, *, durable: bool = True) -> None:
    """Append `line` to the ledger file `path` through a descriptor kept open; `durable`:
    fsynced before it returns (else by `KeptAppender.sync`, at `settle`)."""
    _appender(path).append([line], durable=durable)


def _appender(path: Path) -> KeptAppender:
    appender = _appenders.get(path)
    if appender is None:
        if len(_appenders) >= _MAX_APPENDERS:
            for kept_path, kept in _appenders.items():
                if kept_path in _unsynced:
                    kept.sync()
                    _unsynced.discard(kept_path)
                kept.close()
            _appenders.clear()
        appender = _appenders[path] = KeptAppender(path)
    return appender


@atexit.register
def _settle_at_exit() -> None:
    """Lines appended and not fsynced (a loop that ended by an error before its last settle)
    are fsynced before the process exits."""
    with contextlib.suppress(BaseException):
        settle()
