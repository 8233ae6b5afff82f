"""check_once: every barrier type, Expect and Target, timeouts that kill grandchildren, approval."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.barriers.conftest import barrier
from wild.barriers.approval_set import Approvals, command_hash
from wild.barriers.checks import CANCELLED, CheckResult, check_once
from wild.liveness import probe
from wild.process import scrubbed_env

NOBODY = Approvals(frozenset())


def run(
    block: str,
    project: Path,
    *,
    approvals: Approvals = NOBODY,
    require: bool = False,
    env: dict[str, str] | None = None,
) -> CheckResult:
    return check_once(
        barrier(block), project_dir=project, approvals=approvals, require_approval=require, env=env
    )


def command(check: str, *extra: str, kind: str = "command-check", bid: str = "b1") -> str:
    return "\n".join([f"## [WAITING] {bid}", f"- Type: {kind}", f"- Check: {check}", *extra, ""])


# ------------------------------------------------------------------------- command-check


def test_exit_code_zero_satisfies_and_reports_the_output(tmp_path: Path) -> None:
    assert run(command("echo all done"), tmp_path) == CheckResult(True, "all done", None, True)


def test_exit_code_zero_without_output_says_so(tmp_path: Path) -> None:
    assert run(command("true"), tmp_path) == CheckResult(True, "exit 0", None, True)


def test_non_zero_exit_is_not_satisfied_and_reports_stderr(tmp_path: Path) -> None:
    result = run(command("echo partial; echo boom >&2; exit 3"), tmp_path)
    assert result == CheckResult(False, "exit 3: boom", None, True)


def test_non_zero_exit_without_stderr_reports_stdout(tmp_path: Path) -> None:
    result = run(command("echo 5 jobs still running; exit 1"), tmp_path)
    assert result == CheckResult(False, "exit 1: 5 jobs still running", None, True)


def test_expect_compares_the_stripped_stdout_exactly(tmp_path: Path) -> None:
    result = run(command("printf '  0 \\n\\n'", "- Expect: 0"), tmp_path)
    assert result == CheckResult(True, "0", None, True)


def test_expect_mismatch_is_not_satisfied(tmp_path: Path) -> None:
    result = run(command("echo 5", "- Expect: 0"), tmp_path)
    assert result == CheckResult(False, "output 5, expecting 0", None, True)


def test_expect_is_text_not_an_exit_code(tmp_path: Path) -> None:
    # `Expect: 0` with a command that exits 0 but prints nothing is not satisfied.
    result = run(command("true", "- Expect: 0"), tmp_path)
    assert result == CheckResult(False, "output (empty), expecting 0", None, True)


def test_expect_ignores_stderr_noise(tmp_path: Path) -> None:
    result = run(command("echo 'warning: slow' >&2; echo 0", "- Expect: 0"), tmp_path)
    assert result == CheckResult(True, "0", None, True)


def test_expect_matches_whatever_the_exit_code(tmp_path: Path) -> None:
    result = run(command("echo ready; exit 4", '- Expect: "ready"'), tmp_path)
    assert result == CheckResult(True, "ready", None, True)


def test_expect_mismatch_with_failure_shows_both(tmp_path: Path) -> None:
    result = run(command("echo nope >&2; exit 2", "- Expect: done"), tmp_path)
    assert result == CheckResult(False, "output (empty), expecting done (exit 2: nope)", None, True)


def test_commands_run_in_the_project_folder(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "done.flag").write_text("")
    assert run(command("test -f results/done.flag"), tmp_path).satisfied is True


def test_missing_check_line_is_an_error_and_runs_nothing(tmp_path: Path) -> None:
    result = run("## [WAITING] b1\n- Type: command-check\n", tmp_path)
    problem = "no `Check:` command to run; add a `- Check: COMMAND` line"
    assert result == CheckResult(False, problem, problem, False)


def test_a_check_that_cannot_start_is_an_error(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    result = run(command("true"), gone)
    problem = f"could not start the check in {gone}: No such file or directory"
    assert result == CheckResult(False, problem, problem, False)


# --------------------------------------------------------------------------- count-based


def test_count_at_target_is_satisfied(tmp_path: Path) -> None:
    result = run(command("echo 8", "- Target: 8", kind="count-based"), tmp_path)
    assert result == CheckResult(True, "8/8 complete", None, True)


def test_count_below_target_is_not_satisfied(tmp_path: Path) -> None:
    result = run(command("echo ' 3'", "- Target: 8", kind="count-based"), tmp_path)
    assert result == CheckResult(False, "3/8 complete", None, True)


def test_count_above_target_is_satisfied(tmp_path: Path) -> None:
    result = run(command("echo 12", "- Target: 8", kind="count-based"), tmp_path)
    assert result == CheckResult(True, "12/8 complete", None, True)


def test_count_that_is_not_a_number_is_an_error(tmp_path: Path) -> None:
    result = run(command("echo three", "- Target: 8", kind="count-based"), tmp_path)
    problem = "count command printed 'three', not a whole number"
    assert result == CheckResult(False, problem, problem, True)


def test_count_command_failure_is_an_error(tmp_path: Path) -> None:
    result = run(
        command("echo 9; echo 'no squeue' >&2; exit 127", "- Target: 8", kind="count-based"),
        tmp_path,
    )
    problem = "count command failed with exit 127: no squeue"
    assert result == CheckResult(False, problem, problem, True)


def test_count_without_target_runs_nothing(tmp_path: Path) -> None:
    result = run(command("touch ran", kind="count-based"), tmp_path)
    problem = "count-based barrier has no `Target:`; add a `- Target: N` line"
    assert result == CheckResult(False, problem, problem, False)
    assert not (tmp_path / "ran").exists()


# --------------------------------------------------------------------------- file-exists


def test_file_exists_relative_to_the_project(tmp_path: Path) -> None:
    block = "## [WAITING] b1\n- Type: file-exists\n- File: out/COMPLETE.flag\n"
    assert run(block, tmp_path) == CheckResult(False, "Waiting for out/COMPLETE.flag", None, True)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "COMPLETE.flag").write_text("")
    assert run(block, tmp_path) == CheckResult(True, "File found", None, True)


def test_file_exists_with_an_absolute_path(tmp_path: Path) -> None:
    flag = tmp_path / "elsewhere.flag"
    flag.write_text("")
    block = f"## [WAITING] b1\n- Type: file-exists\n- File: {flag}\n"
    assert run(block, tmp_path / "project").satisfied is True


# ---------------------------------------------------------------------- webhook / manual


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (
            "## [WAITING] h\n- Type: webhook\n",
            CheckResult(False, "Waiting for webhook", None, False),
        ),
        ("## [SATISFIED] h\n- Type: webhook\n", CheckResult(True, "Webhook received", None, False)),
        (
            "## [WAITING] m\n- Type: manual\n",
            CheckResult(False, "Waiting for `wild --satisfy m`", None, False),
        ),
        ("## [SATISFIED] m\n- Type: manual\n", CheckResult(True, "Manually approved", None, False)),
    ],
)
def test_external_barriers_only_report_their_status(
    tmp_path: Path, block: str, expected: CheckResult
) -> None:
    assert run(block, tmp_path, require=True) == expected


def test_unknown_type_is_an_error(tmp_path: Path) -> None:
    problem = "unknown barrier type 'slurm-job'"
    result = run("## [WAITING] b1\n- Type: slurm-job\n- Check: touch ran\n", tmp_path)
    assert result == CheckResult(False, problem, problem, False)
    assert not (tmp_path / "ran").exists()


# ------------------------------------------------------------------------------- timeout


def test_timeout_kills_the_whole_group_including_grandchildren(tmp_path: Path) -> None:
    block = command("sleep 300 & echo $! > child.pid; wait", "- Timeout: 1s")
    result = run(block, tmp_path)
    problem = "timed out after 1s; its process group was killed"
    assert result == CheckResult(False, problem, problem, True)
    pid = int((tmp_path / "child.pid").read_text())
    assert probe(pid) is None


def test_a_background_leftover_of_a_quick_check_is_killed_too(tmp_path: Path) -> None:
    result = run(command("sleep 300 & echo $! > child.pid; echo started"), tmp_path)
    assert result == CheckResult(True, "started", None, True)
    assert probe(int((tmp_path / "child.pid").read_text())) is None


class _SetOnceWritten(threading.Event):
    """A cancel event that turns set once the check has written `path`, as a stop() would."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def is_set(self) -> bool:
        return self.path.exists() and self.path.read_text().endswith("\n")


def test_cancel_kills_a_running_check_which_then_counts_as_not_run(tmp_path: Path) -> None:
    child = tmp_path / "child.pid"
    block = command("sleep 300 & echo $! > child.pid; wait", "- Timeout: 120s")
    result = check_once(
        barrier(block),
        project_dir=tmp_path,
        approvals=NOBODY,
        require_approval=False,
        cancel=_SetOnceWritten(child),
    )
    # Not "timed out": only the cancel could have ended it before its 120 s.
    assert result == CheckResult(False, CANCELLED, None, False)
    assert CANCELLED == "not finished: wild is stopping"
    assert probe(int(child.read_text())) is None


# ------------------------------------------------------------------------------ approval


def test_unapproved_command_is_not_run_under_required_approval(tmp_path: Path) -> None:
    result = run(command("touch ran.marker"), tmp_path, require=True)
    message = "not run: its command is not approved; run `wild --approve b1` after reading it"
    assert result == CheckResult(False, message, message, False)
    assert not (tmp_path / "ran.marker").exists()


def test_approved_command_runs_under_required_approval(tmp_path: Path) -> None:
    approved = Approvals(frozenset({command_hash("touch ran.marker")}))
    result = run(command("touch ran.marker"), tmp_path, approvals=approved, require=True)
    assert result == CheckResult(True, "exit 0", None, True)
    assert (tmp_path / "ran.marker").exists()


def test_approval_is_for_the_exact_command(tmp_path: Path) -> None:
    approved = Approvals(frozenset({command_hash("touch ran.marker")}))
    result = run(command("touch  ran.marker"), tmp_path, approvals=approved, require=True)
    assert result.ran is False
    assert not (tmp_path / "ran.marker").exists()


def test_trusted_policy_runs_without_approval(tmp_path: Path) -> None:
    assert run(command("touch ran.marker"), tmp_path, require=False).ran is True
    assert (tmp_path / "ran.marker").exists()


# ----------------------------------------------------------------------------- environment


def test_checks_see_only_the_allowlisted_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("WILD_RUN", "7")
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("LC_TIME", "C")
    check = (
        'printf \'%s|%s|%s|%s|%s|%s|%s\' "${OPENAI_API_KEY:-none}" "${GITHUB_TOKEN:-none}" '
        '"$WILD_RUN" "$SLURM_JOB_ID" "$LC_TIME" "$WILD_BARRIER_ID" "$WILD_EXTRA"'
    )
    result = run(command(check, bid="env-check"), tmp_path, env={"WILD_EXTRA": "given"})
    assert result == CheckResult(True, "none|none|7|42|C|env-check|given", None, True)


def test_scrubbed_env_keeps_only_the_allowlist_plus_extras() -> None:
    base = {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "AWS_SECRET_ACCESS_KEY": "x",
        "WILD_DIR": "/w",
        "SLURM_JOB_ID": "1",
        "ANTHROPIC_API_KEY": "y",
        "TERM": "xterm",
    }
    assert scrubbed_env({"EXTRA": "1"}, base) == {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "WILD_DIR": "/w",
        "SLURM_JOB_ID": "1",
        "EXTRA": "1",
    }


def test_barrier_text_is_never_spliced_into_the_command(tmp_path: Path) -> None:
    # An id holding shell syntax reaches the command only as data in $WILD_BARRIER_ID.
    bid = "x;touch${IFS}pwned"
    result = run(command('printf %s "$WILD_BARRIER_ID"', bid=bid), tmp_path)
    assert result == CheckResult(True, bid, None, True)
    assert not (tmp_path / "pwned").exists()
    assert os.listdir(tmp_path) == []
