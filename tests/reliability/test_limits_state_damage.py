"""Spending caps cannot be escaped by damaging state.json (issue 20, items 7 and 13): the
run's totals are also kept outside the project (`wild.store.totals_ledger`), and a restart
takes the higher figure of each. Garbage written over state.json, state.json linked out of
the project (set aside at the next start) or deleted: the caps still count what was spent,
and the loop says so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.loop.harness import TASK, new_project, say
from tests.test_loop import FAKE, project
from wild.parsers.state import LoadedState, parse_state
from wild.store.totals_ledger import ledger_path

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TASKS = "".join(f"- [ ] [P1] task-00{n}: Step {n}\n" for n in range(1, 8))
ROOT = Path(__file__).resolve().parents[2]
RECOVERED = "its totals were below those wild recorded in"


def _garbage(state: Path) -> None:
    state.write_text("garbage\n")


def _linked_out(state: Path) -> None:
    outside = state.parent.parent.parent / f"{state.parent.parent.name}-outside.json"
    outside.write_text("{}\n")
    state.unlink()
    state.symlink_to(outside)


def _deleted(state: Path) -> None:
    state.unlink()


@pytest.mark.parametrize("damage", [_garbage, _linked_out, _deleted])
def test_max_cost_still_counts_after_state_json_is_damaged(tmp_path: Path, damage: object) -> None:
    sim = new_project(tmp_path, TASKS)
    sim.script = [[{"run": {"cost_usd": 12.0, "input_tokens": 1000}}, *say(TASK)]]
    first = sim.run(max_cost_usd=20.0)
    assert (first.reason, first.iterations) == ("max-cost", 2)
    assert callable(damage)
    damage(sim.paths.state)

    again = sim.run(max_cost_usd=20.0)

    assert (again.reason, again.iterations) == ("max-cost", 0)
    assert len(sim.events("agent-start")) == 2  # not a cent more
    assert [line for line in sim.out if RECOVERED in line]
    assert sim.state().total_cost_usd == 24.0
    assert sim.state().extra["countedIterations"] == 2


def test_a_real_loop_restarted_after_echo_garbage_runs_no_more_iterations(
    tmp_path: Path,
) -> None:
    """`python -m wild` twice with `--max-iterations 2`, and the shell's own
    `echo garbage > .wild/state.json` in between."""
    paths = project(tmp_path, TASKS)
    script = tmp_path / "agent.json"
    script.write_text('{"iterations": [[{"print": "<promise>TASK_COMPLETE</promise>"}]]}')
    env = {**os.environ, "WILD_FAKE_SCRIPT": str(script), "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "wild", "Ship the model", "--agent-cmd", FAKE]
    argv += ["--dir", str(paths.root), "--max-iterations", "2"]

    def loop() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=60, check=False
        )

    assert loop().returncode == 4  # stopped by --max-iterations
    subprocess.run(["sh", "-c", f"echo garbage > {paths.state}"], check=True)
    done = loop()

    assert done.returncode == 4, done.stdout + done.stderr
    assert RECOVERED in done.stdout
    logs = sorted(p.name for p in paths.logs.iterdir() if p.name.endswith(".log"))
    assert logs == ["iteration-1.log", "iteration-2.log"]
    found = parse_state(paths.state.read_bytes(), str(paths.state))
    assert isinstance(found, LoadedState) and found.state.extra["countedIterations"] == 2
    assert ledger_path(paths.state).is_file()


def test_with_the_ledger_deleted_too_events_log_still_counts_the_spending(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path, TASKS)
    sim.script = [[{"run": {"cost_usd": 12.0, "input_tokens": 1000}}, *say(TASK)]]
    assert sim.run(max_cost_usd=20.0).reason == "max-cost"
    _garbage(sim.paths.state)
    ledger_path(sim.paths.state).unlink()

    again = sim.run(max_cost_usd=20.0)

    assert (again.reason, again.iterations) == ("max-cost", 0)
    assert [line for line in sim.out if f"{RECOVERED} events.log" in line]
    assert sim.state().total_cost_usd == 24.0


def _every_count_lost(tmp_path: Path) -> Path:
    """A project that ran an agent before (its log is there) whose every count is gone."""
    root = tmp_path / "proj" / ".wild"
    subprocess.run(
        [sys.executable, "-m", "wild", "--init", "--dir", str(root)], check=True, timeout=60
    )
    (root / "logs").mkdir(exist_ok=True)
    (root / "logs" / "iteration-1.log").write_text("[wild] started …\n")
    for name in ("state.json", "events.log"):
        (root / name).unlink(missing_ok=True)
    return root


def test_a_cap_never_counts_from_zero_silently_when_every_count_is_lost(tmp_path: Path) -> None:
    """state.json, the ledger and events.log all gone, in a project whose agents ran: with a
    cap the loop says so and asks the human; where no terminal answers, it does not start."""
    root = _every_count_lost(tmp_path)
    marker = tmp_path / "agent-ran"
    loop = subprocess.run(
        [
            *(sys.executable, "-m", "wild", "Go on", "--agent-cmd", f"touch {marker}"),
            *("--max-cost", "20", "--dir", str(root)),
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,  # no controlling terminal: nobody to ask
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert loop.returncode == 1, loop.stdout + loop.stderr
    assert "--max-cost would count from zero" in loop.stdout
    assert "cannot ask for confirmation" in loop.stderr
    assert not marker.exists()


def test_without_a_cap_or_with_a_count_left_nothing_is_asked(
    tmp_path: Path, _human_at_the_terminal: list[str]
) -> None:
    from wild.commands.run_loop import confirm_a_blank_count, counted_before
    from wild.loop import LoopOptions
    from wild.paths import WildPaths

    paths = WildPaths(_every_count_lost(tmp_path))
    said: list[str] = []
    assert not counted_before(paths)
    confirm_a_blank_count(paths, LoopOptions(goal="g"), said.append)  # no cap: no question
    assert (said, _human_at_the_terminal) == ([], [])
    capped = LoopOptions(goal="g", max_iterations=5)
    confirm_a_blank_count(paths, capped, said.append)  # the human at the terminal says yes
    assert len(said) == 1 and len(_human_at_the_terminal) == 1
    paths.events.write_text(
        '{"id":"evt-1","ts":"2026-11-27T10:00:00Z","kind":"agent-end","cause":null,'
        '"iteration":1,"duration_s":2.0}\n'
    )
    assert counted_before(paths)  # events.log still counts a run: nothing to ask
    confirm_a_blank_count(paths, capped, said.append)
    assert len(said) == 1


@pytest.mark.parametrize(
    "names",
    [
        [],
        ["iteration-1.log"],
        ["iteration-.log"],
        ["iteration-1.prompt.md", "iteration-1.log.gz", "xiteration-1.log", "Iteration-1.log"],
        ["iteration-2.3.log", "notes.md"],
    ],
)
def test_a_project_ran_agents_before_where_glob_finds_an_iteration_log(
    tmp_path: Path, names: list[str]
) -> None:
    # Issue 22: a scan of the names in place of `Path.glob("iteration-*.log")` (which
    # compiles its pattern on each capped launch) sees the same logs.
    from wild.commands.run_loop import _ran_agents_before

    logs = tmp_path / "logs"
    assert not _ran_agents_before(logs)  # no folder
    logs.mkdir()
    for name in names:
        (logs / name).write_text("")
    assert _ran_agents_before(logs) == any(logs.glob("iteration-*.log"))
    (tmp_path / "file").write_text("")
    assert not _ran_agents_before(tmp_path / "file")  # not a folder
