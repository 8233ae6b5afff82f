"""Runs one research run and leaves its exit marker: the standalone wrapper every backend uses.

Invoked (see wild.runs.backend) as
`python wrapper.py --run-dir DIR --run-id ID --attempt N --workdir W [--time-limit S] --
INSTRUCTION`. It writes its pid to DIR/pid, runs `/bin/sh -c INSTRUCTION` in W as the
leader of a process group of its own with stdout and stderr written to DIR/log (through a
pipe, capped: `wild/store/capped_log.py`, loaded by its path, as is `wild/procfs.py`), and, when
the instruction ends, its time limit passes or the wrapper gets SIGTERM/SIGINT, kills that
whole group (SIGTERM, then SIGKILL after a grace) and writes DIR/exit atomically (temp file,
fsync, rename), a JSON object:
`{"run", "attempt", "exit_code", "signal", "ended_at", "host", "reason"}`.
`reason` is "timeout", "stopped", "start_failed" (then `detail` says why) or null. A run
killed by signal N has `exit_code` 128 + N and `signal` its name, as a shell reports it.

Standard library only and no wild imports: it starts fast and runs on any node that sees
the run folder (a Slurm batch script calls it too). The wrapper makes itself a child
subreaper (Linux), so a background process the instruction leaves behind is reparented to
the wrapper, not to the loop, and is killed with the group when the instruction ends: a run
is over when its marker exists, and nothing of it keeps a slot busy after that.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import types
from collections.abc import Sequence
from typing import Any

GRACE_S = 10.0  # what the group gets between SIGTERM and SIGKILL
KILLED_WAIT_S = 30.0  # how long SIGKILLed members may take to disappear
START_FAILED_EXIT = 127  # as a shell reports a command it could not run
_PR_SET_CHILD_SUBREAPER = 36
_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
_WAIT_SIGNALS = {signal.SIGCHLD, *_STOP_SIGNALS}


def _arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="wrapper.py", description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--attempt", type=int, required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--time-limit", type=float, default=None, help="seconds")
    parser.add_argument("--grace", type=float, default=GRACE_S, help="SIGTERM → SIGKILL, s")
    parser.add_argument("instruction", nargs=1, help="one shell command, after --")
    return parser.parse_args(argv)


def _now() -> str:
    now = datetime.datetime.now(datetime.UTC)  # as wild writes times: 2026-02-08T10:45:23.120Z
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def write_atomically(path: str, text: str) -> None:
    """`path` holds `text` whole or keeps its old content: temp file, fsync, rename, dir fsync."""
    temp = f"{path}.tmp.{os.getpid()}"
    try:
        # O_EXCL | O_NOFOLLOW: never through a link planted at the temp name (as `_open_log`).
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with open(os.open(temp, flags, 0o644), "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be fsynced
        folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _load_by_path(*parts: str) -> types.ModuleType:
    """A standard-library-only module of wild, loaded by its path under `wild/`: this script
    runs with `-I -S` and imports nothing of wild by name."""
    wild_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(wild_dir, *parts)
    spec = importlib.util.spec_from_file_location("wild_" + parts[-1].removesuffix(".py"), path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _capped_log() -> types.ModuleType:
    """`wild/store/capped_log.py`, the one capped head-and-tail writer."""
    return _load_by_path("store", "capped_log.py")


# `wild/procfs.py`: /proc's stat fields and the one liveness rule (a zombie has exited).
_procfs = _load_by_path("procfs.py")


def _open_log(run_dir: str) -> int:
    """DIR/log, to write to, never through a symbolic link: a link planted at its name (or
    in place of the run folder) would append the run's output to any file the user can
    write. O_NOFOLLOW, relative to a descriptor of the run folder (as wild.store.write_guard
    opens wild's own files; this script imports nothing of wild)."""
    folder = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        # No O_APPEND: the capped log places every byte itself.
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        return os.open("log", flags, 0o644, dir_fd=folder)
    finally:
        os.close(folder)


def _become_subreaper() -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _note(log: Any, text: str) -> None:
    """A line of the wrapper's own in the run's log (a `CappedLog`), so its tail says why the
    run ended."""
    with contextlib.suppress(OSError):
        log.write(f"[wild wrapper {_now()}] {text}\n".encode(), own=True)


def _group_alive(pgid: int) -> bool:
    alive: bool = _procfs.group_alive(pgid)
    return alive


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


class _Child:
    """The instruction's shell and everything the wrapper reaps; waits without polling."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.status: int | None = None

    def reap(self) -> None:
        """Collect every exited child (the shell, and orphans adopted as subreaper)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.pid:
                self.status = status

    def wait(self, timeout: float | None) -> signal.Signals | None:
        """Until a signal arrives (SIGCHLD: reaped) or `timeout`; the stop signal if one came."""
        if timeout is None:
            got: signal.struct_siginfo | None = signal.sigwaitinfo(_WAIT_SIGNALS)
        else:
            got = signal.sigtimedwait(_WAIT_SIGNALS, max(timeout, 0.0))
        self.reap()
        if got is not None and got.si_signo in _STOP_SIGNALS:
            return signal.Signals(got.si_signo)
        return None

    def done(self) -> bool:
        return self.status is not None and not _group_alive(self.pid)


def _kill_group(child: _Child, grace_s: float) -> None:
    """SIGTERM the group, let it end within `grace_s`, then SIGKILL what is left; reap all."""
    child.reap()
    if child.done():
        return  # nothing left: its pgid may not be signalled any more, it could be reused
    _signal_group(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    child.reap()
    while not child.done():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        child.wait(min(left, 0.05))  # members not ours to reap: look again shortly
    if not child.done():
        _signal_group(child.pid, signal.SIGKILL)
        # SIGKILL cannot be refused, but a process stuck in the kernel (a dead NFS mount)
        # dies only later: the marker is written after a bound rather than never.
        deadline = time.monotonic() + KILLED_WAIT_S
        while not child.done() and time.monotonic() < deadline:
            child.wait(0.05)


def _children() -> list[int]:
    """The wrapper's own children. As a subreaper it adopts every orphan of the run, so once
    the group is gone, these are the processes that left it (a `setsid` daemon)."""
    me = os.getpid()
    found: set[int] = set()
    try:
        for task in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{task}/children", encoding="ascii") as listing:
                found.update(int(pid) for pid in listing.read().split())
        return sorted(found)
    except OSError:  # no /proc/…/children (CONFIG_PROC_CHILDREN): look at every process
        return children_by_scan(me)


def children_by_scan(parent: int) -> list[int]:
    """The processes whose parent is `parent`, from every /proc/<pid>/stat (field 4)."""
    found = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        fields = _procfs.stat_fields(int(name)) if name.isdigit() else None
        if (
            fields is not None
            and len(fields) > _procfs.PPID
            and fields[_procfs.PPID] == str(parent)
        ):
            found.append(int(name))
    return sorted(found)


def _signal_all(pids: Sequence[int], signum: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _kill_strays(child: _Child, grace_s: float, log: Any) -> None:
    """Kill what left the run's group: SIGTERM, the grace, then SIGKILL (also what they left
    behind: their orphans come to the wrapper in turn), so nothing of the run outlives it."""
    child.reap()
    strays = _children()
    if not strays:
        return
    _note(log, f"{len(strays)} process(es) left the run's process group: stopping them too")
    _signal_all(strays, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while _children() and time.monotonic() < deadline:
        child.wait(0.05)
    deadline = time.monotonic() + KILLED_WAIT_S
    while (strays := _children()) and time.monotonic() < deadline:
        _signal_all(strays, signal.SIGKILL)
        child.wait(0.05)


def _supervise(child: _Child, args: argparse.Namespace, log: Any) -> str | None:
    """Wait for the instruction's end, its time limit or a stop; the marker's reason."""
    deadline = None if args.time_limit is None else time.monotonic() + args.time_limit
    reason: str | None = None
    child.reap()
    while child.status is None:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            reason = "timeout"
            _note(log, f"time limit of {args.time_limit:g} s reached: stopping the run")
            break
        stop = child.wait(left)
        if stop is not None:
            reason = "stopped"
            _note(log, f"{stop.name} received: stopping the run")
            break
    _kill_group(child, args.grace)  # also what the instruction left in the background
    _kill_strays(child, args.grace, log)
    return reason


def _exit_fields(status: int | None) -> tuple[int, str | None]:
    if status is None:  # cannot happen once the group is gone; kept honest for the marker
        return -1, None
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            name: str | None = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        return 128 + signum, name
    return os.waitstatus_to_exitcode(status), None


def _marker(args: argparse.Namespace, exit_code: int, sig: str | None, reason: str | None) -> str:
    fields: dict[str, object] = {
        "run": args.run_id,
        "attempt": args.attempt,
        "exit_code": exit_code,
        "signal": sig,
        "ended_at": _now(),
        "host": socket.gethostname(),
        "reason": reason,
    }
    return json.dumps(fields) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    run_dir = args.run_dir
    stops: list[int] = []
    # Until the signals are blocked below, a stop is remembered by a handler, never lost.
    for signum in _STOP_SIGNALS:
        signal.signal(signum, lambda received, _frame: stops.append(received))
    os.makedirs(run_dir, exist_ok=True)
    write_atomically(os.path.join(run_dir, "pid"), f"{os.getpid()}\n")
    _become_subreaper()
    exit_path = os.path.join(run_dir, "exit")
    try:
        capped_log = _capped_log()
        log = capped_log.CappedLog(_open_log(run_dir), capped_log.max_bytes(), users=2)
    except OSError as error:
        detail = f"{run_dir}/log: {error.strerror}; a symbolic link there is never written through"
        fields = json.loads(_marker(args, START_FAILED_EXIT, None, "start_failed"))
        write_atomically(exit_path, json.dumps({**fields, "detail": detail}) + "\n")
        return START_FAILED_EXIT
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", args.instruction[0]],
            cwd=args.workdir,
            stdin=subprocess.DEVNULL,
            stdout=write_fd,
            stderr=subprocess.STDOUT,
            process_group=0,
        )
    except OSError as error:
        detail = f"cannot start the instruction in {args.workdir}: {error}"
        _note(log, detail)
        fields = json.loads(_marker(args, START_FAILED_EXIT, None, "start_failed"))
        write_atomically(exit_path, json.dumps({**fields, "detail": detail}) + "\n")
        return START_FAILED_EXIT
    finally:
        os.close(write_fd)
    # The shell started with default dispositions; from here signals are waited for (by
    # this thread only: the pump, started after, inherits the blocked signals).
    signal.pthread_sigmask(signal.SIG_BLOCK, _WAIT_SIGNALS)
    pump = capped_log.Pump(read_fd, log)
    child = _Child(proc.pid)  # reaped by `_Child`, not by Popen
    if stops:
        _note(log, f"{signal.Signals(stops[0]).name} received: stopping the run")
        _kill_group(child, args.grace)
        reason: str | None = "stopped"
    else:
        reason = _supervise(child, args, log)
    exit_code, sig = _exit_fields(child.status)
    pump.drain()  # the run's last output before the wrapper's own last line
    _note(log, f"ended: exit code {exit_code}" + (f" ({sig})" if sig else ""))
    write_atomically(exit_path, _marker(args, exit_code, sig, reason))
    log.release()
    return exit_code if 0 <= exit_code <= 255 else 1  # what a batch system's accounting shows


if __name__ == "__main__":
    sys.exit(main())
