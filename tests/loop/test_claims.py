"""A killed or crashed agent's claims do not count: only a run that exits 0 has its promises,
`<resolve_alert>` and `<event_output>` believed; any other run is a failed attempt, and what
it claimed is recorded as ignored, with the reason. In-process (the real process is in
tests/reliability/test_prompts_agent_faults.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.loop.harness import PROCESSED, RESOLVED, T0, TASK, add_alert, new_project, say
from wild.agents.run_result import AgentRun
from wild.agents.signals import parse_signals
from wild.commands import edits
from wild.loop.claims import distrust

# How a run can end without being clean, and what wild says about it.
UNCLEAN = [
    ({"exit": 137}, "it exited with 137 (killed by SIGKILL)"),
    ({"exit": 1}, "it exited with 1"),
    ({"run": {"exit_code": -9}}, "it was killed by SIGKILL"),
    ({"run": {"exit_code": -11}}, "it was killed by SIGSEGV"),
    ({"run": {"timed_out": True, "exit_code": -15}}, "it was killed at its timeout"),
    ({"run": {"is_error": True}}, "the agent reported an error"),
]
NEW_TASK = '<event_output>{"status": "ok", "new_events": ["Plot the loss"]}</event_output>'


@pytest.mark.parametrize(("ending", "reason"), UNCLEAN, ids=[r for _, r in UNCLEAN])
def test_a_task_claimed_by_a_run_that_did_not_exit_cleanly_is_not_ticked(
    tmp_path: Path, ending: dict[str, Any], reason: str
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    sim.script = [[*say("Finished.", TASK), ending]]
    result = sim.run(max_iterations=1)
    assert (result.reason, result.iterations) == ("max-iterations", 1)
    assert sim.task_status("task-001") == "in-progress"
    assert sim.state().consecutive_failures == 1
    assert sim.book().failures == {"task-001": 1}
    ignored = sim.events("signals-ignored")
    assert [(e["related"], e["promises"], e["reason"]) for e in ignored] == [
        ("task-001", ["TASK_COMPLETE"], reason)
    ]
    assert sim.state().recent_summaries[0].endswith(f"signals TASK_COMPLETE ignored: {reason})")
    [warning] = [line for line in sim.out if line.startswith("⚠️  Iteration 1:")]
    assert "; its TASK_COMPLETE was ignored (log: " in warning


def test_the_same_claim_from_a_clean_exit_ticks_the_task(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    sim.script = [say("Finished.", TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 1)
    assert sim.task_status("task-001") == "complete"
    assert sim.events("signals-ignored") == []


@pytest.mark.parametrize("kind", ["alert", "human-input"])
def test_a_crashed_run_resolves_no_alert_and_processes_no_input(tmp_path: Path, kind: str) -> None:
    sim = new_project(tmp_path)
    add_alert(sim.paths, "alert-1", severity="info")
    if kind == "human-input":
        edits.add_human_input(sim.paths, "Use batch size 32", urgent=False, now=T0)
    claims = [
        RESOLVED if kind == "alert" else PROCESSED,
        '<resolve_alert>{"id": "alert-1"}</resolve_alert>',
        NEW_TASK,
    ]
    sim.script = [[*say(*claims), {"exit": 137}]]
    sim.run(max_iterations=1)
    assert sim.alert_lines()[-1]["status"] != "resolved"
    assert [h.status for h in sim.human().inputs] == (["pending"] if kind == "human-input" else [])
    assert "Plot the loss" not in sim.paths.tasks.read_text()
    assert sim.state().consecutive_failures == 1
    [ignored] = sim.events("signals-ignored")
    assert (ignored["resolutions"], ignored["event_output"]) == (["alert-1"], "ok")


def test_a_crashed_runs_complete_does_not_end_the_loop(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    sim.script = [[*say("<promise>COMPLETE</promise>"), {"exit": 137}]]
    result = sim.run(plan=True, max_iterations=1)
    assert result.reason == "max-iterations"
    assert sim.book().failures == {"planning": 1}


def run_ending(**fields: Any) -> AgentRun:
    base: dict[str, Any] = {
        "exit_code": 0,
        "timed_out": False,
        "cancelled": False,
        "duration_s": 1.0,
        "final_text": TASK,
        "signals": parse_signals(TASK),
        "cost_usd": None,
        "input_tokens": None,
        "output_tokens": None,
        "rate_limited": False,
        "rate_limit_reset": None,
        "log_path": Path("iteration-1.log"),
        "output_bytes": 0,
    }
    return AgentRun(**{**base, **fields})


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({}, None),
        ({"exit_code": 137}, "it exited with 137 (killed by SIGKILL)"),
        ({"exit_code": 143}, "it exited with 143 (killed by SIGTERM)"),
        ({"exit_code": 2}, "it exited with 2"),
        ({"exit_code": 255}, "it exited with 255"),
        ({"exit_code": -6}, "it was killed by SIGABRT"),
        ({"exit_code": -200}, "it was killed by signal 200"),
        ({"cancelled": True, "exit_code": -9}, "it was stopped"),
    ],
)
def test_distrust_names_why(fields: dict[str, Any], reason: str | None) -> None:
    assert distrust(run_ending(**fields)) == reason
