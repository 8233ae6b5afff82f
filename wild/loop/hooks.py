"""What the loop's driver takes from outside, so a test can stand in for it: the agent runner
and the watcher it sleeps on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest
from wild.wake import WakeReason

Runner = Callable[[AgentRequest], AgentRun]


class Watcher(Protocol):
    """What the driver sleeps on: FolderWatcher, or a test's stand-in."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def wait_for_work(self, timeout: float | None) -> list[WakeReason]: ...
