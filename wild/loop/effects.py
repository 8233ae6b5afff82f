"""The loop's file and human effects: what the driver does for each non-terminal action.

Terminal actions (run the agent, wait, end) and printing stay in the driver; everything here
writes a file or speaks to the human and says which watched files it touched, so the driver
re-reads exactly those.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from wild.errors import RefusedWriteError
from wild.loop import checkpoint
from wild.loop.files import WATCHED, LoopFiles, Watched
from wild.loop.model import (
    Action,
    ActOnRuns,
    AddTask,
    AppendAlert,
    Ask,
    Checkpoint,
    CloseSweep,
    CompactAlerts,
    EditFile,
    FileName,
    Log,
    Notify,
    Report,
    SendNotes,
)
from wild.loop.reporting import Reporter
from wild.loop.runs_effect import LoopRuns
from wild.output import plural
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import encode_alert
from wild.paths import WildPaths
from wild.policy.model import HumanPolicy
from wild.store.alerts_log import append_alert, appended_since
from wild.store.events_log import EventLog
from wild.store.files import update_text
from wild.store.self_writes import SelfWrites


class Effects:
    """Performs one action at a time for the driver, over the files it owns."""

    def __init__(
        self,
        paths: WildPaths,
        files: Callable[[], LoopFiles],
        events: EventLog,
        reporter: Reporter,
        self_writes: SelfWrites,
        *,
        runs: LoopRuns,
    ) -> None:
        self.paths = paths
        self._files = files  # the driver replaces its LoopFiles at start
        self.events = events
        self.reporter = reporter
        self.self_writes = self_writes
        self.runs = runs
        self._refusals_logged: set[str] = set()
        # wild's own recent alert lines: not someone else's newer word on an alert.
        self._own_alert_lines: deque[Mapping[str, Any]] = deque(maxlen=64)
        # The repository as the loop found it (`--checkpoint-every`): set at start.
        self.checkpoint_start: checkpoint.Baseline | None = None

    def perform(
        self,
        action: Action,
        policy: HumanPolicy,
        now: datetime,
        cause: str | None,
        *,
        folder_synced_later: bool = False,
    ) -> set[Watched]:
        """Do `action`; the watched files it touched. A write wild must not make (a file the
        user made read-only, a link out of the project) is said once and skipped: the loop
        goes on, and the work that needs that file waits (`bookkeeping.refused_work`).
        `folder_synced_later`: a file's swap is left for its folder's next fsync
        (`wild.store.files.update_text`)."""
        try:
            return self._apply(action, policy, now, cause, folder_synced_later)
        except RefusedWriteError as error:
            return self._refused(error, cause)

    def log_all(
        self, logs: Sequence[Log], cause: str | None, *, held: bool = False
    ) -> set[Watched]:
        """Consecutive `Log` actions as one events.log append, in their order: one open,
        lock and write where each took its own (~0.25 ms each; issue 22 item 8). `held`:
        written with the next append (`EventLog.append_all`)."""
        try:
            self.events.append_all(
                [(log.kind, dict(log.fields)) for log in logs],
                causes=[log.cause or cause for log in logs],
                held=held,
            )
        except RefusedWriteError as error:
            return self._refused(error, cause)
        return set()

    def _refused(self, error: RefusedWriteError, cause: str | None) -> set[Watched]:
        # `decide` says it, from the workspace, once the driver has read the files again.
        if str(error) not in self._refusals_logged:
            self._refusals_logged.add(str(error))
            self.events.append("write-refused", cause=cause, file=error.path, error=str(error))
        return set(WATCHED)

    def _apply(
        self,
        action: Action,
        policy: HumanPolicy,
        now: datetime,
        cause: str | None,
        folder_synced_later: bool = False,
    ) -> set[Watched]:
        """Do `action`; the watched files it touched. An action's own cause wins over
        `cause`, what the loop is acting on now."""
        if isinstance(action, Log):
            self.events.append(action.kind, cause=action.cause or cause, **action.fields)
        elif isinstance(action, EditFile):
            path = file_path(self.paths, action.file)
            on_written = self.self_writes.remembering(path)
            text = update_text(
                path,
                action.edit,
                self.paths.lock,
                on_written=on_written,
                folder_synced_later=folder_synced_later,
            )
            self._files().wrote(action.file, text)
            return {action.file}
        elif isinstance(action, AppendAlert):
            alert_id = str(action.record.get("id", ""))
            if self._answered_meanwhile(alert_id, cause):
                return {"alerts"}
            append_alert(self.paths.alerts, action.record)
            self._own_alert_lines.append(orjson.loads(encode_alert(action.record)))
            return {"alerts"}
        elif isinstance(action, AddTask):
            self._add_task(action, action.cause or cause)
            return {"tasks"}
        elif isinstance(action, Ask | Notify | Report):
            return self._tell(action, policy, now, action.cause or cause)
        elif isinstance(action, CompactAlerts):
            self._compact(cause)
            return {"alerts"}
        elif isinstance(action, Checkpoint):
            self._checkpoint(action, cause)
        elif isinstance(action, ActOnRuns | CloseSweep):
            self.runs.apply(action, now)
            return {"runs", "barriers"}
        elif isinstance(action, SendNotes):
            self.reporter.deliver(policy, action.messages)
        return set()

    def _tell(
        self, action: Ask | Notify | Report, policy: HumanPolicy, now: datetime, cause: str | None
    ) -> set[Watched]:
        """Speak to the human: a question (written to human.md and sent), a note (batched), or
        a progress report (written to human.md)."""
        if isinstance(action, Ask):
            if self._answered_meanwhile(action.related, cause):
                return set()
            self.reporter.ask(
                now=now,
                related=action.related,
                title=action.title,
                body=action.body,
                cause=cause,
            )
            return {"human"}
        if isinstance(action, Notify):
            self.reporter.notify(
                related=action.related,
                message=action.message,
                repeated=action.repeated,
                cause=cause,
            )
            return set()
        self.reporter.progress(now=now, summary=action.summary, cause=cause)
        return {"human"}

    def _answered_meanwhile(self, alert_id: str, cause: str | None) -> bool:
        """Whether someone else (the human, a job, an agent) appended a line for this known
        alert after the loop read the file: the decision to update or ask about it was made
        on an older state, and wild's line would bury theirs (its status is the latest line).
        The update is skipped, and the next decision reads theirs."""
        log = self._files().alert_log
        read = log.index.get(alert_id)
        if read is None:
            return False  # a new alert, or not an alert at all (a task, the human's input)
        known = [read.raw, *self._own_alert_lines]  # after a compaction, seen lines come again
        newer = appended_since(self.paths.alerts, log.cursor, alert_id)
        theirs = [a for a in newer if not any(a.raw == line for line in known)]
        if not theirs:
            return False
        self.events.append(
            "alert-update-skipped",
            cause=cause,
            alert=alert_id,
            reason=f"its line {theirs[-1].line} ({theirs[-1].status}) came after the loop read",
        )
        return True

    def _add_task(self, action: AddTask, cause: str | None) -> None:
        added = [""]

        def edit(current: str) -> str:
            new_text, added[0] = tasks_md.add_task(current, action.text, priority=action.priority)
            return new_text

        tasks = self.paths.tasks
        remember = self.self_writes.remembering(tasks)
        text = update_text(tasks, edit, self.paths.lock, on_written=remember)
        self._files().wrote("tasks", text)
        self.events.append("task-added", cause=cause, related=action.related, task=added[0])

    def _checkpoint(self, action: Checkpoint, cause: str | None) -> None:
        start = self.checkpoint_start  # taken by the driver at start (--checkpoint-every)
        message = f"wild checkpoint after iteration {action.iteration}"
        done = checkpoint.checkpoint(start, message) if start else checkpoint.NO_BASELINE
        if done.commit is None:
            self.events.append("checkpoint-skipped", cause=cause, reason=done.reason)
            self.reporter.say(f"📌 No checkpoint: {done.reason}")
            return
        self.events.append("checkpoint", cause=cause, commit=done.commit, paths=list(done.paths))
        self.reporter.say(f"📌 Checkpoint {done.commit[:12]}: {plural(len(done.paths), 'file')}")

    def _compact(self, cause: str | None) -> None:
        # Only once alerts.jsonl grew: not on the loop's start path (issue 22).
        from wild.store.alerts_compaction import compact  # noqa: PLC0415

        report = compact(self.paths.alerts, self.paths.alerts_archive, self.paths.lock)
        self.events.append(
            "alerts-compacted",
            cause=cause,
            archived_alerts=report.archived_alerts,
            archived_lines=report.archived_lines,
            kept_lines=report.kept_lines,
        )


def file_path(paths: WildPaths, name: FileName) -> Path:
    """Where an `EditFile` lands."""
    return {
        "tasks": paths.tasks,
        "human": paths.human,
        "barriers": paths.barriers,
        "policy": paths.policy,
        "checks": paths.checks,
    }[name]
