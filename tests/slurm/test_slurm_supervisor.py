"""The run supervisor driving the Slurm backend on a real single-node Slurm: a sweep's runs as
jobs, a failure rerun, a stop, and a supervisor restarted while jobs run."""

from __future__ import annotations

import time
from pathlib import Path

from tests.runs.helpers import any_command, events, project
from tests.slurm_harness import SlurmCluster
from wild.clock import SystemClock
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.runs import signing
from wild.runs.backend import BackendContext
from wild.runs.slurm import SlurmBackend
from wild.runs.supervisor import RunSupervisor
from wild.store.events_log import EventLog
from wild.store.runs_log import append_records

BOUND_S = 60.0
# Fails on its first attempt, succeeds on the next: a flaky run worth a rerun.
FLAKY = "if [ -e ../flaky-once ]; then echo ok; else touch ../flaky-once; exit 3; fi"


def slurm_supervisor(paths: WildPaths, tag: str) -> RunSupervisor:
    clock = SystemClock()
    backend = SlurmBackend(BackendContext(paths, tag, {}), clock=clock)
    events = EventLog(paths.events, clock)
    return RunSupervisor(paths, {"slurm": backend}, clock, events, command_gate=any_command)


def queue(paths: WildPaths, *instructions: str) -> list[str]:
    ids = []
    for number, instruction in enumerate(instructions):
        run = RunRecord(
            id=f"s1-{number:03d}",
            sweep="s1",
            params={"seed": number},
            resolved_instruction=instruction,
            status="queued",
            backend="slurm",
        )
        append_records(paths.runs_log, [signing.sign(signing.load_key(), run)])
        ids.append(run.id)
    return ids


def drive(sup: RunSupervisor, until: str = "idle") -> None:
    """Step (as the loop does on a marker event or its status cycle) until no run is active,
    or until every run is `running` (`until="running"`)."""
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        sup.step()
        runs = sup.index.runs.values()
        if until == "idle" and not sup.busy():
            return
        if until == "running" and all(run.status == "running" for run in runs):
            return
        time.sleep(0.2)
    raise AssertionError(f"runs not {until} after {BOUND_S:g}s: {sup.index.runs}")


def test_a_sweep_runs_as_jobs_and_a_failed_run_is_rerun(
    slurm: SlurmCluster, tmp_path: Path
) -> None:
    paths = project(tmp_path)
    ids = queue(paths, "echo one", FLAKY, "echo three")
    sup = slurm_supervisor(paths, "wild-sup1")
    drive(sup)
    runs = sup.index.runs
    assert [runs[run_id].status for run_id in ids] == ["finished", "failed", "finished"]
    assert runs[ids[1]].exit_code == 3
    assert all(runs[run_id].job_id for run_id in ids)
    first_job = runs[ids[1]].job_id
    sup.rerun(ids[1])
    drive(sup)
    again = sup.index.runs[ids[1]]
    assert (again.status, again.attempt, again.exit_code) == ("finished", 2, 0)
    assert again.job_id != first_job  # a new job for the new attempt
    assert len({event["job"] for event in events(paths, "run-started")}) == 4


def test_stop_run_cancels_the_job_and_the_run_is_stopped(
    slurm: SlurmCluster, tmp_path: Path
) -> None:
    paths = project(tmp_path)
    (run_id,) = queue(paths, "sleep 300")
    sup = slurm_supervisor(paths, "wild-sup2")
    drive(sup, until="running")
    assert sup.stop(run_id)
    drive(sup)
    stopped = sup.index.runs[run_id]
    assert (stopped.status, stopped.reason) == ("stopped", "stopped by the human")


def test_a_restarted_supervisor_finds_the_running_jobs(slurm: SlurmCluster, tmp_path: Path) -> None:
    paths = project(tmp_path)
    ids = queue(paths, "sleep 1; echo done", "sleep 1; exit 4")
    drive(slurm_supervisor(paths, "wild-sup3"), until="running")
    # A new loop process (its tag may differ): nothing in memory, the jobs still run.
    sup = slurm_supervisor(paths, "wild-sup3-again")
    drive(sup)
    runs = sup.index.runs
    assert [(runs[i].status, runs[i].exit_code) for i in ids] == [("finished", 0), ("failed", 4)]
    assert len(events(paths, "run-started")) == 2  # neither was started twice
