"""Run commands in their own process group, so a timeout or a stop kills grandchildren too.

Output goes to a file, never to a pipe we might stop reading: a child that prints more than a
pipe holds (64 KiB) would otherwise block forever while we wait for it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

GRACE_S = 3.0
OUTPUT_CAP = 64 * 1024


@dataclass(frozen=True)
class ProcessResult:
    """How a captured command ended; `exit_code` is None when we killed it at its timeout."""

    exit_code: int | None
    timed_out: bool
    duration_s: float
    output: str  # stdout and stderr interleaved, the last OUTPUT_CAP bytes


def spawn(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdout: IO[bytes] | int | None = None,
    stdin: IO[bytes] | int | None = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """Start `argv` as the leader of a new process group (and session)."""
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.STDOUT if stdout is not None else None,
        start_new_session=True,
    )


def kill_group(proc: subprocess.Popen[bytes], grace_s: float = GRACE_S) -> None:
    """SIGTERM the whole group, wait `grace_s`, then SIGKILL whatever is left, and reap."""
    pgid = proc.pid  # leader of its own session: pgid == pid, valid while any member lives
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if proc.poll() is not None and not group_alive(pgid):
            break
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)


def group_alive(pgid: int) -> bool:
    """Whether any process of group `pgid` still runs (zombies waiting to be reaped do not)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg also reaches zombies, which a slow init may leave for seconds; /proc tells them apart.
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_line = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command: state, ppid, pgrp, ...
        fields = stat_line[stat_line.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def shell_argv(command: str) -> list[str]:
    """A command string from a state file, run by /bin/sh (only once a human approved it)."""
    return ["/bin/sh", "-c", command]


def run_captured(
    argv: Sequence[str],
    *,
    timeout_s: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run to completion or timeout; the group is always gone when this returns."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as sink:
        proc = spawn(argv, cwd=cwd, env=env, stdout=sink)
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        # Kill stragglers even after a clean exit: a check must not leave a daemon behind.
        kill_group(proc, grace_s=0.5 if not timed_out else GRACE_S)
        duration = time.monotonic() - started
        size = sink.seek(0, os.SEEK_END)
        sink.seek(max(0, size - OUTPUT_CAP))
        output = sink.read().decode("utf-8", "replace")
    return ProcessResult(
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        duration_s=duration,
        output=output,
    )
