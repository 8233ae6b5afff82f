"""What the loop remembers about the human and failures, kept in `state.json` across restarts.

Stored in `LoopState.extra` under camelCase keys, so older and newer wild versions keep it:

- `awaitingHuman`: work key (task id, human input key) -> why it waits for the human's answer.
  Alerts wait through their own `escalated` status instead.
- `failures`: work key -> failed attempts in a row (tasks and human inputs; alerts
  count theirs in `context.attempt`).
- `notified`: `"<alert id>:<reason>"` -> when the human was told, so one alert escalates once
  per reason; after the human answers, the agent gets to work.
- `lastProgressAt`: when an iteration last succeeded (the Stuck Duration rule counts from it).
- `answers`: work key -> the question it asked and the human's answer, carried in that work's
  prompts until it succeeds.

`select_with_holds` is seed 001's selection with what waits for the human held back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from wild.record import record, replace
from wild.selection import HUMAN_WAIT, Selection, WorkItem, select_work, task_key
from wild.workspace_view import Workspace

AWAITING = "awaitingHuman"
FAILURES = "failures"
NOTIFIED = "notified"
LAST_PROGRESS = "lastProgressAt"
ANSWERS = "answers"


def _str_map(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def _int_map(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


@record
class Bookkeeping:
    """A typed view of the loop's escalation and failure records; every change returns a copy."""

    awaiting: Mapping[str, str] = field(default_factory=dict)
    failures: Mapping[str, int] = field(default_factory=dict)
    notified: Mapping[str, str] = field(default_factory=dict)
    last_progress_at: str | None = None
    answers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> Bookkeeping:
        """Read leniently: a hand-edited or foreign value is dropped, never fatal."""
        last = extra.get(LAST_PROGRESS)
        return cls(
            awaiting=_str_map(extra.get(AWAITING)),
            failures=_int_map(extra.get(FAILURES)),
            notified=_str_map(extra.get(NOTIFIED)),
            last_progress_at=last if isinstance(last, str) else None,
            answers=_str_map(extra.get(ANSWERS)),
        )

    def merged_into(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        """`extra` with these records written over it; empty records leave no key behind."""
        merged = dict(extra)
        for key, value in (
            (AWAITING, self.awaiting),
            (FAILURES, self.failures),
            (NOTIFIED, self.notified),
            (ANSWERS, self.answers),
        ):
            if value:
                merged[key] = dict(value)
            else:
                merged.pop(key, None)
        if self.last_progress_at is not None:
            merged[LAST_PROGRESS] = self.last_progress_at
        return merged

    def hold(self, work_key: str, reason: str) -> Bookkeeping:
        """`work_key` waits for the human's answer."""
        return replace(self, awaiting={**self.awaiting, work_key: reason})

    def released(self, work_key: str) -> Bookkeeping:
        """`work_key` no longer waits for the human (what it waited for happened)."""
        return replace(self, awaiting={k: v for k, v in self.awaiting.items() if k != work_key})

    def answered(self) -> Bookkeeping:
        """The human answered: nothing waits any more, and what failed gets fresh attempts."""
        failures = {k: v for k, v in self.failures.items() if k not in self.awaiting}
        return replace(self, awaiting={}, failures=failures)

    def failed(self, work_key: str) -> tuple[Bookkeeping, int]:
        """One more failed attempt at `work_key`; returns the new count too."""
        count = self.failures.get(work_key, 0) + 1
        return replace(self, failures={**self.failures, work_key: count}), count

    def succeeded(self, work_key: str) -> Bookkeeping:
        """`work_key` is done: its failures are forgotten, and the answer it carried too."""
        return replace(
            self,
            failures={k: v for k, v in self.failures.items() if k != work_key},
            answers={k: v for k, v in self.answers.items() if k != work_key},
        )

    def with_answer(self, work_key: str, question: str, answer: str) -> Bookkeeping:
        """The human answered the question `work_key` asked; its next prompts carry both."""
        text = f"Question: {question.strip()}\nAnswer: {answer.strip()}"
        earlier = self.answers.get(work_key)
        if earlier is not None:
            text = f"{earlier}\n\n{text}"
        return replace(self, answers={**self.answers, work_key: text})

    def was_told(self, alert_id: str, reason: str) -> bool:
        return f"{alert_id}:{reason}" in self.notified

    def told(self, alert_id: str, reason: str, at: str) -> Bookkeeping:
        return replace(self, notified={**self.notified, f"{alert_id}:{reason}": at})

    def alert_closed(self, alert_id: str) -> Bookkeeping:
        """A resolved alert needs no memory of what the human was told about it."""
        notified = {k: v for k, v in self.notified.items() if not k.startswith(f"{alert_id}:")}
        answers = {k: v for k, v in self.answers.items() if k != alert_id}
        return replace(self, notified=notified, answers=answers)

    def progressed(self, at: str) -> Bookkeeping:
        return replace(self, last_progress_at=at)


def refused_work(ws: Workspace) -> frozenset[str]:
    """Work whose file wild may not write (read-only, or linked out of the project): it waits
    for the human, since wild could neither mark it started nor done and would redo it."""
    keys: set[str] = set()
    if "tasks" in ws.refused:
        keys.update(task_key(task) for task in ws.tasks.tasks)
    if "human" in ws.refused:
        keys.update(entry.key for entry in ws.human.inputs)
    if "alerts" in ws.refused:
        keys.update(alert.id for alert in ws.open_alerts)
    return frozenset(keys)


def select_with_holds(ws: Workspace, held: frozenset[str]) -> Selection:
    """What to do next, not starting what waits for the human (`held` work keys, escalated
    alerts, work in a file wild may not write); at autonomy level low nothing but human
    input starts while anything waits."""
    held |= refused_work(ws)
    selection = select_work(replace(ws.snapshot(), awaiting_human=held))
    waiting = sorted(held) + [a.id for a in ws.open_alerts if a.status == "escalated"]
    interactive = ws.policy.autonomy_level == "low" and selection.kind in ("alert", "task")
    if waiting and (interactive or selection.kind == "complete"):
        item = WorkItem(kind="blocked", id=waiting[0], title=waiting[0], reason=HUMAN_WAIT)
        queue = selection.queue
        if all(q.id != item.id for q in queue):
            queue = (item, *queue)
        return Selection(kind="blocked", item=item, queue=queue)
    return selection
