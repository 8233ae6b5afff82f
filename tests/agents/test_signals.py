"""Promise signals and tags: what counts, what is a mention, an example or an echo."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.agents.signals import (
    PROMISE_WORDS,
    AlertResolution,
    EventOutput,
    Signals,
    parse_signals,
    visible_text,
)

# text -> promises that count
PROMISE_TABLE = [
    ("Done.\n<promise>TASK_COMPLETE</promise>\n", ("TASK_COMPLETE",)),
    ("<promise>COMPLETE</promise>", ("COMPLETE",)),
    ("  <promise> alert_resolved </promise>  \r\n", ("ALERT_RESOLVED",)),
    ("<promise>MONITORING_COMPLETE</promise>", ("MONITORING_COMPLETE",)),
    (
        "<promise>HUMAN_INPUT_PROCESSED</promise>\n<promise>TASK_COMPLETE</promise>",
        ("HUMAN_INPUT_PROCESSED", "TASK_COMPLETE"),
    ),
    ("<promise>NEEDS_HUMAN</promise>", ("NEEDS_HUMAN",)),
    ("<promise>COMPLETE</promise>\n<promise>COMPLETE</promise>", ("COMPLETE",)),
    # mentions: the tag shares its line with prose
    ("I will print <promise>COMPLETE</promise> when done.", ()),
    ("<promise>COMPLETE</promise> once the tests pass", ()),
    ("**<promise>COMPLETE</promise>**", ()),
    # examples and echoes: code blocks, inline code, quotes
    ("```\n<promise>COMPLETE</promise>\n```\n", ()),
    ("```text\n<promise>COMPLETE</promise>\n```\nstill working", ()),
    ("~~~~\n<promise>COMPLETE</promise>\n~~~~\n", ()),
    ("````\n```\n<promise>COMPLETE</promise>\n```\n````\n", ()),
    ("```\nunclosed fence\n<promise>COMPLETE</promise>\n", ()),
    ("<!--\n<promise>COMPLETE</promise>\n-->\n", ()),
    ("<!-- <promise>COMPLETE</promise> -->", ()),
    ("`<promise>COMPLETE</promise>`", ()),
    ("``<promise>COMPLETE</promise>``", ()),
    ("> <promise>COMPLETE</promise>", ()),
    ("   > quoted\n>  <promise>COMPLETE</promise>", ()),
    # a closed fence ends the code: the next line counts
    ("```\nexample\n```\n<promise>COMPLETE</promise>", ("COMPLETE",)),
    # a stray backtick opens nothing
    ("it's a ` tick\n<promise>COMPLETE</promise>", ("COMPLETE",)),
    # unknown words and half tags are not signals
    ("<promise>DONE</promise>", ()),
    ("<promise>COMPLETE", ()),
    ("promise COMPLETE", ()),
    ("", ()),
]


@pytest.mark.parametrize(("text", "promises"), PROMISE_TABLE)
def test_promise_table(text: str, promises: tuple[str, ...]) -> None:
    assert parse_signals(text).promises == promises


def test_mentions_are_reported_with_their_line() -> None:
    signals = parse_signals("Working.\nI will print <promise>COMPLETE</promise> when done.\n")
    assert signals.problems == (
        "line 2: <promise>COMPLETE</promise> shares its line with other text, so it is a "
        "mention, not a signal; put the tag alone on its own line",
    )


def test_unknown_promise_words_are_reported() -> None:
    signals = parse_signals("<promise>DONE</promise>")
    assert signals == Signals(
        problems=(
            "line 1: unknown promise 'DONE'; known: TASK_COMPLETE, ALERT_RESOLVED, "
            "MONITORING_COMPLETE, NEED_HUMAN_INPUT, NOTIFY_HUMAN, HUMAN_INPUT_PROCESSED, COMPLETE, "
            "NEEDS_HUMAN, CONTINUE",
        ),
    )


def test_tags_in_code_are_reported_as_ignored() -> None:
    signals = parse_signals("Example:\n```\n<promise>COMPLETE</promise>\n```\n`<event_output>`\n")
    assert signals.problems == (
        "line 3: <promise> inside a code block, an HTML comment, inline code or a quote is "
        "not a signal",
        "line 5: <event_output> inside a code block, an HTML comment, inline code or a quote is "
        "not a signal",
    )


def test_need_human_input_with_reason_and_urgency() -> None:
    text = (
        "I tried everything.\n\n<promise>NEED_HUMAN_INPUT</promise>\n"
        "<reason>Tried 5 approaches, all failed. Need guidance.</reason>\n"
        "<urgency>HIGH</urgency>\n"
    )
    assert parse_signals(text) == Signals(
        promises=("NEED_HUMAN_INPUT",),
        reason="Tried 5 approaches, all failed. Need guidance.",
        urgency="high",
    )


def test_notify_human_with_reason_on_the_same_line_and_a_multiline_reason() -> None:
    text = "<promise>NOTIFY_HUMAN</promise> <reason>Progress on the\nhard issue, FYI</reason>"
    signals = parse_signals(text)
    assert signals.promises == ("NOTIFY_HUMAN",)
    assert signals.reason == "Progress on the\nhard issue, FYI"
    assert signals.urgency is None


def test_reason_inside_code_is_not_read() -> None:
    signals = parse_signals("`<reason>x</reason>`\n<promise>NOTIFY_HUMAN</promise>")
    assert signals.reason is None


def test_resolve_alert_json() -> None:
    text = (
        'Restarted.\n<resolve_alert>\n{"alert_id": "abc123def456", "choice": "continue_training"}'
        "\n</resolve_alert>\n"
    )
    assert parse_signals(text).resolutions == (
        AlertResolution("abc123def456", "continue_training", None),
    )


def test_resolve_alert_json_in_a_fence_inside_the_tag_and_numeric_id() -> None:
    text = '<resolve_alert>\n```json\n{"id": 7, "note": "lowered lr"}\n```\n</resolve_alert>'
    assert parse_signals(text).resolutions == (AlertResolution("7", None, "lowered lr"),)


def test_resolve_alert_key_value_text() -> None:
    text = (
        "<resolve_alert>\nalert_id: alert-9\nchoice: Stop Job\nnote: diverged at step 400\n"
        "</resolve_alert>"
    )
    assert parse_signals(text).resolutions == (
        AlertResolution("alert-9", "Stop Job", "diverged at step 400"),
    )


def test_resolve_alert_free_text_is_id_then_note() -> None:
    text = "<resolve_alert>alert-7: restarted the job with batch size 32</resolve_alert>"
    assert parse_signals(text).resolutions == (
        AlertResolution("alert-7", None, "restarted the job with batch size 32"),
    )


def test_resolve_alert_problems() -> None:
    text = (
        '<resolve_alert>{"alert_id": </resolve_alert>\n'
        '<resolve_alert>{"choice": "x"}</resolve_alert>\n'
        "<resolve_alert>[1]</resolve_alert>"
    )
    signals = parse_signals(text)
    assert signals.resolutions == ()
    assert signals.problems[0].startswith("line 1: <resolve_alert> is not valid JSON (")
    assert signals.problems[1:] == (
        "line 2: <resolve_alert> names no alert_id; it was ignored",
        "line 3: <resolve_alert> must hold a JSON object; it was ignored",
    )


def test_a_quoted_tag_does_not_swallow_the_real_one() -> None:
    text = "Use `<reason>` tags.\n<promise>NEED_HUMAN_INPUT</promise><reason>real</reason>"
    assert parse_signals(text).reason == "real"


def test_event_output() -> None:
    text = (
        '<event_output>\n{"status": "needs_human", "summary": "diverged", '
        '"new_events": [{"intent": "rerun"}], "artifacts": ["plots/loss.png"]}\n</event_output>\n'
        "<promise>NEEDS_HUMAN</promise>"
    )
    signals = parse_signals(text)
    assert signals.event_output == EventOutput(
        status="needs_human",
        summary="diverged",
        new_events=({"intent": "rerun"},),
        artifacts=("plots/loss.png",),
    )
    assert signals.promises == ("NEEDS_HUMAN",)
    assert signals.problems == ()


def test_event_output_defaults() -> None:
    signals = parse_signals('<event_output>{"status": "ok"}</event_output>')
    assert signals.event_output == EventOutput("ok", "", (), ())


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            '{"status": "great"}',
            "line 1: <event_output> status 'great' is not one of ok, retry, needs_human, failed; "
            "it was ignored",
        ),
        ("[]", "line 1: <event_output> must hold a JSON object; it was ignored"),
    ],
)
def test_malformed_event_output_is_ignored_and_reported(body: str, problem: str) -> None:
    signals = parse_signals(f"<event_output>{body}</event_output>")
    assert signals.event_output is None
    assert signals.problems == (problem,)


def test_event_output_that_is_not_json() -> None:
    signals = parse_signals("<event_output>{status: ok}</event_output>")
    assert signals.event_output is None
    assert len(signals.problems) == 1
    assert signals.problems[0].startswith("line 1: <event_output> is not valid JSON (")
    assert signals.problems[0].endswith("); it was ignored")


def test_event_output_with_a_non_list_is_kept_without_it() -> None:
    signals = parse_signals(
        '<event_output>{"status": "retry", "new_events": "x", "summary": 3}</event_output>'
    )
    assert signals.event_output == EventOutput("retry", "3", (), ())
    assert signals.problems == ("line 1: <event_output> new_events must be a list; it was ignored",)


def test_the_last_event_output_wins() -> None:
    text = (
        '<event_output>{"status": "retry"}</event_output>\n'
        '<event_output>{"status": "ok"}</event_output>'
    )
    signals = parse_signals(text)
    assert signals.event_output is not None
    assert signals.event_output.status == "ok"
    assert signals.problems == ("2 <event_output> blocks; only the last one is used",)


def test_has() -> None:
    signals = parse_signals("<promise>COMPLETE</promise>")
    assert signals.has("COMPLETE")
    assert not signals.has("TASK_COMPLETE")


def test_visible_text_keeps_length_and_newlines() -> None:
    text = "a `code` b\n```\nx\n```\n> q\r\nend"
    assert visible_text(text) == "a        b\n   \n \n   \n   \r\nend"


@given(st.text())
def test_garbage_never_raises_and_only_known_words_come_out(text: str) -> None:
    signals = parse_signals(text)
    assert set(signals.promises) <= set(PROMISE_WORDS)
    assert len(visible_text(text)) == len(text)


@given(
    st.lists(
        st.sampled_from(
            [
                "<promise>",
                "</promise>",
                "COMPLETE",
                "```",
                "`",
                "> ",
                "\n",
                " ",
                "<sweep>",
                "</sweep>",
                "<event_output>",
                "</event_output>",
                "{",
                "}",
                "<reason>",
                "</reason>",
            ]
        )
    ).map("".join)
)
def test_tag_soup_never_raises(text: str) -> None:
    parse_signals(text)
