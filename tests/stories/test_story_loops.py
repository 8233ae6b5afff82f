"""Each story end to end through the loop (seed 002 §10.3), as `run.sh` runs it: the real
loop process, the scripted story agent, real runs on the local backend. The rl-training
story is `wild demo` (tests/test_demo.py); these are the other two."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stories.conftest import EXAMPLES, TEST_STEPS, expected

KEYS = {
    "prompt-tuning": None,  # every key
    "dit-training": None,  # every key
}


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


@pytest.mark.slow  # prompt-tuning: 36 torch runs, about 3 minutes on 2 idle cores
@pytest.mark.parametrize("story", sorted(KEYS))
def test_the_story_runs_through_the_loop_and_concludes_as_expected(
    story: str, tmp_path: Path
) -> None:
    project = tmp_path / story
    folder = story_at_test_size(story, tmp_path / "story")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILD_")}
    done = subprocess.run(
        [str(folder / "run.sh"), "--keep-in", str(project)],
        capture_output=True, text=True, timeout=900, check=False,
        env={**env, "PYTHON": sys.executable},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "✅ All work complete." in done.stdout
    assert f"Artifacts: {project / 'results'}" in done.stdout
    found = json.loads((project / "results" / "conclusions.json").read_text())
    wanted = expected(story)
    assert isinstance(wanted, dict)
    keys = KEYS[story] or tuple(wanted)
    assert {k: found.get(k) for k in keys} == {k: wanted[k] for k in keys}
    assert (project / ".wild" / "runs.jsonl").is_file()  # the loop's runs, not a shortcut
    shutil.rmtree(project)
