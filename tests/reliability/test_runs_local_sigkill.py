"""SIGKILL of the process supervising runs, twice, while runs are in flight: the next
supervisor finds them again by pid, notices every end, and starts no run twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.runs.helpers import drive, local, project, queue, supervisor

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
CHILD = Path(__file__).with_name("runs_local_child.py")
ROOT = Path(__file__).resolve().parents[2]


def _kill_after_a_start(wild_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(wild_dir), "3"], stdout=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the child has started runs
    assert line.startswith(b"started"), line
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()


def test_runs_survive_killed_supervisors_and_none_starts_twice(tmp_path: Path) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, f'echo "$WILD_RUN_ID" >> {spawns}; sleep 0.3', 9)
    _kill_after_a_start(paths.root)
    _kill_after_a_start(paths.root)
    backend = local(paths, slots=3)
    sup = supervisor(paths, backend)
    drive(sup, backend)
    runs = sup.index.runs
    assert {run_id: runs[run_id].status for run_id in ids} == dict.fromkeys(ids, "finished")
    assert Counter(spawns.read_text().split()) == Counter(ids)  # each started exactly once
