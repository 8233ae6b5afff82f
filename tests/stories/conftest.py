"""Each story's sweep run once per test session, for real, in a folder the tests then read."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from wild.commands.demo import copy_story
from wild_stories.direct import run_sweep

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# A story whose full sweep takes minutes of CPU runs in the tests with fewer training steps:
# the same skill, grid, seeds and analysis.
# The torch stories train fewer steps in tests: the same grid, seeds, scripts and analysis.
TEST_STEPS = {"dit-training": 200, "prompt-tuning": 50}

Project = Callable[[str], Path]


def fresh_project(story: str, where: Path) -> Path:
    """The story copied into `where`, as run.sh copies it (at test size): no runs yet."""
    where.mkdir(parents=True, exist_ok=True)
    copy_story(EXAMPLES / story, where)
    if story in TEST_STEPS:
        spec = json.loads((where / "sweep.json").read_text())
        spec["skill"]["args"]["steps"] = TEST_STEPS[story]
        (where / "sweep.json").write_text(json.dumps(spec))
    return where


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that reads a story's finished sweep runs on one xdist worker (addopts'
    `--dist loadgroup`): `_ran` is per worker, so spread out, each worker would run the same
    torch sweeps again."""
    for item in items:
        if "story_project" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("story-sweeps"))


@pytest.fixture(scope="session")
def _ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {}


@pytest.fixture
def story_project(
    _ran: dict[str, Path], tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> Project:
    """A copy (the test may change it) of the story's project after its whole sweep ran."""

    def get(story: str) -> Path:
        if story not in _ran:
            project = fresh_project(story, tmp_path_factory.mktemp(story))
            spec = json.loads((project / "sweep.json").read_text())
            run_sweep(project, spec, slots=2, out=lambda _line: None)
            _ran[story] = project
        copy = tmp_path / story
        shutil.copytree(_ran[story], copy, symlinks=True)
        return copy

    return get


def expected(story: str) -> object:
    return json.loads((EXAMPLES / story / "expected" / "conclusions.json").read_text())
