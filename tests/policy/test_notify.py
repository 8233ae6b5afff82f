"""Notification batching by Context Switch Penalty, and the notify command run through sh."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path

from wild.loop.notify_command import send_notification
from wild.policy.notify import NoteBatch, join_messages

T0 = datetime(2026, 2, 8, 10, tzinfo=UTC)


def _at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


class Batch:
    """The frozen batch threaded through a test like the loop's model threads it."""

    def __init__(self, penalty: int) -> None:
        self.batch = NoteBatch()
        self.penalty = penalty

    def offer(self, message: str, at: datetime, *, blocking: bool) -> list[str]:
        self.batch, ready = self.batch.offer(
            message, at, blocking=blocking, penalty_minutes=self.penalty
        )
        return list(ready)

    def flush_due(self, at: datetime) -> list[str]:
        self.batch, ready = self.batch.flush_due(at, self.penalty)
        return list(ready)

    def next_due(self) -> datetime | None:
        return self.batch.next_due(self.penalty)


def test_first_notification_goes_out_and_later_ones_wait_for_the_window() -> None:
    batcher = Batch(15)
    assert batcher.offer("a", _at(0), blocking=False) == ["a"]
    assert batcher.offer("b", _at(1), blocking=False) == []
    assert batcher.offer("c", _at(14), blocking=False) == []
    assert batcher.next_due() == _at(15)
    assert batcher.flush_due(_at(14.9)) == []
    assert batcher.flush_due(_at(15)) == ["b", "c"]
    assert batcher.flush_due(_at(40)) == []
    assert batcher.next_due() is None
    # The flush at 15 started a new window.
    assert batcher.offer("d", _at(29), blocking=False) == []
    assert batcher.offer("e", _at(30), blocking=False) == ["d", "e"]


def test_blocking_goes_out_at_once_with_everything_queued() -> None:
    batcher = Batch(15)
    assert batcher.offer("a", _at(0), blocking=False) == ["a"]
    assert batcher.offer("b", _at(2), blocking=False) == []
    assert batcher.offer("NEED INPUT", _at(3), blocking=True) == ["b", "NEED INPUT"]
    assert batcher.offer("again", _at(4), blocking=True) == ["again"]
    # A blocking ping also counts as a ping for the window.
    assert batcher.offer("c", _at(18), blocking=False) == []
    assert batcher.flush_due(_at(19)) == ["c"]


def test_no_penalty_sends_everything_at_once() -> None:
    batcher = Batch(0)
    assert [batcher.offer(m, _at(0), blocking=False) for m in "abc"] == [["a"], ["b"], ["c"]]


def test_flush_all_takes_what_is_queued_and_keeps_the_window() -> None:
    batch = NoteBatch(("b", "c"), _at(0))
    assert batch.flush_all() == (NoteBatch((), _at(0)), ("b", "c"))


def test_join_messages() -> None:
    assert join_messages(["only"]) == "only"
    assert join_messages(["a", "b"]) == "2 notifications from wild:\n\na\n\nb"


MESSAGE = "Alert alert-005: OOM in job 3\n$(touch pwned) `touch pwned2` 'quote' \"dq\" ; rm -x\n-n"


def test_notify_command_gets_the_exact_message_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "got.txt"
    command = (
        f'cat > {shlex.quote(str(out))}; printf %s "$WILD_MESSAGE" > {shlex.quote(str(out))}.env'
    )
    assert send_notification(command, MESSAGE, timeout_s=10) is None
    assert out.read_text() == MESSAGE
    assert Path(f"{out}.env").read_text() == MESSAGE
    # The message was data, never shell code.
    assert not (tmp_path / "pwned").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["got.txt", "got.txt.env"]


def test_notify_command_runs_in_sh_with_its_own_shell_syntax(tmp_path: Path) -> None:
    out = tmp_path / "lines.txt"
    command = f"wc -l | tr -d ' ' > {shlex.quote(str(out))}"
    assert send_notification(command, "one\ntwo\n", timeout_s=10) is None
    assert out.read_text() == "2\n"


def test_no_command_is_not_an_error() -> None:
    assert send_notification(None, "hello", timeout_s=10) is None
    assert send_notification("   ", "hello", timeout_s=10) is None


def test_failing_command_reports_exit_code_and_output() -> None:
    error = send_notification(
        "cat >/dev/null; echo 'webhook said no' >&2; exit 7", "x", timeout_s=10
    )
    assert error == (
        "notify command exited with 7: webhook said no; check Notify Command in human-policy.md"
    )


def test_slow_command_is_killed_at_its_timeout() -> None:
    assert send_notification("sleep 30", "x", timeout_s=0.2) == (
        "notify command timed out after 0.2 s; check Notify Command in human-policy.md"
    )
