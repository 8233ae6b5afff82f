"""The test Slurm itself: it starts, runs a job, and leaves nothing running when stopped."""

from __future__ import annotations

import time

from tests.slurm.conftest import need_slurm
from tests.slurm_harness import running_slurm


def test_stopping_the_cluster_leaves_nothing_running() -> None:
    need_slurm()
    with running_slurm(cpus=2) as cluster:
        submitted = cluster.client("sbatch", "--parsable", "-o", "/dev/null", "--wrap", "sleep 300")
        job = submitted.stdout.strip()
        assert job.isdigit(), submitted.stderr
        deadline = time.monotonic() + 60
        while "RUNNING" not in cluster.client("squeue", "-h", "-j", job, "-o", "%T").stdout:
            assert time.monotonic() < deadline, "the job never started"
            time.sleep(0.1)
        assert len(cluster.leftovers()) >= 4  # munged, slurmctld, slurmd, slurmstepd, the job
    assert cluster.leftovers() == []
    assert all(daemon.poll() is not None for daemon in cluster.daemons.values())
    assert not cluster.folder.exists()
