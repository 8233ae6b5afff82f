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
from collections.abc import Sequence
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


def claim_text(now: str, pid: int, boot: str | None) -> str:
    """A claim's content: when, by which loop, in which boot of the machine."""
    return f"{now} {pid} {boot or '-'}\n"


def claimed_in_boot(run_dir: Path, attempt: int) -> str | None:
    """The boot id the attempt was claimed in; None when its claim does not say."""
    try:
        words = claim_path(run_dir, attempt).read_text(encoding="ascii", errors="replace").split()
    except OSError:
        return None
    return words[2] if len(words) == 3 and words[2] != "-" else None


def unclaim(run_dir: Path, attempt: int) -> None:
    """Give the attempt's claim back (it was never started): it may be claimed again."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(claim_path(run_dir, attempt))


def claim(run_dir: Path, attempt: int, text: str) -> bool:
    """Take the attempt's claim; False if it was already taken (then do not start it)."""
    return claim_all([(run_dir, attempt, text)]) == [True]


def claim_all(claims: Sequence[tuple[Path, int, str]]) -> list[bool]:
    """Take each attempt's claim (run folder, attempt, text), then make them durable together
    (group commit): every claim taken is on the disk when this returns, so none of these runs
    may start before its claim could survive a crash. One result per claim: False when it was
    already taken (then do not start that run).

    The claim's existence is what a restarted loop reads, so the folders' entries are what
    is flushed: each run folder, and the folder of run folders when a run folder is made here
    (`prepare` makes the next ones ahead, off the path from one run's end to the next's
    start). The text (when, which loop, which boot) is for adoption and a human reading it.
    """
    taken: list[bool] = []
    folders: dict[Path, None] = {}  # in order, each once
    for run_dir, attempt, text in claims:
        if not run_dir.is_dir():
            run_dir.mkdir(parents=True, exist_ok=True)
            folders[run_dir.parent] = None
        try:
            fd = os.open(claim_path(run_dir, attempt), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            taken.append(False)
            continue
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        taken.append(True)
        folders[run_dir] = None
    for folder in folders:
        with contextlib.suppress(OSError):  # not every filesystem lets a folder be fsynced
            fsync_dir(folder)
    return taken


def prepare(run_dirs: Sequence[Path]) -> None:
    """Make the run folders that do not exist yet, durably (one fsync of their parent), so
    claiming them later flushes only the run folder."""
    parents: dict[Path, None] = {}
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            run_dir.mkdir(parents=True, exist_ok=True)
            parents[run_dir.parent] = None
    for parent in parents:
        with contextlib.suppress(OSError):
            fsync_dir(parent)


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
