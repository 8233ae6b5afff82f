"""Each story's sweep run once per test session, for real, in a folder the tests then read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from wild.commands.demo import copy_story
from wild_stories.direct import run_sweep

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# A story whose full sweep takes minutes of CPU runs in the tests with fewer training steps:
# the same skill, grid, seeds and analysis.
# The torch stories train fewer steps in tests: the same grid, seeds, scripts and analysis.
TEST_STEPS = {"dit-training": 200, "prompt-tuning": 50}
# The stories whose finished sweep the tests read as the loop leaves it: `run.sh` runs them
# end to end (the real loop process, the scripted story agent, real runs), once per session,
# and tests/stories/test_story_loops.py checks what that run concluded. The rl-training story
# is `wild demo` (tests/test_demo.py): its tests read its sweep run directly (`run_sweep`).
THROUGH_THE_LOOP = ("dit-training", "prompt-tuning")

Project = Callable[[str], Path]
StoryRunner = Callable[[str], "StoryRun"]


def fresh_project(story: str, where: Path) -> Path:
    """The story copied into `where`, as run.sh copies it (at test size): no runs yet."""
    where.mkdir(parents=True, exist_ok=True)
    copy_story(EXAMPLES / story, where)
    if story in TEST_STEPS:
        spec = json.loads((where / "sweep.json").read_text())
        spec["skill"]["args"]["steps"] = TEST_STEPS[story]
        (where / "sweep.json").write_text(json.dumps(spec))
    return where


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the group into the test's id
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that reads a story's finished sweep runs on one xdist worker (addopts'
    `--dist loadgroup`): `_ran` is per worker, so spread out, each worker would run the same
    torch sweeps again. (Without `tryfirst`, a run of tests/stories alone loads this file
    before xdist's worker plugin, and the group was read before it was set.)"""
    for item in items:
        if "story_run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("story-sweeps"))


@dataclass(frozen=True)
class StoryRun:
    """A story's whole sweep, run once per session: where, and what `run.sh` printed."""

    project: Path  # read only: tests change a copy (`story_project`)
    returncode: int
    output: str  # run.sh's stdout and stderr; empty for a sweep run directly


def story_at_test_size(story: str, where: Path) -> Path:
    """The story folder itself, or (for a story whose full sweep takes minutes) a copy of it
    whose sweep trains TEST_STEPS steps: the same run.sh, skill, grid and seeds."""
    if story not in TEST_STEPS:
        return EXAMPLES / story
    shutil.copytree(EXAMPLES / story, where)
    spec = json.loads((where / "sweep.json").read_text())
    spec["skill"]["args"]["steps"] = TEST_STEPS[story]
    (where / "sweep.json").write_text(json.dumps(spec))
    return where


def _through_the_loop(story: str, where: Path) -> StoryRun:
    """`run.sh --keep-in`, as a user runs the story: the loop and its agent run the sweep."""
    project = where / story
    folder = story_at_test_size(story, where / "story")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILD_")}
    done = subprocess.run(
        [str(folder / "run.sh"), "--keep-in", str(project)],
        capture_output=True, text=True, timeout=900, check=False,
        env={**env, "PYTHON": sys.executable},
    )  # fmt: skip
    return StoryRun(project, done.returncode, done.stdout + done.stderr)


@pytest.fixture(scope="session")
def _ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, StoryRun]:
    return {}


@pytest.fixture
def story_run(_ran: dict[str, StoryRun], tmp_path_factory: pytest.TempPathFactory) -> StoryRunner:
    """The story's whole sweep, run the first time a test of this worker asks for it."""

    def get(story: str) -> StoryRun:
        if story not in _ran:
            where = tmp_path_factory.mktemp(story)
            if story in THROUGH_THE_LOOP:
                _ran[story] = _through_the_loop(story, where)
            else:
                project = fresh_project(story, where)
                spec = json.loads((project / "sweep.json").read_text())
                run_sweep(project, spec, slots=2, out=lambda _line: None)
                _ran[story] = StoryRun(project, 0, "")
        return _ran[story]

    return get


@pytest.fixture
def story_project(story_run: StoryRunner, tmp_path: Path) -> Project:
    """A copy (the test may change it) of the story's project after its whole sweep ran."""

    def get(story: str) -> Path:
        ran = story_run(story)
        assert ran.returncode == 0, f"{story}'s run.sh failed:\n{ran.output[-6000:]}"
        copy = tmp_path / story
        shutil.copytree(ran.project, copy, symlinks=True)
        return copy

    return get


def expected(story: str) -> object:
    return json.loads((EXAMPLES / story / "expected" / "conclusions.json").read_text())
