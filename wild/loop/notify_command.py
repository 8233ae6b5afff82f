"""Running the policy's Notify Command: the one place wild hands a message to the human's
own channel (a chat hook, a pager, mail)."""

from __future__ import annotations

import os
from pathlib import Path

from wild.process import run_captured, shell_argv
from wild.store.files import encode

# The message goes in the environment too, for commands that cannot read stdin; execve refuses
# oversized variables (E2BIG), so a long message is cut there and only stdin has all of it.
ENV_MESSAGE_CAP = 32 * 1024
DEFAULT_TIMEOUT_S = 30.0
_ERROR_TAIL = 300


def send_notification(command: str | None, message: str, *, timeout_s: float) -> str | None:
    """Run the policy's Notify Command with `message` on stdin (and in `$WILD_MESSAGE`).

    Returns None on success (or with no command) and a one-line error text otherwise; a
    failed notification must never stop the loop.
    """
    if command is None or not command.strip():
        return None
    env = dict(os.environ)
    env["WILD_MESSAGE"] = message[:ENV_MESSAGE_CAP]
    # Imported when a notification is sent: tempfile (with shutil and random) is not on the
    # way to the loop's first agent (issue 22).
    import tempfile  # noqa: PLC0415

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
