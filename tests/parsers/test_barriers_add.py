"""add_barrier: a new block appended, nothing else touched; an existing id left alone."""

from __future__ import annotations

from wild.parsers import barriers as barriers_md

FIELDS = [("Type", "manual"), ("Description", "two\nlines"), ("Blocks", "task-002")]


def test_a_barrier_is_appended_and_reads_back() -> None:
    text = "# Wild Loop Barriers\n\n## [WAITING] a\n- Type: manual\n"
    new = barriers_md.add_barrier(text, "sweep-s1-done", FIELDS)
    assert new == text + (
        "\n## [WAITING] sweep-s1-done\n- Type: manual\n- Description: two lines\n"
        "- Blocks: task-002\n"
    )
    doc = barriers_md.parse(new)
    assert doc.problems == ()
    assert [b.id for b in doc.barriers] == ["a", "sweep-s1-done"]
    assert barriers_md.add_barrier(new, "sweep-s1-done", FIELDS) == new


def test_an_unclosed_comment_is_closed_first() -> None:
    new = barriers_md.add_barrier("<!-- open\n", "b", FIELDS)
    assert [b.id for b in barriers_md.parse(new).barriers] == ["b"]
