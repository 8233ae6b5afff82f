"""tasks.md: tolerant lossless parsing, exact problems, id-keyed edits touching only their lines."""

from __future__ import annotations

import dataclasses
import gc
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers import masking
from wild.parsers.lines import Problem, Span, split_lines
from wild.parsers.tasks import (
    Subtask,
    Task,
    TaskList,
    TaskStatus,
    add_task,
    assign_missing_ids,
    find,
    missing_ids,
    next_task_id,
    parse,
    render,
    reparse,
    set_status,
)
from wild.parsers.tasks.grammar import WHOLE_TASK, relation_value
from wild.parsers.tasks.parser import _Parser
from wild.parsers.tasks.records import new_task
from wild.store.files import read_text, update_text

GOLDEN = Path(__file__).parent / "golden"
STATUSES: tuple[TaskStatus, ...] = ("todo", "in-progress", "complete", "cancelled")


def _task(
    task_id: str | None,
    text: str,
    span: tuple[int, int],
    *,
    priority: int = 2,
    status: TaskStatus = "todo",
    depends_on: tuple[str, ...] = (),
    blocked_by: tuple[str, ...] = (),
    subtasks: tuple[Subtask, ...] = (),
) -> Task:
    return Task(task_id, text, priority, status, depends_on, blocked_by, subtasks, Span(*span))


def _messages(doc: TaskList) -> list[str]:
    return [str(problem) for problem in doc.problems]


# --- golden files -------------------------------------------------------------------------


def test_seed_001_example_parses_to_exactly_the_seeds_meaning() -> None:
    text = (GOLDEN / "tasks_seed001.md").read_text()
    doc = parse(text)
    assert doc.tasks == (
        _task("task-001", "Preprocess training data", (2, 3), priority=1, status="complete"),
        _task(
            "task-002",
            "Launch training sweep (8 jobs)",
            (3, 5),
            priority=1,
            status="complete",
            depends_on=("task-001",),
        ),
        _task(
            "task-007",
            "Monitor training jobs",
            (5, 7),
            priority=1,
            status="in-progress",
            depends_on=("task-002",),
        ),
        _task(
            "task-003",
            "Analyze training results",
            (7, 13),
            depends_on=("task-002",),
            blocked_by=("barrier-training-complete",),
            subtasks=(
                Subtask("Load checkpoint files", "todo", 11),
                Subtask("Compute metrics", "todo", 12),
                Subtask("Generate report", "todo", 13),
            ),
        ),
        _task("task-004", "Select best checkpoint", (13, 15), depends_on=("task-003",)),
        _task("task-006", "Write final report", (15, 17), priority=3, depends_on=("task-004",)),
    )
    assert doc.problems == ()
    assert render(doc) == text
    assert doc.lines == tuple(split_lines(text))


# --- tolerant reading ---------------------------------------------------------------------


def test_ralph_style_lines_have_no_ids_and_default_priority() -> None:
    text = (
        "# Ralph Tasks\n\n- [ ] Build UI\n- [x] Set up repo\n  - [/] Write README\n- [/] Deploy\n"
    )
    doc = parse(text)
    assert doc.tasks == (
        _task(None, "Build UI", (2, 3)),
        _task(
            None,
            "Set up repo",
            (3, 5),
            status="complete",
            subtasks=(Subtask("Write README", "in-progress", 5),),
        ),
        _task(None, "Deploy", (5, 6), status="in-progress"),
    )
    assert doc.problems == ()


def test_what_humans_type_is_accepted() -> None:
    text = (
        "* [X] [P1] task-001: Upper-case X\n"
        "-   [-]   [P3]   task-002:   Cancelled with extra spaces   \n"
        "+ [ ][p0]T-9: no space after the box\n"
        "- [x]done\n"
        "## Later\n"
        "\t* [x] not a subtask: no task above\n"
    )
    doc = parse(text)
    assert doc.tasks == (
        _task("task-001", "Upper-case X", (0, 1), priority=1, status="complete"),
        _task("task-002", "Cancelled with extra spaces", (1, 2), priority=3, status="cancelled"),
        _task("T-9", "no space after the box", (2, 3), priority=0),
        _task(None, "done", (3, 4), status="complete"),
    )
    assert _messages(doc) == [
        "tasks.md:6: subtask outside any task: put it under a task line, "
        "or start it at column 0 to make it a task"
    ]


@pytest.mark.parametrize(
    ("line", "task_id", "text"),
    [
        ("- [ ] Refactor: the parser", None, "Refactor: the parser"),
        ("- [ ] task-001: Preprocess", "task-001", "Preprocess"),
        ("- [ ] T1: short id", "T1", "short id"),
        ("- [ ] fix_db: underscore", "fix_db", "underscore"),
        ("- [ ] v1.2: dotted", "v1.2", "dotted"),
        ("- [ ] a-b: dashed", "a-b", "dashed"),
        ("- [ ] http://example.com", None, "http://example.com"),
        ("- [ ] task-1:glued", None, "task-1:glued"),
        ("- [ ] 1abc: starts with a digit", None, "1abc: starts with a digit"),
        ("- [ ] task-001:", "task-001", ""),
        ("- [ ] [P1] Note: prose", None, "Note: prose"),
        ("- [ ] [P1] [P3] second tag is text", None, "[P3] second tag is text"),
        ("- [ ] [bug] tag that is not a priority", None, "[bug] tag that is not a priority"),
    ],
)
def test_id_rule(line: str, task_id: str | None, text: str) -> None:
    (task,) = parse(line + "\n").tasks
    assert (task.id, task.text) == (task_id, text)


@given(st.text(alphabet=st.sampled_from(list("aZ09-_.:é")), min_size=1, max_size=8))
def test_id_rule_matches_its_definition(word: str) -> None:
    (task,) = parse(f"- [ ] {word}: text\n").tasks
    is_id = re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", word) is not None and any(
        char in "0123456789-_." for char in word
    )
    assert task.id == (word if is_id else None)
    assert task.text == ("text" if is_id else f"{word}: text")


def test_relations_accumulate_in_every_spelling() -> None:
    text = (
        "- [ ] [P1] task-010: Evaluate\n"
        "  - dependsOn: task-001, task-002\n"
        "  - blockedBy: barrier-a\n"
        "  * BLOCKEDBY: barrier-b,barrier-c\n"
        "    depends-on: task-003 task-004\n"
        "\t- Blocked-By:   barrier-d  \n"
        "  - dependsOn:\n"
    )
    (task,) = parse(text).tasks
    assert task.depends_on == ("task-001", "task-002", "task-003", "task-004")
    assert task.blocked_by == ("barrier-a", "barrier-b", "barrier-c", "barrier-d")
    assert task.span == Span(0, 7)


def test_a_check_line_holds_a_command_and_the_first_one_counts() -> None:
    text = (
        "- [ ] [P1] task-010: Evaluate\n"
        "  - check: pytest -q tests/test_eval.py, -k 'not slow'\n"
        "  - Check: echo second\n"
        "  - dependsOn: task-001\n"
        "- [ ] task-011: No check\n"
        "  - check:\n"
    )
    first, second = parse(text).tasks
    assert first.check == "pytest -q tests/test_eval.py, -k 'not slow'"
    assert first.depends_on == ("task-001",)
    assert first.span == Span(0, 4)
    assert second.check is None
    outside = parse("- check: make test\n")
    assert [str(p) for p in outside.problems] == [
        "tasks.md:1: check line outside any task: indent it under the task it belongs to"
    ]


def test_notes_belong_to_their_task_and_trailing_blank_lines_do_not() -> None:
    text = (
        "# Tasks\n"
        "- [ ] task-001: First\n"
        "  Free note about the first task.\n"
        "\n"
        "  - [x] sub after a blank line\n"
        "\n"
        "\n"
        "Prose at column 0 ends the task.\n"
        "  indented prose after prose is nobody's note\n"
        "- [ ] task-002: Second\n"
        "  a note as the last child\n"
        "\n"
    )
    doc = parse(text)
    assert doc.tasks == (
        _task(
            "task-001",
            "First",
            (1, 5),
            subtasks=(Subtask("sub after a blank line", "complete", 5),),
        ),
        _task("task-002", "Second", (9, 11)),
    )
    assert doc.problems == ()


def test_comments_and_fences_never_hold_tasks() -> None:
    text = (
        "<!-- - [ ] task-900: one-line comment -->\n"
        "<!--\n"
        "- [ ] task-901: in a comment\n"
        "  - dependsOn: nothing\n"
        "-->\n"
        "- [ ] task-001: Real\n"
        "  ```bash\n"
        "- [ ] task-902: in the task's fenced block\n"
        "  ```\n"
        "  - blockedBy: barrier-a\n"
        "~~~~\n"
        "- [?] not reported inside a fence\n"
        "~~~\n"
        "~~~~~\n"
        "- [ ] task-002: After\n"
        "```\n"
        "- [ ] task-903: an unclosed fence runs to the end\n"
    )
    doc = parse(text)
    assert doc.tasks == (
        _task("task-001", "Real", (5, 10), blocked_by=("barrier-a",)),
        _task("task-002", "After", (14, 15)),
    )
    assert doc.problems == ()


def test_a_markdown_link_bullet_is_not_a_task() -> None:
    doc = parse("- [docs](https://example.com)\n- [x](https://example.com)\n")
    assert (doc.tasks, doc.problems) == ((), ())


def test_problems_name_file_and_line_with_exact_texts() -> None:
    text = (
        "- dependsOn: task-001\n"
        "- [ ] task-001: Good\n"
        "  - [?] bad subtask box\n"
        "- [?] bad box\n"
        "  - dependsOn: task-001\n"
        "  - [ ] child of a rejected line is not reported\n"
        "- [ ] [Px] bad priority\n"
        "- [] empty box\n"
        "- [ ] task-001: Duplicate\n"
        "# Heading\n"
        "  - blocked-by: barrier-x\n"
        "- [P1] task-005: no checkbox\n"
    )
    doc = parse(text, file=".wild/tasks.md")
    assert _messages(doc) == [
        ".wild/tasks.md:1: dependsOn line outside any task: indent it under the task it belongs to",
        '.wild/tasks.md:3: bad checkbox "[?]": use [ ] todo, [/] in-progress, [x] complete '
        "or [-] cancelled",
        '.wild/tasks.md:4: bad checkbox "[?]": use [ ] todo, [/] in-progress, [x] complete '
        "or [-] cancelled",
        '.wild/tasks.md:7: bad priority "[Px]": write [P<number>] such as [P1], '
        "or leave it out for P2",
        '.wild/tasks.md:8: bad checkbox "[]": use [ ] todo, [/] in-progress, [x] complete '
        "or [-] cancelled",
        '.wild/tasks.md:9: duplicate task id "task-001" (first used on line 2): '
        "give this task another id",
        ".wild/tasks.md:11: blocked-by line outside any task: "
        "indent it under the task it belongs to",
        '.wild/tasks.md:12: bad checkbox "[P1]": use [ ] todo, [/] in-progress, [x] complete '
        "or [-] cancelled",
    ]
    assert doc.problems[0] == Problem(".wild/tasks.md", 1, doc.problems[0].message)
    # Rejected lines are not tasks; the bad subtask line stays in its task's span as a note.
    assert doc.tasks == (
        _task("task-001", "Good", (1, 3)),
        _task("task-001", "Duplicate", (8, 9)),
    )
    assert find(doc, "task-001") == doc.tasks[0]
    assert find(doc, "task-404") is None


def test_a_repeated_parse_names_the_file_it_was_asked_for() -> None:
    text = "- [?] x\n"
    assert _messages(parse(text, file="a.md"))[0].startswith("a.md:1: ")
    assert _messages(parse(text, file="b.md"))[0].startswith("b.md:1: ")
    assert parse(text, file="a.md") == parse((text + " ")[:-1], file="a.md")


# --- edits --------------------------------------------------------------------------------

SEED = (GOLDEN / "tasks_seed001.md").read_text()


def test_set_status_rewrites_only_the_checkbox_character() -> None:
    text = "- [ ]   [P1]   task-001:   spaced   \n- [ ] task-002: other\n"
    assert set_status(text, "task-001", "complete") == (
        "- [x]   [P1]   task-001:   spaced   \n- [ ] task-002: other\n"
    )
    assert set_status(text, "task-002", "in-progress") == (
        "- [ ]   [P1]   task-001:   spaced   \n- [/] task-002: other\n"
    )
    assert set_status(text, "task-002", "cancelled").endswith("- [-] task-002: other\n")
    assert set_status("* [X] T1: done", "T1", "todo") == "* [ ] T1: done"


def test_set_status_keeps_crlf_and_an_upper_case_x_that_is_already_right() -> None:
    text = "- [X] task-001: a\r\n- [ ] task-002: b\r\n  - dependsOn: task-001\r\n"
    assert set_status(text, "task-001", "complete") == text
    assert set_status(text, "task-002", "complete") == (
        "- [X] task-001: a\r\n- [x] task-002: b\r\n  - dependsOn: task-001\r\n"
    )


def test_set_status_finds_the_task_parse_finds_without_a_full_parse() -> None:
    text = (
        "<!-- - [ ] task-001: in a comment\n"
        "-->\n"
        "  ```\n"
        "- [ ] task-001: in a fence\n"
        "  ````\n"
        "- [ ] [Px] task-001: bad priority, not a task\n"
        "  - [ ] task-001: a subtask is not the task\n"
        "  - dependsOn: task-001\n"
        "- [ ] xtask-001: another id\n"
        "- [ ] task-001: the task\n"
        "- [ ] task-001: its duplicate\n"
    )
    assert set_status(text, "task-001", "complete") == text.replace(
        "- [ ] task-001: the task", "- [x] task-001: the task"
    )
    hidden = "~~~~\n~~~\n- [ ] task-002: hidden by the four-tilde fence\n"
    assert set_status(hidden, "task-002", "complete") == hidden
    assert set_status("- [ ] Refactor: x\n", "Refactor", "complete") == "- [ ] Refactor: x\n"


def test_set_status_on_an_unknown_id_returns_the_text_unchanged() -> None:
    assert set_status(SEED, "task-404", "complete") == SEED
    with pytest.raises(
        ValueError,
        match=r"^unknown task status 'done': use todo, in-progress, complete or cancelled$",
    ):
        set_status(SEED, "task-001", "done")  # type: ignore[arg-type]


def test_assign_missing_ids_continues_after_the_highest_task_number() -> None:
    text = (
        "# Tasks\r\n"
        "- [ ] Build UI\r\n"
        "- [x] [P1] task-009: Done already\r\n"
        "- [ ] [P3]   Refactor: the parser\r\n"
        "- [ ]Glued\r\n"
        "- [ ]\r\n"
        "  - [ ] subtasks get no ids\r\n"
        "- [ ] T-500: other ids do not count\r\n"
    )
    assert assign_missing_ids(text) == (
        "# Tasks\r\n"
        "- [ ] task-010: Build UI\r\n"
        "- [x] [P1] task-009: Done already\r\n"
        "- [ ] [P3]   task-011: Refactor: the parser\r\n"
        "- [ ] task-012: Glued\r\n"
        "- [ ] task-013:\r\n"
        "  - [ ] subtasks get no ids\r\n"
        "- [ ] T-500: other ids do not count\r\n"
    )
    assert assign_missing_ids(SEED) == SEED


def test_assign_missing_ids_on_a_ralph_file_starts_at_task_001() -> None:
    assert assign_missing_ids("- [ ] Build UI\n- [ ] Ship") == (
        "- [ ] task-001: Build UI\n- [ ] task-002: Ship"
    )


def test_a_plan_written_as_the_planning_prompt_shows_resolves_its_own_references() -> None:
    """Issue 24 item 1: the agent writes tasks without ids and `dependsOn: task-001` meaning
    its first task; the ids wild gives make that reference true (it once skipped task-001)."""
    plan = "- [ ] [P1] Prepare the data\n- [ ] [P2] Train\n  - dependsOn: task-001\n"
    assert assign_missing_ids(plan) == (
        "- [ ] [P1] task-001: Prepare the data\n"
        "- [ ] [P2] task-002: Train\n"
        "  - dependsOn: task-001\n"
    )
    # Appended to a numbered plan, new tasks go on from its highest id; a numbered task's
    # reference to a deleted task still keeps that id from being given again.
    numbered = "- [x] task-001: a\n- [ ] task-002: b\n  - dependsOn: task-005\n"
    assert assign_missing_ids(numbered + plan) == numbered + (
        "- [ ] [P1] task-006: Prepare the data\n"
        "- [ ] [P2] task-007: Train\n"
        "  - dependsOn: task-001\n"
    )


def test_next_task_id_pads_to_three_digits_and_counts_dependency_references() -> None:
    assert next_task_id(parse("")) == "task-001"
    assert next_task_id(parse(SEED)) == "task-008"
    assert next_task_id(parse("- [ ] task-999: a\n")) == "task-1000"
    assert next_task_id(parse("- [ ] task-002: a\n  - dependsOn: task-041\n")) == "task-042"
    assert next_task_id(parse("- [ ] Task-7: a\n- [ ] task-7b: b\n")) == "task-001"


def test_add_task_appends_a_task_with_its_relations() -> None:
    new_text, new_id = add_task(
        SEED,
        "Compare\nwith baseline\r\n  again",
        priority=1,
        depends_on=("task-003", "task-004"),
        blocked_by=("barrier-a, barrier-b",),
    )
    assert new_id == "task-008"
    assert new_text == SEED + (
        "- [ ] [P1] task-008: Compare with baseline again\n"
        "  - dependsOn: task-003, task-004\n"
        "  - blockedBy: barrier-a, barrier-b\n"
    )
    assert find(parse(new_text), "task-008") == _task(
        "task-008",
        "Compare with baseline again",
        (17, 20),
        priority=1,
        depends_on=("task-003", "task-004"),
        blocked_by=("barrier-a", "barrier-b"),
    )


def test_add_task_keeps_crlf_and_completes_a_missing_final_newline() -> None:
    assert add_task("# T\r\n- [ ] task-001: a", "b") == (
        "# T\r\n- [ ] task-001: a\r\n- [ ] [P2] task-002: b\r\n",
        "task-002",
    )
    assert add_task("", "first") == ("- [ ] [P2] task-001: first\n", "task-001")


def test_add_task_closes_a_comment_or_fence_left_open_so_the_task_is_seen() -> None:
    text, _ = add_task("<!-- unfinished\n", "x")
    assert text == "<!-- unfinished\n-->\n- [ ] [P2] task-001: x\n"
    text, _ = add_task("````md\n- [ ] task-004: example", "y")
    assert text == "````md\n- [ ] task-004: example\n````\n- [ ] [P2] task-001: y\n"
    assert [task.id for task in parse(text).tasks] == ["task-001"]


@pytest.mark.parametrize(
    ("requested", "written"),
    [
        (1, "P1"),
        (7, "P7"),
        (0, "P1"),
        (-1, "P1"),
        (None, "P2"),
        (1.5, "P2"),
        ("1", "P2"),
        (True, "P2"),
    ],
)
def test_add_task_clamps_a_priority_above_p1_and_defaults_anything_else_to_p2(
    requested: object, written: str
) -> None:
    # One rule for every task wild adds: the CLI's --add-task and an agent's new_events.
    assert add_task("", "x", priority=requested) == (f"- [ ] [{written}] task-001: x\n", "task-001")


def test_edits_go_through_update_text_and_keep_crlf(tmp_path: Path) -> None:
    path = tmp_path / "tasks.md"
    path.write_bytes(b"- [ ] Build UI\r\n- [ ] task-001: Ship\r\n")
    update_text(path, assign_missing_ids, tmp_path / ".lock")
    update_text(path, lambda text: set_status(text, "task-002", "in-progress"), tmp_path / ".lock")
    assert path.read_bytes() == b"- [/] task-002: Build UI\r\n- [ ] task-001: Ship\r\n"
    assert read_text(path) == path.read_bytes().decode()


def test_reparse_after_checkbox_edits_changes_only_those_tasks() -> None:
    text = "# T\n- [ ] task-001: a\n  - dependsOn: task-002\n- [/] [P1] task-002: b\n- [?] bad\n"
    before = parse(text, "t.md")
    after = set_status(text, "task-002", "complete")
    again = set_status(after, "task-001", "in-progress")
    edited = reparse(before, again, "t.md")
    assert edited == parse(again, "t.md")
    assert edited.lines == tuple(split_lines(again))
    assert edited.tasks == (
        before.tasks[0]._replace(status="in-progress"),
        before.tasks[1]._replace(status="complete"),
    )
    assert _messages(edited) == [
        't.md:5: bad checkbox "[?]": use [ ] todo, [/] in-progress, [x] complete or [-] cancelled'
    ]
    # A task whose line did not change is the very record of the last parse.
    one = reparse(before, after, "t.md")
    assert one.tasks[0] is before.tasks[0]


def test_reparse_parses_in_full_whatever_is_not_a_checkbox_change() -> None:
    text = "- [ ] task-001: a\n- [ ] task-002: b\n"
    before = parse(text)
    for after in (
        "- [ ] task-001: a\n- [ ] task-002: c\n",  # text
        "- [ ] task-001: a\n- [?] task-002: b\n",  # a bad box: no longer a task
        "- [ ] task-001: a\n  - [x] task-002: b\n",  # indented: a subtask
        "- [ ] task-001: a\n- [ ] task-002: b\n- [ ] task-003: c\n",  # a line more
        "<!--\n- [ ] task-002: b\n",  # hidden in a comment
    ):
        assert reparse(before, after) == parse(after)
    # Problems name the file: a parse for another name is not reused.
    bad = parse("- [?] x\n", "a.md")
    assert reparse(bad, "- [?] x\n", "b.md").problems == parse("- [?] x\n", "b.md").problems


def test_missing_ids_and_find() -> None:
    text = "- [ ] no id\n- [ ] t1: a\n- [x] t1: again\n- [ ] [Px] t2: not a task\n"
    doc = parse(text)
    assert missing_ids(doc)
    assert find(doc, "t1") is doc.tasks[1]
    assert find(doc, "t2") is None
    assert not missing_ids(parse(assign_missing_ids(text)))


# --- properties ---------------------------------------------------------------------------

ENDINGS = st.sampled_from(["\n", "\r\n"])
WORDS = st.text(alphabet=st.sampled_from(list("abcXYZ019 :-_.,[]()é漢\t")), min_size=0, max_size=12)
IDS = st.sampled_from(["task-001", "task-002", "task-017", "T1", "fix_db", "v1.2", "Refactor"])


@st.composite
def task_lines(draw: st.DrawFn) -> str:
    bullet = draw(st.sampled_from(["-", "*", "+"]))
    gap = draw(st.sampled_from([" ", "  ", "\t"]))
    box = draw(st.sampled_from([" ", "/", "x", "X", "-", "?", ""]))
    prio = draw(st.sampled_from(["", "[P1] ", "[P3]  ", "[p2]", "[Px] "]))
    ident = draw(st.one_of(st.just(""), IDS.map(lambda i: f"{i}: ")))
    return f"{bullet}{gap}[{box}] {prio}{ident}{draw(WORDS)}"


@st.composite
def child_lines(draw: st.DrawFn) -> str:
    indent = draw(st.sampled_from(["  ", "    ", "\t"]))
    kind = draw(st.sampled_from(["depends", "blocked", "sub", "note"]))
    if kind == "depends":
        key = draw(st.sampled_from(["dependsOn", "depends-on", "DEPENDSON"]))
        return f"{indent}- {key}: {', '.join(draw(st.lists(IDS, max_size=3)))}"
    if kind == "blocked":
        key = draw(st.sampled_from(["blockedBy", "blocked-by"]))
        return f"{indent}- {key}: barrier-{draw(st.integers(0, 9))}, b{draw(st.integers(0, 9))}"
    if kind == "sub":
        return f"{indent}{draw(task_lines())}"
    return f"{indent}{draw(WORDS)}"


FRAGMENTS = st.one_of(
    task_lines(),
    task_lines(),
    child_lines(),
    child_lines(),
    st.sampled_from(
        [
            "",
            "# Wild Loop Tasks",
            "<!-- comment -->",
            "<!--",
            "-->",
            "```",
            "~~~",
            "  ````",
            "~~~~",
            "- dependsOn: task-001",
            "prose: about task-040",
        ]
    ),
    WORDS,
)


@st.composite
def task_files(draw: st.DrawFn) -> str:
    bodies = draw(st.lists(FRAGMENTS, max_size=20))
    endings = [draw(ENDINGS) for _ in bodies]
    text = "".join(b + e for b, e in zip(bodies, endings, strict=True))
    cut_last_ending = draw(st.booleans())
    if bodies and cut_last_ending:
        text = text[: -len(endings[-1])]  # a last line without its ending
    return text


def _changed_indexes(before: str, after: str) -> set[int]:
    old, new = split_lines(before), split_lines(after)
    assert len(old) == len(new)
    return {i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b}


def _without_spans(tasks: tuple[Task, ...]) -> list[Task]:
    return [task._replace(span=Span(0, 0)) for task in tasks]


@given(st.text())
def test_round_trip_of_any_text(text: str) -> None:
    doc = parse(text)
    assert render(doc) == text


# "\udcff" is how store.read_text keeps a byte that is not UTF-8.
@given(st.text(alphabet=st.sampled_from(list("-*+ \t[]/xX?P1:<!->`~\r\nabé\udcff")), max_size=80))
def test_garbage_never_raises_from_parse_or_edits(text: str) -> None:
    assert render(parse(text)) == text
    for task_id in ("task-001", "a1"):
        set_status(text, task_id, "complete")
    renamed = assign_missing_ids(text)
    assert all(task.id is not None for task in parse(renamed).tasks)
    added, new_id = add_task(text, text, depends_on=(text,))
    assert find(parse(added), new_id) is not None


@given(task_files())
def test_round_trip_of_plausible_task_files(text: str) -> None:
    doc = parse(text)
    assert render(doc) == text
    assert "".join(doc.lines) == text
    for task in doc.tasks:
        assert 0 <= task.span.start < task.span.end <= len(doc.lines)


@given(task_files(), st.sampled_from(STATUSES), st.data())
def test_set_status_changes_only_the_task_line(
    text: str, status: TaskStatus, data: st.DataObject
) -> None:
    text = "- [/] [P1] task-077: anchor, so every example has a task to edit\n" + text
    doc = parse(text)
    ids = [task.id for task in doc.tasks if task.id is not None]
    task_id = data.draw(st.sampled_from(ids))
    task = find(doc, task_id)
    assert task is not None
    after = set_status(text, task_id, status)
    assert _changed_indexes(text, after) <= {task.span.start}
    edited = find(parse(after), task_id)
    assert edited == task._replace(status=status)


def _set_status_by_parsing(text: str, task_id: str, status: TaskStatus) -> str:
    """What set_status must do, the slow way: parse, find, rewrite the first `[` of its line."""
    doc = parse(text)
    task = find(doc, task_id)
    if task is None or task.status == status:
        return text
    lines = list(doc.lines)
    line = lines[task.span.start]
    at = line.index("[") + 1
    box = {"todo": " ", "in-progress": "/", "complete": "x", "cancelled": "-"}[status]
    lines[task.span.start] = line[:at] + box + line[at + 1 :]
    return "".join(lines)


@given(task_files(), IDS, st.sampled_from(STATUSES))
def test_set_status_agrees_with_a_full_parse(text: str, task_id: str, status: TaskStatus) -> None:
    assert set_status(text, task_id, status) == _set_status_by_parsing(text, task_id, status)


@given(task_files())
def test_assign_missing_ids_changes_only_lines_of_tasks_without_ids(text: str) -> None:
    doc = parse(text)
    after = assign_missing_ids(text)
    missing = [task for task in doc.tasks if task.id is None]
    assert _changed_indexes(text, after) == {task.span.start for task in missing}
    new_doc = parse(after)
    assert new_doc.problems == doc.problems
    assert len(new_doc.tasks) == len(doc.tasks)
    first = int(next_task_id(doc).removeprefix("task-"))
    new_ids = iter(f"task-{n:03d}" for n in range(first, first + len(missing)))
    expected = [task._replace(id=next(new_ids)) if task.id is None else task for task in doc.tasks]
    assert list(new_doc.tasks) == expected


@given(task_files(), WORDS, st.lists(IDS, max_size=3), st.integers(0, 5))
def test_add_task_only_appends(text: str, description: str, deps: list[str], prio: int) -> None:
    doc = parse(text)
    after, new_id = add_task(text, description, priority=prio, depends_on=deps)
    kept = split_lines(after)[: len(doc.lines)]
    assert [line.rstrip("\r\n") for line in kept] == [line.rstrip("\r\n") for line in doc.lines]
    assert "".join(kept[:-1]) == "".join(doc.lines[:-1])
    new_doc = parse(after)
    assert new_id not in {task.id for task in doc.tasks}
    assert _without_spans(new_doc.tasks[:-1]) == _without_spans(doc.tasks)
    added = new_doc.tasks[-1]
    assert (added.id, added.text, added.priority, added.depends_on) == (
        new_id,
        description.strip(),
        max(prio, 1),
        tuple(deps),
    )


@given(task_files(), st.sampled_from(STATUSES), st.data())
def test_reparse_after_set_status_equals_a_parse(
    text: str, status: TaskStatus, data: st.DataObject
) -> None:
    text = "- [/] [P1] task-077: anchor\n" + text
    doc = parse(text, "t.md")
    task_id = data.draw(st.sampled_from([t.id for t in doc.tasks if t.id is not None]))
    after = set_status(text, task_id, status)
    assert reparse(doc, after, "t.md") == parse(after, "t.md")


_BOXES = st.sampled_from(["[ ]", "[/]", "[x]", "[X]", "[-]", "[?]", "[]", "[ x]"])


@given(task_files(), st.data())
def test_reparse_after_any_box_changes_equals_a_parse(text: str, data: st.DataObject) -> None:
    doc = parse(text, "t.md")
    boxes = list(re.finditer(r"\[[^\]\n]{0,2}\]", text))
    after = text
    chosen = data.draw(st.lists(st.sampled_from(boxes), unique=True)) if boxes else []
    for box in sorted(chosen, key=lambda m: m.start(), reverse=True):  # later edits first
        after = after[: box.start()] + data.draw(_BOXES) + after[box.end() :]
    assert reparse(doc, after, "t.md") == parse(after, "t.md")


@given(task_files(), task_files())
def test_reparse_of_any_other_text_equals_a_parse(text: str, other: str) -> None:
    assert reparse(parse(text, "t.md"), other, "t.md") == parse(other, "t.md")


@given(task_files(), IDS)
def test_find_is_the_first_task_with_the_id(text: str, task_id: str) -> None:
    doc = parse(text, "t.md")
    first = next((task for task in doc.tasks if task.id == task_id), None)
    assert find(doc, task_id) is first


@pytest.mark.parametrize("line", ["- [ ] [P1] task-001 : Train", "- [x] task-7\t: Done"])
def test_an_id_typed_with_a_space_before_its_colon_is_reported_not_renamed(line: str) -> None:
    text = f"# Tasks\n\n{line}\n  - dependsOn: task-000\n"
    doc = parse(text)
    assert doc.tasks == ()
    task_id = line.rsplit("]", maxsplit=1)[-1].split(maxsplit=1)[0]
    assert doc.problems == (
        Problem(
            "tasks.md",
            3,
            f'task id "{task_id}" has a space before its ":"; write "{task_id}:" '
            "(until then the line is not read as a task, and is left as it is)",
        ),
    )
    assert assign_missing_ids(text) == text  # the human's line, byte for byte


def test_the_rare_patterns_are_compiled_only_when_first_used() -> None:
    """A well-formed tasks.md, read as a loop reads it on its way to its first agent, compiles
    neither the spaced-id pattern nor the relation-value one (issue 22 item 8): a fresh
    process, so no other test has used them yet."""
    script = (
        "from wild.parsers.tasks import parse\n"
        "from wild.parsers.tasks import grammar\n"
        "doc = parse('- [ ] [P1] task-001: Train\\n  - dependsOn: task-000, x-1\\n')\n"
        "assert doc.tasks and not doc.problems\n"
        "for pattern in (grammar.spaced_id, grammar.relation_value):\n"
        "    print(pattern.cache_info().currsize)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["0", "0"]


def test_prose_with_a_spaced_colon_is_still_a_task() -> None:
    doc = parse("- [ ] Refactor : the reader\n")
    assert [t.text for t in doc.tasks] == ["Refactor : the reader"]
    assert doc.problems == ()


def test_the_parsers_fast_task_builder_makes_the_record_task_makes() -> None:
    """`new_task` builds the tuple and sets Span's slots directly (a frozen dataclass's
    __init__ was a third of a parse): every field of Task and Span must be set, in order, to
    what `Task(...)` would hold."""
    subtask = Subtask("Load checkpoint files", "complete", 4)
    made = new_task(
        "task-003", "Analyze", 1, "in-progress", ("task-002",), ("b-1",), (subtask,), 2, 5, "true"
    )
    expected = Task(
        "task-003",
        "Analyze",
        1,
        "in-progress",
        ("task-002",),
        ("b-1",),
        (subtask,),
        Span(2, 5),
        "true",
    )
    assert made == expected
    assert type(made) is Task and type(made.span) is Span
    assert hash(made) == hash(expected)
    names = list(Task._fields)
    span_at = names.index("span")
    # A field added to Task (or Span) needs its argument in new_task, in the same place.
    assert list(inspect.signature(new_task).parameters) == [
        "task_id",
        *names[1:span_at],
        *(field.name for field in dataclasses.fields(Span)),
        *names[span_at + 1 :],
    ]
    with pytest.raises(AttributeError):
        made.status = "todo"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.span.start = 0  # type: ignore[misc]


@given(st.text(alphabet=" ,\t\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000\u200bab-1é", max_size=24))
def test_relation_ids_are_split_as_the_value_pattern_reads_them(values: str) -> None:
    """The parser splits a relation's ids with str methods (fast); `relation_value` states
    the rule."""
    doc = parse(f"- [ ] task-001: Train\n  - dependsOn: {values}\n  - blockedBy:{values}\n")
    assert not doc.problems
    (task,) = doc.tasks
    assert task.depends_on == tuple(relation_value().findall(values))
    assert task.blocked_by == tuple(relation_value().findall(values))


# --- a whole task with one match ------------------------------------------------------------


def _parse_line_by_line(text: str) -> TaskList:
    """`parse`, reading every line alone (the parser's general path, without `WHOLE_TASK`)."""
    lines = split_lines(text)
    parser = _Parser("tasks.md", whole_tasks=False)
    tasks = parser.run(text, lines, masking.scan(text))
    return TaskList(tuple(lines), tasks, tuple(parser.problems))


@st.composite
def task_blocks(draw: st.DrawFn) -> str:
    """A task line and the lines under it, mostly in the shape `WHOLE_TASK` reads whole."""
    head = draw(task_lines())
    children = draw(st.lists(child_lines(), max_size=3))
    prefix = draw(st.sampled_from(["", "", "", "[P12] ", "[P99999999999999999] ", "[P1x] "]))
    if prefix and head.startswith("- ["):
        head = head.replace("] ", f"] {prefix}", 1)
    endings = [
        draw(st.sampled_from(["\n", "\n", "\r\n", "\r\n\n"])) for _ in range(len(children) + 1)
    ]
    return "".join(line + end for line, end in zip([head, *children], endings, strict=True))


@given(st.lists(st.one_of(task_blocks(), task_blocks(), FRAGMENTS), max_size=12), st.booleans())
def test_reading_a_whole_task_at_once_agrees_with_reading_each_line(
    parts: list[str], cut_last_ending: bool
) -> None:
    text = "\n".join(parts)
    if cut_last_ending:
        text = text.rstrip("\n")
    assert parse(text) == _parse_line_by_line(text)


@given(
    st.lists(
        st.one_of(task_blocks(), task_blocks(), task_blocks(), FRAGMENTS.map(lambda f: f + "\n")),
        max_size=16,
    )
)
def test_tasks_one_after_another_are_read_alike_whole_or_line_by_line(parts: list[str]) -> None:
    """Tasks with no line between them are read one match after another, their lines never
    seen by the line loop (`_Parser.run`'s inner loop): the spans, relations, duplicates and
    problems must be what reading each line gives, wherever a run of them breaks (a subtask,
    a comment or fence, a tag not read yet, prose)."""
    text = "".join(parts)
    assert parse(text) == _parse_line_by_line(text)


def test_a_run_of_whole_tasks_stops_at_a_comment_and_a_new_tag() -> None:
    text = (
        "- [ ] t-1: a\n  - dependsOn: t-0\n- [x] [P1] t-2: b\n- [ ] [P1] t-3: c\n"
        "  - blockedBy: b-1\n<!-- note\n- [ ] t-9: hidden\n-->\n- [ ] t-4: d\n- [ ] t-1: e\n"
    )
    doc = parse(text)
    assert doc == _parse_line_by_line(text)
    assert [(t.id, t.span, t.priority) for t in doc.tasks] == [
        ("t-1", Span(0, 2), 2),
        ("t-2", Span(2, 3), 1),
        ("t-3", Span(3, 5), 1),
        ("t-4", Span(8, 9), 2),
        ("t-1", Span(9, 10), 2),
    ]
    assert [p.line for p in doc.problems] == [10]


def test_a_parse_sets_off_no_garbage_collection() -> None:
    """A parse's records are all kept and none is in a cycle: a collection during it would
    only walk them (~3 ms of a 10,000-task parse + select). The collector is held off during
    the parse and left on or off as it was found."""
    text = "".join(
        f"- [ ] task-{n}: step {n}\n  - dependsOn: task-{n - 1}\n" for n in range(1, 3001)
    )
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        doc = parse(text)
        assert gc.isenabled()
        gc.disable()
        parse(text)
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.callbacks.remove(count)
    assert len(doc.tasks) == 3000
    # At most the one young collection that finds the records as the collector resumes
    # (about a dozen young and one middle one without the pause).
    assert started in ([], [0])


def test_the_common_task_shape_is_read_with_one_match() -> None:
    """The shape of nearly every task in a big file: its relations come with it in one match
    (without, a 10,000-task parse matches twice as many lines)."""
    text = "- [x] [P1] task-002: Train it\r\n  - dependsOn: a, b c\n  - Blocked-By:x\n  - [ ] s\n"
    whole = WHOLE_TASK.match(text)
    assert whole is not None
    assert whole.groups() == ("x", "P1", "task-002", " Train it\r", " a, b c", "x")
    assert whole.end() == text.index("  - [ ]")
    assert parse(text) == _parse_line_by_line(text)
    for other in ("- [x] Train: it\n", "- [?] t-1: x\n", "  - [ ] t-1: x\n", "- [ ] t-1: x"):
        assert WHOLE_TASK.match(other) is None
