"""The research runs' part of the loop's vocabulary: the events a run step ends with and the
actions that record sweeps, supervise runs and act on them (`wild/loop/model.py` has the rest)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wild.loop.research import RunAct
from wild.parsers.runs import RunRecord

if TYPE_CHECKING:  # only in types: a loop that records no sweep does not load the parser
    from wild.parsers.sweeps import SweepSpec


@dataclass(frozen=True)
class RunsSupervised:
    """The run supervisor took a step: the runs that ended in it (their lines written), with
    the tail of each failed run's log; `problems` are backend errors to raise as alerts;
    `deterministic`: the failed runs that failed as their previous attempt did."""

    ended: tuple[RunRecord, ...] = ()
    tails: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    deterministic: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SweepsRecorded:
    """RecordSweep was done: the sweep ids recorded, and the errors of each one refused."""

    recorded: tuple[str, ...] = ()
    refused: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class SuperviseRuns:
    """Submit queued runs, collect ended ones, poll the backends; RunsSupervised follows."""


@dataclass(frozen=True)
class RecordSweep:
    """Record validated sweeps: their runs queued, barriers and analysis tasks written;
    SweepsRecorded follows (a skill target that does not exist still refuses one)."""

    specs: tuple[SweepSpec, ...]
    origin: str  # the agent's iteration, or the human's `wild --sweep`
    cause: str | None = None


@dataclass(frozen=True)
class ActOnRuns:
    """Rerun or stop runs (a choice on a run alert, `wild --rerun`, `wild --stop-run`)."""

    act: RunAct
    run_ids: tuple[str, ...]
    cause: str | None = None


@dataclass(frozen=True)
class CloseSweep:
    """All runs of the sweep ended and their alerts are answered: mark it done and satisfy
    its barrier, so its analysis task can be selected."""

    sweep_id: str
    barrier: str | None
