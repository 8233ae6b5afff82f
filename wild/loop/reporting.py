"""Tell the human: escalations and progress reports go to human.md and events.log; the notes
`decide` says to send (`SendNotes`: batched by the Context Switch Penalty in the model, see
wild/loop/notes.py) go to stdout and the policy's notify command."""

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
from wild.policy.notify import join_messages
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
        self._unapproved_said: set[str] = set()
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

    def ask(
        self,
        *,
        now: datetime,
        related: str,
        title: str,
        body: str,
        cause: str | None,
    ) -> None:
        """A blocking escalation: a QUESTION in human.md (`decide` sends it at once)."""
        update_text(
            self._paths.human,
            lambda text: human_md.append_question(
                text, timestamp=iso(now), related=related, title=title, body=body
            ),
            self._paths.lock,
            on_written=self._on_written,
        )
        self._events.append("escalation", cause=cause, related=related, blocking=True, reason=title)

    def notify(self, *, related: str, message: str, repeated: bool, cause: str | None) -> None:
        """A non-blocking note, recorded; a `repeated` one (the same text again: an agent
        repeating itself on the next work item) is not sent again (`decide` says so)."""
        self._events.append(
            "notification", cause=cause, related=related, message=message, repeated=repeated
        )

    def progress(self, *, now: datetime, summary: str, cause: str | None) -> None:
        update_text(
            self._paths.human,
            lambda text: human_md.append_report(text, timestamp=iso(now), report=summary),
            self._paths.lock,
            on_written=self._on_written,
        )
        self._events.append("progress-report", cause=cause, summary=summary)

    def deliver(self, policy: HumanPolicy, messages: tuple[str, ...]) -> None:
        """Send these notes as one ping: the terminal, and the Notify Command once approved."""
        text = join_messages(list(messages))
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
