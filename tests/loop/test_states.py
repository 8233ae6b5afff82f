"""The loop's state machine: the table, the timeouts and their TIMEOUT_* overrides, the state a
step leads to, refused transitions, and the states a real in-process loop goes through."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from tests.cli_support import invoke
from tests.loop.harness import T0, TASK, new_project, say, set_policy
from tests.loop.test_decide import model as decide_model
from wild.errors import UsageError
from wild.loop import phases, states
from wild.loop.decide import decide
from wild.loop.model import (
    Action,
    End,
    Log,
    LoopModel,
    LoopResult,
    Moment,
    RunAgent,
    RunChecks,
    Tick,
    Wait,
)
from wild.loop.states import DEFAULT_TIMEOUTS_S, STATES, State
from wild.parsers.loop_state import Recorded, recorded

GATE = "# Barriers\n\n## [WAITING] gate\n- Type: manual\n"


def test_every_state_has_its_transitions_and_its_timeout() -> None:
    for table in (states.ALLOWED, DEFAULT_TIMEOUTS_S):
        assert set(table) == set(STATES)
    for targets in states.ALLOWED.values():
        assert targets <= set(STATES)
    assert states.ALLOWED["COMPLETE"] == states.ALLOWED["STOPPED"] == frozenset()
    # No state but ERROR_RECOVERY's own leads nowhere: every live state can recover.
    for state in set(STATES) - states.TERMINAL - {"ERROR_RECOVERY"}:
        assert states.allowed(state, "ERROR_RECOVERY")


@pytest.mark.parametrize(
    ("source", "target", "ok"),
    [
        ("IDLE", "RUNNING_AGENT", True),
        ("RUNNING_AGENT", "OBSERVING", True),
        ("RUNNING_AGENT", "WAITING", False),  # a run is judged before anything else
        ("RUNNING_AGENT", "COMPLETE", False),
        ("OBSERVING", "RUNNING_AGENT", False),
        ("ERROR_RECOVERY", "OBSERVING", True),
        ("WAITING", "WAITING", True),  # staying is no transition
        ("COMPLETE", "SELECTING", False),
        ("STOPPED", "IDLE", False),  # only a new loop starts again (phases.begin)
    ],
)
def test_the_table_allows_only_its_transitions(source: State, target: State, ok: bool) -> None:
    assert states.allowed(source, target) is ok


DOCS = Path(__file__).resolve().parents[2] / "docs" / "states.md"
# The table's words for a default timeout. RUNNING_AGENT has none of its own: `--agent-timeout`
# (1 h) limits the agent.
DOCUMENTED_S = {"none": None, "5 min": 300.0, "1 h": 3600.0, "`--agent-timeout` (1 h)": None}


def test_the_default_timeouts_are_the_documented_ones() -> None:
    rows = [line.split("|") for line in DOCS.read_text().splitlines() if line.startswith("| `")]
    documented = {cells[1].strip(" `"): DOCUMENTED_S[cells[4].strip()] for cells in rows}
    assert list(documented) == list(STATES)
    assert states.timeouts({}) == documented


def test_timeout_variables_override_each_state() -> None:
    environ = {
        "TIMEOUT_WAITING": "600",
        "TIMEOUT_SELECTING": "10m",
        "TIMEOUT_VERIFYING": "none",
        "TIMEOUT_RUNNING_AGENT": "1.5h",
        "TIMEOUT_COMPLETE": "5",  # a terminal state has no timeout to set
        "TIMEOUT_SOMETHING_ELSE": "x",  # not ours: ignored
    }
    found = states.timeouts(environ)
    assert (found["WAITING"], found["SELECTING"], found["VERIFYING"]) == (600.0, 600.0, None)
    assert (found["RUNNING_AGENT"], found["COMPLETE"], found["OBSERVING"]) == (5400.0, None, 300.0)


@pytest.mark.parametrize("value", ["soon", "0", "-5", "0.5", "", "10 parsecs"])
def test_a_bad_timeout_variable_is_one_line_naming_it(value: str) -> None:
    with pytest.raises(UsageError) as raised:
        states.timeouts({"TIMEOUT_WAITING": value})
    assert str(raised.value) == (
        f"TIMEOUT_WAITING={value!r} is not a timeout; give a number of seconds (at least 1), "
        "a duration such as 10m, or none"
    )


def test_a_bad_timeout_variable_stops_the_loop_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    monkeypatch.setenv("TIMEOUT_OBSERVING", "a while")
    with pytest.raises(UsageError, match="TIMEOUT_OBSERVING='a while' is not a timeout"):
        sim.run()
    assert not sim.paths.events.exists() or sim.events("agent-start") == []


def test_the_agent_gets_the_shorter_of_its_two_timeouts() -> None:
    assert states.agent_timeout(3600.0, None) == 3600.0
    assert states.agent_timeout(3600.0, 120.0) == 120.0
    assert states.agent_timeout(60.0, 120.0) == 60.0
    assert states.agent_timeout(None, None) is None


# -- the model's side: the phase, moved by pure functions, timed on the decision's clock ----


def _model(environ: dict[str, str] | None = None, phase: State = "IDLE") -> LoopModel:
    timeouts = states.timeouts(environ or {})
    return replace(decide_model(), timeouts=timeouts, phase=phase, phase_since=_at(0))


def _at(seconds: float) -> Moment:
    return Moment(T0 + timedelta(seconds=seconds), 1000.0 + seconds)


def _lines(actions: tuple[Action, ...]) -> list[tuple[str, object, object, object]]:
    logs = [a for a in actions if isinstance(a, Log)]
    return [
        (a.kind, a.fields.get("from"), a.fields.get("to"), a.fields.get("reason")) for a in logs
    ]


def test_an_invalid_transition_is_refused_and_logged_never_raised() -> None:
    model, moved = phases.move(_model(), "RUNNING_AGENT", "RunAgent", _at(0))
    model, refused = phases.move(model, "WAITING", "Wait", _at(1))
    assert model.phase == "RUNNING_AGENT"
    assert _lines((*moved, *refused)) == [
        ("state", "IDLE", "RUNNING_AGENT", "RunAgent"),
        ("state-refused", "RUNNING_AGENT", "WAITING", "Wait"),
    ]


@pytest.mark.parametrize(
    "state", [s for s in STATES if DEFAULT_TIMEOUTS_S[s] is not None and s != "ERROR_RECOVERY"]
)
def test_each_default_timeout_leads_to_error_recovery(state: State) -> None:
    model = _model(phase=state)
    limit = DEFAULT_TIMEOUTS_S[state]
    assert limit is not None
    assert phases.timed_out(model, _at(limit - 0.5)) is None
    assert phases.cap(model, None, _at(limit - 0.5)) == 0.5  # a wait never outlasts the state
    timed_out = phases.timed_out(replace(model, backoff_until=5000.0), _at(limit))
    assert timed_out is not None
    model, logs = timed_out
    assert model.phase == "ERROR_RECOVERY"
    assert model.backoff_until is None  # failed iterations are not waited out any longer
    assert _lines(logs) == [
        ("state", state, "ERROR_RECOVERY", f"timeout: {state} passed {limit:g} s")
    ]


def test_a_state_without_a_timeout_waits_as_long_as_it_must() -> None:
    model = _model(phase="WAITING")
    assert phases.cap(model, None, _at(10**7)) is None
    assert phases.timed_out(model, _at(10**7)) is None


def test_an_override_sets_the_timeout_the_clock_is_measured_against() -> None:
    model = _model({"TIMEOUT_WAITING": "90", "TIMEOUT_SELECTING": "none"}, "WAITING")
    assert phases.cap(model, 3600.0, _at(30)) == 60.0
    assert phases.timed_out(model, _at(90)) is not None
    assert phases.timed_out(replace(model, phase="SELECTING"), _at(10**6)) is None


def test_decide_cuts_its_wait_at_the_new_states_timeout() -> None:
    """The phase is the model's: the step that waits is the one that says how long."""
    model = replace(decide_model("- [ ] [P1] t-1: A\n  - blockedBy: gate\n", barriers=GATE))
    model = replace(model, timeouts=states.timeouts({"TIMEOUT_WAITING": "90"}))
    step = decide(model, Tick(), _at(0))
    assert step.model.phase == "WAITING"
    assert step.actions[-1] == Wait(90.0)
    assert ("state", "IDLE", "WAITING", "Wait") in _lines(step.actions)
    assert step.model.state.extra["loopState"]["state"] == "WAITING"


def test_state_json_keeps_the_state_and_since_when() -> None:
    model, _ = phases.move(_model(), "WAITING", "Wait", _at(60))
    kept = model.state
    assert kept.extra["loopState"] == {"state": "WAITING", "since": "2026-02-08T10:01:00Z"}
    assert phases.recorded_state(kept, "WAITING", _at(60)) is kept  # unchanged: not written again
    assert recorded(kept.extra) == Recorded("WAITING", "2026-02-08T10:01:00Z")
    assert recorded({"loopState": ["garbage"]}) is None


# -- the loop, in-process ----------------------------------------------------------------


def _moves(sim: object) -> list[tuple[str | None, str, str]]:
    events = sim.events("state")  # type: ignore[attr-defined]
    return [(e["from"], e["to"], e["reason"]) for e in events]


def test_every_transition_of_a_run_is_a_line_in_events_log(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [say(TASK)]
    result = sim.run()
    assert result.reason == "complete"
    assert _moves(sim) == [
        (None, "IDLE", "loop-start"),
        ("IDLE", "RUNNING_AGENT", "RunAgent"),
        ("RUNNING_AGENT", "OBSERVING", "agent-end"),
        ("OBSERVING", "SELECTING", "Continue"),
        ("SELECTING", "COMPLETE", "End"),
    ]
    assert sim.state().extra["loopState"]["state"] == "COMPLETE"
    assert sim.events("state-refused") == []
    # A restart starts from IDLE, naming the state the last loop left.
    sim.script = [say(TASK)]
    sim.run()
    assert _moves(sim)[5] == ("COMPLETE", "IDLE", "loop-start")


def test_a_wait_past_its_timeout_recovers_by_reading_every_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n  - blockedBy: gate\n")
    sim.paths.barriers.write_text(GATE)
    monkeypatch.setenv("TIMEOUT_WAITING", "10m")
    result = sim.run(max_time_s=1000.0)
    assert result.reason == "max-time"
    assert sim.watcher is not None and sim.watcher.timeouts == [600.0, 400.0]
    assert _moves(sim)[1:] == [
        ("IDLE", "WAITING", "Wait"),
        ("WAITING", "ERROR_RECOVERY", "timeout: WAITING passed 600 s"),
        ("ERROR_RECOVERY", "WAITING", "Wait"),
        ("WAITING", "STOPPED", "End"),
    ]


def test_waiting_has_no_timeout_by_default(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n  - blockedBy: gate\n")
    sim.paths.barriers.write_text(GATE)
    sim.queue_request("stop")
    sim.run()
    assert sim.watcher is not None and sim.watcher.timeouts == [None]


def test_an_agent_past_its_states_timeout_is_killed_and_recovered_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    monkeypatch.setenv("TIMEOUT_RUNNING_AGENT", "2m")
    # The runner kills the agent at its timeout: the scripted run reports it so.
    sim.script = [[{"minutes": 2}, {"run": {"timed_out": True}}], say(TASK)]
    result = sim.run()
    assert result.reason == "complete"
    assert sim.agent is not None and sim.agent.requests[0].timeout_s == 120.0
    assert _moves(sim)[1:4] == [
        ("IDLE", "RUNNING_AGENT", "RunAgent"),
        ("RUNNING_AGENT", "ERROR_RECOVERY", "timeout: RUNNING_AGENT passed 120 s"),
        ("ERROR_RECOVERY", "OBSERVING", "agent-end"),
    ]


def test_the_agent_timeout_defaults_to_agent_timeout(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [say(TASK)]
    sim.run(agent_timeout_s=5400.0)
    assert sim.agent is not None and sim.agent.requests[0].timeout_s == 5400.0


def test_a_backoff_is_error_recovery_and_its_timeout_cuts_it_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    set_policy(sim.paths, repeated_failures="never")
    monkeypatch.setenv("TIMEOUT_ERROR_RECOVERY", "7")
    crashes = [[*say(f"Traceback: broke {n}"), {"exit": 3}] for n in range(3)]
    sim.script = [*crashes, say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 4)
    assert sim.watcher is not None
    # Backoffs of 5 s and 10 s; the second is cut at 7 s, and the loop goes on.
    assert sim.watcher.timeouts == [5.0, 7.0]
    assert [e["state"] for e in sim.events("state-timeout")] == ["ERROR_RECOVERY"]
    assert ("SELECTING", "ERROR_RECOVERY", "Wait") in _moves(sim)


def test_a_loop_waiting_for_the_humans_answer_is_escalated(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [say("<promise>NEED_HUMAN_INPUT</promise>")]

    def status_then_stop() -> None:
        assert sim.state().extra["loopState"]["state"] == "ESCALATED"

    sim.queue_edit(sim.paths.human, status_then_stop)
    sim.queue_request("stop")
    result = sim.run()
    assert result.reason == "stopped"
    assert ("SELECTING", "ESCALATED", "Wait") in _moves(sim)


def test_state_after_a_step_follows_its_last_action() -> None:
    m = decide_model("")
    at = Moment(T0, 1000.0)
    assert states.after_step(m, (RunAgent(1, "task", "t", {}),), at) == "RUNNING_AGENT"
    assert states.after_step(m, (RunChecks(),), at) == "VERIFYING"
    assert states.after_step(m, (Wait(None),), at) == "WAITING"
    backing_off = replace(m, backoff_until=1005.0)
    assert states.after_step(backing_off, (Wait(5.0),), at) == "ERROR_RECOVERY"
    assert states.after_step(m, (End(LoopResult("complete", 1, "")),), at) == "COMPLETE"
    assert states.after_step(m, (End(LoopResult("max-cost", 1, "")),), at) == "STOPPED"
    assert states.after_step(m, (End(LoopResult("waiting-human", 1, "")),), at) == "ESCALATED"


def test_an_agent_killed_at_agent_timeout_is_recovered_from_too(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [[{"minutes": 60}, {"run": {"timed_out": True}}], say(TASK)]
    assert sim.run().reason == "complete"
    assert _moves(sim)[2:4] == [
        ("RUNNING_AGENT", "ERROR_RECOVERY", "timeout: the agent was killed after 3600 s"),
        ("ERROR_RECOVERY", "OBSERVING", "agent-end"),
    ]


def test_the_cli_says_which_variable_is_wrong_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / ".wild"
    result = invoke(
        "Ship it",
        "--dir",
        str(root),
        "--agent",
        "custom",
        "--agent-cmd",
        "true",
        env={"TIMEOUT_VERIFYING": "-1"},
    )
    assert result.exit_code == 2
    assert result.output == (
        "Error: TIMEOUT_VERIFYING='-1' is not a timeout; give a number of seconds (at least 1),"
        " a duration such as 10m, or none\n"
    )
