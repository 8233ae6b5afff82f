"""tasks.md's last good versions are kept in `.wild/backup/`: a copy per new good version, at
most KEEP of them, none of a damaged version; the damage is named with the copy to restore."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from wild.paths import WildPaths
from wild.store.tasks_backup import KEEP, TasksBackup, copies, damage, damage_notice

T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "tasks", "why"),
    [
        (None, 0, "it was deleted"),
        ("- [ ] task-001: a\n\0\0\0", 1, "it holds binary data (NUL bytes)"),
        ("Sure! Here is the plan:\n1. Build the UI\n", 0, "it holds no task any more"),
        ("", 0, "it holds no task any more"),
        ("- [ ] task-001: a\n", 1, None),
    ],
)
def test_what_counts_as_damage(text: str | None, tasks: int, why: str | None) -> None:
    assert damage(text, tasks) == why


def test_a_copy_per_new_good_version_and_at_most_keep(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    paths.root.mkdir()
    backup = TasksBackup(paths)
    versions = [f"- [ ] task-{i:03d}: v{i}\n" for i in range(KEEP + 3)]
    for i, text in enumerate(versions):
        assert backup.observe(text, 1, T0 + timedelta(seconds=i)) is None
        assert backup.observe(text, 1, T0 + timedelta(seconds=i, milliseconds=1)) is None
    kept = copies(paths)
    assert [p.read_text() for p in kept] == versions[-KEEP:]
    assert kept[-1].name == "tasks.md.20260208T100007.000000Z"
    # Nothing with no task, nothing binary: those are not worth a copy.
    backup.observe("# Tasks\n", 0, T0 + timedelta(minutes=1))
    assert copies(paths) == kept


def test_a_later_loop_knows_the_copies_of_an_earlier_one(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    paths.root.mkdir()
    TasksBackup(paths).observe("- [ ] task-001: a\n", 1, T0)
    again = TasksBackup(paths)
    again.observe("- [ ] task-001: a\n", 1, T0 + timedelta(hours=1))
    assert len(copies(paths)) == 1
    # A clock set back still sorts the newest copy last.
    again.observe("- [ ] task-001: b\n", 1, T0 - timedelta(days=1))
    assert copies(paths)[-1].read_text() == "- [ ] task-001: b\n"


def test_damage_is_named_with_the_copy_to_restore(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    paths.root.mkdir()
    backup = TasksBackup(paths)
    backup.observe("- [ ] task-001: precious\n", 1, T0)
    copy = copies(paths)[-1]
    expected = (
        f"{paths.tasks}: it was deleted; the last good version is kept in {copy};"
        f" restore it with `cp {copy} {paths.tasks}`"
        f" (if that change was on purpose, `rm -r {paths.root / 'backup'}` silences this)"
    )
    assert backup.observe(None, 0, T0 + timedelta(seconds=1)) == expected
    assert damage_notice(paths, None, 0) == expected
    assert copies(paths) == [copy]
    assert damage_notice(paths, "- [ ] task-001: precious\n", 1) is None
    assert damage_notice(WildPaths(tmp_path / "none"), None, 0) is None  # no copy, no notice


def test_a_ticked_box_is_not_worth_a_copy(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    paths.root.mkdir()
    backup = TasksBackup(paths)
    backup.observe("# T\n- [ ] task-001: a\n- [ ] task-002: b\n", 2, T0)
    backup.observe("# T\n- [x] task-001: a\n- [/] task-002: b\n", 2, T0 + timedelta(seconds=1))
    assert len(copies(paths)) == 1
    backup.observe("# T\n- [x] task-001: a\n- [/] task-002: B\n", 2, T0 + timedelta(seconds=2))
    assert copies(paths)[-1].read_text() == "# T\n- [x] task-001: a\n- [/] task-002: B\n"
