"""Human approvals of barrier commands, by hash, kept outside `.wild/` so an agent cannot forge one.

A barrier command is code that runs as the user. An agent confined to the project can edit
`barriers.md` (and `human-policy.md`), so the record of what a human allowed lives under
`$XDG_CONFIG_HOME/wild/approvals.json` (direnv's model): project real path → sha256 of each
exact command string. Changing one byte of a command makes it unapproved again.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from wild.errors import FileFormatError
from wild.parsers.barriers import COMMAND_TYPES, Barrier, BarrierList
from wild.store.files import atomic_write, read_bytes, wild_lock

FORMAT = 1


def approvals_path() -> Path:
    """`$XDG_CONFIG_HOME/wild/approvals.json`, `~/.config/wild/approvals.json` by default."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "wild" / "approvals.json"


def command_hash(command: str) -> str:
    """sha256 of the exact command string (surrogates kept, so odd bytes still hash stably)."""
    return hashlib.sha256(command.encode("utf-8", "surrogateescape")).hexdigest()


def project_key(project: Path) -> str:
    """The project's real path: two spellings of one folder share their approvals."""
    return os.path.realpath(project)


def command_of(barrier: Barrier) -> str | None:
    """The shell command this barrier would run, or None when its type runs none."""
    if barrier.type not in COMMAND_TYPES or not barrier.check:
        return None
    return barrier.check


@dataclass(frozen=True)
class Approvals:
    """A snapshot of one project's approved command hashes."""

    hashes: frozenset[str]

    def allows(self, command: str) -> bool:
        return command_hash(command) in self.hashes


def _load_all(path: Path, *, strict: bool) -> dict[str, set[str]]:
    """Every project's hashes; a damaged file reads as empty (nothing approved) unless strict."""
    data = read_bytes(path)
    if not data.strip():
        return {}
    try:
        projects = orjson.loads(data).get("projects")
    except (orjson.JSONDecodeError, AttributeError):
        projects = None
    if isinstance(projects, dict) and all(
        isinstance(hashes, list) and all(isinstance(h, str) for h in hashes)
        for hashes in projects.values()
    ):
        return {str(key): set(hashes) for key, hashes in projects.items()}
    if not strict:
        return {}
    raise FileFormatError(
        str(path),
        None,
        'is not a wild approvals file (JSON with "projects": {path: [sha256, ...]})',
        "fix it or delete it and approve again",
    )


def load_approvals(project: Path, *, path: Path | None = None) -> Approvals:
    """This project's approvals; an unreadable file approves nothing (fail closed)."""
    store = path or approvals_path()
    return Approvals(frozenset(_load_all(store, strict=False).get(project_key(project), set())))


def is_approved(project: Path, command: str, *, path: Path | None = None) -> bool:
    return load_approvals(project, path=path).allows(command)


def approve(project: Path, command: str, *, path: Path | None = None) -> str:
    """Record a human's approval of `command` for `project`; returns its hash."""
    store = path or approvals_path()
    digest = command_hash(command)
    store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with wild_lock(store.with_name(store.name + ".lock")):
        projects = _load_all(store, strict=True)
        hashes = projects.setdefault(project_key(project), set())
        if digest in hashes:
            return digest
        hashes.add(digest)
        document = {
            "format": FORMAT,
            "projects": {k: sorted(v) for k, v in sorted(projects.items())},
        }
        if not store.exists():
            # atomic_write keeps an existing file's mode: create it private first.
            os.close(os.open(store, os.O_WRONLY | os.O_CREAT, 0o600))
        atomic_write(store, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return digest


def pending_approvals(
    barrier_list: BarrierList, project: Path, *, path: Path | None = None
) -> tuple[Barrier, ...]:
    """Waiting barriers whose command no human has approved yet, in file order."""
    approvals = load_approvals(project, path=path)
    pending = []
    for barrier in barrier_list.barriers:
        command = command_of(barrier)
        if barrier.status == "waiting" and command is not None and not approvals.allows(command):
            pending.append(barrier)
    return tuple(pending)
