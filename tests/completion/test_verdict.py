"""The strategy (all/any) judges the checks (the modes: tests/loop/test_completion.py)."""

from __future__ import annotations

from wild.completion.verdict import CheckOutcome, judge, tail

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


def test_tail_keeps_the_end() -> None:
    assert tail("short\n") == "short"
    assert tail("x" * 10 + "END", limit=5) == "…xxEND"
