"""The Slurm backend against a real single-node Slurm (tests/slurm_harness.py): jobs run through
the wrapper, markers appear, poll follows them, scancel stops them, errors are clear."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.barriers.conftest import FakeClock
from tests.slurm.records import run_record, submitted
from tests.slurm_harness import SlurmCluster
from wild.errors import WildError
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.runs.backend import BackendContext
from wild.runs.slurm import SlurmBackend

WAIT_S = 60.0


def wait_for(what: str, ready: Callable[[], bool]) -> None:
    """Until `ready()` (a file appeared, Slurm moved a job on), bounded."""
    deadline = time.monotonic() + WAIT_S
    while not ready():
        assert time.monotonic() < deadline, f"still waiting for {what} after {WAIT_S:g}s"
        time.sleep(0.1)


def marker(paths: WildPaths, run: RunRecord) -> dict[str, object] | None:
    path = paths.run_dir(run.id) / "exit"
    data: dict[str, object] | None = orjson.loads(path.read_bytes()) if path.exists() else None
    return data


@pytest.fixture
def paths(tmp_path: Path) -> WildPaths:
    paths = WildPaths(tmp_path / ".wild")
    paths.runs.mkdir(parents=True)
    return paths


def backend(paths: WildPaths, tag: str, clock: FakeClock | None = None) -> SlurmBackend:
    return SlurmBackend(BackendContext(paths, tag, {}), clock=clock)


def start(slurm_backend: SlurmBackend, run: RunRecord) -> RunRecord:
    env = {"WILD_RUN_ID": run.id, "WILD_PARAM_LR": "0.1 ,x'y"}
    return submitted(run, slurm_backend.submit(run, env).job_id)


def test_runs_run_as_jobs_and_end_with_their_markers(slurm: SlurmCluster, paths: WildPaths) -> None:
    slurm_backend = backend(paths, "wild-real1")
    (paths.project / "sub").mkdir()
    runs = [
        start(slurm_backend, run_record("s1-000", 'echo "lr=$WILD_PARAM_LR in $(pwd)"')),
        start(slurm_backend, run_record("s1-001", "echo failing >&2; exit 3")),
        start(slurm_backend, run_record("s1-002", "sleep 30", workdir="sub")),
    ]
    long_run = runs[2]
    wait_for("the long run's wrapper", (paths.run_dir(long_run.id) / "pid").exists)
    assert slurm_backend.poll([long_run])[long_run.id].liveness == "running"
    wait_for("two markers", lambda: all(marker(paths, run) for run in runs[:2]))
    seen = slurm_backend.poll(runs)
    assert [seen[run.id].liveness for run in runs] == ["ended", "ended", "running"]
    first, second = marker(paths, runs[0]), marker(paths, runs[1])
    assert first is not None and second is not None
    assert (first["exit_code"], second["exit_code"]) == (0, 3)
    assert second["attempt"] == 1 and second["run"] == "s1-001"
    log = (paths.run_dir("s1-000") / "log").read_text()
    assert f"lr=0.1 ,x'y in {paths.project}" in log
    assert "failing" in (paths.run_dir("s1-001") / "log").read_text()
    slurm_backend.cancel(long_run)
    wait_for("the cancelled run's marker", lambda: marker(paths, long_run) is not None)
    stopped = marker(paths, long_run)
    assert stopped is not None and stopped["reason"] == "stopped"
    assert slurm_backend.poll([long_run])[long_run.id].liveness == "ended"


def test_a_job_cancelled_behind_wilds_back_is_noticed(
    slurm: SlurmCluster, paths: WildPaths
) -> None:
    clock = FakeClock()
    slurm_backend = backend(paths, "wild-real2", clock)
    by_hand, killed = (start(slurm_backend, run_record(f"s1-00{n}", "sleep 300")) for n in range(2))
    for run in (by_hand, killed):
        wait_for(f"{run.id} to start", (paths.run_dir(run.id) / "pid").exists)
    # scancel by hand: the wrapper gets SIGTERM and still writes the marker.
    assert slurm.client("scancel", str(by_hand.job_id)).returncode == 0
    # The wrapper SIGKILLed (an OOM killer, a node lost): nothing can write a marker.
    os.kill(int((paths.run_dir(killed.id) / "pid").read_text()), signal.SIGKILL)
    wait_for("the marker of the job cancelled by hand", lambda: marker(paths, by_hand) is not None)
    assert slurm_backend.poll([by_hand])[by_hand.id].liveness == "ended"

    def left_the_queue() -> bool:
        detail = slurm_backend.poll([killed])[killed.id].detail or ""
        return "without an exit marker yet" in detail

    wait_for("the killed job to leave the queue", left_the_queue)
    clock.advance(slurm_backend.grace_s)
    seen = slurm_backend.poll([killed])[killed.id]
    assert seen.liveness == "gone"
    assert marker(paths, killed) is None


def test_a_restarted_backend_finds_its_jobs_by_job_id(
    slurm: SlurmCluster, paths: WildPaths
) -> None:
    run = start(backend(paths, "wild-real3"), run_record("s1-000", "sleep 300"))
    wait_for("the run to start", (paths.run_dir(run.id) / "pid").exists)
    again = backend(paths, "wild-real3")  # a new loop process, nothing in memory
    assert again.poll([run])[run.id].liveness == "running"
    again.cancel(run)
    wait_for("the marker", lambda: marker(paths, run) is not None)
    assert again.poll([run])[run.id].liveness == "ended"


def test_an_invalid_partition_is_a_clear_error(slurm: SlurmCluster, paths: WildPaths) -> None:
    run = run_record("s1-000", slurm={"partition": "nosuchpartition"})
    with pytest.raises(WildError) as caught:
        backend(paths, "wild-real4").submit(run, {})
    assert str(caught.value) == (
        "run s1-000: sbatch refused the job (exit 1): sbatch: error: Batch job submission "
        'failed: Invalid partition name specified; check the sweep\'s "slurm" partition and '
        "extra_args and the resources"
    )


def test_a_run_over_its_time_limit_is_stopped_by_the_wrapper(
    slurm: SlurmCluster, paths: WildPaths
) -> None:
    slurm_backend = backend(paths, "wild-real5")
    run = start(slurm_backend, run_record("s1-000", "sleep 300", resources={"time_s": 1}))
    wait_for("the marker", lambda: marker(paths, run) is not None)
    ended = marker(paths, run)
    assert ended is not None and ended["reason"] == "timeout"


def test_a_waiting_job_cancelled_is_gone_at_once(slurm: SlurmCluster, paths: WildPaths) -> None:
    slurm_backend = backend(paths, "wild-real6")
    held = run_record("s1-000", "true", slurm={"extra_args": ["--hold"]})
    run = start(slurm_backend, held)
    slurm_backend.cancel(run)
    seen = slurm_backend.poll([run])[run.id]
    assert (seen.liveness, seen.detail) == (
        "gone",
        f"Slurm job {run.job_id} CANCELLED before it started",
    )


def test_a_controller_that_stops_answering_is_unknown_and_picked_up_again(
    slurm: SlurmCluster, paths: WildPaths
) -> None:
    settings = {"slurm_command_timeout_s": "1"}
    slurm_backend = SlurmBackend(BackendContext(paths, "wild-real7", settings))
    run = start(slurm_backend, run_record("s1-000", "sleep 300"))
    controller = slurm.daemons["slurmctld"].pid
    os.kill(controller, signal.SIGSTOP)  # a hung controller: squeue gets no answer
    try:
        seen = slurm_backend.poll([run])[run.id]
    finally:
        os.kill(controller, signal.SIGCONT)
    assert (seen.liveness, seen.detail) == (
        "unknown",
        "squeue gave no answer within 1 s; runs on Slurm are unknown until the controller "
        "answers again (wild asks again next cycle; check `scontrol ping`)",
    )
    assert slurm_backend.poll([run])[run.id].liveness == "running"
    slurm_backend.cancel(run)
