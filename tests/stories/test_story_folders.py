"""Every story folder is complete and self-contained, its run.sh works from anywhere, and the
scripted agent routes each kind of work to the right step."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stories.conftest import EXAMPLES, Project, fresh_project
from wild.agents.signals import parse_signals
from wild.commands.demo import PROMPTS, goal_of, story_agent_command
from wild_stories.agent import STORIES, stage, story_name, story_step

SECTIONS = ("## Input", "## Procedure", "## Output", "## Failure Handling")


@pytest.mark.parametrize("story", sorted(STORIES))
def test_a_story_folder_has_everything_the_spec_lists(story: str) -> None:
    folder = EXAMPLES / story
    assert story_name(folder) == story
    assert goal_of(folder).startswith(("Find", "Tune", "Train"))
    for name in PROMPTS:
        text = (folder / "prompts" / name).read_text()
        positions = [text.find(section) for section in SECTIONS]
        assert -1 not in positions and positions == sorted(positions), (name, positions)
    spec = json.loads((folder / "sweep.json").read_text())
    # Reference only: the skill is a file of the story, not code in the spec.
    assert (folder / spec["skill"]["target"]).is_file()
    assert (folder / "expected" / "conclusions.json").is_file()
    assert os.access(folder / "run.sh", os.X_OK)


@pytest.mark.slow  # the whole rl-training sweep (42 short numpy runs)
def test_run_sh_works_from_any_folder_and_says_where_the_artifacts_are(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(EXAMPLES / "rl-training" / "run.sh"), "--direct", "--scale", "cpu"],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path), "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    match = re.search(r"^Artifacts: (\S+)", result.stdout, re.MULTILINE)
    assert match is not None, result.stdout
    results = Path(match.group(1))
    assert results.parent.parent == tmp_path  # a temporary folder of its own
    assert (results / "report.md").is_file()
    assert not (results.parent / "expected").exists()  # the answers are not handed over


def test_the_agent_routes_each_kind_of_work() -> None:
    assert stage("anything", "alert") == "alert"
    assert stage("plan toward the goal", "planning") == "sweep"
    assert stage("Analyze sweep s1's results", "task") == "analysis"
    assert stage("Preprocess the data", "task") == "other"
    assert stage("## CURRENT WORK: Handling Alert", None) == "alert"
    assert stage("No sweep yet; answer with a <sweep> object", None) == "sweep"


def test_a_diverged_run_alert_is_answered_stop_run(story_project: Project) -> None:
    project = story_project("dit-training")
    prompt = (
        "## CURRENT WORK: Handling Alert\n- **ID:** alert-9\n- **Source:** sdirect-x-005\n"
        "- **Type:** divergence\n- **Choices:** stop_run; ignore\n"
    )
    signals = parse_signals(story_step(prompt, project, "alert", "alert-9"))
    assert [(r.alert_id, r.choice) for r in signals.resolutions] == [("alert-9", "stop_run")]


def test_the_agent_proposes_a_sweep_only_while_none_exists(
    tmp_path: Path, story_project: Project
) -> None:
    fresh = fresh_project("dit-training", tmp_path / "fresh")
    assert "<sweep>" in story_step("Plan.", fresh, "planning")
    ran = story_project("dit-training")
    assert parse_signals(story_step("Plan.", ran, "planning")).has("COMPLETE")


def _agent(cwd: Path, work_type: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        shlex.split(story_agent_command()),  # as `wild demo` runs it
        cwd=cwd,
        input="## CURRENT WORK: Planning toward the goal\n",
        env={**os.environ, "WILD_WORK_TYPE": work_type},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_agent_runs_as_a_custom_agent_command(tmp_path: Path) -> None:
    project = fresh_project("rl-training", tmp_path / "rl")
    result = _agent(project, "planning")
    assert result.returncode == 0, result.stderr
    assert "<sweep>" in result.stdout
    (project / "story.md").write_text("# no story line\n")
    broken = _agent(project, "analysis")
    assert broken.returncode == 1
    assert broken.stderr == (
        f"story agent: {project / 'story.md'}: no `Story: NAME` line naming one of "
        "rl-training, prompt-tuning, dit-training\n"
    )
