"""Liveness regressions: one out-of-range date, duration or number in a file is a problem for
that field, and an out-of-range flag value is a one-line error; neither crashes a command."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.cli_support import init_wild_dir, invoke
from wild.agents.stream_json import reset_time
from wild.barriers.checker import BarrierChecker
from wild.clock import later, parse_time
from wild.parsers import barriers, tasks
from wild.parsers.policy import read_count, read_duration, read_minutes
from wild.paths import WildPaths

NOW = datetime(2026, 2, 8, 12, tzinfo=UTC)


def _timed_policy(root: Path) -> Path:
    assert (
        invoke("--update-policy", "autonomous", "--duration", "6h", "--dir", str(root)).exit_code
        == 0
    )
    return root / "human-policy.md"


def test_a_date_before_year_one_in_utc_is_a_problem_line_not_a_crash(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    policy = _timed_policy(root)
    text = policy.read_text()
    start = next(line for line in text.splitlines() if line.startswith("**Active From:**"))
    policy.write_text(text.replace(start, "**Active From:** 0001-01-01T00:00:00+14:00  "))
    line_no = policy.read_text().splitlines().index("**Active From:** 0001-01-01T00:00:00+14:00  ")
    for command in ("--status", "--show-policy", "--list-work"):
        result = invoke(command, "--dir", str(root))
        assert result.exit_code == 0, result.output
    status = invoke("--status", "--dir", str(root)).output
    assert (
        f'{root}/human-policy.md:{line_no + 1}: Active From "0001-01-01T00:00:00+14:00" is not '
        "a time like 2026-02-08T16:00:00Z, in years 1 to 9999 UTC; wild ignores it"
    ) in status
    assert "Policy: autonomous" in status  # the rest of the policy still holds


def test_a_duration_past_year_9999_is_a_problem_line(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    policy = _timed_policy(root)
    text = policy.read_text()
    lines = [line for line in text.splitlines() if not line.startswith("**Expires At:**")]
    lines = [
        "**Duration:** 99999999999 days  " if line.startswith("**Duration:**") else line
        for line in lines
    ]
    policy.write_text("\n".join(lines) + "\n")
    status = invoke("--status", "--dir", str(root))
    assert status.exit_code == 0, status.output
    assert (
        'Duration "99999999999 days" is not a duration like "6 hours", at most 100 years '
        "(36525d); wild ignores it"
    ) in status.output


def test_a_policy_starting_near_year_9999_expires_at_the_end_of_time() -> None:
    start = parse_time("9999-12-31T23:00:00Z")
    assert start is not None
    assert later(start, timedelta(days=2)) == datetime.max.replace(tzinfo=UTC)


def test_update_policy_with_a_duration_too_long_is_a_one_line_error(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    result = invoke("--update-policy", "autonomous", "--duration", "99999999d", "--dir", str(root))
    assert result.exit_code == 2
    assert result.output == (
        'Error: --duration 99999999d: duration "99999999d" is too long; '
        "use at most 100 years (36525d)\n"
    )


def test_huge_numbers_are_out_of_range_not_errors() -> None:
    assert read_count("9" * 5000) is None
    assert read_count("Escalate after 5 failed attempts") == 5
    assert read_minutes("Every 99999999999999999999 minutes") is None
    assert read_minutes("Every 30 minutes") == 30
    assert read_duration("1" * 400 + " days") is None
    doc = tasks.parse(f"- [ ] [P{'9' * 5000}] task-{'9' * 5000}: big\n")
    assert next(p.message for p in doc.problems).startswith('bad priority "[P999')
    assert tasks.next_task_id(doc) == "task-001"


def test_a_barrier_interval_past_year_9999_is_a_problem_and_checking_goes_on(
    tmp_path: Path,
) -> None:
    doc = barriers.parse(
        "## [WAITING] b\n- Type: command-check\n- Check: true\n"
        f"- Interval: {'9' * 400}d\n- Last check: 9999-12-31T23:59:00Z\n"
    )
    assert any('Interval "' in p.message and "is not a duration" in p.message for p in doc.problems)
    far = barriers.parse(
        "## [WAITING] b\n- Type: command-check\n- Check: true\n"
        "- Interval: 36000d\n- Last check: 9999-12-31T23:59:00Z\n"
    )
    checker = BarrierChecker(
        WildPaths.resolve(str(tmp_path / ".wild")),
        wake=lambda _id: None,
        require_approval=lambda: False,
    )
    assert checker.due(far.barriers, datetime(9999, 12, 31, 23, 59, 30, tzinfo=UTC)) == []


def test_an_agent_reset_time_past_year_9999_is_not_read_as_one() -> None:
    assert reset_time(f"usage limit; try again in {'9' * 30} hours", NOW) is None
    assert reset_time("usage limit; try again in 2 hours", NOW) == NOW + timedelta(hours=2)
