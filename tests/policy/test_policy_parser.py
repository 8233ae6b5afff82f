"""human-policy.md parsing: goldens, tolerant values, lossless round trip, and apply_policy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.lines import Problem, Span, body, split_lines
from wild.parsers.policy import (
    HistoryEntry,
    apply_policy,
    parse,
    read_count,
    read_duration,
    read_flag,
    read_minutes,
    read_mode,
    read_threshold,
    render,
)
from wild.paths import TEMPLATES_DIR
from wild.policy.model import EscalateOn, HumanPolicy, policy_from_document

GOLDEN = Path(__file__).parent.parent / "parsers" / "golden"
TEMPLATE = TEMPLATES_DIR / "human-policy.md"

SEED_INSTRUCTIONS = (
    "I'm stepping away for 6 hours. GPUs are all yours. Try everything you can to make "
    "progress.\n\nDO NOT stop the loop for minor issues - be creative and try alternatives.\n\n"
    "ONLY escalate to me if:\n- You've tried 5 different approaches and all failed\n"
    "- Critical system failure (cluster down, data corruption)\n"
    "- Unexpected breakthrough that changes the plan significantly\n\n"
    "Otherwise, keep going. I trust you."
)


def test_seed_example_parses_to_exactly_its_values() -> None:
    text = (GOLDEN / "policy_seed001.md").read_text()
    doc = parse(text)
    assert doc.problems == ()
    assert doc.title == "Autonomous Mode (6 hours)"
    assert doc.title_line == 3
    assert doc.current == Span(2, 37)
    assert body(doc.lines[37]) == "---"
    assert (doc.active_from, doc.duration, doc.expires_at) == (
        "2026-02-08T10:00:00Z",
        "6 hours",
        "2026-02-08T16:00:00Z",
    )
    assert doc.settings == {
        "mode": "autonomous",
        "autonomy level": "high",
        "max retry attempts": "5",
        "escalation threshold": "critical-only",
        "progress reports": "Every 30 minutes",
        "context switch penalty": "15 minutes",
    }
    assert doc.rules == {
        "repeated failures": "Escalate after 5 failed attempts",
        "stuck duration": "Escalate if no progress for 60 minutes",
        "critical alerts": "Always escalate",
        "unexpected success": "Notify me of breakthroughs",
    }
    assert doc.instructions == SEED_INSTRUCTIONS
    assert doc.history_span == Span(39, 48)
    assert doc.history == (
        HistoryEntry(
            "2026-02-08 09:00 - Interactive Mode",
            ("- Mode: interactive", "- Used during initial setup"),
            Span(41, 45),
        ),
        HistoryEntry(
            "2026-02-08 10:00 - Autonomous Mode",
            ("- Mode: autonomous", "- Long unattended run"),
            Span(45, 48),
        ),
    )
    assert policy_from_document(doc) == HumanPolicy(
        mode="autonomous",
        autonomy_level="high",
        max_retry_attempts=5,
        escalation_threshold="critical-only",
        progress_report_minutes=30,
        context_switch_penalty_minutes=15,
        escalate_on=EscalateOn(5, 60, critical_alerts=True, unexpected_success=True),
        command_approval="trusted",  # not in the seed's file: the autonomous default
        notify_command=None,
        instructions=SEED_INSTRUCTIONS,
        preset=None,
        active_from=datetime(2026, 2, 8, 10, tzinfo=UTC),
        expires_at=datetime(2026, 2, 8, 16, tzinfo=UTC),
    )


def test_template_parses_without_problems() -> None:
    doc = parse(TEMPLATE.read_text())
    assert doc.problems == ()
    assert doc.title == "Semi-Autonomous Mode"
    assert doc.settings["command approval"] == "required"
    assert doc.history == ()


def test_tolerant_golden_reads_what_humans_type_and_reports_the_rest() -> None:
    doc = parse((GOLDEN / "policy_tolerant.md").read_text())
    assert doc.title == "Hands Off Mode"
    assert doc.settings == {
        "mode": "Hands Off",
        "autonomy level": "MED",
        "max retry attempts": "lots",
        "escalation threshold": "critical",
        "progress reports": "1h30m",
        "context switch penalty": "none",
        "notify command": "`notify-send wild`",
    }
    assert doc.rules == {
        "repeated failures": "never",
        "stuck duration": "hourly",
        "unexpected success": "Don't notify me",
    }
    assert doc.instructions == "Use the small cluster.\n\n```\n## not a heading\n---\n```"
    assert [entry.heading for entry in doc.history] == [
        "2026-02-07 09:00 - Interactive Mode",
        "2026-02-07 18:00 - Autonomous Mode",
    ]
    assert [str(problem) for problem in doc.problems] == [
        'human-policy.md:8: Expires At "tomorrow-ish" is not a time like '
        "2026-02-08T16:00:00Z, in years 1 to 9999 UTC; wild ignores it",
        'human-policy.md:9: unknown field "Owner"; wild reads Active From, Duration and '
        "Expires At here",
        'human-policy.md:15: Max Retry Attempts "lots" is not a whole number like 3, '
        "at most 1000000; the mode's default applies",
        'human-policy.md:20: duplicate "Mode"; the first one (line 13) applies',
        'human-policy.md:21: unknown setting "Colour"; wild knows Mode, Preset, Autonomy '
        "Level, Max Retry Attempts, Escalation Threshold, Progress Reports, Context Switch "
        "Penalty, Command Approval, Notify Command",
        'human-policy.md:22: not a "- **Key:** value" line; wild ignores it',
        'human-policy.md:23: "Critical Alerts" belongs under ### Escalation Rules; wild '
        "ignores it here",
        'human-policy.md:31: unknown section "Budget"; wild ignores it',
    ]
    assert policy_from_document(doc) == HumanPolicy(
        mode="hands-off",
        autonomy_level="medium",
        max_retry_attempts=10,  # "lots": the hands-off default
        escalation_threshold="critical-only",
        progress_report_minutes=90,
        context_switch_penalty_minutes=0,
        escalate_on=EscalateOn(0, 60, critical_alerts=False, unexpected_success=False),
        command_approval="trusted",
        notify_command="notify-send wild",
        instructions="Use the small cluster.\n\n```\n## not a heading\n---\n```",
        active_from=datetime(2026, 2, 8, 22, tzinfo=UTC),
        expires_at=None,
    )


def test_bad_values_name_their_line_and_file() -> None:
    text = "## Current Policy: X\n### Settings\n- **Mode:** turbo\n- **Autonomy Level:** max\n"
    doc = parse(text, file=".wild/human-policy.md")
    assert [str(problem) for problem in doc.problems] == [
        '.wild/human-policy.md:3: Mode "turbo" is not one of interactive, semi-autonomous, '
        "autonomous, hands-off; the mode's default applies",
        '.wild/human-policy.md:4: Autonomy Level "max" is not one of low, medium, high; '
        "the mode's default applies",
    ]


def test_missing_current_policy_and_missing_mode_are_reported() -> None:
    assert parse("").problems == (
        Problem(
            "human-policy.md",
            1,
            'no "## Current Policy" section; the default semi-autonomous policy applies '
            "(run wild --update-policy MODE to write one)",
        ),
    )
    assert [str(p) for p in parse("# Human Policy\n\n## Current Policy: X\n").problems] == [
        "human-policy.md:3: the current policy has no Mode setting; "
        'add "- **Mode:** semi-autonomous" under ### Settings'
    ]


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("Every 30 minutes", 30),
        ("30m", 30),
        ("30 min", 30),
        ("1h30m", 90),
        ("every 2 hours", 120),
        ("hourly", 60),
        ("Every hour", 60),
        ("45", 45),
        ("90s", 2),
        ("none", 0),
        ("None", 0),
        ("off", 0),
        ("Never escalate", 0),
        ("Escalate if no progress for 60 minutes", 60),
        ("soon", None),
    ],
)
def test_read_minutes(text: str, minutes: int | None) -> None:
    assert read_minutes(text) == minutes


@pytest.mark.parametrize(
    ("text", "flag"),
    [
        ("Always escalate", True),
        ("Notify me of breakthroughs", True),
        ("yes", True),
        ("Never escalate", False),
        ("Don't notify me", False),
        ("Don’t notify me", False),
        ("do not escalate", False),
        ("no", False),
        ("maybe", None),
    ],
)
def test_read_flag(text: str, flag: bool | None) -> None:
    assert read_flag(text) is flag


def test_read_other_values() -> None:
    assert read_count("Escalate after 5 failed attempts") == 5
    assert read_count("never") == 0
    assert read_count("lots") is None
    assert read_mode("Semi Autonomous") == "semi-autonomous"
    assert read_mode("hands_off") == "hands-off"
    assert read_mode("Autonomous Mode") == "autonomous"
    assert read_mode("turbo") is None
    assert read_threshold("Critical Only") == "critical-only"
    assert read_threshold("warning") == "warnings"
    assert read_threshold("some") is None
    assert read_duration("6 hours") == timedelta(hours=6)
    assert read_duration("1h 30m", whole=True) == timedelta(minutes=90)
    assert read_duration("about 6h", whole=True) is None


# --------------------------------------------------------------------------- round trip

_FRAGMENTS = [
    "# Human Policy",
    "## Current Policy: Autonomous Mode",
    "## Policy History",
    "### Settings",
    "### Escalation Rules",
    "### Instructions",
    "### 2026-02-08 10:00 - Autonomous Mode",
    "- **Mode:** autonomous",
    "- **Autonomy Level:** banana",
    "- Mode: interactive",
    "**Active From:** 2026-02-08T10:00:00Z  ",
    "**Duration:** 6 hours",
    "---",
    "```",
    "~~~",
    "## Notes",
    "",
    "  ",
    "\t- **Progress Reports:** every 5m\t",
]
_LINE = st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=20))


@st.composite
def _documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_LINE, max_size=25))
    endings = draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(lines)))
    text = "".join(line + end for line, end in zip(lines, endings, strict=False))
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    return text


@given(_documents())
def test_render_parse_is_identity(text: str) -> None:
    doc = parse(text)
    assert render(doc) == text
    for problem in doc.problems:
        assert 1 <= problem.line <= max(1, len(doc.lines))


@given(st.text())
def test_any_text_parses(text: str) -> None:
    assert render(parse(text)) == text


# --------------------------------------------------------------------------- apply_policy

_SECTION = (
    "## Current Policy: Hands-Off Mode\n\n### Settings\n\n- **Mode:** hands-off\n"
    "- **Max Retry Attempts:** 7\n\n### Instructions\n\nLeave me alone.\n"
)
_ENTRY = "### 2026-02-08 12:00 - Hands-Off Mode\n- Mode: hands-off\n- Duration: until changed\n"


def test_apply_policy_on_the_seed_changes_only_the_section_and_appends_history() -> None:
    text = (GOLDEN / "policy_seed001.md").read_text()
    lines = split_lines(text)
    out = apply_policy(text, _SECTION, history_entry=_ENTRY)
    assert out == ("".join(lines[:2]) + _SECTION + "\n" + "".join(lines[37:]) + "\n" + _ENTRY)


def test_apply_policy_on_an_empty_file_writes_a_full_document() -> None:
    assert apply_policy("", _SECTION, history_entry=_ENTRY) == (
        "# Human Policy\n\n" + _SECTION + "\n---\n\n## Policy History\n\n" + _ENTRY
    )


def test_apply_policy_keeps_garbage_above_and_keeps_crlf() -> None:
    out = apply_policy("garbage\r\nmore", _SECTION, history_entry=_ENTRY)
    expected = (
        "garbage\nmore\n\n# Human Policy\n\n" + _SECTION + "\n---\n\n## Policy History\n\n" + _ENTRY
    )
    assert out == expected.replace("\n", "\r\n")


def test_apply_policy_closes_an_unclosed_code_fence_first() -> None:
    out = apply_policy("notes\n```\ncode\n", _SECTION, history_entry=_ENTRY)
    assert out.startswith("notes\n```\ncode\n```\n\n# Human Policy\n")
    assert policy_from_document(parse(out)).max_retry_attempts == 7


def test_apply_policy_goes_before_an_existing_history_and_after_a_last_line() -> None:
    text = "# Human Policy\n\n## Policy History\n\n### old\n- Mode: interactive"
    out = apply_policy(text, _SECTION, history_entry=_ENTRY)
    assert out == (
        "# Human Policy\n\n"
        + _SECTION
        + "\n---\n\n## Policy History\n\n### old\n- Mode: interactive\n\n"
        + _ENTRY
    )


def test_apply_policy_keeps_a_section_after_the_history() -> None:
    text = "## Current Policy: A\n- x\n## Policy History\n### a\n## Notes\nmine\n"
    out = apply_policy(text, _SECTION, history_entry=_ENTRY)
    assert out == (_SECTION + "\n## Policy History\n### a\n\n" + _ENTRY + "\n## Notes\nmine\n")


@given(_documents())
def test_apply_policy_replaces_only_the_section_and_appends_one_entry(text: str) -> None:
    before = parse(text)
    out = apply_policy(text, _SECTION, history_entry=_ENTRY)
    after = parse(out)
    old_lines, new_lines = list(before.lines), split_lines(out)

    # The new policy is the one in force, with no problem inside it.
    assert after.current is not None
    section = [body(line) for line in new_lines[after.current.start : after.current.end]]
    assert "\n".join(section).rstrip("\n") + "\n" == _SECTION
    assert policy_from_document(after).max_retry_attempts == 7
    assert policy_from_document(after).instructions == "Leave me alone."
    assert [p for p in after.problems if after.current.start < p.line <= after.current.end] == []

    # Everything before the replaced (or inserted) section is untouched, and every other
    # line is still there in order (a last line may gain its ending, an unclosed code fence
    # its closing line).
    old_bodies = [body(line) for line in old_lines]
    new_bodies = [body(line) for line in new_lines]
    if before.current is not None:
        keep = before.current.start
        if before.history_span is not None and before.history_span.end <= keep:
            keep = before.history_span.end  # a history above the policy gets the entry there
        assert new_lines[:keep] == old_lines[:keep]
        assert _is_subsequence(old_bodies[before.current.end :], new_bodies[after.current.end :])
    else:
        keep = before.history_span.start if before.history_span else max(len(old_lines) - 1, 0)
        assert new_lines[:keep] == old_lines[:keep]
        assert _is_subsequence(old_bodies, new_bodies)

    # History: the old entries, then ours.
    old_history = parse(text).history
    new_history = after.history
    assert [entry.heading for entry in new_history] == [
        *(entry.heading for entry in old_history),
        "2026-02-08 12:00 - Hands-Off Mode",
    ]
    for old, new in zip(old_history, new_history, strict=False):
        assert new.lines[: len(old.lines)] == old.lines
    assert new_history[-1].lines == ("- Mode: hands-off", "- Duration: until changed")


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    items = iter(big)
    return all(any(line == other for other in items) for line in small)
