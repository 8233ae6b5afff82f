#!/usr/bin/env python3
"""Barrier check: a Slurm job (or every task of a job array) has finished.

usage: slurm_job_done.py JOBID [--completed]

JOBID is a job id (`123456`), an array task (`123456_7`) or an array (`123456`: all its
tasks). The job is finished when `squeue` no longer lists it as waiting or running and
`sacct` reports an end state for it. Any end state counts (FAILED, TIMEOUT … are finished
too, and the output names them); with `--completed` only COMPLETED does. Without `sacct`
(no accounting), a job that has left the queue counts as finished. Exit 0 when finished,
1 when not yet, 2 on a usage error or when `squeue` is not on PATH; one line says why.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

USAGE = "usage: slurm_job_done.py JOBID [--completed]"
JOB_ID = re.compile(r"[0-9]+(_[0-9]+)?")
END_STATES = frozenset(
    {
        "BOOT_FAIL",
        "CANCELLED",
        "COMPLETED",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "REVOKED",
        "TIMEOUT",
    }
)
TIMEOUT_S = 60


def ask(argv: list[str]) -> tuple[int, str, str] | None:
    """(exit code, stdout, stderr) of a Slurm command; None when it is not installed."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except FileNotFoundError:
        return None
    except subprocess.TimeoutExpired:
        return 124, "", f"{argv[0]} gave no answer within {TIMEOUT_S}s"
    return done.returncode, done.stdout, done.stderr


def states(output: str) -> list[str]:
    # sacct writes `CANCELLED by 1000`; the first word is the state.
    return [line.split()[0].upper() for line in output.splitlines() if line.strip()]


def judge(argv: list[str]) -> tuple[int, str]:
    if argv[:1] in (["-h"], ["--help"]):
        return 0, USAGE
    completed_only = "--completed" in argv
    rest = [arg for arg in argv if arg != "--completed"]
    if len(rest) != 1:
        return 2, USAGE
    job = rest[0]
    if not JOB_ID.fullmatch(job):
        return 2, f"slurm_job_done.py: JOBID must look like 123456 or 123456_7, not {job!r}"
    queue = ask(["squeue", "--noheader", "--jobs", job, "--format=%T"])
    if queue is None:
        return 2, "slurm_job_done.py: squeue is not on PATH; run this where Slurm is installed"
    code, out, err = queue
    # squeue refuses an id it no longer holds ("Invalid job id"): that job has left the queue.
    if code != 0 and "invalid job id" not in err.lower():
        return 1, f"squeue failed (exit {code}): {(err.strip() or out.strip())[:200]}"
    waiting = [state for state in states(out) if state not in END_STATES] if code == 0 else []
    if waiting:
        return 1, f"job {job} is {waiting[0]}" + (f" (+{len(waiting) - 1})" if waiting[1:] else "")
    accounting = ask(["sacct", "--noheader", "--parsable2", "-X", "--jobs", job, "-o", "State"])
    if accounting is None:
        if completed_only:
            return 1, f"job {job} has left the queue, but without sacct its end is unknown"
        return 0, f"job {job} has left the queue (no sacct to tell how it ended)"
    code, out, err = accounting
    if code != 0:
        return 1, f"sacct failed (exit {code}): {(err.strip() or out.strip())[:200]}"
    ended = states(out)
    if not ended:
        return 1, f"job {job} is unknown to squeue and sacct"
    running = [state for state in ended if state not in END_STATES]
    if running:
        return 1, f"job {job} is {running[0]}"
    summary = ", ".join(f"{n} {state}" if n > 1 else state for state, n in Counter(ended).items())
    if completed_only and set(ended) != {"COMPLETED"}:
        return 1, f"job {job} ended {summary}, not COMPLETED"
    return 0, f"job {job} finished: {summary}"


if __name__ == "__main__":
    code, line = judge(sys.argv[1:])
    print(line, file=sys.stderr if code == 2 else sys.stdout)
    sys.exit(code)
