"""A loop SIGKILLed between an sbatch and the run's line, on the real Slurm: the next one
adopts the job it never recorded, starts the rest, notices every end, and starts none twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.runs.helpers import events, project
from tests.slurm.test_slurm_supervisor import drive, queue, slurm_supervisor
from tests.slurm_harness import SlurmCluster

CHILD = Path(__file__).with_name("supervisor_child.py")
ROOT = Path(__file__).resolve().parents[2]


def test_a_job_submitted_by_a_killed_loop_is_adopted_not_started_twice(
    slurm: SlurmCluster, tmp_path: Path
) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, *[f'echo "$WILD_RUN_ID" >> {spawns}'] * 5)
    child = subprocess.run(
        [sys.executable, str(CHILD), str(paths.root), "wild-killed", "3"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL
    # A step's starts are one group commit: its lines come after all its sbatches, so none
    # of the three submitted came.
    assert events(paths, "run-started") == []
    sup = slurm_supervisor(paths, "wild-killed")  # the loop restarted
    drive(sup)
    runs = sup.index.runs
    assert {run_id: runs[run_id].status for run_id in ids} == dict.fromkeys(ids, "finished")
    assert [event["run"] for event in events(paths, "run-adopted")] == ids[:3]
    # The other two were claimed with them but never submitted: given back, run once.
    assert [event["run"] for event in events(paths, "run-unclaimed")] == ids[3:]
    assert Counter(spawns.read_text().split()) == Counter(ids)  # each ran exactly once
