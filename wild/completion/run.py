"""Running one completion check: a command in its own process group with its timeout and the
scrubbed environment, or a file looked at; never raises for a failing check."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from wild.completion.verdict import CheckOutcome, tail
from wild.parsers.checks import COMMAND_TYPES, DEFAULT_TIMEOUT_S, Check, record_result
from wild.parsers.field_values import clean_result
from wild.parsers.lines import Span
from wild.paths import CHECK_SCRIPTS_DIR, CHECKS_ENV
from wild.process import ProcessResult, run_captured, scrubbed_env, shell_argv

# A file-contains check reads at most this much: a report, not a dataset.
READ_CAP = 16 * 1024 * 1024
# Decides whether a command from checks.md may run (SPEC §3's approval rule): the caller's.
MayRun = Callable[[str], bool]


def unapproved(check_id: str) -> str:
    return f"not run: its command is not approved; run `wild --approve {check_id}` after reading it"


def record(outcome: CheckOutcome, at: str) -> Callable[[str], str]:
    """The minimal edit of checks.md that writes `outcome`'s result and status word."""

    def edit(text: str) -> str:
        return record_result(
            text, outcome.id, ran_at=at, result=outcome.summary, status=outcome.status
        )

    return edit


def task_check(task_id: str, command: str) -> Check:
    """A task's `- check: <command>` line as a check: it passes when the command exits 0."""
    return Check(
        id=task_id,
        status="pending",
        type="command-succeeds",
        command=command,
        timeout_s=DEFAULT_TIMEOUT_S,
        file=None,
        pattern=None,
        last_run=None,
        result=None,
        fields=MappingProxyType({}),
        span=Span(0, 0),
    )


def run_check(
    check: Check,
    *,
    project_dir: Path,
    may_run: MayRun,
    env: Mapping[str, str] | None = None,
    cancel: threading.Event | None = None,
) -> CheckOutcome:
    """Run `check` once, from `project_dir`."""
    if check.type == "file-exists":
        return _file_exists(check, project_dir)
    if check.type == "file-contains":
        return _file_contains(check, project_dir)
    if check.type not in COMMAND_TYPES:
        return _not_run(check, f"unknown check type {check.type!r}; fix its `- Type:` line")
    if not check.command:
        return _not_run(check, "no `Command:` to run; add a `- Command: ...` line")
    if not may_run(check.command):
        return CheckOutcome(check.id, False, False, unapproved(check.id), unapproved=True)
    extra = {
        "WILD_CHECK_ID": check.id,
        "WILD_PROJECT_DIR": str(project_dir),
        **(env or {}),
        CHECKS_ENV: str(CHECK_SCRIPTS_DIR),
    }
    try:
        result = run_captured(
            shell_argv(check.command),
            timeout_s=check.timeout_s,
            cwd=project_dir,
            env=scrubbed_env(extra),
            cancel=cancel,
        )
    except OSError as exc:  # no /bin/sh, project folder gone, out of processes
        return _not_run(check, f"could not start it in {project_dir}: {exc.strerror or exc}")
    return _judge_command(check, result)


def _not_run(check: Check, why: str) -> CheckOutcome:
    return CheckOutcome(check.id, passed=False, ran=False, summary=why)


def _judge_command(check: Check, result: ProcessResult) -> CheckOutcome:
    output = result.output
    if result.cancelled:
        return _not_run(check, "not finished: wild is stopping")
    if result.timed_out:
        summary = f"timed out after {check.timeout_s:g}s; its process group was killed"
        return CheckOutcome(check.id, False, True, summary, tail(output))
    if result.exit_code == 0:
        last = output.strip().splitlines()[-1:] or ["exit 0"]
        return CheckOutcome(check.id, True, True, clean_result(last[0]), tail(output))
    last = output.strip().splitlines()[-1:]
    summary = f"exit {result.exit_code}" + (f": {clean_result(last[0])}" if last else "")
    return CheckOutcome(check.id, False, True, summary, tail(output))


def _target(check: Check, project_dir: Path) -> Path:
    # Relative paths are the project's, like the agent's; `~` is expanded as a human means it.
    return project_dir / Path(check.file or "").expanduser()


def _file_exists(check: Check, project_dir: Path) -> CheckOutcome:
    if not check.file:
        return _not_run(check, "no `File:` to look for; add a `- File: PATH` line")
    if _target(check, project_dir).exists():
        return CheckOutcome(check.id, True, True, f"{check.file} exists")
    return CheckOutcome(check.id, False, True, f"{check.file} does not exist")


def _file_contains(check: Check, project_dir: Path) -> CheckOutcome:
    if not check.file or check.pattern is None:
        return _not_run(check, "needs `- File: PATH` and `- Pattern: REGEX` lines")
    try:
        pattern = re.compile(check.pattern, re.MULTILINE)
    except re.error as error:
        return _not_run(check, f"Pattern is not a regular expression ({error}); fix it")
    try:
        with _target(check, project_dir).open("rb") as handle:
            text = handle.read(READ_CAP).decode("utf-8", "replace")
    except FileNotFoundError:
        return CheckOutcome(check.id, False, True, f"{check.file} does not exist")
    except OSError as exc:
        return CheckOutcome(check.id, False, True, f"cannot read {check.file}: {exc.strerror}")
    if pattern.search(text):
        return CheckOutcome(check.id, True, True, f"{check.file} matches {check.pattern!r}")
    return CheckOutcome(
        check.id, False, True, f"{check.file} has no match for {check.pattern!r}", tail(text, 500)
    )


def run_all(
    checks: Iterable[Check],
    *,
    project_dir: Path,
    may_run: MayRun,
    record_outcome: Callable[[CheckOutcome], None],
    cancel: threading.Event | None = None,
) -> list[CheckOutcome]:
    """Run `checks` in file order, handing each outcome to `record_outcome` as it ends (a
    check that a stop cut short is returned, not recorded, and ends the run)."""
    outcomes = []
    for check in checks:
        outcome = run_check(check, project_dir=project_dir, may_run=may_run, cancel=cancel)
        outcomes.append(outcome)
        if cancel is not None and cancel.is_set():
            break
        record_outcome(outcome)
    return outcomes
