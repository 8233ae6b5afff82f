"""A loop that died between starting an attempt and recording it: the attempt is adopted by
its pid file, or marked lost; it is never started a second time. A wrapper that vanished
without a marker fails its run as lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.runs.helpers import drive, events, local, project, queue, supervisor
from wild.liveness import probe
from wild.runs import attempts
from wild.runs.wrapper_command import WRAPPER

pytestmark = pytest.mark.timeout(60)


def _start_wrapper_by_hand(run_dir: Path, run_id: str, instruction: str) -> subprocess.Popen[bytes]:
    """What a dying loop left: the claim taken and the wrapper running, no `running` line."""
    attempts.claim(run_dir, 1, "crashed loop\n")
    argv = [sys.executable, str(WRAPPER), "--run-dir", str(run_dir), "--run-id", run_id]
    argv += ["--attempt", "1", "--workdir", str(run_dir), "--", instruction]
    return subprocess.Popen(argv, start_new_session=True)


def test_a_claimed_attempt_whose_wrapper_runs_is_adopted_not_started_again(
    tmp_path: Path,
) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    instruction = f"echo x >> {spawns}; echo up > {ready}; sleep 0.3"
    ids = queue(paths, instruction)
    proc = _start_wrapper_by_hand(paths.run_dir(ids[0]), ids[0], instruction)
    with ready.open() as fifo:
        assert fifo.read() == "up\n"
    backend = local(paths)
    sup = supervisor(paths, backend)
    first = sup.step()
    assert first.started == () and sup.index.runs[ids[0]].status == "running"
    assert sup.index.runs[ids[0]].job_id == str(proc.pid)
    assert [e["run"] for e in events(paths, "run-adopted")] == ids
    proc.wait(timeout=30)
    drive(sup, backend)
    assert sup.index.runs[ids[0]].status == "finished"
    assert spawns.read_text() == "x\n"  # started once


def test_a_claimed_attempt_that_already_ended_is_recorded_from_its_marker(tmp_path: Path) -> None:
    paths = project(tmp_path)
    ids = queue(paths, "exit 4")
    _start_wrapper_by_hand(paths.run_dir(ids[0]), ids[0], "exit 4").wait(timeout=30)
    backend = local(paths)
    sup = supervisor(paths, backend)
    result = sup.step()  # adopted, then seen ended, in one step
    run = sup.index.runs[ids[0]]
    assert (run.status, run.exit_code) == ("failed", 4)
    assert [r.id for r in result.failed] == ids


def test_a_claimed_attempt_with_no_trace_is_lost_not_started(tmp_path: Path) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, f"echo x >> {spawns}")
    attempts.claim(paths.run_dir(ids[0]), 1, "crashed before the spawn\n")
    backend = local(paths)
    result = supervisor(paths, backend).step()
    assert [run.id for run in result.failed] == ids
    assert (result.failed[0].reason or "").startswith("lost: attempt 1 was being started")
    assert not spawns.exists()


def test_a_wrapper_killed_without_a_marker_fails_its_run_as_lost(tmp_path: Path) -> None:
    paths = project(tmp_path)
    ready, child = tmp_path / "ready", tmp_path / "child.pid"
    os.mkfifo(ready)
    ids = queue(paths, f"sleep 60 & echo $! > {child}; echo up > {ready}; wait")
    backend = local(paths)
    sup = supervisor(paths, backend)
    sup.step()
    with ready.open() as fifo:
        assert fifo.read() == "up\n"
    wrapper = int(sup.index.runs[ids[0]].job_id or "0")  # forked by the wrapper launcher
    os.kill(wrapper, signal.SIGKILL)
    assert _gone(wrapper)
    result = sup.step()
    assert [run.id for run in result.failed] == ids
    assert (result.failed[0].reason or "").startswith("lost: wrapper process")
    assert not (paths.run_dir(ids[0]) / "exit").exists()
    assert _gone(int(child.read_text()))  # its orphaned instruction was killed


def _gone(pid: int) -> bool:
    """Whether `pid` is gone within a bound (a SIGKILLed process takes a moment to die)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if probe(pid) is None:
            return True
        time.sleep(0.02)
    return False
