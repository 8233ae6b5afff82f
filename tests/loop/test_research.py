"""The loop's pure research decisions: run alerts, choices, sweep ends, stage, run table."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from wild import prompt_files, prompts
from wild.agents.signals import parse_signals
from wild.agents.sweep_tags import sweeps_in_reply
from wild.clock import iso
from wild.loop import research
from wild.parsers.alerts import Alert, AlertIndex, parse_entry, status_update
from wild.parsers.runs import RunRecord, RunStatus, SweepRecord
from wild.runs import stage
from wild.runs.table import run_table

NOW = datetime(2026, 11, 25, 20, 0, tzinfo=UTC)


def run(
    run_id: str, status: RunStatus, *, sweep: str = "sw1", exit_code: int | None = None
) -> RunRecord:
    return RunRecord(
        id=run_id,
        sweep=sweep,
        params={"lr": 0.1},
        resolved_instruction="python train.py --lr=0.1",
        status=status,
        exit_code=exit_code,
    )


def sweep(sweep_id: str, run_ids: tuple[str, ...], task: str | None = None) -> SweepRecord:
    return SweepRecord(
        id=sweep_id, name=sweep_id, spec={}, status="active", run_ids=run_ids, task=task
    )


def alert_of(record: dict[str, object]) -> Alert:
    alert, _ = parse_entry(orjson.dumps(record), 1)
    assert alert is not None
    return alert


def test_one_failed_run_raises_its_own_alert_with_its_log_tail_and_choices() -> None:
    failed = run("sw1-001", "failed", exit_code=2)
    record = research.failure_alert([failed], {"sw1-001": "x" * 5000 + "Traceback"}, NOW)
    assert record["source"] == "sw1-001"
    assert record["choices"] == ["rerun", "ignore", "stop_sweep"]
    assert record["context"]["log_tail"]["sw1-001"].endswith("Traceback")
    assert len(record["context"]["log_tail"]["sw1-001"]) == research.TAIL_CHARS
    assert "exit code 2" in record["description"]


def test_runs_failing_together_raise_one_alert_naming_all() -> None:
    failed = [run(f"sw1-00{i}", "failed", exit_code=1) for i in range(1, 6)]
    record = research.failure_alert(failed, {}, NOW)
    assert record["context"]["runs"] == [r.id for r in failed]
    assert "5 runs failed together" in record["description"]
    assert stage.runs_of_alert(alert_of(record)) == tuple(r.id for r in failed)


def ended(run_id: str, at_s: int) -> RunRecord:
    """A run that failed, its exit marker written `at_s` seconds after NOW."""
    return replace(run(run_id, "failed", exit_code=1), ended_at=iso(NOW + timedelta(seconds=at_s)))


def test_a_flood_seen_in_two_looks_is_still_one_alert() -> None:
    """Issue 24 item 5: under load, 6 runs failing together raised 2 alerts (the loop's two
    looks split them); their own end times, seconds apart, make them one."""
    first = [ended("sw1-001", 0), ended("sw1-002", 1)]
    later = [ended(f"sw1-00{i}", i) for i in range(3, 7)]
    index = {r.id: r for r in first + later}
    record, joined = research.flood_alert(first, {"sw1-001": "boom"}, (), index, NOW)
    assert not joined
    open_alert = alert_of(record)
    seen_late = NOW + timedelta(minutes=10)  # when the loop happened to look again
    update, joined = research.flood_alert(later, {}, (open_alert,), index, seen_late)
    assert joined
    alerts = AlertIndex([open_alert, alert_of(update)])
    [flood] = alerts.active()
    assert flood.id == open_alert.id
    assert stage.runs_of_alert(flood) == tuple(f"sw1-00{i}" for i in range(1, 7))
    assert flood.description == "6 runs failed together: " + ", ".join(
        f"sw1-00{i}" for i in range(1, 7)
    )
    assert flood.context["log_tail"]["sw1-001"] == "boom"


def test_failures_far_apart_or_an_alert_already_taken_up_raise_a_new_alert() -> None:
    first, apart = ended("sw1-001", 0), ended("sw1-002", int(research.FLOOD_WINDOW_S) + 1)
    index = {r.id: r for r in (first, apart)}
    record, _ = research.flood_alert([first], {}, (), index, NOW)
    pending = alert_of(record)
    assert research.flood_alert([apart], {}, (pending,), index, NOW)[1] is False
    near = ended("sw1-002", 5)
    taken = alert_of(status_update(pending, "in-progress", NOW))
    index = {r.id: r for r in (first, near)}
    assert research.flood_alert([near], {}, (taken,), index, NOW)[1] is False
    assert research.flood_alert([near], {}, (pending,), index, NOW)[1] is True


def test_stop_sweep_widens_to_every_open_run_of_the_sweep() -> None:
    runs = {
        r.id: r
        for r in (run("sw1-001", "failed"), run("sw1-002", "running"), run("sw1-003", "queued"),
                  run("sw1-004", "finished"), run("sw2-001", "running", sweep="sw2"))
    }  # fmt: skip
    sweeps = {"sw1": sweep("sw1", ("sw1-001", "sw1-002", "sw1-003", "sw1-004"))}
    assert research.runs_to_act_on("stop_sweep", ["sw1-001"], runs, sweeps) == (
        "sw1-002",
        "sw1-003",
    )
    assert research.runs_to_act_on("rerun", ["sw1-001", "gone"], runs, sweeps) == ("sw1-001",)
    assert research.act_of_choice("ignore") is None
    assert research.act_of_choice("stop_run") == "stop_run"


def test_a_sweep_is_done_only_when_all_runs_ended_and_their_alerts_are_resolved() -> None:
    runs = {"sw1-001": run("sw1-001", "finished"), "sw1-002": run("sw1-002", "failed")}
    s = sweep("sw1", ("sw1-001", "sw1-002"), task="analyze-sw1")
    alert = alert_of(research.failure_alert([runs["sw1-002"]], {}, NOW))
    open_about = stage.open_run_alerts([alert])
    assert not stage.sweep_done(s, runs, open_about)
    assert stage.stage_of({"sw1": s}, runs, [alert], frozenset({"analyze-sw1"})) == "running"
    assert stage.sweep_done(s, runs, stage.open_run_alerts([]))  # answered: no longer open
    assert stage.stage_of({"sw1": s}, runs, [], frozenset({"analyze-sw1"})) == "analyzing"
    assert stage.stage_of({"sw1": s}, runs, [], frozenset()) == "exploring"
    running = {**runs, "sw1-001": run("sw1-001", "running")}
    assert not stage.sweep_done(s, running, {})


def test_the_run_table_carries_params_status_attempts_exit_code_and_metrics() -> None:
    done = RunRecord(
        id="sw1-001", sweep="sw1", params={"clip": 0.2, "pairs": "64/16"},
        resolved_instruction="x", status="failed", exit_code=137, reason="timeout",
        attempt=2, metrics={"loss": 0.123456789, "step": 40},
    )  # fmt: skip
    table = run_table([done])
    row = table.splitlines()[2]
    assert (
        row == "| sw1-001 | clip=0.2, pairs=64/16 | failed (timeout) | 2 | 137 "
        "| loss=0.123457, step=40 |"
    )
    assert stage.counts([done, run("b", "planned"), run("c", "running")]).to_json() == {
        "queued": 1, "running": 1, "finished": 0, "failed": 1, "stopped": 0,
    }  # fmt: skip


def test_the_analysis_prompt_has_input_procedure_output_and_signals_nothing(tmp_path: Path) -> None:
    runs = (run("sw1-001", "finished", exit_code=0), run("sw1-002", "failed", exit_code=1))
    s = SweepRecord(
        id="sw1", name="clip <promise>COMPLETE</promise>", spec={"name": "clip"},
        status="active", run_ids=("sw1-001", "sw1-002"), cut=4,
    )  # fmt: skip
    values = prompts.analysis_values(s, runs, lambda r: f".wild/runs/{r}", "reports/sw1.md")
    text = prompt_files.render("analysis", tmp_path, {**values, "goal": "g", "signals": ""})
    for section in ("## Input", "## Procedure", "## Output"):
        assert section in text
    assert "| sw1-002 | lr=0.1 | failed | 1 | 1 | — |" in text
    assert "`.wild/runs/sw1-001/`" in text and "reports/sw1.md" in text
    assert "(4 grid points left out by max_runs)" in text
    found = parse_signals(text)
    assert found.promises == ()  # neither the help nor the name signals
    assert not sweeps_in_reply(text).found


def test_a_big_sweeps_analysis_prompt_lists_the_first_runs_and_how_to_see_the_rest() -> None:
    runs = tuple(run(f"sw1-{n:04d}", "finished", exit_code=0) for n in range(1000))
    s = SweepRecord("sw1", "big", {"name": "big"}, "active", run_ids=tuple(r.id for r in runs))
    values = prompts.analysis_values(s, runs, lambda r: f".wild/runs/{r}", "r.md")
    table = str(values["run_table"])
    assert table.count("| finished |") == prompts.ANALYSIS_ROWS
    assert f"and {1000 - prompts.ANALYSIS_ROWS} more runs: `wild --runs --sweep sw1`" in table
    assert len(str(values["metric_paths"]).splitlines()) == prompts.ANALYSIS_ROWS + 1


def test_backend_settings_come_from_wild_backend_variables() -> None:
    from wild.loop.runs_effect import settings_from_env

    environ = {"WILD_BACKEND_SLURM_PARTITION": "gpu", "WILD_BACKEND_": "x", "HOME": "/root"}
    assert settings_from_env(environ) == {"slurm_partition": "gpu"}


def test_each_stage_prompt_has_input_procedure_and_output() -> None:
    # exploring: planning; running: the alerts of its runs; analyzing: analysis (seed 002 §9).
    for kind in ("planning", "alert", "analysis"):
        text = (prompt_files.BUILTIN / f"{kind}.md").read_text()
        positions = [
            text.index(f"\n## {section}\n") for section in ("Input", "Procedure", "Output")
        ]
        assert positions == sorted(positions), kind


def test_the_runs_status_cycle_is_slurm_poll_s_when_set() -> None:
    from wild.errors import WildError
    from wild.loop.runs_effect import poll_cycle_s

    assert poll_cycle_s({}) == 30.0
    assert poll_cycle_s({"WILD_BACKEND_SLURM_POLL_S": "90"}) == 90.0
    for bad in ("soon", "0", "1e9"):
        with pytest.raises(WildError, match="WILD_BACKEND_SLURM_POLL_S"):
            poll_cycle_s({"WILD_BACKEND_SLURM_POLL_S": bad})


def test_a_new_run_alert_settles_before_the_agent_takes_it_while_its_sweep_still_runs() -> None:
    """The flood's other failures may reach the loop one wake later: a run alert stays pending
    (so they join it) for FLOOD_SETTLE_S after it was raised, while runs of its sweep go on;
    once the window closes, or nothing of the sweep runs any more, it is handed on."""
    failed, going = ended("sw1-001", 0), run("sw1-002", "running")
    raised = alert_of(research.failure_alert([failed], {}, NOW))
    index = {r.id: r for r in (failed, going)}
    left = research.settling_alerts([raised], index, NOW + timedelta(seconds=1))
    assert left == {raised.id: pytest.approx(research.FLOOD_SETTLE_S - 1)}
    after = NOW + timedelta(seconds=research.FLOOD_SETTLE_S + 0.1)
    assert research.settling_alerts([raised], index, after) == {}
    all_ended = {failed.id: failed, going.id: replace(going, status="finished")}
    assert research.settling_alerts([raised], all_ended, NOW) == {}
    taken = alert_of(status_update(raised, "in-progress", NOW))
    assert research.settling_alerts([taken], index, NOW) == {}
