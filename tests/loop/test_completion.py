"""Completion checks at the end of the loop (SPEC §8): a premature COMPLETE is rejected while
a check fails, the next prompt names the check with its output, and the loop ends only when
the mode allows it; failing checks neither end the loop nor let it spin."""

from __future__ import annotations

from pathlib import Path

from tests.loop.harness import TASK, new_project, say
from wild.barriers.approvals import approve

COMPLETE = "<promise>COMPLETE</promise>"
REPORT_CHECK = """# Completion Checks

- Strategy: all
- Mode: {mode}

## [PENDING] report
- Type: file-contains
- File: report.md
- Pattern: best lr: [0-9.]+
"""


def write_report(text: str = "best lr: 0.003\n") -> dict[str, str]:
    return {"write_file": "report.md", "text": text}


def test_a_premature_complete_is_rejected_until_the_check_passes(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    sim.paths.checks.write_text(REPORT_CHECK.format(mode="verify"))
    sim.script = [
        say("Trained.", TASK),
        say("All done.", COMPLETE),  # the planning run claims COMPLETE; no report yet
        [write_report(), *say("Wrote the report.", COMPLETE)],
    ]
    result = sim.run(plan=True)
    assert (result.reason, result.iterations) == ("complete", 3)
    assert sim.worked_on() == [("task", "task-001"), ("checks", "checks"), ("checks", "checks")]
    prompt = sim.prompt(2)
    assert "## CURRENT WORK: Completion checks fail" in prompt
    assert "- report: report.md does not exist" in prompt
    assert sim.agent is not None and sim.agent.env(2)["WILD_WORK_TYPE"] == "checks"
    checks = sim.paths.checks.read_text()
    assert "## [PASSING] report\n" in checks
    assert "- Result: \"report.md matches 'best lr: [0-9.]+'\"\n" in checks
    verdicts = [(e["passed"], e["failing"]) for e in sim.events("checks")]
    assert verdicts == [(False, ["report"]), (False, ["report"]), (True, [])]


def test_a_failing_checks_output_tail_reaches_the_next_prompt(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    command = "echo collected 3 items; echo 'E   assert 0.1 < 0.05'; exit 1"
    approve(sim.paths.project, command)
    sim.paths.checks.write_text(
        f"- Mode: override\n\n## [PENDING] tests\n- Type: tests-pass\n- Command: {command}\n"
    )
    sim.script = [say("Looked; cannot fix it now.")]
    sim.run(plan=True, max_iterations=1)
    prompt = sim.prompt(1)
    assert "- tests: exit 1: E assert 0.1 < 0.05\n> collected 3 items\n> E   assert" in prompt


def test_override_ends_on_the_checks_alone(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Report\n")
    sim.paths.checks.write_text(REPORT_CHECK.format(mode="override"))
    sim.script = [[write_report(), *say("Reported.", TASK)]]
    result = sim.run(plan=True)
    assert (result.reason, result.iterations) == ("complete", 1)  # no confirmation asked


def test_assist_lets_the_agent_decide(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Report\n")
    sim.paths.checks.write_text(REPORT_CHECK.format(mode="assist"))
    sim.script = [say("Done.", TASK), say(COMPLETE)]
    result = sim.run(plan=True)
    assert result.reason == "complete"
    assert [w for w, _ in sim.worked_on()] == ["task", "planning"]
    assert "## [FAILING] report\n" in sim.paths.checks.read_text()  # run, and recorded


def test_checks_that_keep_failing_ask_the_human_and_hold_instead_of_spinning(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path)
    sim.paths.checks.write_text(REPORT_CHECK.format(mode="verify"))
    sim.script = [say("I claim victory.", COMPLETE)] * 4
    sim.queue_request("stop")  # the first time the loop sleeps: it waits for the human
    result = sim.run(plan=True)
    assert result.reason == "stopped"
    # The default policy's Repeated Failures rule (escalate after 3) applies, as to a task.
    assert [w for w, _ in sim.worked_on()] == ["checks", "checks", "checks"]
    assert "checks" in sim.book().awaiting
    assert [e.status for e in sim.human().inputs] == ["question"]


def test_no_checks_file_changes_nothing(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    sim.paths.checks.unlink()
    sim.script = [say("Trained.", TASK), say(COMPLETE)]
    result = sim.run(plan=True)
    assert result.reason == "complete"
    assert sim.events("checks") == []


def test_an_unapproved_check_asks_the_human_and_runs_once_approved(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    command = "test -f report.md"
    sim.paths.checks.write_text(
        f"- Mode: override\n\n## [PENDING] report\n- Type: command-succeeds\n- Command: {command}\n"
    )
    (tmp_path / "report.md").write_text("done\n")

    sim.queue_edit(sim.paths.human, lambda: approve(sim.paths.project, command))
    sim.queue_request("recheck")  # what `wild --approve report` asks of the running loop
    result = sim.run(plan=True)
    assert (result.reason, result.iterations) == ("complete", 0)  # no agent was needed
    asked = sim.human().inputs
    assert [e.status for e in asked] == ["question"]
    assert "completion check commands await your approval: report" in asked[0].content
    assert [(e["passed"], e["failing"]) for e in sim.events("checks")] == [
        (False, ["report"]),
        (True, []),
    ]
