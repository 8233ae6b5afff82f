"""The `.wild/` files as the loop keeps them in memory: read once at start, then again only
for the files a file event, an agent run or the loop's own write says may have changed.

A file named again is re-read only if its stat signature moved, and re-parsed only if its
text changed, so a wake-up for one file costs a stat and a parse of that file alone. This is
the one place that keeps parses: the parsers themselves cache nothing.
alerts.jsonl is read incrementally from the cursor kept in state.json.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Literal, TypeVar

from wild.barriers.approval_set import Approvals
from wild.barriers.approvals import store_files
from wild.loop.model import FileName
from wild.parsers import barriers as barriers_md
from wild.parsers import checks as checks_md
from wild.parsers import human as human_md
from wild.parsers import policy as policy_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import Alert
from wild.parsers.alerts_file import AlertCursor
from wild.paths import WildPaths
from wild.policy.checks_trust import ChecksBaseline, hold_checks
from wild.policy.trust import RecordedTrust
from wild.record import record
from wild.store.alerts_log import AlertLog
from wild.store.files import Signature as FileSignature
from wild.store.files import read_text, stat_signature
from wild.store.runs_log import RunLog
from wild.store.tasks_backup import TasksBackup
from wild.store.work_files import open_alerts_of, refusals_of
from wild.wake import WakeReason
from wild.workspace import (
    assemble_workspace,
    read_accepted_checks,
    read_trust,
)
from wild.workspace_view import Workspace

Watched = FileName | Literal["alerts", "runs"]
WATCHED: tuple[Watched, ...] = ("tasks", "barriers", "human", "policy", "checks", "alerts", "runs")
Doc = (
    tasks_md.TaskList
    | barriers_md.BarrierList
    | human_md.HumanQueue
    | policy_md.PolicyDocument
    | checks_md.CheckList
)
_PARSERS: dict[FileName, Callable[[str, str], Doc]] = {
    "tasks": tasks_md.parse,
    "barriers": barriers_md.parse,
    "human": human_md.parse,
    "policy": policy_md.parse,
    "checks": checks_md.parse,
}
Signature = FileSignature | None  # `stat_signature`; None: missing
# From the approval store: approvals, the recorded trust, the accepted completion checks.
_Trust = tuple[Approvals, RecordedTrust | None, ChecksBaseline | None]
_T = TypeVar("_T")


@record
class _Read:
    """One file as last read: its stat signature, its text and its parse."""

    signature: Signature
    text: str
    doc: Doc


class LoopFiles:
    """The parsed documents behind the loop's `Workspace`."""

    def __init__(self, paths: WildPaths, alerts_since: AlertCursor | None = None) -> None:
        self.paths = paths
        self.alert_log = AlertLog(paths.alerts, since=alerts_since)
        self.run_log = RunLog(paths.runs_log)  # read by byte offset, like alerts.jsonl
        self.runs_news = False  # runs.jsonl had new lines (the driver clears it once acted on)
        self._reads: dict[FileName, _Read] = {}
        self._alerts_seen: tuple[object, AlertCursor | None] | None = None
        self._alerts: tuple[Alert, ...] = ()
        self._open_alerts: tuple[Alert, ...] = ()
        self.reads = 0  # how many times a file's text was read (what a test can count)
        self._backup = TasksBackup(paths)
        self._tasks_damage: str | None = None  # tasks.md damaged: where its good copy is
        # The approval store outside `.wild/` (no file event tells of it): stat on each view.
        self._trust: tuple[tuple[Signature, Signature], _Trust] | None = None
        # What the last view found on disk beside the documents (`view(again=True)`).
        self._beside: tuple[_Trust, tuple[tuple[str, str], ...]] | None = None
        # tasks.md edits decided but not written yet (`hold`): the view shows them, and they
        # are written together, once, by the next action that is not a decision's bookkeeping.
        self._held: list[Callable[[str], str]] = []
        self._unwritten = False  # the held edits were taken and not written: read disk again

    def path_of(self, name: Watched) -> Path:
        if name == "runs":
            return self.paths.runs_log
        path: Path = self.paths.alerts if name == "alerts" else getattr(self.paths, name)
        return path

    def name_of(self, path: str) -> Watched | None:
        """Which watched file a path from a file event is, if any."""
        base = os.path.basename(path)
        return next((n for n in WATCHED if os.path.basename(self.path_of(n)) == base), None)

    def changed_by(self, reasons: Iterable[WakeReason]) -> set[Watched]:
        """The files a wake-up names; a reason without one (rescan, barrier) names them all."""
        changed: set[Watched] = set()
        for reason in reasons:
            if reason.kind in ("timeout", "signal", "control"):
                continue
            if reason.kind == "run":  # a run's exit marker: the supervisor must look
                self.runs_news = True
                continue
            if reason.kind == "barrier":  # the checker wrote a result
                changed.add("barriers")
                continue
            name = self.name_of(reason.path) if reason.path is not None else None
            if name is None:
                return set(WATCHED)
            changed.add(name)
        return changed

    def refresh(self, names: Iterable[Watched] = WATCHED) -> None:
        """Read the named files again where their signature moved."""
        for name in set(names):
            if name == "alerts":
                self._refresh_alerts()
            elif name == "runs":
                self.runs_news = bool(self.run_log.refresh()) or self.runs_news
            else:
                signature = stat_signature(self.path_of(name))
                known = self._reads.get(name)
                unwritten = name == "tasks" and self._unwritten
                if known is None or known.signature != signature or unwritten:
                    self.reads += 1
                    text = read_text(self.path_of(name))
                    if name == "tasks":  # someone else's save: the held edits go on top
                        self._unwritten = False
                        text = _edited(text, self._held)
                    self._keep(name, signature, text)
                    if name == "tasks":
                        self._back_up_tasks(signature)

    def wrote(self, name: FileName, text: str) -> None:
        """The loop itself just wrote `text` to the file: no need to read it back."""
        self._keep(name, stat_signature(self.path_of(name)), text)
        if name == "tasks":
            self._unwritten = False

    def hold(self, edit: Callable[[str], str]) -> None:
        """A tasks.md edit the loop decided, seen by the view now and written by `take_held`'s
        caller with the edits held after it: an agent run's tick and the next task's mark
        are one write, not two (the file on disk meanwhile is the one before both, which a
        kill between the judgment and the tick already left)."""
        if "tasks" not in self._reads:
            self.refresh(("tasks",))
        known = self._reads["tasks"]
        self._held.append(edit)
        self._keep("tasks", known.signature, edit(known.text))

    def take_held(self) -> Callable[[str], str] | None:
        """The held tasks.md edits as one edit, to be written now (None: nothing held); until
        `wrote` says it was, tasks.md is read from disk again (a refused write keeps nothing)."""
        if not self._held:
            return None
        edits, self._held = self._held, []
        self._unwritten = True
        return lambda text: _edited(text, edits)

    def view(self, now: datetime, *, again: bool = False) -> Workspace:
        """The documents as one workspace (the policy's expiry judged at `now`). `again`:
        the loop's own held edits are all that moved since the last view (a judgment that
        only kept the books: no agent ran, nothing was written, nothing woke the loop), so
        what that view found beside the documents stands (the files' modes, the approval
        store outside `.wild/`): one look at the disk per iteration, not two."""
        if len(self._reads) < len(_PARSERS):
            self.refresh()
        if not again or self._beside is None:
            self._beside = (self._read_trust(), refusals_of(self.paths))
        (approvals, recorded, accepted), refusals = self._beside
        return assemble_workspace(
            self.paths,
            now,
            tasks=self._doc("tasks", tasks_md.TaskList),
            barriers=self._doc("barriers", barriers_md.BarrierList),
            human=self._doc("human", human_md.HumanQueue),
            policy_doc=self._doc("policy", policy_md.PolicyDocument),
            alerts=self._alerts,
            alert_problems=self.alert_log.problems,
            open_alerts=self._open_alerts,
            checks=self._doc("checks", checks_md.CheckList),
            refusals=refusals,  # a few stats: a chmod changes no content
            notices=() if self._tasks_damage is None else (self._tasks_damage,),
            approvals=approvals,
            recorded_trust=recorded,
            runs=self.run_log.index,
            run_problems=tuple(self.run_log.problems),
            checks_recorded=accepted,
        )

    def view_checks(self) -> checks_md.CheckList:
        """checks.md as last read, held to the checks a human accepted (those run)."""
        if "checks" not in self._reads:
            self.refresh(("checks",))
        return hold_checks(self._doc("checks", checks_md.CheckList), self._read_trust()[2]).checks

    def _back_up_tasks(self, signature: Signature) -> None:
        """A copy of each new good version (an agent may yet delete it); after the loop's own
        writes there is none to make: they only tick boxes of a version already kept."""
        read = self._reads["tasks"]
        text = None if signature is None else read.text
        count = len(self._doc("tasks", tasks_md.TaskList).tasks)
        self._tasks_damage = self._backup.observe(text, count)

    def _read_trust(self) -> _Trust:
        """What a human approved, the trust recorded and the checks accepted, read again when
        the store changed."""
        own, machine = store_files(self.paths.project)
        own_signature = stat_signature(own)
        # The machine's file counts only while the project has no file of its own.
        signature = (own_signature, None if own_signature else stat_signature(machine))
        if self._trust is None or self._trust[0] != signature:
            self._trust = (signature, (*read_trust(self.paths), read_accepted_checks(self.paths)))
        return self._trust[1]

    def _keep(self, name: FileName, signature: Signature, text: str) -> None:
        known = self._reads.get(name)
        if known is not None and known.text == text:
            self._reads[name] = _Read(signature, text, known.doc)
            return
        file = str(self.path_of(name))
        previous = None if known is None else known.doc
        doc: Doc
        if isinstance(previous, tasks_md.TaskList):
            # The loop's own checkbox edits come back here: a big file is not parsed again
            # for them (see `tasks.reparse`).
            doc = tasks_md.reparse(previous, text, file)
        else:
            doc = _PARSERS[name](text, file)
        self._reads[name] = _Read(signature, text, doc)

    def _doc(self, name: FileName, kind: type[_T]) -> _T:
        doc = self._reads[name].doc
        if not isinstance(doc, kind):  # _PARSERS pairs each name with its parser
            raise TypeError(f"{name}: parsed as {type(doc).__name__}, not {kind.__name__}")
        return doc

    def _refresh_alerts(self) -> None:
        self.alert_log.refresh()
        seen = (self.alert_log.index, self.alert_log.cursor)
        if (
            self._alerts_seen is None
            or seen[0] is not self._alerts_seen[0]
            or seen[1] != self._alerts_seen[1]
        ):
            # Made again only when the log moved: 100,000 alerts make tuples worth keeping.
            self._alerts_seen = seen
            self._alerts = self.alert_log.index.all()
            self._open_alerts = open_alerts_of(self._alerts)


def _edited(text: str, edits: list[Callable[[str], str]]) -> str:
    for edit in edits:
        text = edit(text)
    return text
