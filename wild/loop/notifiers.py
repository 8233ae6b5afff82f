"""Notifiers as plug-ins: how a message reaches the human, found by name among the
`wild.notifiers` entry points (a site adds Slack or mail without forking wild).

The built-in `command` notifier runs the policy's Notify Command (wild.loop.notify_command);
it is what the loop uses unless told otherwise.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Protocol

from wild.errors import WildError
from wild.loop.notify_command import send_notification

ENTRY_POINT_GROUP = "wild.notifiers"
DEFAULT = "command"
# Found even before the package's entry points are installed (an editable checkout).
_BUILT_IN = {"command": "wild.loop.notifiers:CommandNotifier"}


class Notifier(Protocol):
    """Hands one message to the human's channel; `target` is the policy's Notify Command
    (its meaning is the notifier's). Returns None on success, else a one-line error: a
    failed notification never stops the loop."""

    name: str

    def send(self, target: str | None, message: str, *, timeout_s: float) -> str | None: ...


class CommandNotifier:
    """The policy's Notify Command, with the message on stdin and in $WILD_MESSAGE."""

    name = "command"

    def send(self, target: str | None, message: str, *, timeout_s: float) -> str | None:
        return send_notification(target, message, timeout_s=timeout_s)


def load_notifier(name: str = DEFAULT) -> Notifier:
    """The notifier registered under `name`; WildError naming the ones that exist."""
    found = {key: EntryPoint(key, value, ENTRY_POINT_GROUP) for key, value in _BUILT_IN.items()} | {
        ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)
    }
    if name not in found:
        raise WildError(
            f'no notifier "{name}" (installed: {", ".join(sorted(found))}); pick one of them, '
            f'or install the package that registers "{name}" under {ENTRY_POINT_GROUP}'
        )
    notifier: Notifier = found[name].load()()
    return notifier
