"""wild/parsers/ids.py, the one place each id rule lives: every parser and command that
checks an id agrees with it, and the rule a user is told is the one applied."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wild.parsers import barriers as barriers_md
from wild.parsers import ids
from wild.parsers import tasks as tasks_md

# Ids built from the characters the rules talk about, so that both answers are common.
ID_TEXT = st.text(alphabet="ab7_.-Z x", min_size=1, max_size=8)


@given(ID_TEXT)
def test_a_task_line_has_the_id_exactly_when_the_rule_says_so(text: str) -> None:
    doc = tasks_md.parse(f"- [ ] [P1] {text}: Do it\n", file="tasks.md")
    read_as_id = [task.id for task in doc.tasks] == [text]
    assert read_as_id == ids.is_task_id(text) == tasks_md.is_task_id(text)


@given(ID_TEXT)
def test_a_barrier_header_takes_the_id_exactly_when_the_rule_says_so(text: str) -> None:
    doc = barriers_md.parse(f"## [WAITING] {text}\n- Type: manual\n", file="barriers.md")
    clean = not any("id" in problem.message for problem in doc.problems)
    assert (clean and " " not in text) == ids.is_block_id(text) == barriers_md.is_barrier_id(text)


def test_a_task_id_needs_more_than_letters() -> None:
    assert ids.is_block_id("prep") and not ids.is_task_id("prep")
    assert ids.is_task_id("task-001") and ids.is_task_id("data.prep")
    assert not ids.is_block_id("1st-barrier") and not ids.is_task_id("1st-barrier")
