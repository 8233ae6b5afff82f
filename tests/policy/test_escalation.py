"""Escalation decisions: seed 001's four checks with their blocking rules, threshold, presets."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from wild.parsers.alerts import Alert
from wild.parsers.policy import AutonomyLevel, EscalationThreshold
from wild.parsers.severity import Severity
from wild.policy.escalation import (
    NO_ESCALATION,
    Escalation,
    Urgency,
    progress_report_due,
    should_escalate,
    should_escalate_failures,
)
from wild.policy.model import EscalateOn, HumanPolicy
from wild.policy.presets import preset

CRITICAL = "Critical alert - policy requires human notification"
ALL = "Policy requires human confirmation for all alerts"


def _alert(severity: Severity) -> Alert:
    return Alert(
        id="alert-001",
        timestamp="2026-02-08T10:00:00Z",
        severity=severity,
        source="job-3",
        type="oom",
        description="CUDA out of memory",
        status="pending",
        context={},
        resolved_at=None,
        escalated_at=None,
        choices=(),
        raw={},
        line=1,
    )


def _policy(
    level: AutonomyLevel,
    threshold: EscalationThreshold,
    *,
    critical: bool = True,
    retries: int = 3,
    failures_rule: int = 3,
    stuck: int = 60,
) -> HumanPolicy:
    return replace(
        preset("semi-autonomous"),
        autonomy_level=level,
        escalation_threshold=threshold,
        max_retry_attempts=retries,
        escalate_on=EscalateOn(failures_rule, stuck, critical, unexpected_success=True),
    )


def _yes(reason: str, urgency: Urgency, blocking: bool) -> Escalation:
    return Escalation(True, reason, urgency, blocking)


_CASES: list[tuple[str, Severity, HumanPolicy, int, float, Escalation]] = [
    # Check 1: critical alerts; blocking only at low autonomy.
    ("critical low", "critical", _policy("low", "warnings"), 0, 0, _yes(CRITICAL, "high", True)),
    (
        "critical medium",
        "critical",
        _policy("medium", "warnings"),
        0,
        0,
        _yes(CRITICAL, "high", False),
    ),
    (
        "critical high",
        "critical",
        _policy("high", "critical-only"),
        0,
        0,
        _yes(CRITICAL, "high", False),
    ),
    (
        "critical rule off",
        "critical",
        _policy("medium", "warnings", critical=False),
        0,
        0,
        NO_ESCALATION,
    ),
    ("critical threshold never", "critical", _policy("low", "never"), 0, 0, NO_ESCALATION),
    (
        "critical beats failures",
        "critical",
        _policy("medium", "warnings"),
        9,
        999,
        _yes(CRITICAL, "high", False),
    ),
    # Check 2: attempts >= Max Retry Attempts; blocking unless autonomy is high.
    (
        "failures low",
        "warning",
        _policy("low", "critical-only"),
        3,
        0,
        _yes("Tried 3 times, still failing (max: 3)", "medium", True),
    ),
    (
        "failures medium",
        "warning",
        _policy("medium", "critical-only"),
        4,
        0,
        _yes("Tried 4 times, still failing (max: 3)", "medium", True),
    ),
    (
        "failures high",
        "warning",
        _policy("high", "critical-only"),
        3,
        0,
        _yes("Tried 3 times, still failing (max: 3)", "medium", False),
    ),
    ("failures below max", "warning", _policy("medium", "critical-only"), 2, 0, NO_ESCALATION),
    (
        "failures rule never",
        "warning",
        _policy("medium", "critical-only", failures_rule=0),
        9,
        0,
        NO_ESCALATION,
    ),
    (
        "failures threshold never",
        "info",
        _policy("medium", "never"),
        3,
        0,
        _yes("Tried 3 times, still failing (max: 3)", "medium", True),
    ),
    (
        "max 0 waits for one attempt",
        "info",
        _policy("high", "never", retries=0),
        0,
        0,
        NO_ESCALATION,
    ),
    (
        "max 0 after one attempt",
        "info",
        _policy("high", "never", retries=0),
        1,
        0,
        _yes("Tried 1 time, still failing (max: 0)", "medium", False),
    ),
    # Check 3: no progress for Stuck Duration; blocking only at low autonomy.
    (
        "stuck low",
        "info",
        _policy("low", "critical-only"),
        0,
        60,
        _yes("No progress for 60 minutes (threshold: 60)", "medium", True),
    ),
    (
        "stuck medium",
        "info",
        _policy("medium", "critical-only"),
        0,
        75.9,
        _yes("No progress for 75 minutes (threshold: 60)", "medium", False),
    ),
    ("not stuck yet", "info", _policy("low", "critical-only"), 0, 59.9, NO_ESCALATION),
    ("stuck rule never", "info", _policy("low", "critical-only", stuck=0), 0, 9999, NO_ESCALATION),
    # Check 4: low autonomy and threshold all; always blocking.
    ("low all", "info", _policy("low", "all"), 0, 0, _yes(ALL, "low", True)),
    # Check 5: severity at or above the threshold notifies without blocking.
    (
        "medium all info",
        "info",
        _policy("medium", "all"),
        0,
        0,
        _yes("Info alert - escalation threshold is all", "low", False),
    ),
    (
        "high all warning",
        "warning",
        _policy("high", "all"),
        0,
        0,
        _yes("Warning alert - escalation threshold is all", "medium", False),
    ),
    (
        "warnings warning",
        "warning",
        _policy("medium", "warnings"),
        0,
        0,
        _yes("Warning alert - escalation threshold is warnings", "medium", False),
    ),
    ("warnings info", "info", _policy("medium", "warnings"), 0, 0, NO_ESCALATION),
    ("critical-only warning", "warning", _policy("low", "critical-only"), 0, 0, NO_ESCALATION),
    ("never warning", "warning", _policy("low", "never"), 0, 0, NO_ESCALATION),
]


@pytest.mark.parametrize(
    ("severity", "policy", "attempts", "minutes", "expected"),
    [case[1:] for case in _CASES],
    ids=[case[0] for case in _CASES],
)
def test_should_escalate(
    severity: Severity, policy: HumanPolicy, attempts: int, minutes: float, expected: Escalation
) -> None:
    got = should_escalate(
        _alert(severity), policy, attempts=attempts, minutes_since_progress=minutes
    )
    assert got == expected


_PRESET_CASES: list[tuple[str, Severity, int, float, Escalation]] = [
    ("page_on_alert", "info", 0, 0, _yes("Info alert - escalation threshold is all", "low", False)),
    (
        "page_on_alert",
        "warning",
        0,
        0,
        _yes("Warning alert - escalation threshold is all", "medium", False),
    ),
    ("page_on_alert", "critical", 0, 0, _yes(CRITICAL, "high", False)),
    ("wild_night", "critical", 0, 0, _yes(CRITICAL, "high", False)),
    ("wild_night", "warning", 99, 9999, NO_ESCALATION),
    (
        "away_but_ping",
        "warning",
        0,
        0,
        _yes("Warning alert - escalation threshold is warnings", "medium", False),
    ),
    ("away_but_ping", "info", 0, 0, NO_ESCALATION),
    ("away_but_ping", "info", 5, 0, _yes("Tried 5 times, still failing (max: 5)", "medium", False)),
    ("balanced", "critical", 0, 0, NO_ESCALATION),
    ("balanced", "critical", 3, 0, _yes("Tried 3 times, still failing (max: 3)", "medium", True)),
    ("interactive", "info", 0, 0, _yes(ALL, "low", True)),
    ("hands-off", "critical", 99, 9999, NO_ESCALATION),
]


@pytest.mark.parametrize(("name", "severity", "attempts", "minutes", "expected"), _PRESET_CASES)
def test_presets_escalate_as_seed_002_describes(
    name: str, severity: Severity, attempts: int, minutes: float, expected: Escalation
) -> None:
    got = should_escalate(
        _alert(severity), preset(name), attempts=attempts, minutes_since_progress=minutes
    )
    assert got == expected


def test_repeated_task_failures() -> None:
    semi = preset("semi-autonomous")
    assert should_escalate_failures("task-003", semi, 2) == NO_ESCALATION
    assert should_escalate_failures("task-003", semi, 3) == _yes(
        "task-003 failed 3 times in a row (escalate after 3)", "medium", True
    )
    assert should_escalate_failures("task-009", preset("autonomous"), 5) == _yes(
        "task-009 failed 5 times in a row (escalate after 5)", "medium", False
    )
    assert should_escalate_failures("task-003", preset("hands-off"), 100) == NO_ESCALATION


def test_progress_report_due() -> None:
    start = datetime(2026, 2, 8, 10, tzinfo=UTC)
    hourly = preset("semi-autonomous")
    assert not progress_report_due(hourly, None, start, start + timedelta(minutes=59))
    assert progress_report_due(hourly, None, start, start + timedelta(minutes=60))
    last = start + timedelta(hours=1)
    assert not progress_report_due(hourly, last, start, last + timedelta(minutes=30))
    assert progress_report_due(hourly, last, start, last + timedelta(minutes=61))
    assert not progress_report_due(preset("hands-off"), None, start, start + timedelta(days=9))
