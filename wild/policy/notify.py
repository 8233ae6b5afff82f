"""Telling the human: batching notifications by the Context Switch Penalty.

The batcher is pure logic with the time passed in; the loop's driver runs the Notify Command.
Blocking escalations go out at once (with anything queued, so the human sees everything in one
ping); non-blocking ones go out at most once per penalty window, batched.
"""

from __future__ import annotations

from datetime import datetime, timedelta


class NotificationBatcher:
    """Holds non-blocking notifications so the human is pinged at most once per penalty."""

    def __init__(self, penalty_minutes: int) -> None:
        self.penalty = timedelta(minutes=max(penalty_minutes, 0))
        self.queued: list[str] = []
        self.last_sent: datetime | None = None

    def _window_open(self, now: datetime) -> bool:
        return self.last_sent is None or now - self.last_sent >= self.penalty

    def _release(self, now: datetime, extra: list[str]) -> list[str]:
        out = [*self.queued, *extra]
        self.queued.clear()
        self.last_sent = now
        return out

    def offer(self, message: str, now: datetime, blocking: bool) -> list[str]:
        """The messages to send now, oldest first (empty when this one was queued)."""
        if blocking or self._window_open(now):
            return self._release(now, [message])
        self.queued.append(message)
        return []

    def flush_due(self, now: datetime) -> list[str]:
        """Queued messages whose window has passed (empty when none are due)."""
        if not self.queued or not self._window_open(now):
            return []
        return self._release(now, [])

    def next_due(self) -> datetime | None:
        """When `flush_due` will next return something, so the loop can sleep until then."""
        if not self.queued or self.last_sent is None:
            return None
        return self.last_sent + self.penalty


def join_messages(messages: list[str]) -> str:
    """One text for one ping: a single message as it is, several under a count."""
    if len(messages) == 1:
        return messages[0]
    return f"{len(messages)} notifications from wild:\n\n" + "\n\n".join(messages)
