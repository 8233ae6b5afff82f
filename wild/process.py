"""Run commands in their own process group, so a timeout or a stop kills grandchildren too.

Output goes to a file, never to a pipe we might stop reading: a child that prints more than a
pipe holds (64 KiB) would otherwise block forever while we wait for it. Stdin, likewise, comes
from a file: a pipe we fill ourselves would block us on a child that never reads it.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Literal, Protocol

from wild.procfs import group_alive
from wild.record import record
from wild.tail import tail_of

GRACE_S = 3.0
# What a clean exit's leftovers (a daemon the command started) get before SIGKILL.
STRAGGLER_GRACE_S = 0.5
OUTPUT_CAP = 64 * 1024
CANCEL_POLL_S = 0.05  # how soon a set cancel event is noticed

# Variables a command from a state file may see (a check, a hook); everything else (API keys,
# *_TOKEN, AWS_*) stays with wild.
SAFE_ENV_KEYS = ("PATH", "HOME", "USER", "LANG", "TMPDIR", "SHELL")
SAFE_ENV_PREFIXES = ("LC_", "WILD_", "SLURM_")

Ending = Literal["exited", "timed-out", "cancelled"]


class Output(Protocol):
    """A pipe `wait_or_cancel` copies from while it waits (`wild.store.capped_log.Pump`,
    inline): the one thread that waits for the process also takes its output."""

    def fileno(self) -> int: ...

    def take(self) -> bool:
        """Copy what the pipe holds now; False once there is nothing more to watch."""
        ...

    def in_background(self) -> None:
        """Go on copying without the waiter (it cannot watch the pipe)."""
        ...


# Every child we start, so a sweep of orphans adopted by the loop (a child subreaper) can tell
# them from our own; the lock keeps a child from being born unregistered during a sweep.
_spawning = threading.Lock()
_spawned: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()
# Processes a helper of ours started for us (a run's wrapper the wrapper launcher forked,
# wild.runs.launcher): as much ours as `spawn`'s children, should they come to the loop.
_started_for_us: set[int] = set()


@record
class ProcessResult:
    """How a captured command ended; `exit_code` is None when we killed it (timeout, cancel)."""

    exit_code: int | None
    timed_out: bool
    duration_s: float
    output: str  # stdout, with stderr interleaved unless it had its own file; last OUTPUT_CAP bytes
    stderr: str = ""  # with `stderr_path`: the last OUTPUT_CAP bytes of that file
    cancelled: bool = False  # the caller's cancel event was set: killed, or never started


def spawn(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdout: IO[bytes] | int | None = None,
    stdin: IO[bytes] | int | None = subprocess.DEVNULL,
    stderr: IO[bytes] | int | None = None,
) -> subprocess.Popen[bytes]:
    """Start `argv` as the leader of a new process group (and session).

    Without `stderr`, stderr goes wherever `stdout` goes (interleaved), or is inherited.
    """
    if stderr is None and stdout is not None:
        stderr = subprocess.STDOUT
    with _spawning:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        _spawned.add(proc)
    return proc


def started_for_us(pid: int, *, ours: bool = True) -> None:
    """Count `pid` among our own children (`ours`: False once it is over), though a helper
    of ours started it: a subreaper loop that adopts it (its helper died) leaves it be."""
    with _spawning:
        if ours:
            _started_for_us.add(pid)
        else:
            _started_for_us.discard(pid)


@contextlib.contextmanager
def no_spawning() -> Iterator[set[int]]:
    """Hold off new children; yields the pids of those `spawn` started and nobody reaped yet,
    and of those started for us (`started_for_us`)."""
    with _spawning:
        yield {proc.pid for proc in list(_spawned) if proc.returncode is None} | _started_for_us


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _wait_group_gone(proc: subprocess.Popen[bytes], pgid: int, limit_s: float) -> bool:
    """Wait up to `limit_s` for the leader to exit and every other member to die."""
    deadline = time.monotonic() + limit_s
    while proc.poll() is None or group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def kill_group(proc: subprocess.Popen[bytes], grace_s: float = GRACE_S) -> None:
    """SIGTERM the whole group, wait `grace_s`, then SIGKILL whatever is left, and reap."""
    pgid = proc.pid  # leader of its own session: pgid == pid, valid while any member lives
    _signal_group(pgid, signal.SIGTERM)
    if not _wait_group_gone(proc, pgid, grace_s):
        _signal_group(pgid, signal.SIGKILL)
        # SIGKILL cannot be refused, but dying takes a moment: wait, so "gone" means gone.
        _wait_group_gone(proc, pgid, grace_s)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)


def scrubbed_env(
    extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allowlisted part of `base` (os.environ by default) plus the caller's `extra`."""
    source = os.environ if base is None else base
    env = {
        key: value
        for key, value in source.items()
        if key in SAFE_ENV_KEYS or key.startswith(SAFE_ENV_PREFIXES)
    }
    env.update(extra or {})
    return env


def shell_argv(command: str) -> list[str]:
    """A command string from a state file, run by /bin/sh (only once a human approved it)."""
    return ["/bin/sh", "-c", command]


def wait_or_cancel(
    proc: subprocess.Popen[bytes],
    *,
    timeout_s: float | None,
    cancel: threading.Event | None = None,
    heartbeat_s: float = 60.0,
    on_heartbeat: Callable[[], None] | None = None,
    once_running: tuple[float, Callable[[], object]] | None = None,
    output: Output | None = None,
) -> Ending:
    """Wait for the leader to exit, `timeout_s` to pass (None: never) or `cancel` to be set.

    `on_heartbeat` is called every `heartbeat_s` while it runs; a slow call skips beats rather
    than bursting them. `once_running` (seconds, call): called once if it still runs that
    long after the wait began (a run that ends sooner never pays for it). `output`: copied
    whenever its pipe is readable, by this thread (where the kernel has no pidfd to wait on
    with it, on its own thread: `in_background`). Ending any way but an exception leaves the
    group to the caller; an exception (our own Ctrl-C, a crashing callback) kills it first,
    so nothing is orphaned.
    """
    if on_heartbeat is not None and heartbeat_s <= 0:
        raise ValueError(f"heartbeat_s must be positive, not {heartbeat_s}")
    started = time.monotonic()
    deadline = started + timeout_s if timeout_s is not None else None
    next_beat = started + heartbeat_s if on_heartbeat is not None else None
    later = None if once_running is None else started + once_running[0]
    exit_fd = exit_notice(proc.pid)
    try:
        waiter = _Waiter(proc, exit_fd, output)
        while True:
            step = _step(deadline, next_beat if later is None else _first(next_beat, later), cancel)
            if waiter.exited_within(step):
                return "exited"
            if cancel is not None and cancel.is_set():
                return "cancelled"
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return "timed-out"
            if once_running is not None and later is not None and now >= later:
                later = None
                once_running[1]()
            if on_heartbeat is not None and next_beat is not None and now >= next_beat:
                on_heartbeat()
                while next_beat <= time.monotonic():
                    next_beat += heartbeat_s
    except BaseException:
        kill_group(proc)
        raise
    finally:
        if exit_fd is not None:
            os.close(exit_fd)


def _first(mark: float | None, other: float) -> float:
    return other if mark is None else min(mark, other)


def _step(
    deadline: float | None, next_beat: float | None, cancel: threading.Event | None
) -> float | None:
    """How long to wait for the process before looking again; None: until it exits."""
    marks = [mark for mark in (deadline, next_beat) if mark is not None]
    step = min(marks) - time.monotonic() if marks else None
    # An Event cannot be waited on together with a process: look at it every so often.
    if cancel is not None:
        step = CANCEL_POLL_S if step is None else min(step, CANCEL_POLL_S)
    return None if step is None else max(step, 0.0)


def exit_notice(pid: int) -> int | None:
    """A pidfd for our child `pid`, readable the moment it exits; None where the kernel has
    none (then `Popen.wait` polls, noticing an exit up to 50 ms late)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


class _Waiter:
    """Waits for the leader's exit: on its pidfd (with `output`'s pipe, copied as it fills),
    else by `Popen.wait`, which polls (`output` then copied on a thread of its own)."""

    def __init__(
        self, proc: subprocess.Popen[bytes], exit_fd: int | None, output: Output | None
    ) -> None:
        self.proc = proc
        self.exit_fd = exit_fd
        self.output = output
        self.poller: select.poll | None = None
        if exit_fd is None:
            if output is not None:
                output.in_background()
            return
        self.poller = select.poll()
        self.poller.register(exit_fd, select.POLLIN)
        if output is not None:
            self.poller.register(output.fileno(), select.POLLIN)

    def exited_within(self, step: float | None) -> bool:
        """Whether the leader exited within `step` seconds (None: wait until it does). With a
        pidfd the kernel wakes us at the exit; `Popen.wait` then only reaps it."""
        if self.poller is None:
            try:
                self.proc.wait(timeout=step)
            except subprocess.TimeoutExpired:
                return False
            return True
        until = None if step is None else time.monotonic() + step
        while True:
            left_ms = None if until is None else max(until - time.monotonic(), 0.0) * 1000
            ready = self.poller.poll(left_ms)
            if not ready:
                return self.proc.poll() is not None  # the step is over: look once, then again
            exited = False
            for fd, _ in ready:
                if fd == self.exit_fd:
                    exited = True
                elif self.output is not None and not self.output.take():
                    self.poller.unregister(fd)
                    self.output = None
            if exited:
                self.proc.wait()
                return True
            if until is not None and time.monotonic() >= until:
                return False


@contextlib.contextmanager
def stdin_source(data: bytes | Path | None) -> Iterator[IO[bytes] | int]:
    """A child's stdin: /dev/null, a file, or `data` written to a file of its own first (a
    regular file, not a pipe: the child may seek it, and nothing waits for it to read)."""
    if data is None:
        yield subprocess.DEVNULL
    elif isinstance(data, Path):
        with data.open("rb") as source:
            yield source
    else:
        with _file_of_no_name() as source:
            source.write(data)
            source.seek(0)
            yield source


def _file_of_no_name() -> IO[bytes]:
    """A file no other process can reach by a name: Linux's memfd (in memory: no temp folder
    looked for, no file made on a disk, ~0.3 ms less on the way to each agent's start that
    takes its prompt on stdin, issue 22); elsewhere an unlinked temp file."""
    try:
        fd = os.memfd_create("wild-stdin", os.MFD_CLOEXEC)
    except (AttributeError, OSError):  # not Linux, or a kernel before 3.17
        import tempfile  # noqa: PLC0415 (with shutil and random: not on every start's way)

        return tempfile.TemporaryFile()
    return os.fdopen(fd, "w+b")


def _tail(handle: IO[bytes]) -> str:
    """The last OUTPUT_CAP bytes written to `handle` (by the child, through its own fd),
    from the start of a line."""
    return tail_of(handle, OUTPUT_CAP).decode("utf-8", "replace")


def run_captured(
    argv: Sequence[str],
    *,
    timeout_s: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: Path | None = None,
    stderr_path: Path | None = None,
    cancel: threading.Event | None = None,
) -> ProcessResult:
    """Run to completion, timeout or cancel; the group is always gone when this returns.

    `stdin` is a file fed to the child (default: /dev/null). With `stderr_path`, stderr is
    written to that file (created or emptied) and its tail returned as `stderr`, so
    `output` holds stdout alone. A `cancel` already set runs nothing.
    """
    if cancel is not None and cancel.is_set():
        return ProcessResult(None, timed_out=False, duration_s=0.0, output="", cancelled=True)
    started = time.monotonic()
    import tempfile  # noqa: PLC0415 (with shutil and random: only a captured run's, see above)

    with contextlib.ExitStack() as files:
        sink = files.enter_context(tempfile.TemporaryFile())
        source = files.enter_context(stdin_source(stdin))
        errors = files.enter_context(stderr_path.open("w+b")) if stderr_path is not None else None
        proc = spawn(
            argv,
            cwd=cwd,
            env=env,
            stdout=sink,
            stdin=source,
            stderr=errors,
        )
        ending = wait_or_cancel(proc, timeout_s=timeout_s, cancel=cancel)
        # Kill stragglers even after a clean exit: a check must not leave a daemon behind.
        kill_group(proc, grace_s=STRAGGLER_GRACE_S if ending == "exited" else GRACE_S)
        duration = time.monotonic() - started
        output = _tail(sink)
        stderr = _tail(errors) if errors is not None else ""
    return ProcessResult(
        exit_code=proc.returncode if ending == "exited" else None,
        timed_out=ending == "timed-out",
        duration_s=duration,
        output=output,
        stderr=stderr,
        cancelled=ending == "cancelled",
    )
