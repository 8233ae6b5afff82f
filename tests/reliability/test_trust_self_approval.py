"""An agent of a real loop tries to approve its own barrier command and loosen the policy,
with every trick that worked before: from its own process, from a pty it made its controlling
terminal (so /dev/tty opens and `--yes` is accepted), and from an `env -i setsid` orphan that
cleared the agent's environment and left its session. Every attempt is refused: the approval
store and the policy stay as the human left them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.loop_processes import Wild
from wild.barriers.approvals import load_approvals, load_project
from wild.commands.init import init_wild
from wild.paths import WildPaths

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

BARRIERS = "# Barriers\n\n## [WAITING] gpu-free\n- Type: command-check\n- Check: nvidia-smi -L\n"
ATTEMPTS = (
    ("--approve", "gpu-free", "--yes"),
    ("--approve", "@policy", "--yes"),
    ("--update-policy", "hands-off", "--yes"),
    ("Another-goal", "--policy", "hands-off", "--agent-cmd", "true", "--max-iterations", "1"),
)

# The agent (first run only) runs each attempt three ways and logs "<way> <exit code>".
AGENT = r"""
import os, pty, subprocess, sys, time
from pathlib import Path

here = Path(__file__).parent
sys.stdin.read()
done = here / "attempted"
if not done.exists():
    done.touch()
    wild_dir = os.environ["WILD_TEST_DIR"]
    attempts = [a.split("|") for a in os.environ["WILD_TEST_ATTEMPTS"].split(";")]
    with open(here / "attempts.log", "a") as log:
        for args in attempts:
            argv = [sys.executable, "-m", "wild", *args, "--dir", wild_dir]
            plain = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True)
            log.write(f"plain {plain.returncode} {plain.stderr[-1000:]!r}\n")
            pid, fd = pty.fork()  # a session of its own, the pty its controlling terminal
            if pid == 0:
                os.execv(sys.executable, argv)
            out = b""
            while True:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
                if b"[y/N]" in out:
                    os.write(fd, b"y\n")
            status = os.waitpid(pid, 0)[1]
            log.write(f"pty {os.waitstatus_to_exitcode(status)} {out[-1000:]!r}\n")
            # An orphan in a session of its own, with none of the agent's environment.
            keep = {k: os.environ[k] for k in ("PYTHONPATH", "HOME", "XDG_CONFIG_HOME", "PATH")
                    if k in os.environ}
            marker = here / f"orphan-{len(args)}-{args[0]}-{args[1]}"
            out = f"{marker}.out"
            inner = " ".join(argv) + f" > {out} 2>&1; echo exit=$? >> {out}; mv {out} {marker}"
            script = " ".join(["exec", "env", "-i", *[f"{k}={v}" for k, v in keep.items()],
                               "setsid", "sh", "-c", repr(inner)])
            subprocess.run(["sh", "-c", f"( {script} ) &"])  # the sh exits: the orphan goes on
            while "exit=" not in (marker.read_text() if marker.exists() else ""):
                time.sleep(0.02)
            log.write(f"orphan {marker.read_text()[-1000:]!r}\n")
kind = os.environ["WILD_WORK_TYPE"]
print("<promise>" + ("COMPLETE" if kind == "planning" else "TASK_COMPLETE") + "</promise>")
"""


def _one_agent_run(
    tmp_path: Path, paths: WildPaths, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """A real loop running `agent.py` once (the unapproved barrier then waits for the human)."""
    agent = f"{sys.executable} {tmp_path / 'agent.py'}"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "wild",
            "Train it",
            "--agent-cmd",
            agent,
            "--once",
            "--dir",
            str(paths.root),
        ],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )


def test_an_agent_cannot_approve_its_own_command_nor_loosen_the_policy(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / "proj" / ".wild")
    init_wild(paths)
    paths.barriers.write_text(BARRIERS)
    paths.tasks.write_text("# Tasks\n\n- [ ] [P2] task-001: Train\n")
    policy_before = paths.policy.read_bytes()
    (tmp_path / "agent.py").write_text(AGENT)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "WILD_TEST_DIR": str(paths.root),
        "WILD_TEST_ATTEMPTS": ";".join("|".join(a) for a in ATTEMPTS),
    }
    loop = _one_agent_run(tmp_path, paths, env)
    log = (tmp_path / "attempts.log").read_text()
    rows = log.splitlines()
    assert len(rows) == 3 * len(ATTEMPTS), (log, loop.stdout, loop.stderr)
    for row in rows:
        assert "inside an agent's process tree" in row, row
        assert "exit=0" not in row and not row.startswith(("plain 0", "pty 0")), row
    assert not load_approvals(paths.project).allows("nvidia-smi -L")
    assert load_project(paths.project)[1] is None  # no trust recorded by the agent
    assert paths.policy.read_bytes() == policy_before


FORGER = r"""
import json, os, sys, time, hashlib
from pathlib import Path

sys.stdin.read()
if os.environ["WILD_ITERATION"] == "1":
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "wild"
    command = os.environ["WILD_TEST_COMMAND"]
    digest = hashlib.sha256(command.encode()).hexdigest()
    key = os.path.realpath(os.environ["WILD_TEST_PROJECT"])
    # The project's own file in the store (written by wild as this agent started) ...
    own = folder / "approvals" / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")
    data = json.loads(own.read_text())
    data["approved"].append(digest)
    if os.environ["WILD_TEST_DROP_RECORD"] == "1":
        del data["recorded"]  # as the file reads before any loop ran: every approval counts
    own.write_text(json.dumps(data))
    # ... and wild 0.1's file of every project, recorded as wild's own there too.
    machine = {"format": 1, "projects": {key: [digest]}, "recorded": {key: {digest: "x"}}}
    (folder / "approvals.json").write_text(json.dumps(machine))
    time.sleep(3)  # three of the barrier's 1 s check intervals, the forged approval in place
kind = os.environ["WILD_WORK_TYPE"]
print("<promise>" + ("COMPLETE" if kind == "planning" else "TASK_COMPLETE") + "</promise>")
"""


@pytest.mark.parametrize("drop_record", [False, True], ids=["recorded-kept", "record-dropped"])
def test_an_approval_the_agent_writes_into_the_store_is_void_and_raises_an_alert(
    tmp_path: Path, drop_record: bool
) -> None:
    """The agent adds its barrier's command to its project's file in the store (and, with a
    record, to wild 0.1's file); or also drops the file's record, so that it reads as one no
    loop ran for. The loop checks the barrier while the agent runs: it never runs it."""
    paths = WildPaths(tmp_path / "proj" / ".wild")
    init_wild(paths)
    marker = tmp_path / "ran.marker"
    command = f"touch {marker}"
    paths.barriers.write_text(
        f"# Barriers\n\n## [WAITING] sneaky\n- Type: command-check\n- Check: {command}\n"
        "- Interval: 1s\n"
    )
    paths.tasks.write_text("# Tasks\n\n- [ ] [P2] task-001: Train\n")
    (tmp_path / "agent.py").write_text(FORGER)
    env = {
        **os.environ,
        "WILD_TEST_COMMAND": command,
        "WILD_TEST_PROJECT": str(paths.project),
        "WILD_TEST_DROP_RECORD": "1" if drop_record else "0",
    }
    loop = _one_agent_run(tmp_path, paths, env)
    assert not marker.exists(), loop.stdout  # the forged approval never ran the command
    assert not load_approvals(paths.project).allows(command)  # and was taken out of the store
    alerts = paths.alerts.read_text()
    assert '"type":"unrecorded-approval"' in alerts.replace(" ", ""), (alerts, loop.stdout)


def test_the_dashboards_token_is_not_in_the_agents_environment(wild: Wild) -> None:
    """`wild "GOAL" --serve` runs the dashboard and the loop in one process: the token the
    page needs (to approve a command) must not reach the agent the loop starts."""
    wild.paths.tasks.write_text("# Tasks\n\n- [ ] [P2] task-001: Train\n")
    wild.hold("task-001")
    wild.start("--serve", "--port", "0")
    wild.wait_for("the dashboard URL", lambda: "token=" in wild.output())
    found = re.search(r"token=([\w-]+)", wild.output())
    assert found is not None
    token = found.group(1).encode()
    wild.wait_for("the agent", lambda: wild.worked_on() == [("task", "task-001")])
    agent = wild.agent_runs()[0][3]
    environ = Path(f"/proc/{agent}/environ").read_bytes()
    assert b"WILD_WORK_ID=task-001" in environ  # the agent's, read while it runs
    assert token not in environ
    wild.go("task-001")
