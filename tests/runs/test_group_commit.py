"""A step's run starts as a group commit: its claims made durable together before any run
starts, the runs' `running` lines and events written with one append each. Every run still
starts exactly once, and a loop killed inside the commit leaves nothing started twice."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.loop_processes import wait_gone
from tests.runs.helpers import drive, driven, events, local, project, queue, supervisor
from wild.runs import attempts
from wild.store.jsonl import append_lines
from wild.store.runs_log import append_records

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
CHILD = Path(__file__).with_name("group_commit_child.py")
ROOT = Path(__file__).resolve().parents[2]


def test_claims_taken_together_refuse_the_ones_already_taken(tmp_path: Path) -> None:
    runs = [tmp_path / "runs" / name for name in ("a", "b", "c")]
    assert attempts.claim(runs[1], 1, "another loop\n")
    taken = attempts.claim_all([(run, 1, "this loop\n") for run in runs])
    assert taken == [True, False, True]
    assert [attempts.claim_path(run, 1).read_text() for run in runs] == [
        "this loop\n",
        "another loop\n",
        "this loop\n",
    ]


def test_a_step_starting_many_runs_writes_their_lines_and_events_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path)
    queue(paths, "true", 6)
    writes: list[list[str]] = []

    def counted(path: Path, records: Any) -> None:
        records = list(records)
        writes.append([record.status for record in records])
        append_records(path, records)

    monkeypatch.setattr("wild.runs.supervisor.append_records", counted)
    event_writes: list[int] = []

    def counted_lines(path: Path, lines: Any, *appender: Any) -> None:
        event_writes.append(len(lines))
        append_lines(path, lines, *appender)

    monkeypatch.setattr("wild.store.events_log.append_lines", counted_lines)
    backend = local(paths, slots=4)
    sup = supervisor(paths, backend)
    first = sup.step()
    assert len(first.started) == 4
    assert writes == [["running"] * 4]  # one write for the four starts
    assert 4 in event_writes  # and one for their four run-started events
    drive(sup, backend)
    assert Counter(run.status for run in sup.index.runs.values()) == {"finished": 6}


def test_a_step_finding_many_runs_ended_writes_their_lines_and_events_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path)
    ids = queue(paths, "true", 4)
    backend = local(paths, slots=4)
    sup = supervisor(paths, backend)
    assert len(sup.step().started) == 4
    deadline = time.monotonic() + 30
    while not all((paths.run_dir(i) / "exit").exists() for i in ids):
        assert time.monotonic() < deadline, "the runs did not end"
        time.sleep(0.01)
    writes: list[list[str]] = []

    def counted(path: Path, records: Any) -> None:
        records = list(records)
        writes.append([record.status for record in records])
        append_records(path, records)

    monkeypatch.setattr("wild.runs.supervisor.append_records", counted)
    event_writes: list[list[bytes]] = []

    def counted_lines(path: Path, lines: Any, *appender: Any) -> None:
        event_writes.append([line for line in lines if b'"run-ended"' in line])
        append_lines(path, lines, *appender)

    monkeypatch.setattr("wild.store.events_log.append_lines", counted_lines)
    assert sorted(run.id for run in sup.step().ended) == ids
    assert writes == [["finished"] * 4]  # one write for the four terminal lines
    assert [len(ended) for ended in event_writes if ended] == [4]  # one for their events


def test_every_run_of_a_sweep_starts_exactly_once_under_batched_starts(tmp_path: Path) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, f'echo "$WILD_RUN_ID" >> {spawns}', 24)
    sup = driven(paths, slots=5)
    assert Counter(spawns.read_text().split()) == Counter(ids)
    assert all(sup.index.runs[run_id].status == "finished" for run_id in ids)
    assert sorted(e["run"] for e in events(paths, "run-started")) == ids


def _die_in_the_commit(wild_dir: Path, where: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(CHILD), str(wild_dir), "3", where],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == -9, done.stderr  # killed where asked, not ended on its own


def test_a_loop_killed_after_starting_a_batch_before_its_lines_adopts_every_run(
    tmp_path: Path,
) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, f'echo "$WILD_RUN_ID" >> {spawns}; sleep 0.2', 5)
    _die_in_the_commit(paths.root, "after-starts")
    sup = driven(paths, slots=3)
    assert sorted(e["run"] for e in events(paths, "run-adopted")) == ids[:3]
    assert {run_id: sup.index.runs[run_id].status for run_id in ids} == dict.fromkeys(
        ids, "finished"
    )
    assert Counter(spawns.read_text().split()) == Counter(ids)  # each started exactly once


def test_a_loop_killed_after_its_claims_before_any_start_starts_each_once(
    tmp_path: Path,
) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, f'echo "$WILD_RUN_ID" >> {spawns}', 5)
    _die_in_the_commit(paths.root, "after-claims")
    assert all(attempts.claimed(paths.run_dir(run_id), 1) for run_id in ids[:3])
    sup = driven(paths, slots=3)
    runs = sup.index.runs
    # Claimed in this boot, with no pid file, marker or wrapper: never started, so the
    # claims are given back and the runs start as the others do, once each.
    assert sorted(e["run"] for e in events(paths, "run-unclaimed")) == ids[:3]
    assert [runs[run_id].status for run_id in ids] == ["finished"] * 5
    assert Counter(spawns.read_text().split()) == Counter(ids)


def test_a_claim_from_another_boot_is_lost_not_run_again(tmp_path: Path) -> None:
    """After a machine crash a start may have reached the run but not its pid file: such an
    attempt is marked lost for a human to rerun, never run again unasked."""
    paths = project(tmp_path)
    ids = queue(paths, "true", 1)
    attempts.claim(paths.run_dir(ids[0]), 1, attempts.claim_text("t", 1, "another-boot"))
    sup = driven(paths, slots=4)
    run = sup.index.runs[ids[0]]
    assert run.status == "failed" and "was being started when the loop stopped" in str(run.reason)
    assert events(paths, "run-unclaimed") == []


def test_the_next_runs_folders_are_made_ahead_and_claims_flush_only_their_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path from one run's end to the next's start flushes one folder: the next runs'
    folders (and `runs/`) were made durable when the previous step started runs."""
    paths = project(tmp_path)
    ids = queue(paths, "true", 4)
    backend = local(paths, slots=1)
    sup = supervisor(paths, backend)
    assert [run.id for run in sup.step().started] == ids[:1]
    assert all(paths.run_dir(run_id).is_dir() for run_id in ids)  # made ahead
    flushed: list[Path] = []
    monkeypatch.setattr("wild.runs.attempts.fsync_dir", flushed.append)
    taken = attempts.claim_all([(paths.run_dir(ids[1]), 1, "next\n")])
    assert taken == [True] and flushed == [paths.run_dir(ids[1])]


def _launched_then_die(wild_dir: Path, where: str) -> int:
    """The child's wrapper launcher's pid, once the child died in its second step's commit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, str(CHILD), str(wild_dir), "1", where, "launcher"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == -9, done.stderr
    return int(done.stdout.split()[0])


def test_a_run_claimed_but_never_asked_of_the_launcher_is_given_back_when_its_loop_died(
    tmp_path: Path,
) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, f'echo "$WILD_RUN_ID" >> {spawns}', 3)
    launcher = _launched_then_die(paths.root, "after-claims")
    wait_gone(launcher, "the wrapper launcher of a dead loop")
    # Claimed, but the loop died before it asked the launcher: nothing started, nothing left.
    assert attempts.claimed(paths.run_dir(ids[1]), 1)
    assert spawns.read_text().split() == ids[:1]
    assert not (paths.run_dir(ids[1]) / "pid").exists()
    assert not (paths.run_dir(ids[1]) / "exit").exists()
    sup = driven(paths, slots=1)
    assert [e["run"] for e in events(paths, "run-unclaimed")] == ids[1:2]
    assert [sup.index.runs[run_id].status for run_id in ids] == ["finished"] * 3
    assert Counter(spawns.read_text().split()) == Counter(ids)  # each started exactly once


def test_a_run_the_launcher_started_before_its_loop_died_is_adopted_not_run_again(
    tmp_path: Path,
) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, f'echo "$WILD_RUN_ID" >> {spawns}; sleep 0.2', 3)
    launcher = _launched_then_die(paths.root, "after-starts")
    wait_gone(launcher, "the wrapper launcher of a dead loop")  # its run goes on without it
    wrapper = int((paths.run_dir(ids[1]) / "pid").read_text())
    sup = driven(paths, slots=1)
    adopted = events(paths, "run-adopted")
    assert [(e["run"], e["job"]) for e in adopted] == [(ids[1], str(wrapper))]
    assert [sup.index.runs[run_id].status for run_id in ids] == ["finished"] * 3
    assert Counter(spawns.read_text().split()) == Counter(ids)
