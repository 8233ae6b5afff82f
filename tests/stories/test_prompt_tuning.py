"""The prompt-tuning story: variants scored by the local scorer, the selection with its
deterministic tie-break, failure notes, and the human asked only on repeated violations."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from tests.stories.conftest import Project, expected
from wild.agents.signals import parse_signals
from wild.clock import iso
from wild.commands.edits import add_human_input
from wild.commands.init import init_wild
from wild.parsers import human as human_md
from wild.paths import WildPaths
from wild_stories.agent import story_step
from wild_stories.results import load_results

ANALYZE = "Analyze the finished sweep."


def conclusions(project: Path) -> dict[str, object]:
    result: dict[str, object] = json.loads((project / "results" / "conclusions.json").read_text())
    return result


def test_the_variants_are_scored_and_the_tie_is_broken_by_the_shorter_prompt(
    story_project: Project,
) -> None:
    project = story_project("prompt-tuning")
    story_step(ANALYZE, project, "analysis")
    assert conclusions(project) == expected("prompt-tuning")
    results = project / "results"
    report = (results / "report.md").read_text()
    assert "**Selected prompt:** `v2-step-by-step`: it ties with `v3-worked-example`" in report
    assert "tie-break takes the shorter prompt (75 chars)" in report
    assert "`v3-worked-example` answers in the schema but wrongly on: multi (4)." in report
    assert "| v4-explain | 142 | 0/12 |" in (results / "variant_table.md").read_text()
    selected = (results / "selected_prompt.txt").read_text()
    assert selected == (project / "fixtures" / "variants" / "v2-step-by-step.md").read_text()


def _set(project: Path, variant: str, **changes: object) -> None:
    paths = WildPaths(project / ".wild")
    for run in load_results(paths):
        if run.params["variant"] == variant:
            path = paths.run_dir(run.id) / "metrics.json"
            path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_the_selection_follows_the_scores_and_the_tie_break_is_deterministic(
    story_project: Project,
) -> None:
    project = story_project("prompt-tuning")
    _set(project, "v3-worked-example", correct=9)
    story_step(ANALYZE, project, "analysis")
    assert conclusions(project)["selected"] == "v3-worked-example"
    # Equal score and length: the name decides.
    _set(project, "v3-worked-example", correct=8, prompt_chars=75)
    story_step(ANALYZE, project, "analysis")
    assert conclusions(project)["tie_between"] == ["v2-step-by-step", "v3-worked-example"]
    assert conclusions(project)["selected"] == "v2-step-by-step"


def test_repeated_schema_violations_ask_the_human_and_a_single_one_does_not(
    story_project: Project,
) -> None:
    project = story_project("prompt-tuning")
    signals = parse_signals(story_step(ANALYZE, project, "analysis"))
    assert signals.promises == ("NEEDS_HUMAN",)
    assert signals.reason is not None
    assert signals.reason.startswith("Prompt variant v4-explain broke the JSON output schema")
    assert (
        "`v1-direct` broke the output schema in 1 of 12 tasks"
        in (project / "results" / "report.md").read_text()
    )
    # v4's replies fixed (a changed skill): nothing repeats, so nobody is asked.
    _set(project, "v4-explain", violations=1)
    assert parse_signals(story_step(ANALYZE, project, "analysis")).promises == ("COMPLETE",)


def test_once_the_human_answers_the_story_completes_with_the_decision_noted(
    story_project: Project,
) -> None:
    project = story_project("prompt-tuning")
    paths = WildPaths(project / ".wild")
    init_wild(paths)
    at = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)
    # wild's question, answered: its text is wild's, not the human's decision.
    question = human_md.append_question(
        paths.human.read_text(),
        timestamp=iso(at),
        related="task-001",
        title="v4-explain broke the schema: fix it or drop it?",
        body="Urgency: medium",
    )
    paths.human.write_text(question.replace("[QUESTION]", "[ANSWERED]"))
    add_human_input(paths, "Drop v4-explain;\nit rambles.", urgent=False, now=at)
    signals = parse_signals(story_step(ANALYZE, project, "analysis"))
    assert signals.promises == ("COMPLETE",)
    report = (project / "results" / "report.md").read_text()
    # Issue 24 item 13: the note showed the question too, in a repr with literal `\n`s.
    assert 'The human decided on `v4-explain`: "Drop v4-explain; it rambles.".' in report
    assert "\\n" not in report
    assert conclusions(project)["asks_human"] is False
