"""Which project files a run changed: against real git (tracked, already changed, new, deleted,
committed files) and on a plain folder (skipped folders, the cap)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from wild.loop import changes


def _git(top: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t")
    env["GIT_COMMITTER_EMAIL"] = "t@x"
    subprocess.run(["git", *args], cwd=top, check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("a\n")
    (tmp_path / "b.py").write_text("b\n")
    (tmp_path / "gone.py").write_text("g\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "start")
    (tmp_path / "b.py").write_text("b changed before the run\n")
    (tmp_path / ".wild").mkdir()
    return tmp_path


def _between(project: Path, run: object) -> tuple[str, ...] | None:
    before = changes.snapshot(project, project / ".wild")
    run()  # type: ignore[operator]
    return changes.changed(before, changes.snapshot(project, project / ".wild"))


def test_git_sees_edits_new_files_deletions_and_files_changed_again(repo: Path) -> None:
    def run() -> None:
        (repo / "a.py").write_text("a edited\n")
        (repo / "b.py").write_text("b changed again, a different size\n")
        (repo / "new.py").write_text("n\n")
        (repo / "gone.py").unlink()
        (repo / ".wild" / "tasks.md").write_text("the loop's own\n")

    assert _between(repo, run) == ("a.py", "b.py", "gone.py", "new.py")


def test_git_sees_files_the_run_committed(repo: Path) -> None:
    def run() -> None:
        (repo / "a.py").write_text("a edited and committed\n")
        _git(repo, "commit", "-q", "-am", "the agent's commit")

    # b.py was committed too (its earlier change): the run's commit holds it.
    assert _between(repo, run) == ("a.py", "b.py")


def test_nothing_changed_is_an_empty_answer(repo: Path) -> None:
    assert _between(repo, lambda: None) == ()


def test_a_project_in_a_subfolder_of_the_repository_names_its_own_paths(repo: Path) -> None:
    project = repo / "sub"
    project.mkdir()
    (project / ".wild").mkdir()

    def run() -> None:
        (project / "x.py").write_text("x\n")
        (repo / "a.py").write_text("outside the project folder\n")

    assert _between(project, run) == ("../a.py", "x.py")


def test_a_plain_folder_is_walked_skipping_what_is_not_the_projects(tmp_path: Path) -> None:
    (tmp_path / ".wild").mkdir()
    for skipped in (".git", "node_modules", ".venv", "__pycache__"):
        (tmp_path / skipped).mkdir()
    (tmp_path / "keep.txt").write_text("k\n")

    def run() -> None:
        (tmp_path / "keep.txt").write_text("kept, and longer\n")
        (tmp_path / "deep" / "er").mkdir(parents=True)
        (tmp_path / "deep" / "er" / "f.txt").write_text("f\n")
        for skipped in (".git", "node_modules", ".venv", "__pycache__", ".wild"):
            (tmp_path / skipped / "x").write_text("x\n")

    assert _between(tmp_path, run) == ("deep/er/f.txt", "keep.txt")


def test_past_the_cap_the_changes_are_unknown_not_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "MAX_FILES", 3)
    for n in range(4):
        (tmp_path / f"f{n}").write_text("x\n")
    assert _between(tmp_path, lambda: None) is None
    assert changes.record(None) == {"files_changed": None, "files_changed_count": None}


def test_the_record_keeps_the_first_names_and_the_exact_count() -> None:
    names = tuple(f"f{n:03d}" for n in range(150))
    kept = changes.record(names)
    assert kept["files_changed_count"] == 150
    assert kept["files_changed"] == list(names[: changes.SHOWN])


def test_a_snapshot_resolves_its_folders_without_an_lstat_per_folder(
    tmp_path: Path, lstat_calls: list[object]
) -> None:
    """Two snapshots per agent run, each resolving the project's folder (and, in a work tree,
    the state folder's): the kernel's answer (`procfs.real_path`), not `Path.resolve`'s lstat
    per folder of the path (~45 µs each, five or six per iteration)."""
    project = tmp_path / "a" / "b" / "c" / "project"
    (project / ".wild").mkdir(parents=True)
    (project / "notes.txt").write_text("x")
    lstat_calls.clear()  # counted from here on
    snap = changes.snapshot(project, project / ".wild")
    assert set(snap.files) == {"notes.txt"}
    # os.path.lexists looks for a .git in each folder up; no folder is resolved by lstat.
    assert all(str(path).endswith(".git") for path in lstat_calls), lstat_calls
