"""The loop end to end with a real agent process (the fake agent, scripted by WILD_FAKE_SCRIPT)
and the real folder watcher: what the in-process tests of tests/loop/ stand in for. The
agent's environment, stdin, exit code and output reaching the loop; a hung agent's process
group killed; an idle loop that nothing wakes. Every other behaviour is tested in-process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.fake_agent import COMMAND
from tests.loop.harness import set_policy
from wild import control
from wild.clock import SystemClock
from wild.commands import edits
from wild.commands.init import init_wild
from wild.loop import Loop, LoopOptions, LoopResult
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.paths import WildPaths
from wild.store.events_log import read_events
from wild.store.state_file import load_state

pytestmark = pytest.mark.timeout(60)  # a loop that fails to end must fail the test, not hang

FAKE = COMMAND
T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)
TASK = "<promise>TASK_COMPLETE</promise>"
PROCESSED = "<promise>HUMAN_INPUT_PROCESSED</promise>"
Actions = list[dict[str, Any]]


# -- helpers --------------------------------------------------------------------------------


def project(tmp_path: Path, tasks: str = "") -> WildPaths:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    paths.tasks.write_text("# Wild Loop Tasks\n\n" + tasks)
    set_policy(paths, progress_reports="None")
    return paths


def script(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *iterations: Actions) -> None:
    """The fake agent plays `iterations` in order, one per run (the last one repeats)."""
    path = tmp_path / "agent-script.json"
    path.write_text(json.dumps({"iterations": list(iterations)}))
    monkeypatch.setenv("WILD_FAKE_SCRIPT", str(path))


def say(*lines: str) -> Actions:
    return [{"print": line} for line in lines]


def run(paths: WildPaths, **options: Any) -> tuple[LoopResult, list[str]]:
    lines: list[str] = []
    loop = Loop(paths, loop_options(**options), out=lines.append)
    return loop.run(), lines


def loop_options(**options: Any) -> LoopOptions:
    settings: dict[str, Any] = {
        "goal": "Ship the model",
        "agent": "custom",
        "agent_cmd": FAKE,
        "safety_rescan_s": 3600.0,
        "max_iterations": 12,
        "plan": False,  # planning has its own tests (tests/loop/test_planning.py)
    }
    settings.update(options)
    return LoopOptions(**settings)


def worked_on(paths: WildPaths) -> list[tuple[str, str]]:
    events, _ = read_events(paths.events)
    return [(e["work_type"], e["work_id"]) for e in events if e["kind"] == "agent-start"]


def task_status(paths: WildPaths, task_id: str) -> str:
    task = tasks_md.find(tasks_md.parse(paths.tasks.read_text()), task_id)
    assert task is not None
    return task.status


def state_of(paths: WildPaths) -> Any:
    return load_state(paths.state).state


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


# -- a real agent process ----------------------------------------------------------------------


def test_the_agent_process_gets_the_work_in_its_environment_and_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path)
    key = edits.add_human_input(paths, "Use batch size 32", urgent=False, now=T0)
    script(monkeypatch, tmp_path, [{"record": "seen.json"}, *say("Done.", PROCESSED)])
    result, out = run(paths)
    assert (result.reason, result.iterations) == ("complete", 1)
    entry = human_md.parse(paths.human.read_text()).inputs[0]
    assert (entry.key, entry.status) == (key, "processed")
    assert re.search(
        r"### Processed:\n\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ - processed by the agent "
        r"\(iteration-1\.log\)\n\n---",
        paths.human.read_text(),
    )
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["env"]["WILD_WORK_TYPE"] == "human-input"
    assert seen["env"]["WILD_WORK_ID"] == key
    assert seen["env"]["WILD_ITERATION"] == "1"
    assert "Use batch size 32" in seen["stdin"]
    assert f"✅ Human input {key} processed" in out


def test_a_crashing_agent_is_reported_with_its_last_words_and_a_new_loop_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    crash: Actions = [{"stderr": "CUDA out of memory"}, {"print": "starting"}, {"exit": 3}]
    script(monkeypatch, tmp_path, crash, say(TASK))
    result, out = run(paths, max_iterations=1)
    assert (result.reason, result.iterations) == ("max-iterations", 1)
    log = paths.logs / "iteration-1.log"
    crashed = [line for line in out if line.startswith("⚠️  Iteration 1:")]
    assert crashed == [f"⚠️  Iteration 1: the agent exited with 3: starting (log: {log})"]
    assert "CUDA out of memory" in log.read_text()
    state = state_of(paths)
    assert state.consecutive_failures == 1
    assert task_status(paths, "task-001") == "in-progress"

    result, _ = run(paths)  # a new loop picks the same work up again and finishes it
    assert (result.reason, result.iterations) == ("complete", 1)
    assert state_of(paths).consecutive_failures == 0
    assert worked_on(paths) == [("task", "task-001")] * 2


def test_agent_that_hangs_is_killed_with_its_grandchildren_and_the_loop_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    hang: Actions = [
        {"spawn": None, "pid_file": "grandchild.pid"},
        {"record": "hung.json"},
        {"sleep": 3600},
    ]
    script(monkeypatch, tmp_path, hang, say(TASK))
    result, out = run(paths, agent_timeout_s=1.0)
    assert (result.reason, result.iterations) == ("complete", 2)
    log = paths.logs / "iteration-1.log"
    assert f"⚠️  Iteration 1: timed out after 1 s (log: {log})" in out
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    agent = json.loads((tmp_path / "hung.json").read_text())["pid"]
    assert not alive(grandchild)
    assert not alive(agent)
    assert state_of(paths).recent_summaries[0] == (
        "iteration 1: task task-001 → timed out (exit -15, signals none)"
    )
    assert "timed out after" in (paths.logs / "iteration-1.log").read_text()


# -- the real folder watcher -----------------------------------------------------------------


def test_idle_loop_does_not_wake_while_nothing_happens(tmp_path: Path) -> None:
    """Its own writes (state.json, events.log) must not wake it: the real watcher is needed."""
    paths = project(tmp_path, "- [ ] [P1] task-001: A\n  - blockedBy: gate\n")
    paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")
    waiting = threading.Event()
    loop = Loop(paths, loop_options(), out=lambda line: waiting.set())
    results: list[LoopResult] = []
    thread = threading.Thread(target=lambda: results.append(loop.run()))
    thread.start()
    try:
        assert waiting.wait(30)
        # A window for any spinning to show up in the counts: the watcher has no debounce,
        # so a wake-up from a file event already made comes within milliseconds.
        time.sleep(0.5)
        assert loop.waker.wakeups == 0
    finally:
        control.request(paths, "stop", SystemClock())
        thread.join(30)
    assert results == [LoopResult("stopped", 0, "stopped on request")]
    # The stop request itself: its append surfaces as a modify and a close event, which the
    # loop may take in one wake-up or, on a busy machine, in two.
    assert 1 <= loop.waker.wakeups <= 2


PLANNING_AGENT = r"""
import os, sys
from pathlib import Path
sys.stdin.read()
tasks = Path(os.environ["WILD_DIR"]) / "tasks.md"
if os.environ["WILD_WORK_TYPE"] == "task":
    print("<promise>TASK_COMPLETE</promise>")
elif "Prepare" not in tasks.read_text():
    with tasks.open("a") as f:
        f.write("- [ ] [P1] Prepare the data\n- [ ] [P1] Train the model\n")
    print("Wrote the plan.")
else:
    print("<promise>COMPLETE</promise>")
"""


def test_a_goal_in_an_empty_folder_is_planned_and_worked(tmp_path: Path) -> None:
    """The README's first example, for real: `wild "GOAL"` with no .wild/ at all."""
    agent = tmp_path / "agent.py"
    agent.write_text(PLANNING_AGENT)
    project = tmp_path / "project"
    project.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "wild", "Train a model", "--agent-cmd", f"{sys.executable} {agent}"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "wild stopped: all work complete (4 iterations)" in done.stdout
    tasks = (project / ".wild" / "tasks.md").read_text()
    assert "- [x] [P1] task-001: Prepare the data" in tasks
    assert "- [x] [P1] task-002: Train the model" in tasks
