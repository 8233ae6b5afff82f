"""Prompts: every built-in template fills completely, user overrides win, questions are shown."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from string import Template
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild import clock, prompt_files, prompts
from wild.completion.verdict import CheckOutcome
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import parse_entry
from wild.parsers.barriers import parse as parse_barriers
from wild.parsers.runs import RunRecord, SweepRecord
from wild.policy.model import default_policy

HUMAN = """# Human Input Queue

## [QUESTION] 2026-02-08T10:00:00Z
**Type:** question
**Related:** alert-1

### Question:
Roll back or restart?

Urgency: high

---

## [PENDING] 2026-02-08T11:00:00Z
**Type:** general-instruction
**Alert:** alert-1
**Priority:** normal

### Input:
Roll back to step 200.

---
"""

ALERT = (
    b'{"id": "alert-1", "timestamp": "2026-02-08T10:00:00Z", "severity": "critical", '
    b'"source": "train-job-1", "type": "loss-spike", "description": "loss jumped to 9.8", '
    b'"status": "pending", "context": {"step": 300}, "choices": ["roll back", "ignore"]}'
)


def kind_values(kind: str) -> dict[str, object]:
    """What the loop passes for each kind of work (the handlers' calls, in one place)."""
    queue = human_md.parse(HUMAN)
    if kind == "human-input":
        return prompts.human_input_values(queue.inputs[1], (queue.inputs[0],))
    if kind == "alert":
        alert, problems = parse_entry(ALERT, 1)
        assert alert is not None and problems == ()
        return prompts.alert_values(alert, default_policy(), 2, "Roll back to step 200.")
    if kind == "task":
        task = tasks_md.parse("- [/] [P1] task-001: Train\n  - [x] Load\n  - [ ] Fit\n").tasks[0]
        return prompts.task_values(task, "- iteration 1: task task-001 → failed")
    if kind == "planning":
        return prompts.planning_values(())
    if kind == "analysis":
        sweep = SweepRecord("s1", "lr", {"name": "lr"}, "active", run_ids=("s1-001",))
        run = RunRecord("s1-001", "s1", {"lr": 0.1}, "python t.py --lr=0.1", "finished")
        return prompts.analysis_values(sweep, (run,), lambda r: f".wild/runs/{r}", "r.md")
    if kind == "checks":
        failing = CheckOutcome("tests", False, True, "exit 1: 2 failed", "~~~~ E assert 1 == 2")
        return prompts.checks_values((failing,))
    barriers = parse_barriers("## [WAITING] train-done\n- Type: file-exists\n- File: done\n")
    return prompts.monitoring_values(barriers.barriers)


def render(kind: str, prompts_dir: Path) -> str:
    common = prompts.common_values(
        iteration=7,
        goal="Ship the model",
        context="## Current System State",
        policy=default_policy(),
        work_id="alert-1",
    )
    answers = {"answers": prompts.answers_block("Question: Which run?\nAnswer: The first.")}
    return prompt_files.render(kind, prompts_dir, {**common, **answers, **kind_values(kind)})


def test_a_failing_check_is_named_with_the_end_of_its_output(tmp_path: Path) -> None:
    text = render("checks", tmp_path / "no-overrides")
    assert "- tests: exit 1: 2 failed\n> ~~~~ E assert 1 == 2\n" in text


@pytest.mark.parametrize("kind", prompts.KINDS)
def test_every_builtin_template_is_filled_completely(kind: str, tmp_path: Path) -> None:
    text = render(kind, tmp_path / "no-overrides")
    assert re.findall(r"\$\{?[A-Za-z_]+", text) == []
    assert text.startswith("# Wild Loop - Iteration 7\n\n## Current System State\n")
    assert "## Main Goal\n> Ship the model\n" in text
    assert "<event_output>" in text  # the signals block closes every prompt
    assert text.endswith("</event_output>\n")


def test_human_input_prompt_lists_the_questions_it_may_answer(tmp_path: Path) -> None:
    text = render("human-input", tmp_path)
    assert (
        "- **Priority:** normal\n"
        "- **Related alert:** alert-1\n"
        "\n### Questions wild asked the human (this input may answer them):\n"
        "- 2026-02-08T10:00:00Z (about alert-1): Roll back or restart?\n"
        "\n### Input:\n> Roll back to step 200.\n"
    ) in text


def test_human_input_prompt_without_questions_or_alert(tmp_path: Path) -> None:
    entry = human_md.parse(HUMAN.replace("**Alert:** alert-1\n", "")).inputs[1]
    values = prompts.human_input_values(entry)
    assert (values["related"], values["questions"]) == ("", "")


def test_alert_prompt_carries_choices_context_attempt_and_guidance(tmp_path: Path) -> None:
    text = render("alert", tmp_path)
    assert (
        '- **Context:** {"step": 300}\n- **Choices:** roll back; ignore\n'
        "- **Description:**\n> loss jumped to 9.8\n"
    ) in text
    assert "- **Current Attempt:** 2\n" in text
    assert "### Guidance from the human:\n> Roll back to step 200.\n" in text


def test_a_users_template_wins_and_unknown_names_are_kept(tmp_path: Path) -> None:
    (tmp_path / "task.md").write_text("Do $title now ($unknown) for: $goal\n")
    assert render("task", tmp_path) == "Do Train now ($unknown) for: > Ship the model\n"


def test_the_built_in_template_is_read_once_while_it_does_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loop renders a prompt an iteration; wild's own template was read from disk each
    # time (issue 22 item 8).
    reads: list[Path] = []
    real_read = Path.read_text

    def counting(path: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(path)
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting)
    first = prompt_files.render("task", tmp_path, {"title": "Train"})
    second = prompt_files.render("task", tmp_path, {"title": "Train"})
    assert first == second
    assert reads.count(prompt_files.BUILTIN / "task.md") <= 1


def test_an_edit_of_a_kept_template_is_seen_even_at_the_same_size_and_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An in-place save of the same size with the mtime set back changes neither the inode,
    # the size nor the mtime: the ctime, kept in the identity, still tells.
    monkeypatch.setattr(clock, "RACY_NS", 0)  # kept at once (else after 2 s)
    template = tmp_path / "task.md"
    template.write_text("Version A of $title\n")
    mtime = template.stat().st_mtime_ns
    assert prompt_files.render("task", tmp_path, {"title": "t"}) == "Version A of t\n"
    assert str(template) in prompt_files._kept
    time.sleep(0.02)  # a ctime tick apart (coarse file system clocks tick every 1-10 ms)
    with template.open("r+") as handle:  # in place: the same inode
        handle.write("Version B of $title\n")
    os.utime(template, ns=(mtime, mtime))
    assert prompt_files.render("task", tmp_path, {"title": "t"}) == "Version B of t\n"
    template.unlink()
    built_in = prompt_files.render("task", tmp_path / "none", {"title": "t"})
    assert prompt_files.render("task", tmp_path, {"title": "t"}) == built_in


def test_a_template_changed_just_now_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Within RACY_NS of its change a file may change again in the same tick, its whole
    # identity unchanged: such a read is not kept.
    template = tmp_path / "task.md"
    template.write_text("Fresh $title\n")
    assert prompt_files.render("task", tmp_path, {"title": "t"}) == "Fresh t\n"
    assert str(template) not in prompt_files._kept
    monkeypatch.setattr(clock, "RACY_NS", 0)
    prompt_files.render("task", tmp_path, {"title": "t"})
    assert str(template) in prompt_files._kept


@given(
    st.lists(
        st.sampled_from(["$", "$$", "{", "}", "title", "goal", "_x1", "9", "é", " ", "\n", "${"]),
        max_size=12,
    ).map("".join),
    st.dictionaries(st.sampled_from(["title", "goal", "_x1", "x"]), st.text(max_size=3)),
)
def test_a_template_is_filled_as_string_template_fills_it(
    text: str, values: dict[str, str]
) -> None:
    """Prompts are filled without `string.Template` (~0.9 ms before the loop's first agent
    starts, issue 22 item 8), and exactly as it fills them."""
    assert prompt_files.safe_substitute(text, values) == Template(text).safe_substitute(values)
