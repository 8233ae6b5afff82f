"""Telling the human: batching notifications by the Context Switch Penalty.

The batch is pure data with the time passed in; `decide` keeps it (wild/loop/notes.py) and the
loop's driver runs the Notify Command.
Blocking escalations go out at once (with anything queued, so the human sees everything in one
ping); non-blocking ones go out at most once per penalty window, batched.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from wild.record import record, replace


@record
class NoteBatch:
    """Non-blocking notifications held so the human is pinged at most once per penalty
    (`penalty_minutes`: the policy's Context Switch Penalty, given at each use, so a new
    policy applies to what is queued). `decide` keeps it in the loop's model."""

    queued: tuple[str, ...] = ()
    last_sent: datetime | None = None

    def _open(self, now: datetime, penalty_minutes: int) -> bool:
        penalty = timedelta(minutes=max(penalty_minutes, 0))
        return self.last_sent is None or now - self.last_sent >= penalty

    def _release(self, now: datetime, extra: tuple[str, ...]) -> tuple[NoteBatch, tuple[str, ...]]:
        return NoteBatch((), now), (*self.queued, *extra)

    def offer(
        self, message: str, now: datetime, *, blocking: bool, penalty_minutes: int
    ) -> tuple[NoteBatch, tuple[str, ...]]:
        """The batch after `message`, and the messages to send now, oldest first (none when
        this one was queued)."""
        if blocking or self._open(now, penalty_minutes):
            return self._release(now, (message,))
        return replace(self, queued=(*self.queued, message)), ()

    def flush_due(self, now: datetime, penalty_minutes: int) -> tuple[NoteBatch, tuple[str, ...]]:
        """Queued messages whose window has passed (none when none are due)."""
        if not self.queued or not self._open(now, penalty_minutes):
            return self, ()
        return self._release(now, ())

    def flush_all(self) -> tuple[NoteBatch, tuple[str, ...]]:
        """Every queued message, window or not: the loop is ending and would lose them."""
        return replace(self, queued=()), self.queued

    def next_due(self, penalty_minutes: int) -> datetime | None:
        """When `flush_due` will next return something, so the loop can sleep until then."""
        if not self.queued or self.last_sent is None:
            return None
        return self.last_sent + timedelta(minutes=max(penalty_minutes, 0))


def join_messages(messages: list[str]) -> str:
    """One text for one ping: a single message as it is, several under a count."""
    if len(messages) == 1:
        return messages[0]
    return f"{len(messages)} notifications from wild:\n\n" + "\n\n".join(messages)
