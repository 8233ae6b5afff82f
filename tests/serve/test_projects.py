"""One dashboard over several projects: found under a parent folder, each read and acted on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.serve.conftest import Client
from tests.serve.sample import make_project
from wild.clock import SystemClock
from wild.commands.init import init_wild
from wild.errors import WildError
from wild.paths import WildPaths
from wild.serve.projects import find_projects
from wild.serve.server import Dashboard
from wild.store.files import read_text


def test_a_state_folder_or_a_project_folder_is_one_project(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / "exp1" / ".wild")
    init_wild(paths)
    assert find_projects(paths.root) == {"exp1": paths}
    assert [p.root for p in find_projects(tmp_path / "exp1").values()] == [paths.root]


def test_a_parent_folder_is_scanned_two_levels_down(tmp_path: Path) -> None:
    for name in ("b", "a", "group/c"):
        init_wild(WildPaths(tmp_path / name / ".wild"))
    (tmp_path / "empty" / ".wild").mkdir(parents=True)  # no files: not a project
    assert list(find_projects(tmp_path)) == ["a", "b", "group/c"]
    # `wild --serve` in the parent: the default ./.wild is missing, so `.` is scanned.
    assert list(find_projects(tmp_path / ".wild")) == ["a", "b", "group/c"]


def test_no_project_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(WildError, match=r"no wild project here.*run `wild --init` first"):
        find_projects(tmp_path)


def test_each_project_is_read_and_acted_on_by_name(tmp_path: Path) -> None:
    first = make_project(tmp_path / "a", runs=0, iterations=0)
    second = WildPaths(tmp_path / "b" / ".wild")
    init_wild(second)
    projects = find_projects(tmp_path)
    with Dashboard(projects, SystemClock(), port=0) as board:
        client = Client(board, first)
        view = client.get("/api/view").json()
        assert (view["projects"], view["project"], view["tasks"]["total"]) == (["a", "b"], "a", 2)
        assert client.get("/api/view?project=b").json()["tasks"]["total"] == 0
        assert client.get("/api/view?project=../etc").status == 404
        reply = client.act({"action": "add-task", "text": "Only in b", "project": "b"})
        assert reply.status == 200, reply.body
        assert "Only in b" in read_text(second.tasks)
        assert "Only in b" not in read_text(first.tasks)
