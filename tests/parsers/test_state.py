"""state.json as bytes: what a state renders to and what bytes parse to, without a file."""

from __future__ import annotations

import pytest

from wild.errors import WildError
from wild.parsers.lines import Problem
from wild.parsers.state import (
    CurrentWork,
    LoadedState,
    LoopState,
    Unreadable,
    parse_state,
    push_summary,
    render_state,
)


def test_rendered_bytes_parse_back_to_the_same_state() -> None:
    state = LoopState(
        iteration=4,
        current_work=CurrentWork("task", "task-001", "2026-02-08T10:45:23Z", 2),
        recent_summaries=("a", "b"),
        extra={"xNote": [1, {"k": None}]},
    )
    assert parse_state(render_state(state), "state.json") == LoadedState(state, ())


@pytest.mark.parametrize(
    ("data", "found"),
    [
        (b"", LoadedState(LoopState(), ())),
        (b"  \n", LoadedState(LoopState(), ())),
        (b"[1, 2]", Unreadable(1, "not a JSON object")),
    ],
)
def test_empty_bytes_are_a_fresh_state_and_a_non_object_is_unreadable(
    data: bytes, found: LoadedState | Unreadable
) -> None:
    assert parse_state(data, "state.json") == found


def test_bad_json_is_unreadable_at_its_line() -> None:
    found = parse_state(b'{\n  "active": true,\n  oops\n}', "state.json")
    assert isinstance(found, Unreadable)
    assert found.line == 3 and found.what.startswith("not valid JSON (")


def test_odd_values_are_problems_naming_their_line() -> None:
    found = parse_state(b'{"format": 1,\n "iteration": "three"}', "s.json")
    assert found == LoadedState(
        LoopState(),
        (Problem("s.json", 2, 'iteration should be an integer, not "three"; used 0'),),
    )


def test_a_newer_format_is_refused() -> None:
    with pytest.raises(WildError, match="written by a newer wild"):
        parse_state(b'{"format": 99}', "state.json")


def test_push_summary_keeps_a_sliding_window() -> None:
    state = LoopState()
    for number in range(7):
        state = push_summary(state, f"s{number}")
    assert state.recent_summaries == ("s2", "s3", "s4", "s5", "s6")
    assert push_summary(state, "x", keep=2).recent_summaries == ("s6", "x")


def test_a_negative_total_is_a_problem_and_counts_nothing() -> None:
    """A negative total would give a spending cap room that was already spent."""
    found = parse_state(
        b'{"format": 1,\n "totalCostUsd": -40.5,\n "totalTokens": -9000,\n "iteration": 3}',
        "s.json",
    )
    assert found == LoadedState(
        LoopState(iteration=3),
        (
            Problem(
                "s.json",
                2,
                "totalCostUsd is negative (-40.5), and a total never goes down; used 0.0",
            ),
            Problem(
                "s.json", 3, "totalTokens is negative (-9000), and a total never goes down; used 0"
            ),
        ),
    )
