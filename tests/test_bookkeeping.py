"""What the loop remembers in state.json's extra keys; selection with work held for the human."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from wild.commands import edits
from wild.commands.init import init_wild
from wild.loop.bookkeeping import Bookkeeping, select_with_holds
from wild.parsers.alerts import AlertIndex, AlertStatus, make_alert, status_update
from wild.paths import WildPaths
from wild.selection import HUMAN_WAIT
from wild.store.alerts_log import append_alert, read_new
from wild.workspace import assemble_workspace, load_workspace
from wild.workspace_view import Workspace

T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)


def test_reading_is_lenient_and_writing_keeps_other_keys() -> None:
    extra = {
        "awaitingHuman": {"task-001": "Which dataset?"},
        "failures": {"task-002": 2, "task-003": "two", "task-004": True},
        "notified": "not a mapping",
        "lastProgressAt": 12,
        "someFutureKey": [1, 2],
    }
    book = Bookkeeping.from_extra(extra)
    assert book == Bookkeeping({"task-001": "Which dataset?"}, {"task-002": 2}, {}, None)
    assert book.answered().merged_into(extra) == {
        "failures": {"task-002": 2},
        "lastProgressAt": 12,
        "someFutureKey": [1, 2],
    }


def test_failures_count_up_and_clear() -> None:
    book, count = Bookkeeping().failed("task-001")
    book, count = book.failed("task-001")
    assert (count, book.failures) == (2, {"task-001": 2})
    assert book.succeeded("task-001").failures == {}


def test_the_answer_releases_holds_and_forgets_only_their_failures() -> None:
    book = Bookkeeping(failures={"task-001": 3, "task-002": 1}).hold("task-001", "failed 3 times")
    assert book.awaiting == {"task-001": "failed 3 times"}
    answered = book.answered()
    assert (answered.awaiting, answered.failures) == ({}, {"task-002": 1})


def test_an_alert_is_told_once_per_reason_until_it_is_resolved() -> None:
    book = Bookkeeping().told("alert-1", "Critical alert", "2026-02-08T10:00:00Z")
    book = book.told("alert-2", "Critical alert", "2026-02-08T10:00:00Z")
    assert book.was_told("alert-1", "Critical alert")
    assert not book.was_told("alert-1", "Tried 3 times")
    assert book.alert_closed("alert-1").notified == {
        "alert-2:Critical alert": "2026-02-08T10:00:00Z"
    }
    assert book.progressed("2026-02-08T11:00:00Z").last_progress_at == "2026-02-08T11:00:00Z"


def workspace(tmp_path: Path, tasks: str, *, mode: str = "semi-autonomous") -> Workspace:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    paths.tasks.write_text(tasks)
    edits.update_policy(paths, mode, duration=None, now=T0)
    return load_workspace(paths, T0)


def test_a_held_task_is_skipped_and_the_next_one_selected(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "- [/] [P1] task-001: A\n- [ ] [P2] task-002: B\n")
    selection = select_with_holds(ws, frozenset({"task-001"}))
    assert (selection.kind, selection.item and selection.item.id) == ("task", "task-002")


def test_held_work_alone_is_waiting_not_complete(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "- [/] [P1] task-001: A\n")
    selection = select_with_holds(ws, frozenset({"task-001"}))
    assert selection.kind == "blocked"
    assert selection.item is not None
    assert (selection.item.id, selection.item.reason) == ("task-001", HUMAN_WAIT)
    assert select_with_holds(ws, frozenset()).kind == "task"


def test_a_held_human_input_waits_for_a_newer_one(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "")
    edits.add_human_input(ws.paths, "first", urgent=False, now=T0)
    edits.add_human_input(ws.paths, "second", urgent=False, now=T0.replace(minute=5))
    ws = load_workspace(ws.paths, T0)
    selection = select_with_holds(ws, frozenset({"2026-02-08T10:00:00Z"}))
    assert selection.item is not None
    assert (selection.kind, selection.item.id) == ("human-input", "2026-02-08T10:05:00Z")


def test_at_low_autonomy_nothing_but_human_input_starts_while_a_question_is_open(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, "- [ ] [P1] task-001: A\n", mode="interactive")
    record = make_alert(
        now=T0,
        severity="critical",
        source="job",
        type="crash",
        description="died",
        alert_id="alert-1",
    )
    append_alert(ws.paths.alerts, record)
    append_alert(ws.paths.alerts, status_update(record, "escalated", T0))
    ws = load_workspace(ws.paths, T0)
    selection = select_with_holds(ws, frozenset())
    assert selection.item is not None
    assert (selection.kind, selection.item.id, selection.item.reason) == (
        "blocked",
        "alert-1",
        HUMAN_WAIT,
    )
    edits.add_human_input(ws.paths, "restart it", urgent=False, now=T0)
    selection = select_with_holds(load_workspace(ws.paths, T0), frozenset())
    assert selection.kind == "human-input"


def test_at_medium_autonomy_other_work_goes_on_beside_an_escalated_alert(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, "- [ ] [P1] task-001: A\n")
    record = make_alert(
        now=T0,
        severity="critical",
        source="job",
        type="crash",
        description="died",
        alert_id="alert-1",
    )
    append_alert(ws.paths.alerts, status_update(record, "escalated", T0))
    selection = select_with_holds(load_workspace(ws.paths, T0), frozenset())
    assert selection.item is not None
    assert (selection.kind, selection.item.id) == ("task", "task-001")


def test_the_queue_of_a_held_selection_names_what_waits_once(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "- [/] task-001: A\n- [ ] task-002: B\n", mode="interactive")
    held = select_with_holds(ws, frozenset({"task-001"}))  # task-001 is in the queue already
    assert [(i.kind, i.id, i.reason) for i in held.queue] == [
        ("task", "task-002", None),
        ("blocked", "task-001", HUMAN_WAIT),
    ]
    done = workspace(tmp_path, "- [x] task-001: A\n")
    held = select_with_holds(done, frozenset({"2026-02-08T09:00:00Z"}))  # an input gone since
    assert held.kind == "blocked"
    assert [(i.kind, i.id, i.reason) for i in held.queue] == [
        ("blocked", "2026-02-08T09:00:00Z", HUMAN_WAIT)
    ]


def test_a_workspace_knows_its_open_alerts(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "")
    statuses: list[tuple[str, AlertStatus]] = [
        ("a1", "escalated"),
        ("a2", "resolved"),
        ("a3", "pending"),
    ]
    for alert_id, status in statuses:
        record = make_alert(
            now=T0, severity="info", source="job", type="t", description="d", alert_id=alert_id
        )
        append_alert(ws.paths.alerts, status_update(record, status, T0))
    ws = load_workspace(ws.paths, T0)
    # A read command's view holds only the open alerts (read from the alerts summary).
    assert [a.id for a in ws.alerts] == ["a1", "a3"]
    assert [a.id for a in ws.open_alerts] == ["a1", "a3"]
    assert ws.snapshot().alerts == ws.open_alerts
    every = AlertIndex(read_new(ws.paths.alerts, None).entries).all()
    assert [a.id for a in every] == ["a1", "a2", "a3"]
    given = assemble_workspace(
        ws.paths,
        T0,
        tasks=ws.tasks,
        barriers=ws.barriers,
        human=ws.human,
        policy_doc=ws.policy_doc,
        alerts=every,
    )
    assert [a.id for a in given.open_alerts] == ["a1", "a3"]
    first_two = assemble_workspace(
        ws.paths,
        T0,
        tasks=ws.tasks,
        barriers=ws.barriers,
        human=ws.human,
        policy_doc=ws.policy_doc,
        alerts=every[:2],
    )
    assert [a.id for a in first_two.open_alerts] == ["a1"]
