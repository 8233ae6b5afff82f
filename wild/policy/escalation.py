"""Whether to involve the human, and whether to wait for them: seed 001's policy engine checks.

`should_escalate` runs the seed's four checks in its order, first match wins, with the seed's
reasons, urgencies and blocking rules:

1. a critical alert when Critical Alerts is on: high, blocking only at low autonomy;
2. `attempts >= Max Retry Attempts`: medium, blocking unless autonomy is high;
3. no progress for Stuck Duration minutes: medium, blocking only at low autonomy;
4. low autonomy with threshold `all`: low, always blocking.

Then wild's reading of Escalation Threshold, which the seed declares but only uses in check 4:

5. a warning or info alert at or above the threshold (`all`: every alert, `warnings`: warnings)
   is a non-blocking notification (urgency medium for warnings, low for info). This is how
   `page_on_alert` pages on every alert and `away_but_ping` on warnings.

Threshold `never` means alerts never reach the human because of their severity: checks 1, 4
and 5 are off. Checks 2 and 3 still apply, since they are about the agent failing or stalling,
not about an alert, and have their own off switches: Repeated Failures `never` (0) turns check
2 off and Stuck Duration `never` (0) turns check 3 off. Check 2 also needs at least one attempt,
so Max Retry Attempts 0 means "after the first failure", not "before trying".
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from wild.output import plural
from wild.parsers.alerts import Alert
from wild.parsers.severity import Severity
from wild.policy.model import HumanPolicy
from wild.record import record

Urgency = Literal["low", "medium", "high"]


@record
class Escalation:
    """Seed 001's decision: escalate at all, why, how urgently, and whether to wait."""

    escalate: bool
    reason: str | None
    urgency: Urgency
    blocking: bool  # True: NEED_HUMAN_INPUT, wait on this item; False: NOTIFY_HUMAN, go on


NO_ESCALATION = Escalation(escalate=False, reason=None, urgency="low", blocking=False)

_THRESHOLD_REACHES: dict[str, tuple[Severity, ...]] = {
    "all": ("info", "warning"),
    "warnings": ("warning",),
}
_URGENCY: dict[Severity, Urgency] = {"info": "low", "warning": "medium", "critical": "high"}


def _failing(attempts: int, limit: int, policy: HumanPolicy, reason: str) -> Escalation | None:
    """The repeated-failure escalation (check 2), shared by alerts and tasks."""
    if policy.escalate_on.repeated_failures == 0 or attempts < max(limit, 1):
        return None
    return Escalation(True, reason, "medium", blocking=policy.autonomy_level != "high")


def should_escalate(
    alert: Alert, policy: HumanPolicy, *, attempts: int, minutes_since_progress: float
) -> Escalation:
    """Seed 001's `shouldEscalateToHuman` for one alert (see the module docstring)."""
    low = policy.autonomy_level == "low"
    threshold = policy.escalation_threshold
    by_severity = threshold != "never"

    if by_severity and alert.severity == "critical" and policy.escalate_on.critical_alerts:
        reason = "Critical alert - policy requires human notification"
        return Escalation(True, reason, "high", blocking=low)

    limit = policy.max_retry_attempts
    reason = f"Tried {plural(attempts, 'time')}, still failing (max: {limit})"
    failing = _failing(attempts, limit, policy, reason)
    if failing is not None:
        return failing

    stuck = policy.escalate_on.stuck_minutes
    if stuck and minutes_since_progress >= stuck:
        reason = f"No progress for {int(minutes_since_progress)} minutes (threshold: {stuck})"
        return Escalation(True, reason, "medium", blocking=low)

    if low and threshold == "all":
        reason = "Policy requires human confirmation for all alerts"
        return Escalation(True, reason, "low", blocking=True)

    if alert.severity in _THRESHOLD_REACHES.get(threshold, ()):
        reason = f"{alert.severity.capitalize()} alert - escalation threshold is {threshold}"
        return Escalation(True, reason, _URGENCY[alert.severity], blocking=False)

    return NO_ESCALATION


def should_escalate_failures(work: str, policy: HumanPolicy, failures: int) -> Escalation:
    """Escalate a task (or other work, named by `work`) that failed `failures` times in a row.

    Uses the Repeated Failures rule ("Escalate after N failed attempts"); blocking as check 2.
    """
    limit = policy.escalate_on.repeated_failures
    reason = f"{work} failed {plural(failures, 'time')} in a row (escalate after {limit})"
    return _failing(failures, limit, policy, reason) or NO_ESCALATION


def progress_report_due(
    policy: HumanPolicy, last_report: datetime | None, started_at: datetime, now: datetime
) -> bool:
    """Seed 001's `sendProgressReport` test: a report every Progress Reports minutes (0: none),
    counted from the last report, or from the start before the first one."""
    if policy.progress_report_minutes <= 0:
        return False
    since = last_report if last_report is not None else started_at
    return now - since >= timedelta(minutes=policy.progress_report_minutes)
