"""A real `python -m wild "GOAL" --agent-cmd …` loop process driven by a scripted agent, and
the process helpers its tests share (`wild` fixture: tests/conftest.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from wild.commands.init import init_wild
from wild.paths import WildPaths

WAIT_S = 30.0  # how long to wait for the loop before calling the test failed
T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)

# A custom agent: logs "<iteration> <work type> <work id> <pid>", then, when the test left a
# `hold-<work id>` file, waits for `go-<work id>` (with "spawn" in it: starts a grandchild
# first; "setsid": one in a session of its own; "env-i": one that also clears its environment,
# `env -i setsid sleep`), then gives the promise that finishes its kind of work (planning:
# COMPLETE, the goal is met).
AGENT = r"""
import os, shutil, subprocess, sys, time
from pathlib import Path

here = Path(__file__).parent
sys.stdin.read()
kind, work = os.environ["WILD_WORK_TYPE"], os.environ["WILD_WORK_ID"]
with open(here / "agent.log", "a") as log:
    log.write(f"{os.environ['WILD_ITERATION']} {kind} {work} {os.getpid()}\n")
hold = here / f"hold-{work}"
if hold.exists():
    mode = hold.read_text()
    if mode in ("spawn", "setsid"):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                                 start_new_session=mode == "setsid")
        (here / "grandchild.pid").write_text(str(child.pid))
    if mode == "env-i":
        child = subprocess.Popen(["env", "-i", shutil.which("setsid"), shutil.which("sleep"),
                                  "3600"])
        (here / "grandchild.pid").write_text(str(child.pid))
    while not (here / f"go-{work}").exists():
        time.sleep(0.01)
promise = {"human-input": "HUMAN_INPUT_PROCESSED", "alert": "ALERT_RESOLVED",
           "task": "TASK_COMPLETE", "monitoring": "MONITORING_COMPLETE",
           "planning": "COMPLETE"}[kind]
print(f"<promise>{promise}</promise>")
"""


class Wild:
    """One project folder, its agent, and the loop processes started on it."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.paths = WildPaths(tmp_path / "proj" / ".wild")
        init_wild(self.paths)
        self.agent = tmp_path / "agent.py"
        self.agent.write_text(AGENT)
        self.out_path = tmp_path / "loop.out"
        self.procs: list[subprocess.Popen[bytes]] = []
        self._outs: list[IO[bytes]] = []

    def start(self, *options: str) -> subprocess.Popen[bytes]:
        """A loop process on the project (with `options` added, e.g. `--serve`)."""
        out = self.out_path.open("ab")
        self._outs.append(out)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wild",
                "Ship the model",
                "--agent-cmd",
                f"{sys.executable} {self.agent}",
                "--dir",
                str(self.paths.root),
                *options,
            ],
            cwd=self.tmp,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self.procs.append(proc)
        return proc

    def cli(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "wild", *args, "--dir", str(self.paths.root)],
            capture_output=True,
            text=True,
            check=True,
            timeout=WAIT_S,
        )
        return result.stdout.strip()

    def output(self) -> str:
        return self.out_path.read_text(errors="replace") if self.out_path.exists() else ""

    def agent_runs(self) -> list[tuple[str, str, str, int]]:
        log = self.tmp / "agent.log"
        rows = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
        return [(n, kind, work, int(pid)) for n, kind, work, pid in rows]

    def worked_on(self) -> list[tuple[str, str]]:
        return [(kind, work) for _, kind, work, _ in self.agent_runs()]

    def wait_for(self, what: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT_S
        while not ready():
            if time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting for {what}; loop output:\n{self.output()}")
            if self.procs and self.procs[-1].poll() is not None and not ready():
                raise AssertionError(f"the loop exited before {what}:\n{self.output()}")
            time.sleep(0.02)

    def hold(self, work: str, mode: str = "wait") -> None:
        (self.tmp / f"hold-{work}").write_text(mode)

    def go(self, work: str) -> None:
        (self.tmp / f"go-{work}").touch()

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for out in self._outs:
            out.close()
        for _, _, _, pid in self.agent_runs():  # never leave an agent behind
            kill_group(pid)
        grandchild = self.tmp / "grandchild.pid"
        if grandchild.exists():
            kill_group(int(grandchild.read_text()))


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def wait_gone(pid: int, what: str = "the process") -> None:
    """Wait (bounded) until `pid` is gone; fail naming `what` if it lingers."""
    deadline = time.monotonic() + WAIT_S
    while alive(pid):
        assert time.monotonic() < deadline, f"{what} (pid {pid}) is still alive"
        time.sleep(0.02)


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if stat[stat.rfind(")") + 2 :].split()[1] == str(pid):
                found.append(int(entry.name))
    return found
