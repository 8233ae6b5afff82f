"""Code blocks and HTML comments: one rule, and every Markdown parser follows it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers import barriers, human, masking, policy, tasks
from wild.parsers.lines import split_lines
from wild.parsers.masking import Block

# (lines before the probe, lines after it, whether the probe is read); the same for every file.
CASES = [
    ("```\n", "```\n", False),
    ("~~~~ notes\n```\n", "~~~~~\n", False),  # a run of the other character closes nothing
    ("````\n```\n", "```\n````\n", False),  # nor does a shorter run
    ("  ```python\n", "  ```\n", False),  # indented under a list item
    ("\t~~~\n", "\t~~~\n", False),
    ("```x```\n", "", True),  # inline code, not a fence
    ("```\ncode\n```\n", "", True),
    ("```\n", "", False),  # left open: runs to the end
    ("<!--\n", "-->\n", False),
    ("<!-- a --> <!-- b\n", "-->\n", False),  # a second comment opens on the closing line
    ("<!-- one line -->\n", "", True),
    ("text <!-- not a comment block\n", "-->\n", True),  # after text, `<!--` opens nothing
    ("<!--\n", "", False),
    ("~~~\n<!--\n~~~\n", "", True),  # nothing opens inside a code block
    ("<!--\n```\n-->\n", "", True),  # nor inside a comment
]


def _task_seen(text: str) -> bool:
    return tasks.find(tasks.parse(text), "task-900") is not None


def _barrier_seen(text: str) -> bool:
    return barriers.find(barriers.parse(text), "probe") is not None


def _input_seen(text: str) -> bool:
    return any(item.content == "probe" for item in human.parse(text).inputs)


def _policy_seen(text: str) -> bool:
    return policy.parse(text).title == "Probe"


# Each file's probe: a record its parser reads when the lines are not masked.
PROBES: dict[str, tuple[str, Callable[[str], bool]]] = {
    "tasks.md": ("- [ ] task-900: probe\n", _task_seen),
    "barriers.md": ("## [WAITING] probe\n- Type: manual\n", _barrier_seen),
    "human.md": ("## [PENDING] 2026-02-08T12:00:00Z\n### Input:\nprobe\n---\n", _input_seen),
    "human-policy.md": (
        "## Current Policy: Probe\n### Settings\n- **Mode:** autonomous\n",
        _policy_seen,
    ),
}


@pytest.mark.parametrize("file", list(PROBES))
@pytest.mark.parametrize(("before", "after", "seen"), CASES)
def test_every_file_masks_the_same_lines(file: str, before: str, after: str, seen: bool) -> None:
    probe, is_seen = PROBES[file]
    text = before + probe + after
    assert is_seen(text) is seen
    first_probe_line = len(split_lines(before))
    assert masking.masked_lines(text)[first_probe_line] is not seen


def test_blocks_say_where_they_are_and_how_to_close_one_left_open() -> None:
    text = "a\n```py\nx\n```\n<!-- c\n-->\n````\ny"
    assert masking.scan(text) == (
        Block("code block", 1, 4, 2, 14, None),
        Block("HTML comment", 4, 6, 14, 25, None),
        Block("code block", 6, 8, 25, 31, "````"),
    )
    assert masking.left_open(masking.scan(text)) == masking.scan(text)[-1]
    assert masking.scan(text, until=14) == masking.scan(text)[:1]
    assert masking.masked_lines(text) == [False, True, True, True, True, True, True, True]
    assert masking.left_open(masking.scan("<!-- a -->\n")) is None


FRAGMENT = st.sampled_from(
    ["```", "~~~", "````", "  ```", "```x```", "<!--", "-->", "<!-- a -->", "a <!--", "x", ""]
)


@given(st.lists(FRAGMENT, max_size=12), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_blocks_cover_whole_lines_in_order(lines: list[str], eol: str, last_eol: bool) -> None:
    text = eol.join(lines) + (eol if last_eol and lines else "")
    count = len(split_lines(text))
    blocks = masking.scan(text)
    previous_end = 0
    for block in blocks:
        assert previous_end <= block.start < block.end <= count
        assert text[block.start_at : block.end_at] == "".join(
            split_lines(text)[block.start : block.end]
        )
        previous_end = block.end
    assert all(block.closer is None for block in blocks[:-1])
    assert len(masking.masked_lines(text)) == count


def test_markers_are_found_after_many_of_their_first_characters() -> None:
    """The scan looks for a marker from its first character (`<`, a backtick, `~`): one that
    stands alone, or starts something else, is passed over, not taken for the marker."""
    noise = "a < b, `x`, ~y, <!- no, `` no, ~~ no\n" * 50
    text = noise + "  <!--\n- [ ] task-1: hidden\n-->\n" + noise + "~~~\n" + noise + "~~~\n"
    opened = [(b.kind, b.start, b.end) for b in masking.scan(text)]
    assert opened == [("HTML comment", 50, 53), ("code block", 103, 155)]
    assert tasks.parse(text).tasks == ()
