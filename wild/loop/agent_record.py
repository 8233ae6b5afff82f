"""The agent run in progress as state.json keeps it (`agentRun`): written before the agent
starts, dropped in the state that counts its iteration. Pure: `decide` drops it, the driver
writes it, and wild/loop/recovery.py reads what a killed loop left behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wild.loop.model import RunAgent
from wild.parsers.state import LoopState
from wild.record import record, replace

AGENT_RUN = "agentRun"


@record
class AgentRunRecord:
    """The agent run in progress, as state.json keeps it (in `extra`, camelCase)."""

    iteration: int
    work_type: str
    work_id: str
    run_id: str

    @classmethod
    def starting(cls, action: RunAgent, loop_id: str) -> AgentRunRecord:
        return cls(
            action.iteration, action.work_type, action.work_id, f"{loop_id}.{action.iteration}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "workType": self.work_type,
            "workId": self.work_id,
            "runId": self.run_id,
        }

    def event_data(self) -> dict[str, Any]:
        """As events.log names the fields of an agent run (snake_case, like agent-start)."""
        return {
            "iteration": self.iteration,
            "work_type": self.work_type,
            "work_id": self.work_id,
            "run_id": self.run_id,
        }

    @classmethod
    def from_json(cls, raw: object) -> AgentRunRecord | None:
        """Leniently: a hand-edited or foreign value is no record."""
        if not isinstance(raw, Mapping):
            return None
        iteration, kind = raw.get("iteration"), raw.get("workType")
        work_id, run_id = raw.get("workId"), raw.get("runId")
        if not (isinstance(iteration, int) and not isinstance(iteration, bool) and iteration > 0):
            return None
        if not all(isinstance(v, str) and v for v in (kind, work_id, run_id)):
            return None
        return cls(iteration, str(kind), str(work_id), str(run_id))


def started(state: LoopState, record: AgentRunRecord) -> LoopState:
    """The state to save before the agent starts."""
    return replace(state, extra={**state.extra, AGENT_RUN: record.to_json()})


def ended(state: LoopState) -> LoopState:
    """The state once the run is over and counted: no run, no agent. The record is dropped
    only in the state that counts the run's iteration (`decide`), never before: a loop
    killed between the agent's end and that save finds the record at restart and uses the
    number up, instead of giving it to the next run (whose log would be `iteration-N.2`)."""
    extra = {k: v for k, v in state.extra.items() if k != AGENT_RUN}
    return replace(state, extra=extra, agent_process=None)


def interrupted(state: LoopState) -> AgentRunRecord | None:
    """The run a killed loop left behind, if any."""
    return AgentRunRecord.from_json(state.extra.get(AGENT_RUN))
