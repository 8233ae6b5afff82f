"""One check of one barrier: run its approved command (scrubbed env, group-killed) and judge it.

`check_once` is the pure core the checker thread wraps: it reads nothing but the barrier,
the filesystem it checks and the command's output, and writes nothing.
"""

from __future__ import annotations

import re
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from wild.barriers.approval_set import Approvals
from wild.barriers.approvals import command_of
from wild.barriers.command_gate import may_run
from wild.parsers.barriers import COMMAND_TYPES, EXTERNAL_TYPES, Barrier
from wild.parsers.barriers import clean_result as one_line
from wild.paths import CHECK_SCRIPTS_DIR, CHECKS_ENV
from wild.process import ProcessResult, run_captured, scrubbed_env, shell_argv
from wild.record import record

DEFAULT_TIMEOUT_S = 60.0
# What a check's stderr adds to a failure's `Result:` is one shortened line: its end suffices.
_STDERR_TAIL = 4096
CANCELLED = "not finished: wild is stopping"
_INTEGER = re.compile(r"[+-]?[0-9]+")


@record
class CheckResult:
    """What one check found; `ran` is False when nothing was checked (webhook, unapproved …)."""

    satisfied: bool
    status_text: str  # one line, for the barrier's `Result:`
    error: str | None
    ran: bool


def unapproved_message(barrier_id: str) -> str:
    return (
        f"not run: its command is not approved; run `wild --approve {barrier_id}` after reading it"
    )


def check_once(
    barrier: Barrier,
    *,
    project_dir: Path,
    approvals: Approvals,
    require_approval: bool,
    env: Mapping[str, str] | None = None,
    cancel: threading.Event | None = None,
) -> CheckResult:
    """Check `barrier` once; never raises for a failing or misbehaving command.

    Setting `cancel` kills a running command at once; the result then has `ran=False`, so
    nothing is recorded for a check that did not finish.
    """
    if barrier.type == "file-exists":
        return _file_exists(barrier, project_dir)
    if barrier.type in EXTERNAL_TYPES:
        return _external(barrier)
    if barrier.type not in COMMAND_TYPES:
        problem = f"unknown barrier type {barrier.type!r}"
        return CheckResult(False, problem, problem, ran=False)
    command = command_of(barrier)
    if command is None:
        problem = "no `Check:` command to run; add a `- Check: COMMAND` line"
        return CheckResult(False, problem, problem, ran=False)
    if barrier.type == "count-based" and barrier.target is None:
        problem = "count-based barrier has no `Target:`; add a `- Target: N` line"
        return CheckResult(False, problem, problem, ran=False)
    if not may_run(command, approval_required=require_approval, approvals=approvals):
        message = unapproved_message(barrier.id)
        return CheckResult(False, message, message, ran=False)
    timeout = (
        barrier.timeout_s if barrier.timeout_s and barrier.timeout_s > 0 else DEFAULT_TIMEOUT_S
    )
    extra = {
        "WILD_BARRIER_ID": barrier.id,
        "WILD_PROJECT_DIR": str(project_dir),
        CHECKS_ENV: str(CHECK_SCRIPTS_DIR),
        **(env or {}),
    }
    try:
        result = _run(command, project_dir, timeout, scrubbed_env(extra), cancel)
    except OSError as exc:  # no /bin/sh, project folder gone, out of processes
        problem = f"could not start the check in {project_dir}: {exc.strerror or exc}"
        return CheckResult(False, problem, problem, ran=False)
    if result.cancelled:
        return CheckResult(False, CANCELLED, None, ran=False)
    if result.timed_out:
        problem = f"timed out after {timeout:g}s; its process group was killed"
        return CheckResult(False, problem, problem, ran=True)
    if barrier.type == "count-based" and barrier.target is not None:
        return _judge_count(barrier.target, result)
    return _judge_command(barrier, result)


def _run(
    command: str,
    cwd: Path,
    timeout_s: float,
    env: Mapping[str, str],
    cancel: threading.Event | None,
) -> ProcessResult:
    """Run `command` with /bin/sh; stderr apart, so `Expect:` and counts see stdout alone."""
    with tempfile.TemporaryDirectory(prefix="wild-check-") as folder:
        return run_captured(
            shell_argv(command),
            timeout_s=timeout_s,
            cwd=cwd,
            env=env,
            stderr_path=Path(folder) / "stderr",
            cancel=cancel,
        )


def _failure_detail(result: ProcessResult, stdout: str) -> str:
    said = result.stderr[-_STDERR_TAIL:].strip() or stdout
    return f"exit {result.exit_code}" + (f": {one_line(said)}" if said else "")


def _judge_command(barrier: Barrier, result: ProcessResult) -> CheckResult:
    stdout = result.output.strip()
    if barrier.expect is not None:
        want = barrier.expect.strip()
        if stdout == want:
            return CheckResult(True, one_line(stdout) or "(empty output)", None, ran=True)
        got = one_line(stdout) if stdout else "(empty)"
        status = f"output {got}, expecting {one_line(want)}"
        if result.exit_code != 0:
            status += f" ({_failure_detail(result, '')})"
        return CheckResult(False, status, None, ran=True)
    if result.exit_code == 0:
        return CheckResult(True, one_line(stdout) or "exit 0", None, ran=True)
    return CheckResult(False, _failure_detail(result, stdout), None, ran=True)


def _judge_count(target: int, result: ProcessResult) -> CheckResult:
    if result.exit_code != 0:
        problem = f"count command failed with {_failure_detail(result, result.output.strip())}"
        return CheckResult(False, problem, problem, ran=True)
    printed = result.output.strip()
    if not _INTEGER.fullmatch(printed):
        problem = f"count command printed {one_line(printed) or '(nothing)'!r}, not a whole number"
        return CheckResult(False, problem, problem, ran=True)
    current = int(printed)
    return CheckResult(current >= target, f"{current}/{target} complete", None, ran=True)


def _file_exists(barrier: Barrier, project_dir: Path) -> CheckResult:
    if not barrier.file:
        problem = "file-exists barrier has no `File:`; add a `- File: PATH` line"
        return CheckResult(False, problem, problem, ran=False)
    # Relative paths are the project's, like the agent's; `~` is expanded as a human means it.
    target = project_dir / Path(barrier.file).expanduser()
    if target.exists():
        return CheckResult(True, "File found", None, ran=True)
    return CheckResult(False, f"Waiting for {barrier.file}", None, ran=True)


def _external(barrier: Barrier) -> CheckResult:
    """Webhook and manual barriers change only from outside: report, never check."""
    done = barrier.status == "satisfied"
    if barrier.type == "webhook":
        status = "Webhook received" if done else "Waiting for webhook"
    else:
        status = "Manually approved" if done else f"Waiting for `wild --satisfy {barrier.id}`"
    return CheckResult(done, status, None, ran=False)
