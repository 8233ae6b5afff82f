"""checks.md held to the checks a human accepted (issue 20 item 4), pure."""

from __future__ import annotations

from wild.parsers import checks as checks_md
from wild.policy.checks_trust import (
    baseline_from_json,
    baseline_of,
    baseline_to_json,
    hold_checks,
)

ACCEPTED = """# Completion Checks

- Strategy: all
- Mode: verify

## [PENDING] tests
- Type: tests-pass
- Command: pytest -q

## [PENDING] report
- Type: file-exists
- File: results/report.md
"""


def held(text: str, *, by_human: bool = False) -> tuple[tuple[str, ...], checks_md.CheckList]:
    recorded = baseline_of(checks_md.parse(ACCEPTED))
    found = hold_checks(checks_md.parse(text), recorded, by_human=by_human)
    return found.weakened, found.checks


def test_deleting_changing_or_loosening_a_check_is_held_and_the_old_check_stands() -> None:
    without_report = ACCEPTED[: ACCEPTED.index("## [PENDING] report")]
    weakened, checks = held(without_report)
    assert weakened == ("check report removed",)
    assert [(c.id, c.file) for c in checks.checks] == [
        ("tests", None),
        ("report", "results/report.md"),
    ]
    weakened, checks = held(ACCEPTED.replace("pytest -q", "true"))
    assert weakened == ("check tests changed",)
    assert checks.checks[0].command == "pytest -q"
    weakened, checks = held(ACCEPTED.replace("Strategy: all", "Strategy: any"))
    assert weakened == ("Strategy: any (wild keeps all)",) and checks.strategy == "all"
    weakened, checks = held(ACCEPTED.replace("Mode: verify", "Mode: assist"))
    assert weakened == ("Mode: assist (wild keeps verify)",) and checks.mode == "verify"
    commented = ACCEPTED.replace("## [PENDING] tests", "<!-- ## [PENDING] tests").replace(
        "pytest -q\n", "pytest -q -->\n"
    )
    assert held(commented)[0] == ("check tests removed",)


def test_adding_a_check_applies_at_once_and_joins_the_record() -> None:
    text = ACCEPTED + "\n## [PENDING] lint\n- Type: lint-passes\n- Command: ruff check\n"
    recorded = baseline_of(checks_md.parse(ACCEPTED))
    found = hold_checks(checks_md.parse(text), recorded)
    assert found.weakened == () and found.checks == found.file
    assert found.to_record == baseline_of(checks_md.parse(text))


def test_the_humans_own_edit_and_the_first_checks_seen_are_taken_as_they_stand() -> None:
    weakened, checks = held("# Completion Checks\n", by_human=True)
    assert weakened == () and checks.checks == ()
    first = hold_checks(checks_md.parse(ACCEPTED), None)
    assert first.weakened == () and first.to_record == baseline_of(first.file)


def test_the_record_round_trips_through_json_and_garbage_reads_as_none() -> None:
    recorded = baseline_of(checks_md.parse(ACCEPTED))
    assert baseline_from_json(baseline_to_json(recorded)) == recorded
    junk: list[object] = [
        None,
        [],
        {"strategy": "all"},
        {"strategy": "x", "mode": "verify", "checks": []},
        {"strategy": "all", "mode": "verify", "checks": [{"id": "a", "type": 3}]},
    ]
    assert [baseline_from_json(j) for j in junk] == [None] * len(junk)
