"""The Slurm backend's pure decisions: squeue and sbatch output read, time limits, scripts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.slurm.records import run_record
from wild.runs import slurm_jobs
from wild.runs.slurm_jobs import QueueRow

QUEUE = (
    "11|RUNNING|node[1-2]|wild-a.s1-000\n"
    "12|CANCELLED by 0||wild-a.s1-001\n"
    "13|COMPLETING+|n3|wild-a.odd|name\n"
    "14|RUNNING|n4|wild-b.s1-000\n"
    "15|RUNNING|n5|somebody-elses\n"
    "garbage line\n"
)


def test_parse_queue_reads_every_state_form() -> None:
    rows = slurm_jobs.parse_queue(QUEUE)
    assert sorted(rows) == ["11", "12", "13", "14", "15"]
    assert rows["12"] == QueueRow("12", "CANCELLED", "", "wild-a.s1-001")
    assert rows["13"] == QueueRow("13", "COMPLETING", "n3", "wild-a.odd|name")


def test_a_runs_job_is_found_by_id_and_checked_by_its_name() -> None:
    rows = slurm_jobs.parse_queue(QUEUE)
    assert slurm_jobs.run_job(rows, "11", "s1-000") == rows["11"]
    assert slurm_jobs.run_job(rows, "14", "s1-000") == rows["14"]  # restarted under tag b
    assert slurm_jobs.run_job(rows, "15", "s1-000") is None  # that id is somebody else's
    assert slurm_jobs.run_job(rows, "99", "s1-000") is None
    assert slurm_jobs.latest_job(rows, "wild-a", "s1-000") == "11"
    assert slurm_jobs.latest_job(rows, "wild-a", "s1-009") is None


@pytest.mark.parametrize(
    ("stdout", "job"),
    [("123\n", "123"), ("4567;cluster2\n", "4567"), ("", None), ("Submitted batch job 9\n", None)],
)
def test_parse_job_id(stdout: str, job: str | None) -> None:
    assert slurm_jobs.parse_job_id(stdout) == job


@pytest.mark.parametrize(("seconds", "minutes"), [(1, "2"), (0, "1"), (600, "11"), (3540, "60")])
def test_slurm_time_leaves_the_wrapper_its_margin(seconds: float, minutes: str) -> None:
    assert slurm_jobs.slurm_time(seconds) == minutes


def test_the_batch_script_hands_the_instruction_and_env_through_unchanged(tmp_path: Path) -> None:
    echo = tmp_path / "argv.py"
    echo.write_text(
        "import json, os, sys\n"
        "env = {k: v for k, v in os.environ.items() if k.startswith('WILD_')}\n"
        "print(json.dumps([sys.argv[1:], env]))\n"
    )
    instruction = """python train.py --lr='0.1' "$HOME" `x` ; echo 'it''s'"""
    run = run_record("s1-007", instruction, attempt=3, resources={"time_s": 90})
    env = {"WILD_PARAM_A": "a b'c\n,d", "WILD_RUN_ID": "s1-007", "PATH": "/not/exported"}
    script = slurm_jobs.batch_script(
        run, env=env, python=sys.executable, wrapper=str(echo), run_dir="/r d", workdir="/w"
    )
    done = subprocess.run(
        ["/bin/sh", "-c", script], capture_output=True, text=True, check=True, env={}
    )
    argv, seen_env = orjson.loads(done.stdout)
    assert argv == [
        *("--run-dir", "/r d", "--run-id", "s1-007", "--attempt", "3", "--workdir", "/w"),
        *("--time-limit", "90", "--", instruction),
    ]
    assert seen_env == {"WILD_PARAM_A": "a b'c\n,d", "WILD_RUN_ID": "s1-007"}
