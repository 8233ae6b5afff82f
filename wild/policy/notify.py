"""Telling the human: batching by Context Switch Penalty, and running the Notify Command.

The batcher is pure logic with the time passed in. Blocking escalations go out at once (with
anything queued, so the human sees everything in one ping); non-blocking ones go out at most
once per penalty window, batched.
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from wild.process import run_captured, shell_argv
from wild.store import encode

# The message goes in the environment too, for commands that cannot read stdin; execve refuses
# oversized variables (E2BIG), so a long message is cut there and only stdin has all of it.
ENV_MESSAGE_CAP = 32 * 1024
DEFAULT_TIMEOUT_S = 30.0
_ERROR_TAIL = 300


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


def send_notification(command: str | None, message: str, *, timeout_s: float) -> str | None:
    """Run the policy's Notify Command with `message` on stdin (and in `$WILD_MESSAGE`).

    Returns None on success (or with no command) and a one-line error text otherwise; a
    failed notification must never stop the loop.
    """
    if command is None or not command.strip():
        return None
    env = dict(os.environ)
    env["WILD_MESSAGE"] = message[:ENV_MESSAGE_CAP]
    # The message reaches the command only as data (a file on stdin, a variable), never as code.
    with tempfile.NamedTemporaryFile(prefix="wild-notify-", suffix=".txt") as handle:
        handle.write(encode(message))
        handle.flush()
        try:
            result = run_captured(
                shell_argv(command), timeout_s=timeout_s, env=env, stdin=Path(handle.name)
            )
        except OSError as error:
            return (
                f"notify command could not start: {error}; check Notify Command in human-policy.md"
            )
    if result.timed_out:
        return (
            f"notify command timed out after {timeout_s:g} s; "
            "check Notify Command in human-policy.md"
        )
    if result.exit_code != 0:
        tail = " ".join(result.output.split())[-_ERROR_TAIL:]
        detail = f": {tail}" if tail else ""
        return (
            f"notify command exited with {result.exit_code}{detail}; "
            "check Notify Command in human-policy.md"
        )
    return None
