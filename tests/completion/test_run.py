"""Each check kind run for real: commands in their own process group with their timeout and
the scrubbed environment, files looked at, unapproved commands never started."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from wild.completion.run import run_check
from wild.liveness import probe
from wild.parsers import checks as checks_md
from wild.parsers.checks import Check


def check(body: str) -> Check:
    doc = checks_md.parse("## [PENDING] c\n" + body)
    assert doc.problems == ()
    return doc.checks[0]


def yes(_command: str) -> bool:
    return True


@pytest.mark.parametrize("kind", sorted(checks_md.COMMAND_TYPES))
def test_command_kinds_pass_on_exit_zero_and_fail_otherwise(kind: str, tmp_path: Path) -> None:
    good = run_check(
        check(f"- Type: {kind}\n- Command: echo 12 passed\n"), project_dir=tmp_path, may_run=yes
    )
    assert (good.passed, good.ran, good.summary, good.tail) == (
        True,
        True,
        "12 passed",
        "12 passed",
    )
    bad = run_check(
        check(f"- Type: {kind}\n- Command: echo one; echo 2 failed; exit 3\n"),
        project_dir=tmp_path,
        may_run=yes,
    )
    assert (bad.passed, bad.ran, bad.summary) == (False, True, "exit 3: 2 failed")
    assert bad.tail == "one\n2 failed"


def test_a_command_runs_in_the_project_with_the_scrubbed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "secret")
    outcome = run_check(
        check(
            "- Type: command-succeeds\n"
            '- Command: echo "$PWD $WILD_CHECK_ID ${ANTHROPIC_API_KEY:-none}"\n'
        ),
        project_dir=tmp_path,
        may_run=yes,
    )
    assert outcome.summary == f"{tmp_path} c none"


def test_a_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    outcome = run_check(
        check(
            f"- Type: tests-pass\n- Command: sleep 30 & echo $! > {pidfile}; wait\n"
            "- Timeout: 0.5s\n"
        ),
        project_dir=tmp_path,
        may_run=yes,
    )
    assert (outcome.passed, outcome.ran) == (False, True)
    assert outcome.summary == "timed out after 0.5s; its process group was killed"
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while probe(child) is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert probe(child) is None


def test_an_unapproved_command_is_never_started(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    asked: list[str] = []

    def refuse(command: str) -> bool:
        asked.append(command)
        return False

    outcome = run_check(
        check(f"- Type: tests-pass\n- Command: touch {marker}\n"),
        project_dir=tmp_path,
        may_run=refuse,
    )
    assert asked == [f"touch {marker}"]
    assert not marker.exists()
    assert (outcome.passed, outcome.ran, outcome.status) == (False, False, "pending")
    assert "wild --approve c" in outcome.summary


def test_file_exists_is_relative_to_the_project(tmp_path: Path) -> None:
    kind = check("- Type: file-exists\n- File: results/report.md\n")
    assert (
        run_check(kind, project_dir=tmp_path, may_run=yes).summary
        == "results/report.md does not exist"
    )
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "report.md").write_text("")
    assert run_check(kind, project_dir=tmp_path, may_run=yes).passed


def test_file_contains_searches_a_regular_expression(tmp_path: Path) -> None:
    kind = check("- Type: file-contains\n- File: r.md\n- Pattern: ^best lr: [0-9.]+$\n")
    missing = run_check(kind, project_dir=tmp_path, may_run=yes)
    assert (missing.passed, missing.summary) == (False, "r.md does not exist")
    (tmp_path / "r.md").write_text("# Report\nbest lr: soon\n")
    no = run_check(kind, project_dir=tmp_path, may_run=yes)
    assert (no.passed, no.summary) == (False, "r.md has no match for '^best lr: [0-9.]+$'")
    assert no.tail == "# Report\nbest lr: soon"
    (tmp_path / "r.md").write_text("# Report\nbest lr: 0.003\n")
    assert run_check(kind, project_dir=tmp_path, may_run=yes).passed


def test_a_check_missing_what_it_needs_does_not_run(tmp_path: Path) -> None:
    doc = checks_md.parse("## [PENDING] c\n- Type: tests-pass\n")
    outcome = run_check(doc.checks[0], project_dir=tmp_path, may_run=yes)
    assert (outcome.ran, outcome.summary) == (
        False,
        "no `Command:` to run; add a `- Command: ...` line",
    )
    assert os.listdir(tmp_path) == []
