"""Telling the human: questions in human.md, notes batched by the Context Switch Penalty, the
notify command, and what a progress report says."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.loop.test_decide import model as decide_model
from wild.barriers.approvals import approve
from wild.clock import SystemClock
from wild.commands.init import init_wild
from wild.loop import notes
from wild.loop.model import Action, Ask, FlushNotes, Moment, Notify, SendNotes, Wait
from wild.loop.reporting import Reporter
from wild.loop.run_words import progress_summary
from wild.parsers import human as human_md
from wild.parsers.state import CurrentWork, LoopState
from wild.paths import WildPaths
from wild.policy.model import HumanPolicy, default_policy
from wild.store.events_log import EventLog, read_events
from wild.workspace import load_workspace

T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)


class Setup:
    def __init__(self, tmp_path: Path, penalty: int = 15) -> None:
        self.paths = WildPaths(tmp_path / ".wild")
        init_wild(self.paths)
        self.notes = tmp_path / "notes.txt"
        self.policy = replace(
            default_policy(),
            context_switch_penalty_minutes=penalty,
            notify_command=f"{{ cat; echo; echo ===; }} >> {self.notes}",
        )
        assert self.policy.notify_command is not None
        approve(self.paths.project, self.policy.notify_command)
        self.out: list[str] = []
        self.written: list[bytes] = []
        self.reporter = Reporter(
            self.paths,
            EventLog(self.paths.events, SystemClock()),
            self.out.append,
            self.written.append,
        )

    def sent(self) -> list[str]:
        text = self.notes.read_text() if self.notes.exists() else ""
        return [part.strip() for part in text.split("===") if part.strip()]

    def events(self) -> list[str]:
        return [e["kind"] for e in read_events(self.paths.events)[0]]


class Told:
    """The loop's notes as `decide` batches them (wild/loop/notes.py, the batch in the model)
    and the Reporter performs them, as the driver's effects do."""

    def __init__(self, s: Setup) -> None:
        self.s = s
        start = decide_model()
        self.model = replace(start, ws=replace(start.ws, paths=s.paths))

    def step(
        self, actions: list[Action], now: datetime, policy: HumanPolicy | None = None
    ) -> tuple[Action, ...]:
        policy = policy or self.s.policy
        penalty = policy.context_switch_penalty_minutes
        self.model, out = notes.batched(self.model, tuple(actions), Moment(now, 0.0), penalty)
        reporter = self.s.reporter
        for action in out:
            if isinstance(action, Ask):
                title, body = action.title, action.body
                reporter.ask(now=now, related=action.related, title=title, body=body, cause=None)
            elif isinstance(action, Notify):
                related, repeated = action.related, action.repeated
                reporter.notify(
                    related=related, message=action.message, repeated=repeated, cause=None
                )
            elif isinstance(action, SendNotes):
                reporter.deliver(policy, action.messages)
        return out


def test_ask_writes_a_question_and_sends_at_once_even_inside_the_window(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    told = Told(s)
    told.step([Notify("task-001", "started", None)], T0)
    ask = Ask("task-002", "Which dataset?", "Urgency: high", None)
    told.step([ask], T0 + timedelta(minutes=1))
    question = human_md.parse(s.paths.human.read_text()).inputs[0]
    assert (question.key, question.status, question.related_alert) == (
        "2026-02-08T10:01:00Z",
        "question",
        "task-002",
    )
    assert question.content == "Which dataset?\n\nUrgency: high"
    assert s.written == [s.paths.human.read_bytes()]  # the watcher is told it was wild
    assert s.sent() == [
        "wild (task-001): started",
        "wild needs you (task-002): Which dataset?\nUrgency: high\n"
        f'Answer with: wild --human-input "..." (or edit {s.paths.human})',
    ]
    assert s.events() == ["notification", "escalation"]


def test_notes_inside_the_penalty_window_wait_and_go_out_together(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    told = Told(s)
    told.step([Notify("a", "one", None)], T0)
    told.step([Notify("b", "two", None)], T0 + timedelta(minutes=5))
    # The step that waits is told when the notes are due: its Wait ends then.
    waits = told.step([Notify("c", "three", None), Wait(None)], T0 + timedelta(minutes=9))
    assert waits[-1] == Wait(6 * 60.0)
    assert s.sent() == ["wild (a): one"]
    told.step([FlushNotes()], T0 + timedelta(minutes=14))
    assert len(s.sent()) == 1
    told.step([FlushNotes()], T0 + timedelta(minutes=15))
    assert s.sent() == [
        "wild (a): one",
        "2 notifications from wild:\n\nwild (b): two\n\nwild (c): three",
    ]
    assert told.model.notes.queued == ()
    assert told.step([Wait(30.0)], T0 + timedelta(minutes=16))[-1] == Wait(30.0)


def test_flush_all_sends_what_is_queued_without_waiting(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    told = Told(s)
    told.step([Notify("a", "one", None), Notify("b", "two", None)], T0)
    told.step([FlushNotes(everything=True)], T0)
    told.step([FlushNotes(everything=True)], T0)  # nothing left: no second ping
    assert s.sent() == ["wild (a): one", "wild (b): two"]
    assert s.out == ["📣 wild (a): one", "📣 wild (b): two"]


def test_the_same_note_again_is_recorded_not_sent(tmp_path: Path) -> None:
    s = Setup(tmp_path, penalty=0)
    told = Told(s)
    told.step([Notify("a", "one", None)], T0)
    told.step([Notify("b", "one", None)], T0 + timedelta(minutes=1))
    assert s.sent() == ["wild (a): one"]
    repeated = [e["repeated"] for e in read_events(s.paths.events)[0]]
    assert repeated == [False, True]


def test_a_failing_notify_command_is_reported_not_raised(tmp_path: Path) -> None:
    s = Setup(tmp_path, penalty=0)
    policy = replace(s.policy, notify_command="echo no route to host >&2; exit 7")
    approve(s.paths.project, "echo no route to host >&2; exit 7")
    Told(s).step([Notify("a", "one", None)], T0, policy)
    assert s.out == [
        "📣 wild (a): one",
        "⚠️  notify command failed: notify command exited with 7: no route to host; "
        "check Notify Command in human-policy.md",
    ]
    assert s.events() == ["notification", "notify-failed"]


def test_progress_summary_says_where_the_work_stands(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.paths.tasks.write_text("- [x] [P1] task-001: A\n- [/] [P1] task-002: B\n- [ ] task-003: C\n")
    s.paths.barriers.write_text("## [WAITING] train-done\n- Type: manual\n")
    ws = load_workspace(s.paths, T0)
    state = LoopState(iteration=4, current_work=CurrentWork("task", "task-002"))
    assert progress_summary(ws, state) == (
        "Tasks: 1/3 complete\nAlerts: 0 open\nBarriers waiting: train-done\nIterations: 4\n"
        "Current work: task task-002"
    )


def test_an_unapproved_notify_command_is_not_run_and_says_how_to_approve(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    told = Told(s)
    policy = replace(s.policy, notify_command=f"echo ran >> {tmp_path / 'ran.txt'}")
    told.step([Notify("task-1", "first", None)], T0, policy)
    told.step([Notify("task-1", "again", None)], T0 + timedelta(hours=1), policy)
    assert not (tmp_path / "ran.txt").exists()
    warnings = [line for line in s.out if line.startswith("⚠️")]
    assert warnings == [
        "⚠️  notify command not run: it is not approved yet; run wild --approve @notify "
        f"to allow `echo ran >> {tmp_path / 'ran.txt'}`"
    ]
    trusted = replace(policy, command_approval="trusted")
    told.step([Notify("task-1", "now", None)], T0 + timedelta(hours=2), trusted)
    assert (tmp_path / "ran.txt").read_text() == "ran\n"
