"""The strategy (all/any) and the three modes decide when the loop may end."""

from __future__ import annotations

import pytest

from wild.completion.verdict import CheckOutcome, completion, judge, tail

PASS = CheckOutcome("a", passed=True, ran=True, summary="ok")
FAIL = CheckOutcome("b", passed=False, ran=True, summary="exit 1")
NOT_RUN = CheckOutcome("c", passed=False, ran=False, summary="not approved")


def test_all_needs_every_check_and_any_needs_one() -> None:
    assert judge("all", [PASS, PASS]).holds
    assert not judge("all", [PASS, FAIL]).holds
    assert judge("any", [PASS, FAIL]).holds
    assert not judge("any", [FAIL, NOT_RUN]).holds
    assert judge("all", [PASS, FAIL, NOT_RUN]).failing == (FAIL, NOT_RUN)


def test_no_checks_hold_under_either_strategy() -> None:
    assert judge("all", []).holds and judge("any", []).holds


def test_a_check_that_did_not_run_stays_pending() -> None:
    assert (PASS.status, FAIL.status, NOT_RUN.status) == ("passing", "failing", "pending")


@pytest.mark.parametrize(
    ("mode", "says", "holds", "ending"),
    [
        ("verify", True, True, "end"),
        ("verify", True, False, "go-on"),
        ("verify", False, True, "go-on"),
        ("override", False, True, "end"),
        ("override", True, False, "go-on"),
        ("assist", True, False, "end"),
        ("assist", False, True, "go-on"),
    ],
)
def test_each_mode(mode: str, says: bool, holds: bool, ending: str) -> None:
    verdict = judge("all", [PASS if holds else FAIL])
    got = completion(mode, agent_says_complete=says, work_left=False, verdict=verdict)  # type: ignore[arg-type]
    assert got == ending


@pytest.mark.parametrize("mode", ["verify", "override", "assist"])
def test_open_work_never_ends_the_loop(mode: str) -> None:
    verdict = judge("all", [PASS])
    got = completion(mode, agent_says_complete=True, work_left=True, verdict=verdict)  # type: ignore[arg-type]
    assert got == "go-on"


def test_tail_keeps_the_end() -> None:
    assert tail("short\n") == "short"
    assert tail("x" * 10 + "END", limit=5) == "…xxEND"
