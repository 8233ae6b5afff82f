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


def test_parse_queue_keeps_only_the_loops_jobs_and_reads_every_state_form() -> None:
    text = (
        "11|RUNNING|node[1-2]|wild-a.s1-000\n"
        "12|CANCELLED by 0||wild-a.s1-001\n"
        "13|COMPLETING+|n3|wild-a.odd|name\n"
        "14|RUNNING|n4|wild-ab.s1-000\n"  # another loop whose tag starts like ours
        "15|RUNNING|n5|somebody-elses\n"
        "garbage line\n"
    )
    assert slurm_jobs.parse_queue(text, "wild-a") == {
        "11": QueueRow("11", "RUNNING", "node[1-2]", "wild-a.s1-000"),
        "12": QueueRow("12", "CANCELLED", "", "wild-a.s1-001"),
        "13": QueueRow("13", "COMPLETING", "n3", "wild-a.odd|name"),
    }


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
