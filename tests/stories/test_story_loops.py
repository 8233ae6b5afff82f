"""Each story end to end through the loop (seed 002 §10.3), as `run.sh` runs it: the real
loop process, the scripted story agent, real runs on the local backend. The rl-training
story is `wild demo` (tests/test_demo.py); these are the other two. Each runs once per session
(tests/stories/conftest.py, `story_run`): the story's other tests read a copy of what it left."""

from __future__ import annotations

import json

import pytest

from tests.stories.conftest import THROUGH_THE_LOOP, StoryRunner, expected


@pytest.mark.slow  # prompt-tuning: 36 torch runs, about 3 minutes on 2 idle cores
@pytest.mark.parametrize("story", THROUGH_THE_LOOP)
def test_the_story_runs_through_the_loop_and_concludes_as_expected(
    story: str, story_run: StoryRunner
) -> None:
    ran = story_run(story)  # the run the other tests of the story read a copy of
    assert ran.returncode == 0, ran.output[-6000:]
    assert "✅ All work complete." in ran.output
    assert f"Artifacts: {ran.project / 'results'}" in ran.output
    found = json.loads((ran.project / "results" / "conclusions.json").read_text())
    wanted = expected(story)
    assert isinstance(wanted, dict)
    assert {k: found.get(k) for k in wanted} == wanted
    assert (ran.project / ".wild" / "runs.jsonl").is_file()  # the loop's runs, not a shortcut
