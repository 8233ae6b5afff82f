"""Tell the human: escalations and progress reports go to human.md, events.log, stdout and
the policy's notify command, batched by the Context Switch Penalty unless blocking."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime

from wild.barriers.approvals import load_approvals
from wild.clock import iso
from wild.loop.disk_space import ALERT_TYPE, DiskWatch
from wild.loop.notify_command import send_notification
from wild.parsers import human as human_md
from wild.parsers.alerts import make_alert
from wild.paths import WildPaths
from wild.policy.model import HumanPolicy
from wild.policy.notify import NotificationBatcher, join_messages
from wild.policy.trust import NOTIFY_APPROVAL_ID
from wild.store.alerts_log import append_alert
from wild.store.events_log import EventLog
from wild.store.files import update_text
from wild.workspace import unapproved_notify

NOTIFY_TIMEOUT_S = 30.0
# (command, message, timeout) -> None on success, else a one-line error; tests pass a recorder.
SendNotification = Callable[..., str | None]


class Reporter:
    """One place that speaks to the human, so every channel says the same thing."""

    def __init__(
        self,
        paths: WildPaths,
        events: EventLog,
        out: Callable[[str], None],
        on_written: Callable[[bytes], None],
        *,
        send: SendNotification = send_notification,
        cause: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._send_command = send
        self._cause = cause  # what a delivery problem is logged as following from
        self._paths = paths
        self._events = events
        self._out = out
        self._on_written = on_written
        self._batcher: NotificationBatcher | None = None
        self._unapproved_said: set[str] = set()
        self._notified: set[str] = set()  # the notes' texts this loop has sent
        self._disk = DiskWatch(paths.root, out, self._disk_alert)

    def watch_disk(self) -> None:
        """One line and one alert when the disk under `.wild/` runs low (`disk_space`)."""
        self._disk.check()

    def _disk_alert(self, message: str) -> None:
        now = datetime.now(UTC)
        record = make_alert(
            now=now, severity="warning", source="wild", type=ALERT_TYPE, description=message
        )
        with contextlib.suppress(OSError):  # the disk may be full already: the line was said
            append_alert(self._paths.alerts, record)
            self._events.append("disk-low", cause=self._cause(), message=message)

    def say(self, text: str) -> None:
        """A line for the terminal (what the loop did, not a message to the human)."""
        self._out(text)

    def _batch(self, policy: HumanPolicy) -> NotificationBatcher:
        if self._batcher is None or self._batcher.penalty.total_seconds() != (
            policy.context_switch_penalty_minutes * 60
        ):
            old = self._batcher
            self._batcher = NotificationBatcher(policy.context_switch_penalty_minutes)
            if old is not None:  # keep what was queued and when we last pinged
                self._batcher.queued.extend(old.queued)
                self._batcher.last_sent = old.last_sent
        return self._batcher

    def ask(
        self,
        policy: HumanPolicy,
        *,
        now: datetime,
        related: str,
        title: str,
        body: str,
        cause: str | None,
    ) -> None:
        """A blocking escalation: a QUESTION in human.md, sent at once (never delayed)."""
        update_text(
            self._paths.human,
            lambda text: human_md.append_question(
                text, timestamp=iso(now), related=related, title=title, body=body
            ),
            self._paths.lock,
            on_written=self._on_written,
        )
        self._events.append("escalation", cause=cause, related=related, blocking=True, reason=title)
        message = f"wild needs you ({related}): {title}"
        if body.strip():
            message += f"\n{body.strip()}"
        message += f'\nAnswer with: wild --human-input "..." (or edit {self._paths.human})'
        self._send(policy, message, now, blocking=True)

    def notify(
        self, policy: HumanPolicy, *, now: datetime, related: str, message: str, cause: str | None
    ) -> None:
        """A non-blocking note; batched so the human is not pinged more than once per penalty,
        and sent once: the same text again (an agent repeating itself on the next work item)
        is only recorded, as `repeated`."""
        repeated = message in self._notified
        self._notified.add(message)
        self._events.append(
            "notification", cause=cause, related=related, message=message, repeated=repeated
        )
        if not repeated:
            self._send(policy, f"wild ({related}): {message}", now, blocking=False)

    def progress(
        self, policy: HumanPolicy, *, now: datetime, summary: str, cause: str | None
    ) -> None:
        update_text(
            self._paths.human,
            lambda text: human_md.append_report(text, timestamp=iso(now), report=summary),
            self._paths.lock,
            on_written=self._on_written,
        )
        self._events.append("progress-report", cause=cause, summary=summary)
        self._send(policy, f"Progress report {iso(now)}\n{summary}", now, blocking=False)

    def flush(self, policy: HumanPolicy, now: datetime) -> None:
        """Send batched notes whose window has passed."""
        due = self._batch(policy).flush_due(now)
        if due:
            self._deliver(policy, due)

    def flush_all(self, policy: HumanPolicy) -> None:
        """Send every batched note now, window or not: the loop is ending and would lose them."""
        if self._batcher is not None and self._batcher.queued:
            queued = list(self._batcher.queued)
            self._batcher.queued.clear()
            self._deliver(policy, queued)

    def next_flush(self) -> datetime | None:
        return self._batcher.next_due() if self._batcher is not None else None

    def wait_cap(self, timeout_s: float | None, now: datetime) -> float | None:
        """`timeout_s`, shortened so a sleep ends when the batched notes are due."""
        flush = self.next_flush()
        if flush is None:
            return timeout_s
        until_flush = max(0.0, (flush - now).total_seconds())
        return until_flush if timeout_s is None else min(timeout_s, until_flush)

    def _send(self, policy: HumanPolicy, message: str, now: datetime, *, blocking: bool) -> None:
        ready = self._batch(policy).offer(message, now, blocking)
        if ready:
            self._deliver(policy, ready)

    def _deliver(self, policy: HumanPolicy, messages: list[str]) -> None:
        text = join_messages(messages)
        self._out(f"📣 {text}")
        command = unapproved_notify(policy, load_approvals(self._paths.project))
        if command is not None:
            # The policy file is editable by the agent, so its command is code like a barrier's.
            if command not in self._unapproved_said:
                self._unapproved_said.add(command)
                self._events.append("notify-unapproved", cause=self._cause(), command=command)
                self._out(
                    f"⚠️  notify command not run: it is not approved yet; run "
                    f"wild --approve {NOTIFY_APPROVAL_ID} to allow `{command}`"
                )
            return
        error = self._send_command(policy.notify_command, text, timeout_s=NOTIFY_TIMEOUT_S)
        if error is not None:
            self._events.append("notify-failed", cause=self._cause(), error=error)
            self._out(f"⚠️  notify command failed: {error}")
