"""A refused second loop always names the first loop's pid, even when it asks in the instant
between the first loop taking the lock and recording itself in state.json."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir
from wild.errors import WildError
from wild.store.loop_lock import take_loop_lock

STARTS = 10
WAIT_S = 120


def test_a_holder_that_has_not_named_itself_yet_is_waited_for(tmp_path: Path) -> None:
    """The window, held open on purpose: the lock taken, the pid written 0.3 s later."""
    root = tmp_path / ".wild"
    root.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('locked', flush=True)\n"
            "time.sleep(0.3)\n"
            "os.write(fd, f'pid {os.getpid()} on {os.uname().nodename}\\n'.encode())\n"
            "time.sleep(60)\n",
            str(root / "loop.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with pytest.raises(WildError) as refused:
            take_loop_lock(root)
        assert f"(pid {holder.pid} on {os.uname().nodename})" in str(refused.value)
    finally:
        holder.kill()
        holder.wait()


def test_a_dead_loops_line_is_not_taken_for_the_holder(tmp_path: Path) -> None:
    root = tmp_path / ".wild"
    root.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    (root / "loop.lock").write_text(f"pid {dead.stdout.strip()} on {os.uname().nodename}\n")
    with take_loop_lock(root):
        assert (root / "loop.lock").read_text() == (f"pid {os.getpid()} on {os.uname().nodename}\n")


def test_every_refusal_among_many_concurrent_starts_names_the_winner(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    # A task held by a manual barrier: the winning loop idles and runs no agent.
    (root / "tasks.md").write_text("# Tasks\n\n- [ ] [P1] task-001: Train\n  - blockedBy: gate\n")
    (root / "barriers.md").write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")
    args = [sys.executable, "-m", "wild", "Ship it", "--agent-cmd", "true", "--dir", str(root)]
    starts = [
        subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(STARTS)
    ]
    try:
        deadline = time.monotonic() + WAIT_S
        while sum(p.poll() is None for p in starts) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        running = [p for p in starts if p.poll() is None]
        assert len(running) == 1
        winner = running[0]
        refusals = [p.communicate()[1] for p in starts if p is not winner]
        named = [
            re.findall(r"another wild loop is running on this folder \(pid (\d+) ", err)
            for err in refusals
        ]
        assert named == [[str(winner.pid)]] * (STARTS - 1), refusals
    finally:
        for p in starts:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(WAIT_S)
