"""The Slurm backend against a counting stand-in for sbatch/squeue/scancel on PATH: how often
it asks the controller, and what it makes of the answers and errors."""

from __future__ import annotations

import orjson
import pytest

from tests.slurm.conftest import FakeSlurm
from tests.slurm.records import run_record, submitted
from wild.errors import WildError
from wild.parsers.runs import RunRecord
from wild.runs.backend import BackendContext, Submitted
from wild.runs.registry import load_backend
from wild.runs.slurm import SlurmBackend


def _submit_all(fake: FakeSlurm, count: int, tag: str = "wild-t1") -> list[RunRecord]:
    backend = fake.backend(tag)
    runs = [run_record(f"s1-{n:03d}", f"echo {n}") for n in range(count)]
    return [submitted(run, backend.submit(run, {}).job_id) for run in runs]


def _marker(fake: FakeSlurm, run: RunRecord, attempt: int | None = None) -> None:
    data = {"run": run.id, "attempt": attempt or run.attempt, "exit_code": 0}
    (fake.paths.run_dir(run.id) / "exit").write_bytes(orjson.dumps(data))


def test_one_squeue_per_cycle_for_all_runs(fake: FakeSlurm) -> None:
    runs = _submit_all(fake, 8)
    backend = fake.backend()
    for job in ("1", "2", "3"):
        fake.set_state(job, "RUNNING")
    for cycle in range(1, 4):
        seen = backend.poll(runs)
        assert len(fake.calls("squeue")) == cycle
        assert {seen[run.id].liveness for run in runs} == {"running"}
    assert fake.calls("squeue")[0][1:] == [
        "--me",
        "--noheader",
        "--states=all",
        "--format=%i|%T|%N|%j",
    ]
    assert len(fake.calls("sbatch")) == 8


def test_no_squeue_without_active_runs_or_when_every_marker_is_there(fake: FakeSlurm) -> None:
    backend = fake.backend()
    assert backend.poll([]) == {}
    runs = _submit_all(fake, 3)
    for run in runs:
        _marker(fake, run)
    seen = backend.poll(runs)
    assert {observed.liveness for observed in seen.values()} == {"ended"}
    assert fake.calls("squeue") == []


def test_a_rerun_ignores_the_previous_attempts_marker(fake: FakeSlurm) -> None:
    (run,) = _submit_all(fake, 1)
    _marker(fake, run, attempt=1)
    rerun = submitted(run_record(run.id, attempt=2), "1")
    fake.set_state("1", "RUNNING")
    assert fake.backend().poll([rerun])[run.id].liveness == "running"


def test_a_job_id_that_names_another_run_is_not_ours(fake: FakeSlurm) -> None:
    (ours,) = _submit_all(fake, 1, tag="wild-mine")
    (fake.state / "queue").write_text("1|RUNNING|node1|someone-elses-job\n")
    seen = fake.backend("wild-mine").poll([ours])
    assert "without an exit marker" in (seen[ours.id].detail or "")


def test_a_loop_restarted_under_another_tag_still_finds_its_jobs(fake: FakeSlurm) -> None:
    (run,) = _submit_all(fake, 1, tag="wild-before")
    fake.set_state("1", "RUNNING")
    assert fake.backend("wild-after").poll([run])[run.id].detail == "job 1 RUNNING on node1"


def test_a_job_cancelled_while_it_waited_is_gone_at_once(fake: FakeSlurm) -> None:
    (run,) = _submit_all(fake, 1)
    fake.set_state("1", "CANCELLED")  # never started: no node, no wrapper, no marker
    seen = fake.backend().poll([run])[run.id]
    assert (seen.liveness, seen.detail) == ("gone", "Slurm job 1 CANCELLED before it started")


def test_adopt_finds_a_job_the_loop_never_recorded(fake: FakeSlurm) -> None:
    (run,) = _submit_all(fake, 1)
    queued = run_record(run.id)  # the line still says queued: the loop died after sbatch
    backend = fake.backend()
    assert backend.adopt(queued) == Submitted("1")  # from the job id left in the run folder
    assert fake.calls("squeue") == []
    (fake.paths.run_dir(run.id) / "slurm_job").unlink()  # died inside submit itself
    assert backend.adopt(queued) == Submitted("1")  # by its name, in one squeue
    assert backend.adopt(run_record("s1-042")) is None
    assert len(fake.calls("squeue")) == 2
    fake.fail("squeue", "slurm_load_jobs error: Socket timed out\n")
    with pytest.raises(WildError, match="run s1-042: cannot look for its job: squeue failed"):
        backend.adopt(run_record("s1-042"))


def test_a_job_that_left_the_queue_is_gone_only_after_the_grace(fake: FakeSlurm) -> None:
    runs = _submit_all(fake, 2)
    backend = fake.backend(slurm_grace_s="60")
    fake.set_state("1", None)  # vanished: scancel behind wild's back, a purged job
    fake.set_state("2", "RUNNING")
    fake.set_state("2", "FAILED")  # ended in Slurm without the wrapper's marker
    first = backend.poll(runs)
    assert {o.liveness for o in first.values()} == {"running"}
    assert "within 60 s" in (first[runs[0].id].detail or "")
    fake.clock.advance(59)
    assert {o.liveness for o in backend.poll(runs).values()} == {"running"}
    fake.clock.advance(1)
    last = backend.poll(runs)
    assert {o.liveness for o in last.values()} == {"gone"}
    assert last[runs[0].id].detail == (
        "Slurm job 1 left the queue without writing an exit marker "
        "(see .wild/runs/s1-000/slurm.out)"
    )
    assert "ended FAILED" in (last[runs[1].id].detail or "")


def test_a_marker_arriving_within_the_grace_ends_the_run(fake: FakeSlurm) -> None:
    (run,) = _submit_all(fake, 1)
    backend = fake.backend()
    fake.set_state("1", None)
    backend.poll([run])
    fake.clock.advance(30)
    _marker(fake, run)  # a shared filesystem showed it late
    assert backend.poll([run])[run.id].liveness == "ended"


def test_a_job_back_in_the_queue_restarts_the_grace(fake: FakeSlurm) -> None:
    (run,) = _submit_all(fake, 1)
    backend = fake.backend()
    queue = (fake.state / "queue").read_text()
    fake.set_state("1", None)
    backend.poll([run])
    fake.clock.advance(50)
    (fake.state / "queue").write_text(queue)  # listed again (a requeue)
    backend.poll([run])
    fake.set_state("1", None)
    fake.clock.advance(50)
    assert backend.poll([run])[run.id].liveness == "running"


def test_a_controller_error_is_unknown_and_a_controller_back_is_picked_up(
    fake: FakeSlurm,
) -> None:
    runs = _submit_all(fake, 2)
    _marker(fake, runs[1])
    backend = fake.backend()
    fake.fail(
        "squeue",
        "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n",
    )
    seen = backend.poll(runs)
    assert seen[runs[0].id].liveness == "unknown"
    assert seen[runs[0].id].detail == (
        "squeue failed (exit 1): slurm_load_jobs error: Unable to contact slurm controller "
        "(connect failure); runs on Slurm are unknown until the controller answers again "
        "(wild asks again next cycle; check `scontrol ping`)"
    )
    assert seen[runs[1].id].liveness == "ended"  # a marker needs no controller
    fake.clock.advance(3600)  # a long outage decides nothing
    fake.recover("squeue")
    fake.set_state("1", "RUNNING")
    assert backend.poll(runs)[runs[0].id].liveness == "running"


def test_sbatch_refusal_is_one_clear_line(fake: FakeSlurm) -> None:
    fake.fail(
        "sbatch",
        "sbatch: error: Batch job submission failed: Invalid partition name specified\n",
    )
    run = run_record("s1-000", slurm={"partition": "nope"})
    with pytest.raises(WildError) as caught:
        fake.backend().submit(run, {})
    assert str(caught.value) == (
        "run s1-000: sbatch refused the job (exit 1): sbatch: error: Batch job submission "
        'failed: Invalid partition name specified; check the sweep\'s "slurm" partition and '
        "extra_args and the resources"
    )
    assert "--partition=nope" in fake.calls("sbatch")[0]


def test_sbatch_missing_is_a_clear_error(fake: FakeSlurm, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(WildError, match="sbatch is not on PATH: run the loop where Slurm"):
        fake.backend().submit(run_record("s1-000"), {})


def test_squeue_missing_is_unknown(fake: FakeSlurm, monkeypatch: pytest.MonkeyPatch) -> None:
    (run,) = _submit_all(fake, 1)
    monkeypatch.setenv("PATH", "/nonexistent")
    seen = fake.backend().poll([run])
    assert seen[run.id].liveness == "unknown"
    assert (seen[run.id].detail or "").startswith("squeue is not on PATH")


def test_cancel_is_scancel_and_a_finished_job_is_no_error(fake: FakeSlurm) -> None:
    (run,) = _submit_all(fake, 1)
    backend = fake.backend()
    backend.cancel(run)
    assert fake.calls("scancel") == [
        ["scancel", "--state=PENDING", "1"],
        ["scancel", "--state=RUNNING", "--batch", "--signal=TERM", "1"],
    ]
    fake.fail("scancel", "scancel: error: Kill job error on job id 1: Invalid job id specified\n")
    backend.cancel(run)
    fake.fail("scancel", "scancel: error: Unable to contact slurm controller\n")
    with pytest.raises(WildError, match=r"run s1-000: scancel 1 failed \(exit 1\): scancel: err"):
        backend.cancel(run)
    backend.cancel(run_record("s1-001"))  # never submitted: nothing to cancel
    assert len(fake.calls("scancel")) == 5


def test_resources_and_slurm_options_reach_sbatch(fake: FakeSlurm) -> None:
    backend = fake.backend(slurm_partition="site", slurm_extra_args="--account=p42 --qos='a b'")
    run = run_record(
        "s1-000",
        resources={"cpus": 4, "gpus": 2, "memory_gb": 1.5, "time_s": 600},
        slurm={"partition": "gpu", "extra_args": ["--constraint=a100"]},
    )
    backend.submit(run, {})
    argv = fake.calls("sbatch")[0]
    run_dir = fake.paths.run_dir("s1-000").resolve()
    assert argv == [
        "sbatch",
        "--parsable",
        "--job-name=wild-t1.s1-000",
        f"--output={run_dir}/slurm.out",
        "--cpus-per-task=4",
        "--gres=gpu:2",
        "--mem=1536M",
        "--time=11",
        "--partition=gpu",
        "--account=p42",
        "--qos=a b",
        "--constraint=a100",
        f"{run_dir}/job.sh",
    ]


def test_the_sweeps_slurm_object_is_used_when_the_run_line_has_none(fake: FakeSlurm) -> None:
    sweep = {"kind": "sweep", "id": "s1", "spec": {"slurm": {"partition": "long"}}}
    fake.paths.runs_log.write_bytes(orjson.dumps(sweep) + b"\n")
    backend = fake.backend()
    backend.submit(run_record("s1-000"), {})
    backend.submit(run_record("s1-001"), {})
    assert all("--partition=long" in argv for argv in fake.calls("sbatch"))
    no_gpu = [arg for arg in fake.calls("sbatch")[0] if arg.startswith("--gres")]
    assert no_gpu == []


def test_a_malformed_slurm_object_is_a_clear_error(fake: FakeSlurm) -> None:
    run = run_record("s1-000", slurm={"extra_args": "--qos=x"})
    with pytest.raises(WildError) as caught:
        fake.backend().submit(run, {})
    assert str(caught.value) == (
        'run s1-000: "slurm.extra_args" must be a list of strings, like '
        '["--account=proj42", "--qos=short"]'
    )
    assert fake.calls("sbatch") == []


@pytest.mark.parametrize("value", ["0", "-5", "soon", "nan"])
def test_a_bad_setting_is_a_clear_error(fake: FakeSlurm, value: str) -> None:
    with pytest.raises(WildError) as caught:
        fake.backend(slurm_poll_s=value)
    assert str(caught.value) == f'slurm_poll_s must be a number of seconds above 0, not "{value}"'


def test_settings_and_defaults(fake: FakeSlurm) -> None:
    backend = fake.backend()
    assert (backend.poll_interval_s, backend.grace_s) == (30.0, 60.0)
    assert fake.backend(slurm_poll_s="5").poll_interval_s == 5.0
    runs = [run_record(f"s1-{n:03d}") for n in range(3)]
    assert backend.admit(runs, []) == runs


def test_the_slurm_backend_is_registered_and_found_by_name(fake: FakeSlurm) -> None:
    from tests.runs.test_plugins import _registered

    assert _registered("wild.run_backends")["slurm"].load() is SlurmBackend
    context = BackendContext(fake.paths, "wild-t1", {"slurm_poll_s": "12"})
    found = load_backend("slurm", context)
    assert isinstance(found, SlurmBackend) and found.poll_interval_s == 12.0


def test_an_sbatch_that_queued_the_job_but_never_answered_is_not_submitted_twice(
    fake: FakeSlurm,
) -> None:
    (fake.state / "sbatch.slow").write_text("30")
    backend = fake.backend(slurm_command_timeout_s="0.5")
    assert backend.submit(run_record("s1-000"), {}) == Submitted("1")
    assert len(fake.calls("sbatch")) == 1
    fake.fail("squeue", "slurm_load_jobs error: Unable to contact slurm controller\n")
    with pytest.raises(WildError, match=r"run s1-000: sbatch gave no answer within 0\.5 s"):
        backend.submit(run_record("s1-000"), {})
