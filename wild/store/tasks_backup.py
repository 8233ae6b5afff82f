"""The last good versions of tasks.md, kept in `.wild/backup/`: an agent that deletes the file or
fills it with garbage must not cost the human their task text.

A version is good when it holds at least one task and no NUL byte; the loop keeps a copy each
time it reads a good version that differs from the last copy in more than checkboxes (a
ticked box loses no task text, and copying 10,000 tasks each time an agent ticks one would
cost more than the loop's whole iteration); at most KEEP copies. tasks.md
is damaged when such a copy exists and the file is now missing, holds a NUL byte (binary
data), or holds no task at all: then no copy is made, and `wild --status` names the copy to
restore.
"""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path

from wild.paths import WildPaths
from wild.store.files import atomic_write, encode, read_text

KEEP = 5  # copies kept; the oldest go first
PREFIX = "tasks.md."


def damage(text: str | None, tasks: int) -> str | None:
    """Why tasks.md as read now (`text`, None when missing; `tasks` tasks parsed) is damaged,
    given that a good version was kept; None when it is fine (pure)."""
    if text is None:
        return "it was deleted"
    if "\0" in text:
        return "it holds binary data (NUL bytes)"
    if tasks == 0:
        return "it holds no task any more"
    return None


def _box_flip(old: str, new: str) -> bool:
    """The lines differ in one character, between `[` and `]`: a checkbox."""
    if len(old) != len(new):
        return False
    at = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    return len(at) == 1 and old[at[0] - 1 : at[0]] == "[" and old[at[0] + 1 : at[0] + 2] == "]"


def only_boxes_differ(old: list[str], new: list[str]) -> bool:
    """The same lines but for checkboxes (pure; lines as `str.splitlines(keepends=True)`)."""
    if len(old) != len(new):
        return False
    return all(a == b or _box_flip(a, b) for a, b in zip(old, new, strict=True))


def backup_folder(paths: WildPaths) -> Path:
    return paths.backup


def copies(paths: WildPaths) -> list[Path]:
    """The kept copies, oldest first (their names sort by time)."""
    try:
        names = os.listdir(backup_folder(paths))
    except OSError:
        return []
    return [backup_folder(paths) / n for n in sorted(names) if n.startswith(PREFIX)]


def notice(paths: WildPaths, why: str, copy: Path) -> str:
    """The problem line: what happened and how to restore the copy."""
    return (
        f"{paths.tasks}: {why}; the last good version is kept in {copy};"
        f" restore it with `cp {copy} {paths.tasks}`"
        f" (if that change was on purpose, `rm -r {backup_folder(paths)}` silences this)"
    )


def damage_notice(paths: WildPaths, text: str | None, tasks: int) -> str | None:
    """The problem line when tasks.md is damaged and a good copy exists (read-only)."""
    why = damage(text, tasks)
    if why is None:
        return None
    kept = copies(paths)
    return notice(paths, why, kept[-1]) if kept else None


class TasksBackup:
    """The loop's side: keeps a copy of each new good version it reads, says when damaged."""

    def __init__(self, paths: WildPaths) -> None:
        self.paths = paths
        self._last: list[str] | None = None  # the newest copy's lines, read once

    def observe(self, text: str | None, tasks: int, now: datetime | None = None) -> str | None:
        """The loop read tasks.md (`text`, None when missing): a copy is made when it is good
        and new; the damage notice when it is damaged."""
        kept = copies(self.paths)
        if self._last is None and kept:
            self._last = read_text(kept[-1]).splitlines(keepends=True)
        why = damage(text, tasks)  # None: a good version, worth keeping
        if why is not None or text is None:
            return notice(self.paths, why, kept[-1]) if why is not None and kept else None
        lines = text.splitlines(keepends=True)
        if self._last is None or not only_boxes_differ(self._last, lines):
            self._keep(text, now or datetime.now(UTC), kept)
            self._last = lines
        return None

    def _keep(self, text: str, now: datetime, kept: list[Path]) -> None:
        folder = backup_folder(self.paths)
        folder.mkdir(exist_ok=True)
        name = PREFIX + now.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        if kept and name <= kept[-1].name:
            name = kept[-1].name + "1"  # the same microsecond, or a clock set back: sorts last
        atomic_write(folder / name, encode(text))
        for old in [*kept, folder / name][:-KEEP]:
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
