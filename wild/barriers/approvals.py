"""Human approvals of barrier commands, by hash, kept outside `.wild/` so an agent cannot forge one.

A barrier command is code that runs as the user. An agent confined to the project can edit
`barriers.md` (and `human-policy.md`), so the record of what a human allowed lives under
`$XDG_CONFIG_HOME/wild/` (direnv's model): project real path → sha256 of each
exact command string. Changing one byte of a command makes it unapproved again.

The store is a file per project real path (`$XDG_CONFIG_HOME/wild/approvals/<digest>.json`,
the digest that of the real path, the path itself inside: a file moved to another project's
name counts nothing), not one file of every project of the machine: the loop reads its
project's entry as each agent starts and as it ends, and the machine's file (~1,000 projects,
~200 KB on a bench machine) was read whole each time (issue 22 item 8). wild 0.1's one file
(`approvals.json`) is still read for a project that has no file of its own yet, never written:
the first change under the store's lock (as the first agent starts: `record_present`) writes
the project's entry from it to its own file, and from then on only that file counts.

The same file keeps, per project, the trust a human last set (the settings of human-policy.md
that loosen what runs, `wild.policy.trust`) and the completion checks a human last accepted
(`wild.policy.checks_trust`), so an agent's edit of those files cannot loosen them either.

An agent can still write the file itself. So wild records which approvals it wrote
("recorded": project → {sha256: how}): `wild --approve` and the dashboard record theirs, and
the loop records, as each agent starts, those already there (no agent ran while they were
added: the human's). Once a loop has done so for a project, an approval without a record is
void: it appeared while an agent ran, and wild did not write it. The loop removes it when the
run ends and raises an alert (`wild.commands.approval_guard`). The agent can drop the record
as well, and a file with no record reads as one no loop ran for; so the loop also keeps, in
its own memory until the run ends, what counted as the agent started, and in a file with no
record only that counts meanwhile (an agent that forges the record itself is beyond these
checks, which are in the same user's reach: `--sandbox` makes the store read-only to it).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path

import orjson

from wild.barriers.approval_set import Approvals, command_hash
from wild.errors import FileFormatError
from wild.parsers.alert_types import UNAPPROVED_COMMAND, UNRECORDED_APPROVAL
from wild.parsers.barriers import COMMAND_TYPES, Barrier, BarrierList
from wild.paths import approvals_path, store_lock
from wild.procfs import real_folder
from wild.record import record
from wild.store.files import atomic_write, read_bytes, wild_lock
from wild.store.project_files import project_file as per_project_file

FORMAT = 2  # a project's own file; 1: the machine's file of every project (read, not written)
# The folder of the projects' files, beside the machine's `approvals.json`.
PROJECTS_FOLDER = "approvals"
# The alert type of a command waiting for a human's approval (raised by the barrier checker).
UNAPPROVED_TYPE = UNAPPROVED_COMMAND
# The alert type of an approval that appeared while an agent ran, not written by wild.
UNRECORDED_TYPE = UNRECORDED_APPROVAL


def project_key(project: Path) -> str:
    """The project's real path: two spellings of one folder share their approvals."""
    return real_folder(project)


def project_file(key: str, store: Path | None = None) -> Path:
    """The file of the project whose real path is `key`: `approvals/<digest>.json` beside the
    machine's `approvals.json` (`store`; by default `wild.paths.approvals_path()`)."""
    return _named(key, store or approvals_path())


@functools.lru_cache(maxsize=64)
def _named(key: str, store: Path) -> Path:
    # Kept: the loop asks at each view and as each agent starts and ends (the digest and the
    # path's making were ~300 Python calls per iteration); the real path is asked each time.
    return per_project_file(store.with_name(PROJECTS_FOLDER), key)


def store_files(project: Path, store: Path | None = None) -> tuple[Path, Path]:
    """What the project's entry is read from: its own file, else (none yet) the machine's."""
    machine = store or approvals_path()
    return project_file(project_key(project), machine), machine


def command_of(barrier: Barrier) -> str | None:
    """The shell command this barrier would run, or None when its type runs none."""
    if barrier.type not in COMMAND_TYPES or not barrier.check:
        return None
    return barrier.check


@record(frozen=False)
class _Entry:
    """One project's part of the store: its approved hashes, recorded trust and checks."""

    hashes: set[str]
    trust: object  # the trust object wild.policy.trust reads; None: none recorded
    recorded: dict[str, object] | None  # {sha256: how wild came to write it}; None: no loop ran
    checks: object  # wild.policy.checks_trust's; None: none accepted

    def empty(self) -> bool:
        return not self.hashes and all(x is None for x in (self.trust, self.recorded, self.checks))


@record(frozen=False)
class _Store:
    """wild 0.1's file of every project: each project's approved hashes and recorded trust."""

    projects: dict[str, set[str]]
    trust: dict[str, object]  # project -> the trust object wild.policy.trust reads
    recorded: dict[str, dict[str, object]]  # project -> {sha256: how wild came to write it}
    checks: dict[str, object] = field(default_factory=dict)  # -> wild.policy.checks_trust's

    def entry(self, key: str) -> _Entry:
        recorded = self.recorded.get(key)
        return _Entry(
            set(self.projects.get(key, set())),
            self.trust.get(key),
            None if recorded is None else dict(recorded),
            self.checks.get(key),
        )


# The machine's file's bytes as this process last parsed them, with what they hold (one
# slot): a project with no file of its own yet is read from it as each agent starts and ends.
# Bytes equal to these are not parsed again; any other bytes are, whatever their size or
# times (no signature can hide a forged approval).
_parsed: list[tuple[bytes, _Store]] = []
_parsed_guard = threading.Lock()


def _read_entry(store: Path, key: str, *, strict: bool) -> tuple[_Entry, bool]:
    """The project's entry, and whether it came from the project's own file. A damaged file
    reads as empty (nothing approved) unless strict."""
    own = project_file(key, store)
    try:
        data = own.read_bytes()
    except FileNotFoundError:
        return _machine_entry(store, key, strict=strict), False
    return _parse_entry(own, data, key, strict=strict), True


def _parse_entry(file: Path, data: bytes, key: str, *, strict: bool) -> _Entry:
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        document = None
    # The file names its project: one copied or moved from another project's name is not this
    # project's (its approvals were given to another folder's commands).
    if isinstance(document, dict) and document.get("project") == key:
        hashes, recorded = document.get("approved", []), document.get("recorded")
        if (
            isinstance(hashes, list)
            and all(isinstance(h, str) for h in hashes)
            and (recorded is None or isinstance(recorded, dict))
        ):
            trust, checks = document.get("trust"), document.get("checks")
            return _Entry(set(hashes), trust, recorded, checks)
    if not strict:
        return _Entry(set(), None, None, None)
    raise FileFormatError(
        str(file),
        None,
        f'is not the wild approvals file of {key} (JSON with "project": that path, '
        '"approved": [sha256, ...])',
        "fix it or delete it and approve again",
    )


def _machine_entry(path: Path, key: str, *, strict: bool) -> _Entry:
    """The project's entry in the machine's file; a damaged file reads as empty (nothing
    approved) unless strict. Bytes that cannot name the project are not parsed: its entry is
    empty whether they are whole or damaged (`_may_name`)."""
    data = read_bytes(path)
    if not _may_name(data, key):
        return _Entry(set(), None, None, None)
    return _load_all(path, data, strict=strict).entry(key)


def _may_name(data: bytes, key: str) -> bool:
    """Whether JSON `data` may hold the string `key`. With no backslash in them, every string
    is spelled as it is, so bytes without `"<key>"` hold no entry of the project, whole or
    damaged: a project started since wild 0.2 has none, and parsing the machine's file of
    every project cost each fresh project's launch ~1.4 ms (252 KB here, issue 22 item 8)."""
    if b"\\" in data:
        return True  # an escape may spell the key otherwise (`\/`, `\u00e9`): parsed
    try:
        spelled = b'"' + key.encode("utf-8") + b'"'
    except UnicodeEncodeError:
        return True  # a path that is not UTF-8 (its surrogates): parsed, as ever
    return spelled in data


def _load_all(path: Path, data: bytes, *, strict: bool) -> _Store:
    """Every project's entries in the machine's file, `data` its bytes; a damaged file reads
    as empty (nothing approved) unless strict. The store returned is shared: its readers
    never change it."""
    with _parsed_guard:
        if _parsed and _parsed[0][0] == data:
            return _parsed[0][1]
    store = _parse(path, data, strict=strict)
    if store.projects or store.trust or store.recorded or store.checks:
        with _parsed_guard:
            _parsed[:] = [(data, store)]
    return store


def _parse(path: Path, data: bytes, *, strict: bool) -> _Store:
    if not data.strip():
        return _Store({}, {}, {})
    try:
        document = orjson.loads(data)
        projects, trust = document.get("projects"), document.get("trust", {})
        recorded = document.get("recorded", {})
        checks = document.get("checks", {})
    except (orjson.JSONDecodeError, AttributeError):
        projects = trust = recorded = checks = None
    if (
        isinstance(projects, dict)
        and all(
            isinstance(hashes, list) and all(isinstance(h, str) for h in hashes)
            for hashes in projects.values()
        )
        and isinstance(trust, dict)
        and isinstance(recorded, dict)
        and all(isinstance(entry, dict) for entry in recorded.values())
        and isinstance(checks, dict)
    ):
        projects = {str(key): set(hashes) for key, hashes in projects.items()}
        recorded = {str(k): dict(v) for k, v in recorded.items()}
        return _Store(projects, trust, recorded, checks)
    if not strict:
        return _Store({}, {}, {})
    raise FileFormatError(
        str(path),
        None,
        'is not a wild approvals file (JSON with "projects": {path: [sha256, ...]})',
        "fix it or delete it and approve again",
    )


def load_project(project: Path, *, path: Path | None = None) -> tuple[Approvals, object]:
    """This project's approvals and recorded trust (None: never recorded), in one read; an
    unreadable file approves nothing and records nothing (fail closed).
    `wild.policy.trust.trust_from_json` reads the trust."""
    store, key = path or approvals_path(), project_key(project)
    entry = _read_entry(store, key, strict=False)[0]
    hashes = frozenset(entry.hashes)
    return Approvals(hashes - (void := _void(entry, _started_with(store, key))), void), entry.trust


def load_checks(project: Path, *, path: Path | None = None) -> object:
    """The completion checks a human accepted for this project (None: none yet);
    `wild.policy.checks_trust.baseline_from_json` reads them."""
    return _read_entry(path or approvals_path(), project_key(project), strict=False)[0].checks


def load_approvals(project: Path, *, path: Path | None = None) -> Approvals:
    """This project's approvals; an unreadable file approves nothing (fail closed)."""
    return load_project(project, path=path)[0]


@contextmanager
def changing_store(project: Path, *, path: Path | None = None) -> Iterator[ProjectEntry]:
    """Change this project's entry under the store's lock; written back at the end if it
    changed (or earlier, by `entry.save()`).

    Whatever a caller does inside (such as writing human-policy.md, or reading it again to
    record a stricter trust) is one step for every other user of the store. A project with
    no file of its own yet is read from the machine's file and its entry written to its own
    file at the first save, changed or not: from then on the machine's file is not its.
    """
    store = path or approvals_path()
    store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with wild_lock(store_lock(store)):  # one lock for the machine's file and every project's
        key = project_key(project)
        found, own = _read_entry(store, key, strict=True)
        saved = [_copy(found)]
        moving = [not own and not found.empty()]

        def save(entry: ProjectEntry) -> None:
            now = _Entry(set(entry.hashes), entry.trust, entry.recorded, entry.checks)
            if now == saved[0] and not moving[0]:
                return
            _write(store, key, now)
            saved[0], moving[0] = _copy(now), False

        entry = ProjectEntry(set(found.hashes), found.trust, save, found.recorded, found.checks)
        yield entry
        entry.save()


def _copy(entry: _Entry) -> _Entry:
    """A copy whose set and dict are its own (a caller edits the ones it was given)."""
    recorded = None if entry.recorded is None else dict(entry.recorded)
    return _Entry(set(entry.hashes), entry.trust, recorded, entry.checks)


def _write(store: Path, key: str, entry: _Entry) -> None:
    own = project_file(key, store)
    if entry.empty() and not _machine_holds(store, key):
        # Nothing to keep, and no file of its own reads as the machine's entry: none there.
        own.unlink(missing_ok=True)
        return
    document: dict[str, object] = {
        "format": FORMAT,
        "project": key,
        "approved": sorted(entry.hashes),
    }
    if entry.trust is not None:  # absent until a human first sets a policy through the CLI
        document["trust"] = entry.trust
    if entry.recorded is not None:  # absent until a loop first ran an agent
        document["recorded"] = dict(sorted(entry.recorded.items()))
    if entry.checks is not None:
        document["checks"] = entry.checks
    own.parent.mkdir(mode=0o700, exist_ok=True)
    if not own.exists():
        # atomic_write keeps an existing file's mode: create it private first.
        os.close(os.open(own, os.O_WRONLY | os.O_CREAT, 0o600))
    atomic_write(own, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")


def _machine_holds(store: Path, key: str) -> bool:
    """Whether the machine's file has an entry for the project (a damaged one may: kept)."""
    try:
        return not _machine_entry(store, key, strict=True).empty()
    except FileFormatError:
        return True


@record(frozen=False)
class ProjectEntry:
    """One project's part of the store, for `changing_store` to edit."""

    hashes: set[str]
    trust: object  # None: no trust recorded (the default policy's applies)
    _save: Callable[[ProjectEntry], None] = field(repr=False, compare=False)
    recorded: dict[str, object] | None = None  # None: no loop ran an agent here yet
    checks: object = None  # None: no completion checks accepted yet

    def save(self) -> None:
        """Write the entry now, still under the lock (before a file that depends on it)."""
        self._save(self)


def forget_project(project: Path, *, path: Path | None = None) -> None:
    """Drop everything recorded for `project` (the demo's throwaway folder)."""
    with changing_store(project, path=path) as entry:
        entry.hashes.clear()
        entry.trust = None
        entry.recorded = None
        entry.checks = None


def approve(project: Path, command: str, *, path: Path | None = None) -> str:
    """Record a human's approval of `command` for `project`; returns its hash."""
    return approve_hash(project, command_hash(command), path=path)


def approve_hash(project: Path, digest: str, *, path: Path | None = None) -> str:
    """Record a human's approval of the command whose sha256 is `digest` (the command the
    human was shown, not one read again: the file may have changed since); returns it."""
    with changing_store(project, path=path) as entry:
        entry.hashes.add(digest)
        if entry.recorded is not None:
            entry.recorded[digest] = "approved through wild"
    return digest


def record_present(project: Path, how: str, *, path: Path | None = None) -> None:
    """As an agent starts (none runs now): every approval in the file is the human's; from
    now on one that wild did not record is void. What counts now is also kept in this
    process until the run ends (`remove_void`): the record is in the agent's reach too, and a
    file whose record the agent dropped (or that recording could not make: a damaged store)
    reads as one no loop ever ran for, where every approval counts."""
    store, key = path or approvals_path(), project_key(project)
    try:
        view = _quiet_view(store, key)
        if view is not None and view.recorded is not None and view.recorded.keys() == view.hashes:
            human = frozenset(view.hashes)  # every approval there recorded: nothing to write
        else:
            with changing_store(project, path=path) as entry:
                recorded = dict(entry.recorded or {})
                entry.recorded = {h: recorded.get(h, how) for h in entry.hashes}
                human = frozenset(entry.hashes)
    except BaseException:
        human = frozenset()  # what counts now, read as every reader reads it (damaged: none)
        with contextlib.suppress(OSError):
            human = load_approvals(project, path=path).hashes
        raise
    finally:
        with _started_guard:
            _started[key, store] = human


def remove_void(project: Path, *, path: Path | None = None) -> frozenset[str]:
    """Take out the approvals wild did not record (written while an agent ran) and, for a
    file with no record, those that did not count as this process's agent started; returns
    them. The run is over: what counted as it started is forgotten."""
    store, key = path or approvals_path(), project_key(project)
    try:
        view = _quiet_view(store, key)
        if view is not None and not _void(view, _started_with(store, key)):
            return frozenset()
        if view is None and _holds_nothing(store, key):
            return frozenset()  # no file of its own, none in the old file: nothing to take out
        with changing_store(project, path=path) as entry:
            found = _Entry(entry.hashes, None, entry.recorded, None)
            void = _void(found, _started_with(store, key))
            entry.hashes -= void
        return void
    finally:
        with _started_guard:
            _started.pop((key, store), None)


def _holds_nothing(store: Path, key: str) -> bool:
    """Whether the store holds nothing of the project: no file of its own, and an old
    machine file whose bytes cannot name it (a fresh project's loop asks as it starts; the
    lock and the reads under it were ~0.5 ms before its first agent, issue 22 item 8)."""
    if project_file(key, store).exists():
        return False
    return not _may_name(read_bytes(store), key)


# What counted in each project's entry as an agent of this process started, until the run
# ends (`record_present`, `remove_void`): the void approvals of a file with no record.
_started: dict[tuple[str, Path], frozenset[str]] = {}
_started_guard = threading.Lock()


def _started_with(store: Path, key: str) -> frozenset[str] | None:
    with _started_guard:
        return _started.get((key, store))


def _void(entry: _Entry, started_with: frozenset[str] | None) -> frozenset[str]:
    """The approvals in `entry` that wild did not write: those its record leaves out, or with
    no record while an agent of this process runs, those that did not count as it started
    (with no record and no agent running: none, every approval is the human's)."""
    if entry.recorded is not None:
        return frozenset(entry.hashes - entry.recorded.keys())
    return frozenset() if started_with is None else frozenset(entry.hashes - started_with)


# The bytes of a project's own file last looked at by the guard, with its approvals and the
# ones its record names (None: no record), one slot per file. The guard calls `record_present`
# and `remove_void` at every agent run (issue 22 item 8); a file whose bytes are these, where
# the call would change nothing, is not locked, parsed or compared again. What is kept is a
# function of the bytes alone, read whole: any other bytes (a forged approval, whatever its
# size or times) are parsed again.
_quiet: dict[Path, tuple[bytes, frozenset[str], frozenset[str] | None]] = {}
_quiet_guard = threading.Lock()


def _quiet_view(store: Path, key: str) -> _Entry | None:
    """The project's own file's approvals and record, from its bytes as they are now; None
    when it has no file of its own (its first change makes one) or a damaged one (the locked
    way fails closed, as before)."""
    own = project_file(key, store)
    try:
        data = own.read_bytes()
    except OSError:
        return None
    with _quiet_guard:
        kept = _quiet.get(own)
    if kept is None or kept[0] != data:
        try:
            entry = _parse_entry(own, data, key, strict=True)
        except FileFormatError:
            return None
        recorded = None if entry.recorded is None else frozenset(entry.recorded)
        kept = (data, frozenset(entry.hashes), recorded)
        with _quiet_guard:
            _quiet[own] = kept
    names: dict[str, object] | None = None if kept[2] is None else dict.fromkeys(kept[2], "")
    return _Entry(set(kept[1]), None, names, None)


def pending_approvals(barrier_list: BarrierList, approvals: Approvals) -> tuple[Barrier, ...]:
    """Waiting barriers whose command no human has approved yet, in file order."""
    pending = []
    for barrier in barrier_list.barriers:
        command = command_of(barrier)
        if barrier.status == "waiting" and command is not None and not approvals.allows(command):
            pending.append(barrier)
    return tuple(pending)
