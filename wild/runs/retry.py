"""The retry limit and deterministic failures, decided purely (issue 23 item 4).

A sweep's `max_attempts` (default 3) caps how many attempts each of its runs gets: a run
alert offers `rerun` only while one remains, and a rerun asked for after that (an agent's
answer, a human's `wild --rerun`) is refused with one line saying so. A run that failed twice
in a row with the same exit code and the same last log lines is a deterministic failure:
its alert and `wild --runs` say so, so no one reruns it blindly. Reading the attempts' files
is `wild.runs.attempts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wild.parsers.runs import RunRecord, SweepRecord
from wild.record import record

DEFAULT_MAX_ATTEMPTS = 3
# How much of a log's end two failures must share: enough to hold a traceback's last frame
# and its message, little enough that earlier noise (progress bars, timings) does not count.
LAST_LINES = 5
DETERMINISTIC = "deterministic failure"
# The start of the lines wild.runs.wrapper writes into a run's log (`ended: exit code 3`, with
# a time that differs each attempt): not the run's own output, so not compared. The wrapper
# imports nothing of wild, so the text is repeated here; a test checks the two agree.
WRAPPER_NOTE = "[wild wrapper "


def max_attempts(spec: Mapping[str, Any] | None) -> int:
    """The sweep spec's `max_attempts` (validated by wild.parsers.sweeps), else the default."""
    value = spec.get("max_attempts") if spec is not None else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return DEFAULT_MAX_ATTEMPTS


def attempts_left(run: RunRecord, sweep: SweepRecord | None) -> int:
    """How many more attempts the run may have (0: its alert offers no `rerun`)."""
    return max(0, max_attempts(sweep.spec if sweep is not None else None) - run.attempt)


def rerun_refusal(run: RunRecord, sweep: SweepRecord | None) -> str | None:
    """Why the run may not be rerun (one line: attempts used, how to allow more); None: it may."""
    if attempts_left(run, sweep) > 0:
        return None
    limit = max_attempts(sweep.spec if sweep is not None else None)
    return (
        f"run {run.id} has used {run.attempt} of its {limit} attempts (max_attempts of sweep "
        f'{run.sweep}), so it is not rerun; to allow more, raise "max_attempts" in the sweep '
        "file and record it again (wild --sweep FILE)"
    )


@record
class Failure:
    """What tells one failed attempt from another: its exit code and its log's last lines."""

    exit_code: int | None
    last_lines: tuple[str, ...]


def failure_of(exit_code: int | None, log_tail: str) -> Failure:
    """An attempt's failure from its exit code and the end of its own output in its log
    (blank lines, trailing spaces and the wrapper's notes do not count)."""
    lines = [line.rstrip() for line in log_tail.splitlines()]
    own = (line for line in lines if line and not line.startswith(WRAPPER_NOTE))
    return Failure(exit_code, tuple(own)[-LAST_LINES:])


def deterministic(latest: Failure, before: Failure | None) -> bool:
    """Whether two failed attempts in a row failed alike: the same exit code (a real one: a
    lost or timed-out run has none) and the same last log lines."""
    return before is not None and latest.exit_code is not None and latest == before
