"""Agent faults against the real loop, with a real agent process (the fake agent): a hang, a
crash by a signal, exit 137, garbage, 50 MB of output, invalid UTF-8, state.json deleted or
garbled while the agent runs. Each time the faulty run finishes nothing (even when it printed
TASK_COMPLETE first), nothing crashes, no agent process is left, and the loop goes on: the
next, clean run finishes the task. 50 MB of output costs the loop a bounded amount of memory.
(A `setsid` grandchild is tests/reliability/test_process_*.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from tests.fake_agent import ARGV
from tests.test_loop import (
    FAKE,
    TASK,
    Actions,
    alive,
    project,
    run,
    say,
    script,
    state_of,
    task_status,
    worked_on,
)
from wild.agents.runner import MAX_EVENT_LINE, AgentRequest, run_agent
from wild.store.events_log import read_events
from wild.store.files import pread_all

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

BIG = 50 * 1024 * 1024
ROOT = Path(__file__).resolve().parents[2]
GARBLED_STATE = '{"iteration": 99, "consecutiveFailures": "lots", \x00\xff tail'
INVALID_UTF8 = (b"\xff\xfe<promise>TASK_COMPLETE</promise>\xc3\x28\n" + b"\x80\x81\xfe\n").hex()

# Each fault claims TASK_COMPLETE where it can, so its claim must be what is not believed.
FAULTS: dict[str, Actions] = {
    "hang": [*say(TASK), {"spawn": None, "pid_file": "grandchild.pid"}, {"sleep": 3600}],
    "crash by a signal": [*say(TASK), {"kill_self": "SIGSEGV"}],
    "killed, exit 137": [*say(TASK), {"exit": 137}],
    "garbage": [
        *say("lorem <promise>TASK_COMPLETE", "`<promise>TASK_COMPLETE</promise>`", "```"),
        *say(TASK, "<event_output>{not json</event_output>", "<resolve_alert></resolve_alert>"),
        {"write": "\x00\x1b[2J<promise>TASK_COMPLETE</promise"},
    ],
    "50 MB of output": [*say(TASK), {"print_bytes": BIG}],  # the promise is not its last word
    "invalid UTF-8": [{"print_hex": INVALID_UTF8}],
    "state.json deleted": [{"delete_file": ".wild/state.json"}, *say(TASK), {"exit": 137}],
    "state.json garbled": [
        {"write_file": ".wild/state.json", "text": GARBLED_STATE},
        *say(TASK),
        {"kill_self": "SIGKILL"},
    ],
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_faulty_run_finishes_nothing_and_the_loop_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    script(monkeypatch, tmp_path, FAULTS[fault], say(TASK))
    result, out = run(paths, agent_timeout_s=1.0)

    assert (result.reason, result.iterations) == ("complete", 2), out
    assert worked_on(paths) == [("task", "task-001")] * 2  # the fault finished nothing
    first, second = state_of(paths).recent_summaries
    assert " → failed " in first or " → timed out " in first
    assert second.startswith("iteration 2: task task-001 → done (exit 0")
    assert task_status(paths, "task-001") == "complete"
    state = state_of(paths)
    assert (state.iteration, state.consecutive_failures, state.agent_process) == (2, 0, None)
    pid_file = tmp_path / "grandchild.pid"
    if pid_file.exists():
        assert not alive(int(pid_file.read_text()))  # the timeout killed the whole group
    assert not [line for line in out if "crash" in line.lower() or "Traceback" in line]


def test_fifty_megabytes_of_output_cost_the_loop_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    script(monkeypatch, tmp_path, [{"print_bytes": BIG}, *say(TASK)])
    tracemalloc.start()
    try:
        result, _ = run(paths)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (result.reason, result.iterations) == ("complete", 1)
    assert peak < BIG // 10, f"the loop's Python heap peaked at {peak / 2**20:.1f} MiB"
    assert (paths.logs / "iteration-1.log").stat().st_size > BIG  # the log keeps it all


def test_a_fifty_megabyte_stream_json_line_is_skipped_in_bounded_memory(tmp_path: Path) -> None:
    """Claude-style output is read line by line, and a line over MAX_EVENT_LINE (a huge tool
    result) is skipped a chunk at a time: the memory it costs does not grow with its size."""
    script_file = tmp_path / "agent.json"
    claude = {"claude": {"text": "All done.\n" + TASK}}
    script_file.write_text(json.dumps({"iterations": [[{"write": "x" * BIG}, *say(""), claude]]}))
    request = AgentRequest(
        argv=ARGV,
        cwd=tmp_path,
        log_path=tmp_path / "iteration-1.log",
        env={"WILD_FAKE_SCRIPT": str(script_file), "PYTHONPATH": str(ROOT)},
        output_format="stream-json",
    )
    tracemalloc.start()
    try:
        agent_run = run_agent(request)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert agent_run.signals.promises == ("TASK_COMPLETE",)
    assert peak < 2 * MAX_EVENT_LINE + 2**20, f"peaked at {peak / 2**20:.1f} MiB"


def test_reading_a_small_file_does_not_reserve_a_gigabyte(tmp_path: Path) -> None:
    """pread allocates the whole request up front: every file wild read cost 1 GiB of address
    space (a MemoryError under `ulimit -v`), which the loop's peak above would show."""
    path = tmp_path / "tasks.md"
    path.write_bytes(b"- [ ] task-001: Train\n" * 100)
    fd = os.open(path, os.O_RDONLY)
    tracemalloc.start()
    try:
        assert pread_all(fd, 0) == path.read_bytes()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        os.close(fd)
    assert peak < 2**20


def test_a_real_wild_process_does_not_tick_a_task_its_killed_agent_claimed(
    tmp_path: Path,
) -> None:
    """`python -m wild` and an agent that prints TASK_COMPLETE, then exits 137."""
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    script_file = tmp_path / "agent.json"
    script_file.write_text(json.dumps({"iterations": [[*say(TASK), {"exit": 137}]]}))
    env = {**os.environ, "WILD_FAKE_SCRIPT": str(script_file), "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "wild", "Ship the model", "--agent-cmd", FAKE]
    argv += ["--dir", str(paths.root), "--max-iterations", "1"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 4, done.stdout + done.stderr  # stopped by --max-iterations
    assert "the agent exited with 137" in done.stdout
    assert "its TASK_COMPLETE was ignored" in done.stdout
    assert task_status(paths, "task-001") == "in-progress"
    events, _ = read_events(paths.events)
    [ignored] = [e for e in events if e["kind"] == "signals-ignored"]
    assert ignored["reason"] == "it exited with 137 (killed by SIGKILL)"
    assert ignored["promises"] == ["TASK_COMPLETE"]
