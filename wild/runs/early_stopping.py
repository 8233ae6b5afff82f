"""Early stopping's driver: follows the objective of each run of a sweep that asks for
early stopping (`"early_stop"`) and says which running runs its rule stops (the decisions
are wild.parsers.early_stop's; the caller stops them through the supervisor, as
`wild --stop-run` does).

Each run's metric files are followed (wild.metrics.follow), so a check reads only the bytes
appended since the last and feeds the rule only the new points: its cost grows with the new
metric lines, never with the runs' histories. Only sweeps with a run going are looked at; a
sibling that ended is read to its end once and then kept as its points, until no run of
its sweep is going.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wild.metrics.follow import FileFollower, RunMetrics
from wild.parsers.early_stop import Stop, SweepStopping, early_stop_of
from wild.parsers.run_table import running_runs
from wild.parsers.runs import RunIndex, RunRecord, SweepRecord
from wild.paths import WildPaths
from wild.runs.decide import STOP_FIELD

CHECK_S = 1.0  # how often the no-agent runner looks at the metrics while such runs go on


@dataclass
class _Followed:
    """One attempt of a run: its metric files followed, and how much of each was taken."""

    attempt: int
    metrics: RunMetrics | None  # None once the run ended and was read to its end
    taken: dict[str, tuple[Sequence[tuple[float, float]], int]] = field(default_factory=dict)


class EarlyStopping:
    """The rules' state for every sweep with early stopping, fed as the runs log."""

    def __init__(self, paths: WildPaths) -> None:
        self.paths = paths
        self._rules: dict[str, SweepStopping | None] = {}
        self._runs: dict[str, _Followed] = {}
        self._asked: set[tuple[str, int]] = set()  # (run, attempt) already told to stop

    def watching(self, index: RunIndex) -> bool:
        """Whether a run of a sweep with early stopping is going (then check every CHECK_S)."""
        return any(
            self._rule(index.sweeps.get(run.sweep)) is not None for run in running_runs(index)
        )

    def decide(self, index: RunIndex) -> list[Stop]:
        """The running runs to stop now, each with its reason."""
        stops: list[Stop] = []
        for sweep in index.sweeps.values():
            rule = self._rule(sweep)
            if rule is None:
                continue
            if not any(run.sweep == sweep.id for run in running_runs(index)):
                self._rest(sweep.id, sweep.run_ids)  # nothing to stop: nothing to read or keep
                continue
            runs = index.of_sweep(sweep.id)
            running = []
            for run in runs:
                if run.status in ("planned", "queued"):
                    continue
                self._feed(rule, run, sweep.spec)
                asked = (run.id, run.attempt) in self._asked or run.raw.get(STOP_FIELD)
                if run.status == "running" and not asked:
                    running.append(run.id)
            for stop in rule.decide(running):
                self._asked.add((stop.run_id, index.runs[stop.run_id].attempt))
                stops.append(stop)
        return stops

    def _rest(self, sweep_id: str, run_ids: Sequence[str]) -> None:
        """Let go of a sweep with no run going (a rerun reads its runs again, once)."""
        if any(run_id in self._runs for run_id in run_ids):
            for run_id in run_ids:
                self._runs.pop(run_id, None)
            self._rules.pop(sweep_id, None)

    def _rule(self, sweep: SweepRecord | None) -> SweepStopping | None:
        if sweep is None:
            return None
        if sweep.id not in self._rules:
            found = early_stop_of(sweep.spec)
            self._rules[sweep.id] = SweepStopping(found) if found is not None else None
        return self._rules[sweep.id]

    def _feed(self, rule: SweepStopping, run: RunRecord, spec: Mapping[str, Any]) -> None:
        """Give the rule the run's points that came since the last check."""
        followed = self._runs.get(run.id)
        if followed is None or followed.attempt != run.attempt:
            rule.forget(run.id)  # a rerun starts from nothing: its last attempt's files moved
            followed = _Followed(run.attempt, RunMetrics(self.paths, run, spec))
            self._runs[run.id] = followed
        if followed.metrics is None:
            return  # ended, and read to its end
        followed.metrics.read()
        counted = followed.metrics.counted()
        if _rewritten(followed, counted, rule.rule.metric):
            rule.forget(run.id)
            followed.taken.clear()
        for follower in counted:
            points = follower.series.get(rule.rule.metric, [])
            _, taken = followed.taken.get(follower.path, (points, 0))
            rule.add(run.id, points[taken:])
            followed.taken[follower.path] = (points, len(points))
        if run.terminal:
            followed.metrics = None  # its points stay in the rule; its files are done


def _rewritten(followed: _Followed, counted: Sequence[FileFollower], metric: str) -> bool:
    """Whether points already taken are gone: a file read again from its start (rewritten, or
    a whole format that changed), or a file that no longer counts."""
    now = {follower.path: follower for follower in counted}
    for path, (points, taken) in followed.taken.items():
        follower = now.get(path)
        if taken and (follower is None or follower.series.get(metric) is not points):
            return True
    return False
