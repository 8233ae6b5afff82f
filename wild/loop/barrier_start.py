"""The barrier checker starts once the first agent runs, not before it: launch → agent is
shorter by its import (logging, a thread pool) and its first pass over barriers.md.

Nothing waits on the checker meanwhile: its results reach the loop as file events, which the
loop only takes in when it waits. So it starts before the loop first does anything else than
run an agent (waits, runs checks, supervises runs), and right after an agent has started.
Never before the loop's first read either: the policy it asks about is known by then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from wild.clock import Clock
from wild.loop.model import Action, RecordSweep, RunChecks, SuperviseRuns, VerifyTask, Wait
from wild.paths import WildPaths

if TYPE_CHECKING:
    from wild.barriers.checker import BarrierChecker, OnWritten, Wake


def needs_checker(actions: tuple[Action, ...]) -> bool:
    """Whether a step must have the checker running: one that waits or works other than by an
    agent (whose start is told apart: `BarrierStart.start`). Quick writes need it not."""
    return any(
        isinstance(action, Wait | RunChecks | VerifyTask | SuperviseRuns | RecordSweep)
        for action in actions
    )


class BarrierStart:
    """The loop's checker (none if `paths` is None), built and started on the first `start`."""

    def __init__(
        self,
        paths: WildPaths | None,
        *,
        clock: Clock,
        wake: Wake,
        require_approval: Callable[[], bool],
        on_written: OnWritten,
    ) -> None:
        self._paths = paths
        self._clock = clock
        self._wake = wake
        self._require_approval = require_approval
        self._on_written = on_written
        self._checker: BarrierChecker | None = None

    def start(self) -> None:
        """Start the checker (once)."""
        if self._checker is not None or self._paths is None:
            return
        from wild.barriers.checker import BarrierChecker  # noqa: PLC0415 (the point of this)

        self._checker = BarrierChecker(
            self._paths,
            clock=self._clock,
            wake=self._wake,
            require_approval=self._require_approval,
            on_written=self._on_written,
        )
        self._checker.start()

    def poke(self) -> None:
        """barriers.md changed: re-plan now (a checker not started yet reads it when it is)."""
        if self._checker is not None:
            self._checker.poke()

    def stop(self) -> None:
        if self._checker is not None:
            self._checker.stop()
