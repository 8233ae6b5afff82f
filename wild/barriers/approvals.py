"""Human approvals of barrier commands, by hash, kept outside `.wild/` so an agent cannot forge one.

A barrier command is code that runs as the user. An agent confined to the project can edit
`barriers.md` (and `human-policy.md`), so the record of what a human allowed lives under
`$XDG_CONFIG_HOME/wild/approvals.json` (direnv's model): project real path → sha256 of each
exact command string. Changing one byte of a command makes it unapproved again.

The same file keeps, per project, the trust a human last set (the settings of human-policy.md
that loosen what runs, `wild.policy.trust`) and the completion checks a human last accepted
(`wild.policy.checks_trust`), so an agent's edit of those files cannot loosen them either.

An agent can still write the file itself. So wild records which approvals it wrote
("recorded": project → {sha256: how}): `wild --approve` and the dashboard record theirs, and
the loop records, as each agent starts, those already there (no agent ran while they were
added: the human's). Once a loop has done so for a project, an approval without a record is
void: it appeared while an agent ran, and wild did not write it. The loop removes it when the
run ends and raises an alert (`wild.commands.approval_guard`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from wild.barriers.approval_set import Approvals, command_hash
from wild.errors import FileFormatError
from wild.parsers.alert_types import UNAPPROVED_COMMAND, UNRECORDED_APPROVAL
from wild.parsers.barriers import COMMAND_TYPES, Barrier, BarrierList
from wild.paths import approvals_path, store_lock
from wild.procfs import real_path
from wild.store.files import atomic_write, read_bytes, wild_lock

FORMAT = 1
# The alert type of a command waiting for a human's approval (raised by the barrier checker).
UNAPPROVED_TYPE = UNAPPROVED_COMMAND
# The alert type of an approval that appeared while an agent ran, not written by wild.
UNRECORDED_TYPE = UNRECORDED_APPROVAL


def project_key(project: Path) -> str:
    """The project's real path: two spellings of one folder share their approvals."""
    return real_path(project)


def command_of(barrier: Barrier) -> str | None:
    """The shell command this barrier would run, or None when its type runs none."""
    if barrier.type not in COMMAND_TYPES or not barrier.check:
        return None
    return barrier.check


@dataclass
class _Store:
    """The whole approvals file: each project's approved hashes and its recorded trust."""

    projects: dict[str, set[str]]
    trust: dict[str, object]  # project -> the trust object wild.policy.trust reads
    recorded: dict[str, dict[str, object]]  # project -> {sha256: how wild came to write it}
    checks: dict[str, object] = field(default_factory=dict)  # -> wild.policy.checks_trust's


# The store's bytes as this process last parsed them, with what they hold (one slot): the
# loop reads the store as each agent starts and again as it ends (the void-approval guard),
# and the file holds every project of the machine. Bytes equal to these are not parsed again;
# any other bytes are, whatever their size or times (no signature can hide a forged approval).
_parsed: list[tuple[bytes, _Store]] = []
_parsed_guard = threading.Lock()


def _load_all(path: Path, *, strict: bool) -> _Store:
    """Every project's entries; a damaged file reads as empty (nothing approved) unless strict.
    Each call gets its own dicts (`changing_store` edits them); the values in them are shared
    with the other calls reading the same bytes and are only ever replaced, never changed."""
    data = read_bytes(path)
    with _parsed_guard:
        if _parsed and _parsed[0][0] == data:
            return _copy(_parsed[0][1])
    store = _parse(path, data, strict=strict)
    if store.projects or store.trust or store.recorded or store.checks:
        with _parsed_guard:
            _parsed[:] = [(data, _copy(store))]
    return store


def _copy(store: _Store) -> _Store:
    return _Store(dict(store.projects), dict(store.trust), dict(store.recorded), dict(store.checks))


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
    everything = _load_all(path or approvals_path(), strict=False)
    key = project_key(project)
    hashes = frozenset(everything.projects.get(key, set()))
    recorded = everything.recorded.get(key)
    void = frozenset() if recorded is None else hashes - recorded.keys()
    return Approvals(hashes - void, void), everything.trust.get(key)


def load_checks(project: Path, *, path: Path | None = None) -> object:
    """The completion checks a human accepted for this project (None: none yet);
    `wild.policy.checks_trust.baseline_from_json` reads them."""
    return _load_all(path or approvals_path(), strict=False).checks.get(project_key(project))


def load_approvals(project: Path, *, path: Path | None = None) -> Approvals:
    """This project's approvals; an unreadable file approves nothing (fail closed)."""
    return load_project(project, path=path)[0]


@contextmanager
def changing_store(project: Path, *, path: Path | None = None) -> Iterator[ProjectEntry]:
    """Change this project's entry under the store's lock; written back at the end if it
    changed (or earlier, by `entry.save()`).

    Whatever a caller does inside (such as writing human-policy.md, or reading it again to
    record a stricter trust) is one step for every other user of the store.
    """
    store = path or approvals_path()
    store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with wild_lock(store_lock(store)):
        everything = _load_all(store, strict=True)
        key = project_key(project)
        recorded = everything.recorded.get(key)
        saved = [_state(everything.projects.get(key, set()), everything.trust.get(key), recorded)]
        saved_checks = [everything.checks.get(key)]

        def save(entry: ProjectEntry) -> None:
            now = _state(entry.hashes, entry.trust, entry.recorded)
            if now == saved[0] and entry.checks == saved_checks[0]:
                return
            saved[0], saved_checks[0] = now, entry.checks
            _write(store, everything, key, entry)

        copy = None if recorded is None else dict(recorded)
        entry = ProjectEntry(
            set(everything.projects.get(key, set())), saved[0][1], save, copy, saved_checks[0]
        )
        yield entry
        entry.save()


def _state(
    hashes: set[str], trust: object, recorded: dict[str, object] | None
) -> tuple[set[str], object, dict[str, object] | None]:
    return set(hashes), trust, None if recorded is None else dict(recorded)


def _write(store: Path, everything: _Store, key: str, entry: ProjectEntry) -> None:
    if entry.hashes:
        everything.projects[key] = set(entry.hashes)
    else:
        everything.projects.pop(key, None)
    if entry.trust is None:
        everything.trust.pop(key, None)
    else:
        everything.trust[key] = entry.trust
    if entry.checks is None:
        everything.checks.pop(key, None)
    else:
        everything.checks[key] = entry.checks
    document: dict[str, object] = {
        "format": FORMAT,
        "projects": {k: sorted(v) for k, v in sorted(everything.projects.items())},
    }
    if everything.trust:  # absent until a human first sets a policy through the CLI
        document["trust"] = dict(sorted(everything.trust.items()))
    if entry.recorded is None:
        everything.recorded.pop(key, None)
    else:
        everything.recorded[key] = dict(sorted(entry.recorded.items()))
    if everything.recorded:  # absent until a loop first ran an agent
        document["recorded"] = dict(sorted(everything.recorded.items()))
    if everything.checks:
        document["checks"] = dict(sorted(everything.checks.items()))
    if not store.exists():
        # atomic_write keeps an existing file's mode: create it private first.
        os.close(os.open(store, os.O_WRONLY | os.O_CREAT, 0o600))
    atomic_write(store, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")


@dataclass
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
    now on one that wild did not record is void."""
    with changing_store(project, path=path) as entry:
        recorded = dict(entry.recorded or {})
        entry.recorded = {h: recorded.get(h, how) for h in entry.hashes}


def remove_void(project: Path, *, path: Path | None = None) -> frozenset[str]:
    """Take out the approvals wild did not record (written while an agent ran); returns them."""
    with changing_store(project, path=path) as entry:
        if entry.recorded is None:
            return frozenset()
        void = frozenset(entry.hashes - entry.recorded.keys())
        entry.hashes -= void
    return void


def pending_approvals(barrier_list: BarrierList, approvals: Approvals) -> tuple[Barrier, ...]:
    """Waiting barriers whose command no human has approved yet, in file order."""
    pending = []
    for barrier in barrier_list.barriers:
        command = command_of(barrier)
        if barrier.status == "waiting" and command is not None and not approvals.allows(command):
            pending.append(barrier)
    return tuple(pending)
