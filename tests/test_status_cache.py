"""`wild --status` keeps its parts between calls and is never fooled by them: every change to a
file it read, a change in the same timestamp tick, a policy's expiry, a moved folder or a
broken cache entry means a fresh read; the loop's liveness is judged on every call.
`wild --list-work` keeps its queue the same way (`work_now`)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from wild.clock import RACY_NS
from wild.commands import status as status_module
from wild.commands import status_facts, status_tasks, work_queue
from wild.commands.init import init_wild
from wild.commands.status import status_data
from wild.commands.status_cache import (
    file_inputs,
    settled,
    status_now,
    work_inputs,
    work_now,
)
from wild.liveness import Liveness
from wild.parsers import human as human_md
from wild.parsers.process_id import ProcessId
from wild.parsers.state import LoopState
from wild.paths import WildPaths
from wild.store.state_file import save_state
from wild.workspace import load_workspace

NOW = datetime(2026, 2, 8, 12, 0, tzinfo=UTC)
LOOP = ProcessId(4242, "lab-1", 98765, "boot-a", "2026-02-08T11:48:00Z")
TASKS = "# Tasks\n\n- [ ] [P1] task-001: Train\n- [x] [P2] task-002: Plot\n"


def later() -> int:
    """A clock an hour after every file here was written: all of them are settled."""
    return (datetime.now(UTC) + timedelta(hours=1)).timestamp().__int__() * 10**9


def judge(verdict: Liveness) -> Any:
    return lambda _process: verdict


@pytest.fixture
def paths(tmp_path: Path) -> WildPaths:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    paths.tasks.write_text(TASKS)
    paths.human.write_text(
        human_md.append_question(
            paths.human.read_text(),
            timestamp="2026-02-08T11:30:00Z",
            related=None,
            title="Which seed?",
            body="",
        )
    )
    paths.alerts.write_bytes(
        b'{"id":"alert-1","timestamp":"2026-02-08T11:00:00Z","severity":"critical",'
        b'"source":"job","type":"t","description":"job died","status":"pending"}\n'
    )
    save_state(paths.state, LoopState(active=True, iteration=3, loop_process=LOOP))
    return paths


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The parts read from the files (not taken from the cache), in order: "tasks" when only
    the part tasks.md feeds was (the rest of the files' part kept)."""
    seen: list[str] = []
    files, facts = status_module.read_files_part, status_facts.read_facts
    tasks_fed = status_tasks.read_files_part

    def read_files(paths: WildPaths, now: datetime) -> Any:
        seen.append("files")
        return files(paths, now)

    def read_tasks_fed(paths: WildPaths, rest: Any) -> Any:
        seen.append("tasks")
        return tasks_fed(paths, rest)

    def read_facts(paths: WildPaths) -> Any:
        seen.append("state")
        return facts(paths)

    monkeypatch.setattr(status_module, "read_files_part", read_files)
    monkeypatch.setattr(status_tasks, "read_files_part", read_tasks_fed)
    monkeypatch.setattr(status_facts, "read_facts", read_facts)
    return seen


def fresh(paths: WildPaths, reads: list[str], verdict: Liveness = "running") -> Any:
    """The status read from the files, as the dashboard reads it (not counted in `reads`)."""
    counted = len(reads)
    data = status_data(load_workspace(paths, NOW), NOW, judge(verdict))
    del reads[counted:]
    return data


def test_a_kept_status_is_the_fresh_status(paths: WildPaths, reads: list[str]) -> None:
    first = status_now(paths, NOW, judge("running"), later)
    second = status_now(paths, NOW, judge("running"), later)
    assert reads == ["files", "state"]  # the second status read no file
    assert first == second == fresh(paths, reads)
    assert second["tasks"]["total"] == 2 and second["questions"][0]["question"] == "Which seed?"
    assert second["alerts"]["critical"] == 1 and second["loop"]["state"] == "running"


def test_the_loop_is_judged_again_on_every_status(paths: WildPaths, reads: list[str]) -> None:
    """A loop killed since the last status: its part is kept, its liveness is not."""
    status_now(paths, NOW, judge("running"), later)
    data = status_now(paths, NOW, judge("gone"), later)
    assert reads == ["files", "state"]
    assert data["loop"]["state"] == "died" and data == fresh(paths, reads, "gone")


def rewrite_in_place(path: Path) -> None:
    """Same size, same mtime: only the ctime (and the content) tells it changed."""
    info = os.stat(path)
    data = bytearray(path.read_bytes())
    data[-2] = ord("Z") if data[-2] != ord("Z") else ord("Y")
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


@pytest.mark.parametrize("name", ["tasks", "alerts", "barriers", "human", "policy", "checks"])
def test_a_file_rewritten_in_place_is_read_again(
    paths: WildPaths, reads: list[str], name: str
) -> None:
    status_now(paths, NOW, judge("running"), later)
    rewrite_in_place(file_inputs(paths)[name])
    data = status_now(paths, NOW, judge("running"), later)
    # tasks.md alone: its part is read again, joined to the rest kept (status_tasks)
    assert reads == ["files", "state", "tasks" if name == "tasks" else "files"]
    assert data == fresh(paths, reads)


def test_a_change_to_every_other_input_is_seen(paths: WildPaths, reads: list[str]) -> None:
    inputs = file_inputs(paths)
    status_now(paths, NOW, judge("running"), later)
    inputs["runs"].write_text('{"kind":"sweep"}\n')
    status_now(paths, NOW, judge("running"), later)
    inputs["backup"].mkdir(exist_ok=True)
    status_now(paths, NOW, judge("running"), later)
    # The machine's approval store counts while the project has no file of its own in it.
    inputs["approvals-machine"].parent.mkdir(parents=True, exist_ok=True)
    inputs["approvals-machine"].write_text("{}")
    status_now(paths, NOW, judge("running"), later)
    inputs["approvals"].parent.mkdir(parents=True, exist_ok=True)
    inputs["approvals"].write_text("{}")
    status_now(paths, NOW, judge("running"), later)
    rewrite_in_place(inputs["approvals"])  # the project's own file, written in place
    status_now(paths, NOW, judge("running"), later)
    paths.tasks.chmod(0o444)  # read-only: its work is refused, and the status says so
    data = status_now(paths, NOW, judge("running"), later)
    # The backups and tasks.md's mode feed tasks.md's part alone (`TASKS_FED`).
    assert reads == ["files", "state", "files", "tasks", "files", "files", "files", "tasks"]
    assert any("tasks.md" in p and "read-only" in p for p in data["problems"]) or os.geteuid()
    save_state(paths.state, LoopState(active=False, iteration=4))
    assert status_now(paths, NOW, judge("running"), later)["loop"]["iteration"] == 4
    assert reads[-1] == "state"


def test_a_file_changed_just_before_is_not_trusted(paths: WildPaths, reads: list[str]) -> None:
    """Written in the same timestamp tick, a later change could keep size and times: a file
    changed less than RACY_NS before a status is read again by the next one."""
    now_ns = os.stat(paths.tasks).st_mtime_ns
    status_now(paths, NOW, judge("running"), lambda: now_ns + RACY_NS // 2)
    status_now(paths, NOW, judge("running"), lambda: now_ns + RACY_NS // 2)
    assert reads == ["files", "state", "files", "state"]
    assert not settled([0, 0, 0, 0, now_ns, 0, 0], now_ns + RACY_NS)
    assert settled([0, 0, 0, 0, now_ns, 0, 0], now_ns + RACY_NS + 1)


def test_the_kept_part_ends_when_the_policy_expires(paths: WildPaths, reads: list[str]) -> None:
    expiring = "**Active From:** 2026-02-08T11:00:00Z  \n**Expires At:** 2026-02-08T13:00:00Z\n\n"
    text = paths.policy.read_text().replace("### Settings", expiring + "### Settings", 1)
    paths.policy.write_text(text)
    before = status_now(paths, NOW, judge("running"), later)["policy"]
    assert (
        status_now(paths, NOW + timedelta(minutes=59), judge("running"), later)["policy"] == before
    )
    after = status_now(paths, NOW + timedelta(hours=2), judge("running"), later)
    assert reads == ["files", "state", "files"]
    assert after["policy"]["note"] is not None and "expired" in after["policy"]["note"]


def test_a_broken_or_foreign_cache_is_no_cache(paths: WildPaths, reads: list[str]) -> None:
    expected = fresh(paths, reads)
    for entry in (b"{not json", b"[]", b'{"format": 99}', b"\xff\xfe"):
        paths.status_cache.write_bytes(entry)
        assert status_now(paths, NOW, judge("running"), later) == expected
    kept = orjson.loads(paths.status_cache.read_bytes())
    kept["root"] = "/somewhere/else/.wild"  # a project moved: its messages name old paths
    paths.status_cache.write_bytes(orjson.dumps(kept))
    assert status_now(paths, NOW, judge("running"), later) == expected
    kept = orjson.loads(paths.status_cache.read_bytes())
    kept["files"]["part"] = "garbage"
    paths.status_cache.write_bytes(orjson.dumps(kept))
    assert status_now(paths, NOW, judge("running"), later) == expected
    kept = orjson.loads(paths.status_cache.read_bytes())
    kept["files"]["part"] = kept["rest"]["part"] = "garbage"
    paths.status_cache.write_bytes(orjson.dumps(kept))
    assert status_now(paths, NOW, judge("running"), later) == expected
    # The state part was still good; a good rest is joined to tasks.md's part read again.
    assert reads == ["files", "state"] * 5 + ["tasks", "files"]


def test_a_cache_that_cannot_be_written_costs_only_time(
    paths: WildPaths, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: Path, data: bytes) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("wild.store.files.write_cache", refuse)
    assert status_now(paths, NOW, judge("running"), later) == fresh(paths, reads)
    assert status_now(paths, NOW, judge("running"), later) == fresh(paths, reads)
    assert reads == ["files", "state"] * 2 and not paths.status_cache.exists()


def test_undecodable_bytes_in_a_file_are_shown_not_kept(paths: WildPaths, reads: list[str]) -> None:
    """Bytes that are not UTF-8 are kept as they are (surrogates), which JSON cannot hold:
    such a status is read again every time, and shown as the files' bytes."""
    paths.tasks.write_bytes(b"# Tasks\n\n- [ ] [P1] task-001: caf\xe9 run\n")
    paths.alerts.write_bytes(b"")
    first = status_now(paths, NOW, judge("running"), later)
    assert status_now(paths, NOW, judge("running"), later) == first == fresh(paths, reads)
    assert first["next"]["title"] == "caf\udce9 run"
    assert reads == ["files", "state"] * 2


@pytest.fixture
def selections(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each work queue selected from the files (not taken from the cache)."""
    seen: list[str] = []
    select = work_queue.list_work_data

    def counted(ws: Any) -> Any:
        seen.append("queue")
        return select(ws)

    monkeypatch.setattr(work_queue, "list_work_data", counted)
    return seen


def fresh_queue(paths: WildPaths) -> Any:
    """The queue selected from the files as `wild --list-work` did before it kept one."""
    return orjson.loads(orjson.dumps(work_queue.list_work_data(load_workspace(paths, NOW))))


def test_a_kept_work_queue_is_the_fresh_queue(paths: WildPaths, selections: list[str]) -> None:
    expected = fresh_queue(paths)
    selections.clear()
    assert work_now(paths, NOW, later) == work_now(paths, NOW, later) == expected
    assert selections == ["queue"]  # the second read no file
    assert [item["id"] for item in expected] == ["alert-1", "task-001"]


@pytest.mark.parametrize("name", ["tasks", "alerts", "barriers", "human"])
def test_a_work_file_rewritten_in_place_is_selected_again(
    paths: WildPaths, selections: list[str], name: str
) -> None:
    work_now(paths, NOW, later)
    rewrite_in_place(work_inputs(paths)[name])
    assert work_now(paths, NOW, later) == fresh_queue(paths)
    assert selections == ["queue", "queue", "queue"]  # the last one: `fresh_queue`'s own


def test_the_work_queue_is_kept_past_changes_it_does_not_read(
    paths: WildPaths, selections: list[str]
) -> None:
    """The queue is selected from four files alone and not from the time: a new policy, a
    changed checks.md, a later clock or a status written beside it leave it kept."""
    work_now(paths, NOW, later)
    rewrite_in_place(paths.policy)
    paths.checks.write_text(paths.checks.read_text() + "\n")
    status_now(paths, NOW, judge("running"), later)
    assert work_now(paths, NOW + timedelta(days=30), later) == fresh_queue(paths)
    assert selections == ["queue", "queue"]


def test_a_work_file_changed_just_before_is_not_trusted(
    paths: WildPaths, selections: list[str]
) -> None:
    now_ns = os.stat(paths.tasks).st_mtime_ns
    work_now(paths, NOW, lambda: now_ns + RACY_NS // 2)
    work_now(paths, NOW, lambda: now_ns + RACY_NS // 2)
    assert selections == ["queue", "queue"]


def test_a_broken_or_foreign_work_cache_is_no_cache(
    paths: WildPaths, selections: list[str]
) -> None:
    expected = fresh_queue(paths)
    for entry in (b"{not json", b"[]", b'{"format": 99}', b"\xff\xfe"):
        paths.work_cache.write_bytes(entry)
        assert work_now(paths, NOW, later) == expected
    for key, value in (("root", "/somewhere/else/.wild"), ("wild", "0.0.1")):
        kept = orjson.loads(paths.work_cache.read_bytes())
        kept[key] = value
        paths.work_cache.write_bytes(orjson.dumps(kept))
        assert work_now(paths, NOW, later) == expected
    kept = orjson.loads(paths.work_cache.read_bytes())
    kept["work"]["queue"] = "garbage"
    paths.work_cache.write_bytes(orjson.dumps(kept))
    assert work_now(paths, NOW, later) == expected
    assert selections == ["queue"] * 8


def test_a_read_after_an_edit_keeps_its_summary_without_an_fsync(
    paths: WildPaths, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache is never trusted over its files, so it need not wait for the disk: a status or
    a work list right after an edit of tasks.md (which rewrites the cache) syncs nothing."""
    status_now(paths, NOW, judge("running"), later)  # the alerts' own summary written first
    work_now(paths, NOW, later)
    paths.tasks.write_text(TASKS + "- [ ] [P3] task-003: Edit\n")
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert status_now(paths, NOW, judge("running"), later)["tasks"]["total"] == 3
    assert [item["id"] for item in work_now(paths, NOW, later)][-1] == "task-003"
    assert reads == ["files", "state", "tasks"] and synced == []
