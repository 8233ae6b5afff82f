"""What the loop's driver takes from outside, so a test can stand in for it: the agent runner,
the watcher it sleeps on, and the other parts a test replaces (`Hooks`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest
from wild.loop.notify_command import send_notification
from wild.loop.reporting import SendNotification
from wild.record import record
from wild.wake import WakeReason

if TYPE_CHECKING:
    from wild.loop.driver import Loop

Runner = Callable[[AgentRequest], AgentRun]


class Watcher(Protocol):
    """What the driver sleeps on: FolderWatcher, or a test's stand-in."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def wait_for_work(self, timeout: float | None) -> list[WakeReason]: ...


@record
class Hooks:
    """The parts a test replaces; None: the real thing."""

    watcher: Callable[[Loop], Watcher] | None = None
    barrier_checker: bool = True
    send_notification: SendNotification = send_notification
    signals: bool = True  # install SIGINT/SIGTERM handlers (on the main thread only)
