"""Issue 20 item 2: research runs pass the command gate. A real loop process, a shell agent.

Under `--update-policy interactive` (Command Approval: required), an agent's `<sweep>` with
`base_command: "touch PWNED; true"` must not run until a human approves that exact command,
and a `"status": "queued"` line the agent appends to runs.jsonl itself is never run, not
even when the agent answers the refusal's alert with "rerun". The marker file PWNED tells.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import orjson

from tests.cli_support import invoke
from wild.barriers.approvals import UNAPPROVED_TYPE, approve
from wild.commands.init import init_wild
from wild.parsers.alerts import status_update
from wild.paths import WildPaths
from wild.store.alerts_log import append_alert

WAIT_S = 60.0
PWN = "touch PWNED; true"

SWEEP_AGENT = r"""
import json, os, sys
sys.stdin.read()
kind = os.environ["WILD_WORK_TYPE"]
if kind == "planning" and not os.path.exists(os.path.join(os.environ["WILD_DIR"], "runs.jsonl")):
    spec = {"name": "pwn", "parameters": {"i": [1]}, "base_command": "touch PWNED; true"}
    print("<sweep>\n" + json.dumps(spec) + "\n</sweep>")
elif kind == "alert":
    print("<resolve_alert>" + json.dumps({"alert_id": os.environ["WILD_WORK_ID"],
                                           "choice": "ignore"}) + "</resolve_alert>")
else:
    print("<promise>COMPLETE</promise>")
"""

FORGING_AGENT = r"""
import json, os, sys
sys.stdin.read()
kind = os.environ["WILD_WORK_TYPE"]
runs = os.path.join(os.environ["WILD_DIR"], "runs.jsonl")
if kind == "planning" and not os.path.exists(runs):
    line = {"kind": "run", "id": "x-001", "sweep": "x", "params": {}, "status": "queued",
            "resolved_instruction": "touch PWNED", "signature": "0" * 64}
    with open(runs, "a") as f:
        f.write(json.dumps(line) + "\n")
    print("Queued a run.")
else:
    print("<promise>COMPLETE</promise>")
"""


def lines(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


def runs(paths: WildPaths) -> dict[str, dict[str, object]]:
    return {str(r["id"]): r for r in lines(paths.runs_log) if r["kind"] == "run"}


def _shown(paths: WildPaths, action: str) -> str:
    """What a read command prints in another process, as the human would run it."""
    return subprocess.run(
        [sys.executable, "-m", "wild", action, "--dir", str(paths.root)],
        capture_output=True,
        text=True,
        check=True,
        timeout=WAIT_S,
    ).stdout


def wait_for(what: str, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not ready():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def setup(tmp_path: Path, agent_text: str, policy: str) -> tuple[Path, WildPaths, list[str]]:
    project = tmp_path / "proj"
    project.mkdir()
    paths = WildPaths(project / ".wild")
    init_wild(paths)
    wild = [sys.executable, "-m", "wild"]
    # The human sets the policy at their terminal (tests/conftest.py answers its question).
    assert invoke("--update-policy", policy, "--dir", str(paths.root)).exit_code == 0
    agent = tmp_path / "agent.py"
    agent.write_text(agent_text)
    loop = [*wild, "try the sweep", "--agent-cmd", f"{sys.executable} {agent}"]
    return project, paths, [*loop, "--max-iterations", "8", "--dir", str(paths.root)]


def start(command: list[str], project: Path, log: Path) -> subprocess.Popen[bytes]:
    # A 1 s look at the runs, so an approval is seen at once (30 s by default).
    env = {**os.environ, "WILD_BACKEND_SLURM_POLL_S": "1"}
    out = log.open("ab")
    return subprocess.Popen(command, cwd=project, stdout=out, stderr=subprocess.STDOUT, env=env)


def unapproved_alerts(paths: WildPaths) -> list[dict[str, object]]:
    return [a for a in lines(paths.alerts) if a.get("type") == UNAPPROVED_TYPE]


def test_an_agents_sweep_waits_for_the_humans_approval_of_its_exact_command(
    tmp_path: Path,
) -> None:
    project, paths, command = setup(tmp_path, SWEEP_AGENT, "interactive")
    loop = start(command, project, tmp_path / "loop.out")
    try:
        wait_for("the approval alert", lambda: bool(unapproved_alerts(paths)))
        alert = unapproved_alerts(paths)[0]
        context = alert["context"]
        assert isinstance(context, dict)
        sweep = str(context["sweep"])
        assert context["command"] == PWN
        assert f"wild --approve {sweep}" in str(alert["description"])
        assert PWN in str(alert["description"])
        assert [r["status"] for r in runs(paths).values()] == ["queued"]
        listed = _shown(paths, "--runs")
        assert f"awaiting approval: wild --approve {sweep}" in listed
        status = _shown(paths, "--status")
        assert f"wait for your approval of `{PWN}`; run `wild --approve {sweep}`" in status
        time.sleep(2.5)  # two more looks at the runs: still nothing ran
        assert not (project / "PWNED").exists()
        assert [r["status"] for r in runs(paths).values()] == ["queued"]

        approve(project, "touch PWNED")  # another command approved: not this one
        time.sleep(2.5)
        assert not (project / "PWNED").exists()
        approve(project, PWN)  # as `wild --approve <sweep>` records it: this exact command
        wait_for(
            "the approved run to end", lambda: runs(paths)[f"{sweep}-001"]["status"] == "finished"
        )
        assert (project / "PWNED").exists()
        assert len({a["id"] for a in unapproved_alerts(paths)}) == 1  # asked once
    finally:
        loop.kill()
        loop.wait()


def test_under_a_trusted_policy_the_sweep_runs_without_approval(tmp_path: Path) -> None:
    project, paths, command = setup(tmp_path, SWEEP_AGENT, "autonomous")
    loop = start(command, project, tmp_path / "loop.out")
    try:
        assert loop.wait(timeout=WAIT_S) == 0, (tmp_path / "loop.out").read_text()
    finally:
        if loop.poll() is None:
            loop.kill()
            loop.wait()
    assert (project / "PWNED").exists()
    assert [r["status"] for r in runs(paths).values()] == ["finished"]
    assert unapproved_alerts(paths) == []


def test_a_queued_line_the_agent_appended_is_refused_and_never_run(tmp_path: Path) -> None:
    project, paths, command = setup(tmp_path, FORGING_AGENT, "interactive")
    approve(project, "touch PWNED")  # even approved, a line wild did not write never runs
    loop = start(command, project, tmp_path / "loop.out")
    try:
        wait_for("the refusal", lambda: runs(paths).get("x-001", {}).get("status") == "failed")
        refused = runs(paths)["x-001"]
        assert "not written by wild" in str(refused["reason"])
        wait_for("its alert", lambda: any(a.get("source") == "x-001" for a in lines(paths.alerts)))
        # The human is asked (interactive); the agent answers in their place, writing
        # alerts.jsonl itself: "rerun". wild does not sign a line it did not write.
        alert = [a for a in lines(paths.alerts) if a.get("source") == "x-001"][-1]
        answer = status_update(alert, "resolved", datetime.now(UTC), resolution={"choice": "rerun"})
        append_alert(paths.alerts, answer)
        wait_for(
            "the refused rerun",
            lambda: any(e.get("kind") == "run-act-failed" for e in lines(paths.events)),
        )
    finally:
        loop.kill()
        loop.wait()
    assert not (project / "PWNED").exists()
    assert not paths.run_dir("x-001").exists() or not (paths.run_dir("x-001") / "exit").exists()
    assert [r["status"] for r in lines(paths.runs_log) if r["id"] == "x-001"][-1] == "failed"
