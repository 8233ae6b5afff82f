"""A real loop process SIGKILLed while its runs are in flight, then started again: no run
is started twice, every end is noticed, and while it waits for runs the loop uses no CPU.

The agent is a script run by `--agent-cmd`: it launches a sweep when it plans, and says
COMPLETE to the analysis and to the final planning look.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import orjson

from tests.loop_processes import alive
from wild.barriers.approvals import approve
from wild.commands.init import init_wild
from wild.paths import WildPaths

WAIT_S = 60.0

PROGRAM = "echo $WILD_RUN_ID >> starts; sleep 2; echo"  # the sweep's, in AGENT below
AGENT = r"""
import json, os, sys
sys.stdin.read()
kind = os.environ["WILD_WORK_TYPE"]
runs = os.path.join(os.environ["WILD_DIR"], "runs.jsonl")
if kind == "planning" and not os.path.exists(runs):
    spec = {"name": "slow", "parameters": {"seed": [1, 2, 3, 4]},
            "base_command": "echo $WILD_RUN_ID >> starts; sleep 2; echo"}
    print("<sweep>\n" + json.dumps(spec) + "\n</sweep>")
elif kind == "alert":
    print("<resolve_alert>" + json.dumps({"alert_id": os.environ["WILD_WORK_ID"],
                                           "choice": "ignore"}) + "</resolve_alert>")
else:
    print("<promise>COMPLETE</promise>")
"""


def runs(paths: WildPaths) -> dict[str, dict[str, object]]:
    if not paths.runs_log.exists():
        return {}
    lines = [orjson.loads(x) for x in paths.runs_log.read_bytes().splitlines()]
    return {str(r["id"]): r for r in lines if r["kind"] == "run"}


def wait_for(what: str, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not ready():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_a_killed_loop_restarted_starts_no_run_twice_and_notices_every_end(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    paths = WildPaths(project / ".wild")
    init_wild(paths)
    approve(project, PROGRAM)  # the human approved the sweep's command (default policy)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    command = [
        sys.executable, "-m", "wild", "find the best seed", "--agent-cmd",
        f"{sys.executable} {agent}", "--run-slots", "2", "--dir", str(paths.root),
    ]  # fmt: skip
    log = (tmp_path / "loop.out").open("ab")
    first = subprocess.Popen(command, cwd=project, stdout=log, stderr=subprocess.STDOUT)
    second = None
    try:
        wait_for(
            "two runs running",
            lambda: sum(r["status"] == "running" for r in runs(paths).values()) == 2,
        )
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=WAIT_S)
        wrappers = [int(str(r["job_id"])) for r in runs(paths).values() if r["status"] == "running"]
        assert wrappers and all(alive(pid) for pid in wrappers)  # the runs outlived the loop

        second = subprocess.Popen(command, cwd=project, stdout=log, stderr=subprocess.STDOUT)
        wait_for("the other two running", lambda: sum(
            r["status"] == "running" and int(str(r["job_id"])) not in wrappers
            for r in runs(paths).values()) == 2)  # fmt: skip
        # Waiting for runs to end, the loop sleeps: a second of it costs (almost) no CPU.
        before = cpu_ticks(second.pid)
        time.sleep(1.0)
        assert cpu_ticks(second.pid) - before <= 3  # at most 30 ms of CPU in 1 s
        assert second.wait(timeout=WAIT_S) == 0, (tmp_path / "loop.out").read_text()
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        log.close()
    starts = Counter((project / "starts").read_text().split())
    assert sorted(starts.values()) == [1, 1, 1, 1]  # four runs, each started once
    assert [r["status"] for r in runs(paths).values()] == ["finished"] * 4
    assert all(r["attempt"] == 1 for r in runs(paths).values())
    events = [orjson.loads(x) for x in paths.events.read_bytes().splitlines()]
    assert sum(e["kind"] == "run-ended" for e in events) == 4
    assert os.path.exists(paths.run_dir(next(iter(starts))) / "exit")
