"""The loop's current state (wild/loop/states.py) as the driver lives it: each transition a
`state` line in events.log, a refused one a `state-refused` line (never a crash), the state
and since when in state.json, and each state's timeout measured on the loop's clock."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime

from wild.clock import iso
from wild.loop import states
from wild.loop.model import AgentFinished, Event, LoopModel, Moment, Step
from wild.loop.states import State
from wild.parsers.loop_state import RECORD_KEY, record, recorded
from wild.parsers.state import LoopState
from wild.store.events_log import EventLog

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Phases:
    """Where the loop is now, since when, and whether it has been there too long."""

    def __init__(
        self,
        events: EventLog,
        timeouts: Mapping[State, float | None],
        cause: Callable[[], str | None],
    ) -> None:
        self.events = events
        self.timeouts = timeouts
        self.cause = cause  # the events.log id the loop acts on (the driver's `_cause`)
        self.state: State = "IDLE"
        self.since = Moment(now=_EPOCH, mono=0.0)

    def begin(self, previous: LoopState, at: Moment) -> None:
        """A new loop starts in IDLE, whatever state the last one (stopped or killed) left."""
        last = recorded(previous.extra)
        self.state, self.since = "IDLE", at
        self.events.append(
            "state",
            cause=self.cause(),
            **{"from": last.state if last else None, "to": "IDLE", "reason": "loop-start"},
        )

    def move(self, target: State, why: str, at: Moment) -> bool:
        """Go to `target`, if the table allows it; a refused move is logged and ignored."""
        if target == self.state:
            return True
        source = self.state
        if not states.allowed(source, target):
            self.events.append(
                "state-refused", cause=self.cause(), **{"from": source, "to": target, "reason": why}
            )
            return False
        self.state, self.since = target, at
        self.events.append(
            "state", cause=self.cause(), **{"from": source, "to": target, "reason": why}
        )
        return True

    def before(self, event: Event, at: Moment) -> None:
        """An agent's end: judged in OBSERVING, after ERROR_RECOVERY if it ran too long."""
        if not isinstance(event, AgentFinished):
            return
        run = event.run
        if run.timed_out or self.expired(at):
            why = f"timeout: the agent was killed after {run.duration_s:.0f} s"
            self.move("ERROR_RECOVERY", why, at)
        self.move("OBSERVING", "agent-end", at)

    def after(self, step: Step, at: Moment) -> None:
        """The state the decided step leads to."""
        target = states.after_step(step.model, step.actions, at)
        self.move(target, type(step.actions[-1]).__name__ if step.actions else "Continue", at)

    def agent_timeout(self, option_s: float | None) -> float | None:
        """The agent's limit: --agent-timeout and RUNNING_AGENT's timeout, the shorter one."""
        return states.agent_timeout(option_s, self.timeouts.get("RUNNING_AGENT"))

    def limit(self) -> float | None:
        return self.timeouts.get(self.state)

    def left(self, at: Moment) -> float | None:
        """Seconds until the current state's timeout (0.0: passed); None without one."""
        limit = self.limit()
        if limit is None:
            return None
        return max(0.0, self.since.mono + limit - at.mono)

    def expired(self, at: Moment) -> bool:
        return self.left(at) == 0.0

    def cap(self, wait_s: float | None, at: Moment) -> float | None:
        """A wait, cut at the current state's timeout."""
        left = self.left(at)
        if left is None:
            return wait_s
        return left if wait_s is None else min(wait_s, left)

    def timed_out(self, at: Moment) -> bool:
        """After the driver acted: the state outlived its timeout, so the loop goes to
        ERROR_RECOVERY (the caller re-reads every file and decides again). A recovery that
        outlives its own timeout ends: the loop goes on (`recovered`)."""
        if self.state in states.TERMINAL or not self.expired(at):
            return False
        limit = self.limit()
        if self.state == "ERROR_RECOVERY":
            self.since = at  # the next step leaves it; the backoff is cut (`recovered`)
            self.events.append("state-timeout", cause=self.cause(), state=self.state, after_s=limit)
            return True
        self.move("ERROR_RECOVERY", f"timeout: {self.state} passed {limit:g} s", at)
        return True

    def recorded(self, state: LoopState) -> LoopState:
        """`state` with the loop's state and since when, as state.json keeps it."""
        now = record(self.state, iso(self.since.now))
        if state.extra.get(RECORD_KEY) == now:
            return state
        return replace(state, extra={**state.extra, RECORD_KEY: now})


def recovered(model: LoopModel) -> LoopModel:
    """After a timeout: failed iterations are not waited out any longer."""
    return replace(model, backoff_until=None)
