"""Claude-style stream-json from recorded runs, and usage-limit replies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fake_agent import claude_events
from wild.agents.signals import parse_signals
from wild.agents.stream_json import (
    RateLimit,
    StreamJsonReader,
    StreamSummary,
    detect_rate_limit,
    reset_time,
)

FIXTURES = Path(__file__).parent / "fixtures"
NOW = datetime(2026, 2, 8, 10, 45, 23, tzinfo=UTC)
RECORDED_ANSWER = "The notes mention a promise tag, but the task is not finished yet."


def summarize(lines: list[bytes], now: datetime, *, failed: bool = False) -> StreamSummary:
    """Fold a whole recorded stream, as the runner does line by line."""
    reader = StreamJsonReader()
    for line in lines:
        reader.feed(line)
    return reader.summary(now, failed=failed)


def _lines(name: str) -> list[bytes]:
    return (FIXTURES / name).read_bytes().splitlines(keepends=True)


def _jsonl(events: list[dict[str, object]]) -> list[bytes]:
    return [orjson.dumps(event) + b"\n" for event in events]


def test_recorded_claude_run_reads_the_result_not_the_tool_output() -> None:
    # Recorded from claude 2.1.197 against tests/agents/claude_server.py: the model ran
    # `cat notes.txt`, whose content holds <promise>COMPLETE</promise>, then answered.
    lines = _lines("claude_tool_result_promise.jsonl")
    assert b"<promise>COMPLETE</promise>" in b"".join(lines)
    summary = summarize(lines, NOW)
    assert summary.final_text == RECORDED_ANSWER
    assert summary.cost_usd == 0.026999999999999996
    assert (summary.input_tokens, summary.output_tokens) == (2400, 600)
    assert summary.is_error is False
    assert summary.rate_limit is None
    assert (summary.events, summary.bad_lines) == (6, 0)
    assert parse_signals(summary.final_text).promises == ()


def test_without_a_result_event_the_last_assistant_text_is_the_final_text() -> None:
    lines = _lines("claude_tool_result_promise.jsonl")[:-1]  # killed before the result
    summary = summarize(lines, NOW)
    assert summary.final_text == RECORDED_ANSWER
    assert summary.cost_usd is None
    assert (summary.input_tokens, summary.output_tokens) == (None, None)


def test_text_blocks_of_one_message_are_joined_and_a_later_message_replaces_them() -> None:
    reader = StreamJsonReader()
    for text in ("first part", "second part"):
        reader.feed(
            orjson.dumps(
                {
                    "type": "assistant",
                    "message": {"id": "m1", "content": [{"type": "text", "text": text}]},
                }
            )
        )
    assert reader.final_text == "first part\nsecond part"
    reader.feed(
        orjson.dumps(
            {
                "type": "assistant",
                "message": {
                    "id": "m1",
                    "content": [
                        {
                            "type": "tool_use",
                            "name": "Bash",
                            "input": {"command": "echo '<promise>COMPLETE</promise>'"},
                        }
                    ],
                },
            }
        )
    )
    reader.feed(
        orjson.dumps(
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "content": "<promise>COMPLETE</promise>"}]
                },
            }
        )
    )
    assert reader.final_text == "first part\nsecond part"
    reader.feed(
        orjson.dumps(
            {
                "type": "assistant",
                "message": {
                    "id": "m2",
                    "content": [
                        {"type": "thinking", "thinking": "<promise>COMPLETE</promise>"},
                        {"type": "text", "text": "final"},
                    ],
                },
            }
        )
    )
    assert reader.final_text == "final"


def test_fake_agent_stream_with_a_promise_in_the_result() -> None:
    events = claude_events(
        "All green.\n<promise>TASK_COMPLETE</promise>",
        tool_result="<promise>COMPLETE</promise>",
        cost_usd=0.5,
        input_tokens=7,
        output_tokens=3,
    )
    summary = summarize(_jsonl(events), NOW)
    assert parse_signals(summary.final_text).promises == ("TASK_COMPLETE",)
    assert (summary.cost_usd, summary.input_tokens, summary.output_tokens) == (0.5, 7, 3)


def test_cache_tokens_count_as_input() -> None:
    line = orjson.dumps(
        {
            "type": "result",
            "result": "ok",
            "total_cost_usd": 1,
            "usage": {
                "input_tokens": 5,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 1000,
                "output_tokens": 9,
            },
        }
    )
    summary = summarize([line], NOW)
    assert (summary.cost_usd, summary.input_tokens, summary.output_tokens) == (1.0, 1105, 9)


def test_noise_lines_are_counted_and_skipped() -> None:
    lines = [
        b"[wild] heartbeat\n",
        b"not json\n",
        b"[1, 2]\n",
        b"\n",
        b'"text"\n',
        *_jsonl(claude_events("done")),
    ]
    summary = summarize(lines, NOW)
    assert summary.final_text == "done"
    assert (summary.events, summary.bad_lines) == (3, 4)


def test_bad_field_types_are_ignored() -> None:
    lines = [
        orjson.dumps({"type": "assistant", "message": "oops"}),
        orjson.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": 3}]}}),
        orjson.dumps({"type": "result", "result": None, "total_cost_usd": "1.0", "usage": []}),
        orjson.dumps({"type": "rate_limit_event", "rate_limit_info": "x"}),
    ]
    summary = summarize(lines, NOW)
    assert summary.final_text == ""
    assert (summary.cost_usd, summary.input_tokens, summary.rate_limit) == (None, None, None)


def test_recorded_429_is_a_rate_limit_without_a_reset_time() -> None:
    # Recorded from claude 2.1.197 with the API answering 429 (API-key mode names no reset).
    summary = summarize(_lines("claude_rate_limited_429.jsonl"), NOW)
    assert summary.is_error is True
    assert summary.final_text == (
        "API Error: Request rejected (429) · This request would exceed your account's rate "
        "limit. Please try again later."
    )
    assert summary.rate_limit == RateLimit(summary.final_text, None)
    assert summary.cost_usd == 0


def test_subscription_usage_limit_gives_the_reset_time() -> None:
    summary = summarize(_lines("claude_usage_limit.jsonl"), NOW)
    assert summary.rate_limit == RateLimit(
        "Claude AI usage limit reached|1760000400", datetime(2025, 10, 9, 9, 0, tzinfo=UTC)
    )
    assert summary.is_error is True


def test_a_rejected_rate_limit_event_alone_is_enough() -> None:
    line = orjson.dumps(
        {
            "type": "rate_limit_event",
            "rate_limit_info": {
                "status": "rejected",
                "resetsAt": 1771390800000,
                "rateLimitType": "seven_day",
            },
        }
    )
    summary = summarize([line], NOW, failed=True)
    assert summary.rate_limit == RateLimit(
        "seven_day limit reached", datetime(2026, 2, 18, 5, 0, tzinfo=UTC)
    )
    assert summarize([line], NOW).rate_limit is None  # the run went on and succeeded


def test_an_allowed_rate_limit_event_is_not_a_limit() -> None:
    line = orjson.dumps(
        {
            "type": "rate_limit_event",
            "rate_limit_info": {"status": "allowed", "resetsAt": 1771390800},
        }
    )
    assert summarize([line], NOW).rate_limit is None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Claude AI usage limit reached|1760000400", datetime(2025, 10, 9, 9, 0, tzinfo=UTC)),
        ("Claude AI usage limit reached|1760000400000", datetime(2025, 10, 9, 9, 0, tzinfo=UTC)),
        ("5-hour limit reached ∙ resets 12pm (UTC)", datetime(2026, 2, 8, 12, 0, tzinfo=UTC)),
        ("5-hour limit reached ∙ resets 9am (UTC)", datetime(2026, 2, 9, 9, 0, tzinfo=UTC)),
        (
            "You've hit your session limit · resets 12:50am (America/Los_Angeles)",
            datetime(2026, 2, 9, 8, 50, tzinfo=UTC),
        ),
        (
            "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).",
            datetime(2026, 2, 8, 16, 0, tzinfo=UTC),
        ),
        ("Weekly limit reached, resets at 17:30 (UTC)", datetime(2026, 2, 8, 17, 30, tzinfo=UTC)),
        (
            "You have reached your specified API usage limits. You will regain access on "
            "2026-04-01 at 00:00 UTC.",
            datetime(2026, 4, 1, 0, 0, tzinfo=UTC),
        ),
        (
            "Rate limit exceeded, try again in 90 seconds",
            datetime(2026, 2, 8, 10, 46, 53, tzinfo=UTC),
        ),
        ("Quota exceeded. Please retry in 2 hours.", datetime(2026, 2, 8, 12, 45, 23, tzinfo=UTC)),
        ("usage limit, resets 5", None),
        ("limit reached, resets 25pm (UTC)", None),
        ("usage limit reached", None),
    ],
)
def test_reset_times(line: str, expected: datetime | None) -> None:
    assert reset_time(line, NOW) == expected


def test_an_unknown_zone_falls_back_to_local_time() -> None:
    reset = reset_time("limit reached · resets 3pm (Mars/Olympus)", NOW)
    assert reset is not None
    assert reset.astimezone().hour == 15


def test_a_limit_with_a_reset_time_counts_only_when_the_run_failed() -> None:
    """A clean run that quotes a limit (a task title, its own summary) hit none."""
    text = "Working...\nClaude AI usage limit reached|1760000400\n"
    assert detect_rate_limit(text, NOW, failed=False) is None
    assert detect_rate_limit("The rate limit resets in 5 hours.", NOW, failed=False) is None
    assert detect_rate_limit(text, NOW, failed=True) == RateLimit(
        "Claude AI usage limit reached|1760000400", datetime(2025, 10, 9, 9, 0, tzinfo=UTC)
    )


def test_a_reply_quoting_a_limit_is_no_limit_without_the_clis_error() -> None:
    """Even a failed run: only the CLI's structured error (is_error, HTTP 429, a rejected
    rate_limit_event) says limit, never the model's words in its reply."""
    reply = orjson.dumps(
        {"type": "result", "is_error": False, "result": "Task: usage limit reached|1760000400"}
    )
    assert summarize([reply], NOW, failed=True).rate_limit is None
    error = orjson.dumps(
        {"type": "result", "is_error": True, "result": "Claude AI usage limit reached|1760000400"}
    )
    assert summarize([error], NOW, failed=True).rate_limit == RateLimit(
        "Claude AI usage limit reached|1760000400", datetime(2025, 10, 9, 9, 0, tzinfo=UTC)
    )


def test_a_bare_mention_counts_only_when_the_run_failed() -> None:
    text = "Implemented the rate limit middleware.\nAll tests pass."
    assert detect_rate_limit(text, NOW, failed=False) is None
    assert detect_rate_limit("Error: 429 Too Many Requests", NOW, failed=True) == RateLimit(
        "Error: 429 Too Many Requests", None
    )


def test_only_the_last_lines_are_searched() -> None:
    text = "Claude AI usage limit reached|1760000400\n" + "ok\n" * 30
    assert detect_rate_limit(text, NOW, failed=True) is None


@given(st.lists(st.binary(max_size=200)))
def test_garbage_lines_never_raise(lines: list[bytes]) -> None:
    summarize(lines, NOW, failed=True)


@given(st.text(max_size=300))
def test_garbage_limit_text_never_raises(text: str) -> None:
    detect_rate_limit(text, NOW, failed=True)
