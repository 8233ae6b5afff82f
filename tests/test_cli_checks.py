"""`wild --run-checks`: runs checks.md now, writes results back, exits 1 when the strategy
fails; commands follow the approval rule (`wild --approve CHECK`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir, invoke

CHECKS = """# Completion Checks

- Strategy: {strategy}

## [PENDING] tests
- Type: tests-pass
- Command: touch ran-tests && echo 4 passed

## [PENDING] report
- Type: file-contains
- File: report.md
- Pattern: best lr
"""


@pytest.fixture
def wild_dir(tmp_path: Path) -> Path:
    return init_wild_dir(tmp_path)


def write_checks(root: Path, strategy: str = "all") -> None:
    (root / "checks.md").write_text(CHECKS.format(strategy=strategy))


def test_the_fresh_template_has_no_checks_and_passes(wild_dir: Path) -> None:
    result = invoke("--run-checks", "--dir", str(wild_dir))
    assert (result.exit_code, result.output) == (
        0,
        "No completion checks in checks.md: COMPLETE needs only that no work is left.\n",
    )


def test_unapproved_command_is_not_run_until_approved(wild_dir: Path) -> None:
    write_checks(wild_dir)
    project = wild_dir.parent
    (project / "report.md").write_text("best lr: 0.01\n")
    first = invoke("--run-checks", "--dir", str(wild_dir))
    assert first.exit_code == 1
    assert first.output == (
        "tests: PENDING — not run: its command is not approved; run `wild --approve tests`"
        " after reading it\n"
        "report: PASSING — report.md matches 'best lr'\n"
        "Strategy all fails: 1/2 passing\n"
    )
    assert not (project / "ran-tests").exists()
    listing = invoke("--approve", "--dir", str(wild_dir))
    assert "  tests: touch ran-tests && echo 4 passed\n" in listing.output
    approved = invoke("--approve", "tests", "--dir", str(wild_dir))
    assert approved.output.startswith("Approved tests: touch ran-tests && echo 4 passed (sha256 ")
    second = invoke("--run-checks", "--dir", str(wild_dir))
    assert second.exit_code == 0
    assert "tests: PASSING — 4 passed\n" in second.output
    assert (project / "ran-tests").exists()


def test_results_are_written_back_and_any_needs_one(wild_dir: Path) -> None:
    write_checks(wild_dir, strategy="any")
    invoke("--approve", "tests", "--dir", str(wild_dir))
    result = invoke("--run-checks", "--json", "--dir", str(wild_dir))
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert (data["strategy"], data["mode"], data["passed"]) == ("any", "verify", True)
    assert [(c["id"], c["status"], c["ran"]) for c in data["checks"]] == [
        ("tests", "passing", True),
        ("report", "failing", True),
    ]
    text = (wild_dir / "checks.md").read_text()
    assert "## [PASSING] tests\n" in text and "## [FAILING] report\n" in text
    assert '- Result: "4 passed"\n' in text
    assert '- Result: "report.md does not exist"\n' in text
    # Everything else is the human's, byte for byte.
    kept = [line for line in text.splitlines(keepends=True) if "Last run" not in line]
    kept = [line for line in kept if "Result:" not in line]
    assert "".join(kept) == CHECKS.format(strategy="any").replace(
        "[PENDING] tests", "[PASSING] tests"
    ).replace("[PENDING] report", "[FAILING] report")


def test_status_shows_where_the_checks_stand(wild_dir: Path) -> None:
    write_checks(wild_dir)
    invoke("--run-checks", "--dir", str(wild_dir))
    status = invoke("--status", "--dir", str(wild_dir))
    assert (
        "Checks: 0/2 passing, 1 failing, 1 not run (strategy all, mode verify)\n" in status.output
    )
    data = json.loads(invoke("--status", "--json", "--dir", str(wild_dir)).output)
    assert data["checks"] == {
        "total": 2,
        "passing": 0,
        "failing": 1,
        "pending": 1,
        "strategy": "all",
        "mode": "verify",
    }


def test_a_tasks_own_check_is_listed_and_approved_by_the_task_id(wild_dir: Path) -> None:
    (wild_dir / "tasks.md").write_text("- [ ] [P1] task-001: Build\n  - check: make test\n")
    listing = invoke("--approve", "--dir", str(wild_dir))
    assert "  task-001: make test\n" in listing.output
    approved = invoke("--approve", "task-001", "--dir", str(wild_dir))
    assert approved.output.startswith("Approved task-001: make test (sha256 ")
    assert (
        "No barrier or check commands await approval."
        in invoke("--approve", "--dir", str(wild_dir)).output
    )
    # A running loop is told to try again what waited for this approval.
    assert '"command":"recheck"' in (wild_dir / "control").read_text()
