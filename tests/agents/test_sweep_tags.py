"""`<sweep>` blocks in an agent's reply: validated specs, or errors for its next prompt."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wild.agents import sweep_tags
from wild.agents.signal_tags import inert
from wild.agents.sweep_tags import refusal_text, sweeps_in_reply

GOOD = '{"name": "a", "base_command": "python t.py", "parameters": {"x": [1, 2]}}'


def test_a_sweep_tag_fenced_inside_is_read() -> None:
    tags = sweeps_in_reply(f"Plan.\n<sweep>\n```json\n{GOOD}\n```\n</sweep>\n")
    assert [s.name for s in tags.specs] == ["a"]
    assert tags.errors == ()


def test_malformed_sweeps_give_their_line_and_errors_and_no_spec() -> None:
    tags = sweeps_in_reply('ok\n<sweep>{"name": "a",}</sweep>\n')
    assert tags.specs == ()
    assert tags.errors == (
        "line 2: <sweep>: the sweep is not valid JSON: trailing comma is not allowed at line 1, "
        "column 13; send one JSON object",
    )
    assert refusal_text(tags.errors) == (
        "A <sweep> in your last reply was refused; nothing of it was launched. Fix these and "
        "send the whole <sweep> again:\n- " + tags.errors[0]
    )


def test_a_sweep_in_a_code_block_is_a_mention_and_is_reported() -> None:
    tags = sweeps_in_reply(f"```\n<sweep>{GOOD}</sweep>\n```\n")
    assert tags.specs == ()
    assert tags.errors == (
        "line 2: a <sweep> inside a code block, comment, inline code or quote is not a sweep; "
        "write the tag on its own lines",
    )


def test_an_unclosed_sweep_is_reported() -> None:
    assert sweeps_in_reply(f"<sweep>\n{GOOD}\n").errors == (
        "a <sweep> is not closed by </sweep> (or a </sweep> has no <sweep>)",
    )


def test_a_quoted_sweep_made_inert_is_no_sweep() -> None:
    assert not sweeps_in_reply(inert(f"<sweep>{GOOD}</sweep>")).found


def test_no_tag_no_sweep() -> None:
    assert not sweeps_in_reply("<promise>CONTINUE</promise>\n").found


@given(st.text(max_size=200))
def test_any_reply_is_read_without_raising(text: str) -> None:
    tags = sweeps_in_reply(text + "<sweep>" + text + "</sweep>")
    assert tags.found


_SPELLINGS = ["<sweep>", "</sweep>", "<SWEEP>", "</Sweep>", "<ſweep>", "</ſWEEP>", "<swe ep>"]


@given(st.lists(st.one_of(st.sampled_from([*_SPELLINGS, GOOD, "\n", "```\n", "> "]), st.text())))
def test_the_quick_answer_agrees_with_reading_the_reply_whole_in_any_case(parts: list[str]) -> None:
    # The quick answer for a reply with no tag in any case agrees with reading it whole.
    text = "".join(parts)
    assert sweeps_in_reply(text) == sweep_tags._read(text)
