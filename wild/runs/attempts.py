"""A run folder's attempts on disk: the claim taken before a start, and a finished attempt's
files moved aside for a rerun.

The claim is what makes "never start a run twice" hold across crashes: `claim-<attempt>` is
created with O_EXCL before the backend is asked to start the attempt, so a loop restarted
after dying between the start and its `running` line finds the claim and adopts the attempt
(or marks it lost) instead of starting it again.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from wild.parsers.runs import RunRecord
from wild.runs import markers, retry
from wild.store.files import fsync_dir

# What one attempt leaves in the run folder (the claim is per attempt, by name).
ATTEMPT_FILES = (
    markers.LOG,
    markers.EXIT,
    markers.PID,
    markers.METRICS_LINES,
    markers.METRICS_FILE,
)


def claim_path(run_dir: Path, attempt: int) -> Path:
    return run_dir / f"claim-{attempt}"


def claimed(run_dir: Path, attempt: int) -> bool:
    return claim_path(run_dir, attempt).exists()


def claim(run_dir: Path, attempt: int, text: str) -> bool:
    """Take the attempt's claim; False if it was already taken (then do not start it)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = claim_path(run_dir, attempt)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        os.write(fd, text.encode())
        os.fsync(fd)  # the claim must reach the disk before the run can
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        fsync_dir(run_dir)
    return True


def archive(run_dir: Path, attempt: int) -> Path:
    """Move attempt `attempt`'s files into `attempt-<n>/`; safe to repeat after a crash."""
    target = attempt_dir(run_dir, attempt)
    target.mkdir(parents=True, exist_ok=True)
    for name in (*ATTEMPT_FILES, claim_path(run_dir, attempt).name):
        with contextlib.suppress(FileNotFoundError):
            os.replace(run_dir / name, target / name)
    return target


def attempt_dir(run_dir: Path, attempt: int) -> Path:
    """Where attempt `attempt`'s files lie once a rerun moved them aside."""
    return run_dir / f"attempt-{attempt}"


def deterministic_failure(run_dir: Path, run: RunRecord, log_tail: str | None = None) -> bool:
    """Whether the run's failed attempt failed as its previous attempt did (exit code and
    last log lines; `log_tail` is the current log's end when the caller read it already)."""
    if run.status != "failed" or run.attempt < 2:
        return False
    earlier = attempt_dir(run_dir, run.attempt - 1)
    marker = markers.read_marker(earlier).marker
    if marker is None:
        return False
    tail = markers.log_tail(run_dir) if log_tail is None else log_tail
    before = retry.failure_of(marker.exit_code, markers.log_tail(earlier))
    return retry.deterministic(retry.failure_of(run.exit_code, tail), before)
