"""slurm_job_done.py: finished when squeue no longer holds the job and sacct names an end."""

from __future__ import annotations

import pytest

from tests.check_scripts.conftest import Ran, Scripts

SCRIPT = "slurm_job_done.py"
GONE = "slurm_load_jobs error: Invalid job id specified\n"


def test_a_running_job_is_not_finished(scripts: Scripts) -> None:
    scripts.fake("squeue", "RUNNING\n")
    scripts.fake("sacct", "RUNNING\n")
    assert scripts.run(SCRIPT, "123456") == Ran(1, "job 123456 is RUNNING")
    assert scripts.argv("squeue") == ["--noheader --jobs 123456 --format=%T"]
    assert scripts.argv("sacct") == []  # the queue answered; no accounting query


def test_an_array_waits_for_every_task(scripts: Scripts) -> None:
    scripts.fake("squeue", "PENDING\nRUNNING\nCOMPLETING\n")
    assert scripts.run(SCRIPT, "123456") == Ran(1, "job 123456 is PENDING (+2)")


def test_a_job_that_left_the_queue_finished_as_sacct_says(scripts: Scripts) -> None:
    scripts.fake("squeue", "")
    scripts.fake("sacct", "COMPLETED\n")
    assert scripts.run(SCRIPT, "123456_7") == Ran(0, "job 123456_7 finished: COMPLETED")
    assert scripts.argv("sacct") == ["--noheader --parsable2 -X --jobs 123456_7 -o State"]


def test_squeue_refusing_a_forgotten_id_means_it_left_the_queue(scripts: Scripts) -> None:
    scripts.fake("squeue", stderr=GONE, code=1)
    scripts.fake("sacct", "COMPLETED\nCOMPLETED\nCANCELLED by 1000\n")
    assert scripts.run(SCRIPT, "9") == Ran(0, "job 9 finished: 2 COMPLETED, CANCELLED")
    assert scripts.run(SCRIPT, "9", "--completed") == Ran(
        1, "job 9 ended 2 COMPLETED, CANCELLED, not COMPLETED"
    )


def test_completed_only_accepts_a_clean_end(scripts: Scripts) -> None:
    scripts.fake("squeue", "")
    scripts.fake("sacct", "COMPLETED\n")
    assert scripts.run(SCRIPT, "--completed", "9") == Ran(0, "job 9 finished: COMPLETED")


def test_a_failed_job_is_finished_and_says_how(scripts: Scripts) -> None:
    scripts.fake("squeue", "")
    scripts.fake("sacct", "OUT_OF_MEMORY\n")
    assert scripts.run(SCRIPT, "9") == Ran(0, "job 9 finished: OUT_OF_MEMORY")


def test_accounting_that_still_sees_it_running_wins(scripts: Scripts) -> None:
    scripts.fake("squeue", "")
    scripts.fake("sacct", "COMPLETED\nRUNNING\n")
    assert scripts.run(SCRIPT, "9") == Ran(1, "job 9 is RUNNING")


def test_an_unknown_job_is_not_finished(scripts: Scripts) -> None:
    scripts.fake("squeue", stderr=GONE, code=1)
    scripts.fake("sacct", "")
    assert scripts.run(SCRIPT, "9") == Ran(1, "job 9 is unknown to squeue and sacct")


def test_a_failing_scheduler_is_not_yet(scripts: Scripts) -> None:
    scripts.fake("squeue", stderr="slurm_load_jobs error: Socket timed out\n", code=1)
    assert scripts.run(SCRIPT, "9") == Ran(
        1, "squeue failed (exit 1): slurm_load_jobs error: Socket timed out"
    )
    scripts.fake("squeue", "")
    scripts.fake("sacct", stderr="sacct: error: Problem talking to the database\n", code=1)
    assert scripts.run(SCRIPT, "9") == Ran(
        1, "sacct failed (exit 1): sacct: error: Problem talking to the database"
    )


def test_without_sacct_leaving_the_queue_is_finishing(scripts: Scripts) -> None:
    scripts.fake("squeue", "")
    assert scripts.run(SCRIPT, "9") == Ran(
        0, "job 9 has left the queue (no sacct to tell how it ended)"
    )
    assert scripts.run(SCRIPT, "9", "--completed") == Ran(
        1, "job 9 has left the queue, but without sacct its end is unknown"
    )


def test_without_squeue_it_is_a_usage_error(scripts: Scripts) -> None:
    assert scripts.run(SCRIPT, "9") == Ran(
        2, "slurm_job_done.py: squeue is not on PATH; run this where Slurm is installed"
    )


@pytest.mark.parametrize("bad", ["12;rm -rf /", "-1", "abc", "12.0", ""])
def test_a_malformed_job_id_is_refused_before_anything_runs(scripts: Scripts, bad: str) -> None:
    scripts.fake("squeue", "")
    assert scripts.run(SCRIPT, bad) == Ran(
        2, f"slurm_job_done.py: JOBID must look like 123456 or 123456_7, not {bad!r}"
    )
    assert scripts.argv("squeue") == []
