"""Line splitting shared by every parser: only "\\n" ends a line, whatever else the text holds."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.lines import split_lines, undecodable_lines

# The rule as a regex (the way split_lines reads a text that holds any other break).
RULE = re.compile(r"[^\n]*\n|[^\n]+\Z")
# Every line break str.splitlines knows; only the first one ends a line in wild's files.
BREAKS = [*"\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", "\r\n"]


@given(st.lists(st.sampled_from([*BREAKS, "a", "é", " ", "\t", "漢", "\x00"]), max_size=30))
def test_split_lines_ends_lines_at_newlines_only(parts: list[str]) -> None:
    text = "".join(parts)
    lines = split_lines(text)
    assert lines == RULE.findall(text)
    assert "".join(lines) == text


def test_a_text_with_no_other_break_splits_as_one_with_them() -> None:
    """Both ways of splitting (str.splitlines when no other break is there) agree."""
    plain = "- [ ] task-1: é\n  - dependsOn: a\n\nlast"
    assert split_lines(plain) == ["- [ ] task-1: é\n", "  - dependsOn: a\n", "\n", "last"]
    for other in BREAKS[1:-1]:  # every break but \n (\r\n: the one line it ends)
        text = plain.replace("a\n", f"a{other}b\n")
        assert split_lines(text) == RULE.findall(text)
        assert len(split_lines(text)) == 4


@given(st.lists(st.text(st.sampled_from("ab\n\udc80\udcff\udc7f\u00e9\U0001f600")), max_size=4))
def test_a_line_holding_an_undecodable_byte_is_found_whatever_else_it_holds(
    lines: list[str],
) -> None:
    """Only a line that is not ASCII is searched (issue 22 item 8: the pattern is compiled
    when one first comes): the same lines are found as by searching each."""
    found = [problem.line for problem in undecodable_lines(lines, "tasks.md")]
    pattern = re.compile("[\udc80-\udcff]")
    assert found == [n for n, line in enumerate(lines, 1) if pattern.search(line)]
