"""Seed 002 §10.4's chaos cases and the rest of §10.2's paths, on the real local backend:
a malformed sweep recovered, an alert flood aggregated, out-of-order completions and a
duplicate end event, a premature COMPLETE rejected, a human steer mid-sweep."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tests.runs.research_support import (
    Agent,
    lines,
    project,
    resolve_tag,
    run_loop,
    runs_by_id,
    sweep_tag,
)
from wild.commands.edits import add_human_input, update_policy
from wild.parsers.alerts import status_update
from wild.paths import WildPaths
from wild.store.alerts_log import append_alert
from wild.store.events_log import read_events

COMPLETE = "<promise>COMPLETE</promise>\n"
BOUND_S = 30.0


def when_running(paths: WildPaths, count: int, then: Callable[[], object]) -> threading.Thread:
    """Call `then` (on a thread) once `count` runs are running."""

    def watch() -> None:
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            running = [r for r in runs_by_id(paths).values() if r["status"] == "running"]
            if len(running) >= count:
                then()
                return
            time.sleep(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def kinds_of(paths: WildPaths) -> list[str]:
    return [e["kind"] for e in read_events(paths.events)[0]]


def test_a_malformed_sweep_launches_nothing_and_the_next_prompt_says_what_was_wrong(
    tmp_path: Path,
) -> None:
    paths = project(tmp_path, {})
    bad = {"name": "lr", "base_command": "true", "parameters": {"lr": []}, "max_run": 3}
    good = {"name": "lr", "base_command": "true", "parameters": {"lr": [1, 2]}}

    def reply(kind: str, work: str, prompt: str) -> str:
        planning = [k for k, _ in agent.seen].count("planning")
        if kind == "planning" and planning == 1:
            return sweep_tag(bad)
        if kind == "planning" and planning == 2:
            assert "was refused; nothing of it was launched" in prompt
            assert "max_run" in prompt and "lr" in prompt
            return sweep_tag(good)
        return COMPLETE

    agent = Agent(reply)
    assert run_loop(paths, agent).reason == "complete"
    assert agent.kinds() == ["planning", "planning", "analysis", "planning"]
    sweeps = [r for r in lines(paths.runs_log) if r["kind"] == "sweep" and r["status"] == "active"]
    assert len({s["id"] for s in sweeps}) == 1  # only the good one
    assert "sweep-refused" in kinds_of(paths)


def test_runs_failing_together_raise_one_alert_with_every_id(tmp_path: Path) -> None:
    paths = project(tmp_path, {})
    go = tmp_path / "go"
    spec = {
        "name": "flood",
        "base_command": f"while [ ! -f {go} ]; do sleep 0.01; done; exit 1; echo",
        "parameters": {"seed": [1, 2, 3, 4]},
    }

    def reply(kind: str, work: str, prompt: str) -> str:
        if kind == "planning" and not paths.runs_log.exists():
            when_running(paths, 4, go.touch)
            return sweep_tag(spec)
        if kind == "alert":
            return resolve_tag(work, "ignore")
        return COMPLETE

    agent = Agent(reply)
    assert run_loop(paths, agent, slots=4).reason == "complete"
    alerts = {a["id"]: a for a in lines(paths.alerts)}
    assert len(alerts) == 1, alerts
    (alert,) = alerts.values()
    assert sorted(alert["context"]["runs"]) == sorted(runs_by_id(paths))
    assert "4 runs failed together" in alert["description"]
    assert alert["resolution"]["choice"] == "ignore"
    assert agent.kinds() == ["planning", "alert", "analysis", "planning"]


def test_out_of_order_ends_are_all_noticed_and_a_duplicate_end_is_ignored(tmp_path: Path) -> None:
    paths = project(tmp_path, {})
    spec = {
        "name": "order",
        "base_command": 'sleep "$WILD_PARAM_DELAY"; echo',
        "parameters": {"delay": [0.9, 0.5, 0.1]},
    }

    def reply(kind: str, work: str, prompt: str) -> str:
        if kind == "planning" and not paths.runs_log.exists():
            return sweep_tag(spec)
        if kind == "analysis":
            # The first run's end, delivered again: rewrite its marker as a duplicate event.
            marker = next(paths.runs.iterdir()) / "exit"
            marker.write_bytes(marker.read_bytes())
            time.sleep(0.3)
        return COMPLETE

    agent = Agent(reply)
    assert run_loop(paths, agent, slots=3).reason == "complete"
    runs = runs_by_id(paths)
    assert [r["status"] for r in runs.values()] == ["finished"] * 3
    ended = [e["run"] for e in read_events(paths.events)[0] if e["kind"] == "run-ended"]
    assert ended == sorted(runs, reverse=True)  # the shortest (last in the grid) ended first
    table = agent.seen[1][1]
    assert table.index(sorted(runs)[0]) < table.index(sorted(runs)[2])  # grid order
    assert kinds_of(paths).count("sweep-done") == 1


def test_complete_while_runs_go_on_is_rejected(tmp_path: Path) -> None:
    paths = project(tmp_path, {})
    spec = {"name": "slow", "base_command": "sleep 0.5; echo", "parameters": {"seed": [1]}}

    def reply(kind: str, work: str, prompt: str) -> str:
        if kind == "planning" and not paths.runs_log.exists():
            return "Launched; all done!\n" + sweep_tag(spec) + COMPLETE
        return COMPLETE

    agent = Agent(reply)
    assert run_loop(paths, agent).reason == "complete"
    assert agent.kinds() == ["planning", "analysis", "planning"]
    kinds = kinds_of(paths)
    assert kinds.index("complete-rejected") < kinds.index("run-ended")


def test_a_human_steer_mid_sweep_is_handled_while_the_runs_go_on(tmp_path: Path) -> None:
    paths = project(tmp_path, {})
    go = tmp_path / "go"
    spec = {
        "name": "steer",
        "base_command": f"while [ ! -f {go} ]; do sleep 0.01; done; echo",
        "parameters": {"seed": [1, 2]},
    }

    def steer() -> None:
        add_human_input(
            paths, "Let them finish, then compare.", urgent=False, now=datetime.now(UTC)
        )

    def reply(kind: str, work: str, prompt: str) -> str:
        if kind == "planning" and not paths.runs_log.exists():
            when_running(paths, 2, steer)
            return sweep_tag(spec)
        if kind == "human-input":
            assert "Let them finish" in prompt
            assert all(r["status"] == "running" for r in runs_by_id(paths).values())
            go.touch()
            return "<promise>HUMAN_INPUT_PROCESSED</promise>\n"
        return COMPLETE

    agent = Agent(reply)
    assert run_loop(paths, agent).reason == "complete"
    assert agent.kinds() == ["planning", "human-input", "analysis", "planning"]
    assert [r["status"] for r in runs_by_id(paths).values()] == ["finished", "finished"]


CRASH_ONCE = (
    'if [ "$WILD_PARAM_CRASH" = 1 ] && [ ! -f crashed ]; then touch crashed; exit 3; fi; echo ok'
)
CRASHING = {"name": "crash", "base_command": CRASH_ONCE, "parameters": {"crash": [0, 1]}}


def test_a_run_alert_escalated_by_the_policy_goes_on_with_the_humans_answer(
    tmp_path: Path,
) -> None:
    paths = project(tmp_path, {})
    update_policy(paths, "interactive", duration=None, now=datetime.now(UTC))

    def answer_when_asked() -> None:
        deadline = time.monotonic() + BOUND_S
        while "QUESTION" not in paths.human.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        add_human_input(paths, "A transient crash: rerun it.", urgent=False, now=datetime.now(UTC))

    def reply(kind: str, work: str, prompt: str) -> str:
        if kind == "planning" and not paths.runs_log.exists():
            threading.Thread(target=answer_when_asked, daemon=True).start()
            return sweep_tag(CRASHING)
        if kind == "human-input":
            return "<promise>HUMAN_INPUT_PROCESSED</promise>\n"
        if kind == "alert":
            assert "A transient crash: rerun it." in prompt  # the human's guidance
            return resolve_tag(work, "rerun")
        return COMPLETE

    agent = Agent(reply)
    assert run_loop(paths, agent).reason == "complete"
    assert agent.kinds() == ["planning", "human-input", "alert", "analysis", "planning"]
    crashed = next(r for r in runs_by_id(paths).values() if r["params"]["crash"] == 1)
    assert (crashed["status"], crashed["attempt"]) == ("finished", 2)
    assert [a["status"] for a in lines(paths.alerts)][:2] == ["pending", "escalated"]


def test_a_choice_written_by_someone_else_acts_once(tmp_path: Path) -> None:
    """The dashboard (or a human's line) answers the run alert while the agent looks at it."""
    paths = project(tmp_path, {})

    def reply(kind: str, work: str, prompt: str) -> str:
        if kind == "planning" and not paths.runs_log.exists():
            return sweep_tag(CRASHING)
        if kind == "alert":
            latest = [a for a in lines(paths.alerts) if a["id"] == work][-1]
            append_alert(
                paths.alerts,
                status_update(
                    latest, "resolved", datetime.now(UTC), resolution={"choice": "rerun"}
                ),
            )
            return "Looking into it.\n"
        return COMPLETE

    agent = Agent(reply)
    assert run_loop(paths, agent).reason == "complete"
    crashed = next(r for r in runs_by_id(paths).values() if r["params"]["crash"] == 1)
    assert (crashed["status"], crashed["attempt"]) == ("finished", 2)
    applied = [a for a in lines(paths.alerts) if a.get("applied")]
    assert len(applied) == 1
    # A loop started again finds the answer applied: no second rerun.
    assert run_loop(paths, Agent(lambda *_: COMPLETE)).reason == "complete"
    again = next(r for r in runs_by_id(paths).values() if r["params"]["crash"] == 1)
    assert again["attempt"] == 2


def test_an_analysis_that_says_continue_goes_back_to_exploring_with_its_new_sweep(
    tmp_path: Path,
) -> None:
    paths = project(tmp_path, {})
    first = {"name": "coarse", "base_command": "true", "parameters": {"lr": [0.1, 1.0]}}
    finer = {"name": "fine", "base_command": "true", "parameters": {"lr": [0.2, 0.3, 0.4]}}

    def reply(kind: str, work: str, prompt: str) -> str:
        analyses = agent.kinds().count("analysis")
        if kind == "planning" and not paths.runs_log.exists():
            return sweep_tag(first)
        if kind == "analysis" and analyses == 1:
            assert "coarse" in prompt
            return (
                "Between 0.1 and 1.0 is too coarse.\n"
                + sweep_tag(finer)
                + ("<promise>CONTINUE</promise>\n")
            )
        if kind == "analysis":
            assert "fine" in prompt and prompt.count("| finished |") == 3
        return COMPLETE

    agent = Agent(reply)
    assert run_loop(paths, agent).reason == "complete"
    assert agent.kinds() == ["planning", "analysis", "analysis", "planning"]
    sweeps = {r["id"]: r for r in lines(paths.runs_log) if r["kind"] == "sweep"}
    assert sorted(s["name"] for s in sweeps.values()) == ["coarse", "fine"]
    assert all(s["status"] == "done" for s in sweeps.values())
    stages = [e["to"] for e in read_events(paths.events)[0] if e["kind"] == "stage"]
    assert stages == ["running", "analyzing", "running", "analyzing", "exploring"]
