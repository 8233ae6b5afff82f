"""`WildPaths.project`: the folder holding `.wild/`, by its real path."""

from __future__ import annotations

from pathlib import Path

import pytest

from wild.paths import WildPaths


def test_the_project_is_the_real_folder_holding_the_state_folder_as_path_resolve_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's answer (`real_path`), not an lstat per folder: the same folder as
    `Path.resolve().parent` through a link at `.wild`, a link above it, a relative path and a
    `.wild` that does not exist yet."""
    real = tmp_path / "real"
    (real / "project" / ".wild").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / ".wild").symlink_to(real / "project" / ".wild")
    (tmp_path / "above").symlink_to(real)
    roots = [
        real / "project" / ".wild",
        tmp_path / "elsewhere" / ".wild",  # a link: the project is the folder it leads into
        tmp_path / "above" / "project" / ".wild",
        tmp_path / "above" / "fresh" / ".wild",  # not there yet
    ]
    for root in roots:
        assert WildPaths(root).project == root.resolve().parent, root
    assert WildPaths(tmp_path / "elsewhere" / ".wild").project == real / "project"
    monkeypatch.chdir(tmp_path / "above" / "project")
    assert WildPaths(Path(".wild")).project == real / "project"
