"""Which project files an agent run changed: a snapshot before the run and one after.

In a git work tree the snapshot is what `git status` lists (changed and new files, each with
its modification time and size, so a file already changed before the run that the run changes
again is seen) plus the commit HEAD names (a run that commits its work is seen by
`git diff --name-only` between the two). Elsewhere it is the modification time and size of
every file in the project, skipping `.git`, the state folder, `node_modules`, virtual
environments and caches, and at most MAX_FILES files (past that the snapshot is incomplete
and the run's changes are unknown). Paths are relative to the project folder. Cost on 10,000
files: docs/benchmarks.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path

from wild.loop.checkpoint import changed_paths, git, repository_top
from wild.procfs import real_folder
from wild.record import record as frozen_record

MAX_FILES = 20_000
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".wild",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
SHOWN = 100  # file names an agent-end line keeps; the count is always exact

Stat = tuple[int, int]  # modification time (ns) and size


@frozen_record
class Snapshot:
    """The project's files at one moment (`complete`: nothing was left out)."""

    files: Mapping[str, Stat] = field(default_factory=dict)
    head: str | None = None  # the git commit, in a work tree
    top: Path | None = None  # the git work tree's top, or None
    complete: bool = True


def snapshot(project: Path, state_root: Path) -> Snapshot:
    """The project's files now; the state folder never counts. Never raises: a snapshot that
    could not be taken is incomplete (its run's changes are unknown)."""
    try:
        top = repository_top(project) if _in_work_tree(project) else None
        if top is not None:
            return _git_snapshot(project, state_root, top)
        return _tree_snapshot(project, state_root)
    except OSError:
        return Snapshot(complete=False)


def changed(before: Snapshot, after: Snapshot) -> tuple[str, ...] | None:
    """The files the run changed, created or deleted, sorted; None when a snapshot is
    incomplete (too many files) so the answer is unknown."""
    if not (before.complete and after.complete):
        return None
    names = {
        name
        for name in before.files.keys() | after.files.keys()
        if before.files.get(name) != after.files.get(name)
    }
    if after.top is not None and before.head != after.head:
        names |= _committed(after.top, before.head, after.head)
    return tuple(sorted(names))


def record(files: tuple[str, ...] | None) -> dict[str, object]:
    """The agent-end line's fields: the files changed (the first SHOWN) and how many."""
    if files is None:
        return {"files_changed": None, "files_changed_count": None}
    return {"files_changed": list(files[:SHOWN]), "files_changed_count": len(files)}


def _in_work_tree(project: Path) -> bool:
    """A `.git` here or above: worth asking git (a few stat calls instead of starting git
    twice a run outside a repository)."""
    folder = real_folder(project)  # twice per run: no lstat per folder (`real_path`)
    while True:  # strings, not a Path per parent: ~5 folders, twice per run
        if os.path.lexists(os.path.join(folder, ".git")):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def _stat(path: str) -> Stat | None:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def _git_snapshot(project: Path, state_root: Path, top: Path) -> Snapshot:
    project = Path(real_folder(project))
    state = Path(real_folder(state_root))
    files: dict[str, Stat] = {}
    for name in changed_paths(top):
        full = top / name
        if full == state or state in full.parents:
            continue
        stat = _stat(str(full))
        files[os.path.relpath(full, project)] = stat if stat is not None else (-1, -1)
    return Snapshot(files, _head(top), top)


def _head(top: Path) -> str | None:
    try:
        result = git(top, "rev-parse", "-q", "--verify", "HEAD")
    except OSError:
        return None
    return (result.output.strip() or None) if result.exit_code == 0 else None


def _committed(top: Path, before: str | None, after: str | None) -> set[str]:
    """Files changed between two commits (a run that committed its work)."""
    if before is None or after is None:
        return set()
    try:
        result = git(top, "diff", "--name-only", "-z", before, after)
    except OSError:
        return set()
    if result.exit_code != 0:
        return set()
    return {name for name in result.output.split("\0") if name}


def _tree_snapshot(project: Path, state_root: Path) -> Snapshot:
    files: dict[str, Stat] = {}
    state = real_folder(state_root)
    state_name = os.path.basename(state)
    root = str(project)
    cut = len(os.path.join(root, ""))  # entry paths start with the root and a separator
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    skip = entry.name in SKIP_DIRS or (
                        entry.name == state_name and real_folder(entry.path) == state
                    )
                    if not skip:
                        stack.append(entry.path)
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if len(files) >= MAX_FILES:
                return Snapshot(files, complete=False)
            files[entry.path[cut:]] = (info.st_mtime_ns, info.st_size)
    return Snapshot(files)
