"""Run one agent iteration: own process group, output to its log, heartbeat, timeout, cancel.

The agent's output goes through a pipe to a pump that writes `.wild/logs/iteration-N.log`
with a cap (`wild.store.capped_log`: head and tail kept, the middle of a flood cut), so no
deadlock however much it prints, and a job it starts in the background keeps a valid stdout
after it exits (the pump reads on, on a thread of its own, until the last writer is gone;
while the agent runs, the thread that waits for it copies). We watch the process,
append heartbeat lines, and read the log back afterwards: the last TEXT_TAIL bytes for text
agents, or every stream-json line (each bounded) for Claude-style ones.

The agent dies with the thread that started it (a parent-death signal). When the run is
killed (timeout, cancel), whatever it started, in its group or in a `setsid` session of its
own, is found by its run id (`wild.agents.orphans`) and killed too; a job left by a run that
ended by itself lives on until the loop ends.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from wild import digest
from wild.agents import orphans
from wild.agents.registry import OutputFormat
from wild.agents.run_result import AgentRun
from wild.agents.sandbox import Sandbox, confine
from wild.agents.tracking import TRACK_S, RunTree
from wild.clock import Clock, SystemClock, iso
from wild.process import kill_group, spawn, stdin_source, wait_or_cancel
from wild.record import record
from wild.store.capped_log import CappedLog, Pump, max_bytes
from wild.store.write_guard import open_own_file
from wild.tail import tail_of

if TYPE_CHECKING:
    from wild.agents.stream_json import RateLimit

TEXT_TAIL = 64 * 1024  # what a text agent's final text is read from
MAX_EVENT_LINE = 16 * 1024 * 1024  # a longer stream-json line (a huge tool result) is skipped
SKIP_CHUNK = 64 * 1024
LOG_PREFIX = b"[wild] "
HEARTBEAT_PREFIX = LOG_PREFIX + b"heartbeat "
SHOWN_ARG_CHARS = 120  # the prompt argument is shortened in the log header


@record
class Heartbeat:
    """Passed to `on_heartbeat` while the agent runs."""

    elapsed_s: float
    output_bytes: int
    pid: int


def agent_env(
    *, wild_dir: Path, iteration: int, work_type: str, work_id: str, prompt_file: Path
) -> dict[str, str]:
    """The variables every agent process gets, so wrappers can route on the work."""
    return {
        "WILD_DIR": str(wild_dir),
        "WILD_ITERATION": str(iteration),
        "WILD_WORK_TYPE": work_type,
        "WILD_WORK_ID": work_id,
        "WILD_PROMPT_FILE": str(prompt_file),
    }


@record(eq=False)
class AgentRequest:
    """One agent run. `env` is added to (and wins over) wild's own environment."""

    argv: tuple[str, ...]
    cwd: Path
    log_path: Path
    env: Mapping[str, str] = field(default_factory=dict)
    stdin: bytes | None = None  # None: stdin is /dev/null
    timeout_s: float | None = None
    heartbeat_s: float = 60.0
    on_heartbeat: Callable[[Heartbeat], None] | None = None
    cancel: threading.Event | None = None  # set (e.g. on SIGINT) to kill the group at once
    # Told the agent's pid once it is spawned, while it waits at its gate: nothing of the
    # agent's program runs until this returns (a raise kills it unstarted).
    on_start: Callable[[int], None] | None = None
    # Called once the gate is open and the agent's program runs: work that must not delay
    # its start (the loop's barrier checker). A raise kills the run.
    on_running: Callable[[], None] | None = None
    output_format: OutputFormat = "text"
    clock: Clock = field(default_factory=SystemClock)
    # In every process of the run (WILD_AGENT_RUN), so leftovers can be found and killed.
    run_id: str = field(default_factory=lambda: os.urandom(8).hex())  # as secrets.token_hex
    sandbox: Sandbox | None = None  # --sandbox: the agent runs under bwrap
    # Given the last look at the run's tree after a clean exit (what the agent left, adopted
    # by the loop: told to the watcher, its exited orphans reaped), to make once the caller's
    # step is over (the loop: as the next agent's program runs, or before it waits), so the
    # look is off the way to the next agent's start. None: looked at before the run returns.
    look_later: Callable[[Callable[[], None]], None] | None = None

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("AgentRequest.argv is empty")
        if self.heartbeat_s <= 0:
            raise ValueError(f"heartbeat_s must be positive, not {self.heartbeat_s}")


def _shown(argv: tuple[str, ...]) -> str:
    short = [
        arg if len(arg) <= SHOWN_ARG_CHARS else f"{arg[:SHOWN_ARG_CHARS]}…({len(arg)} chars)"
        for arg in argv
    ]
    return shlex.join(short).replace("\n", "\\n")


class _Log:
    """The iteration log: the agent's output reaches it through a pipe and a pump, capped
    (`wild.store.capped_log`); wild's own lines go in between, whole."""

    def __init__(self, capped: CappedLog) -> None:
        self.capped = capped
        self.start = capped.end

    def size(self) -> int:
        return self.capped.end

    def line(self, text: str) -> None:
        self.capped.write(LOG_PREFIX + text.encode("utf-8", "replace") + b"\n", own=True)

    def at_line_start(self) -> bool:
        """Whether the agent's last byte ends a line, so our line will not split one of its."""
        return self.capped.ends_line()

    def end_line(self) -> None:
        if not self.at_line_start():
            self.capped.write(b"\n", own=True)

    def agent_bytes(self) -> int:
        return self.capped.received


@record
class _ProcessEnd:
    """How the agent's process ended: by itself, at its timeout, or cancelled."""

    exit_code: int
    timed_out: bool = False
    cancelled: bool = False


def _supervise(
    request: AgentRequest, proc: subprocess.Popen[bytes], log: _Log, pump: Pump, started: float
) -> _ProcessEnd:
    # Followed from TRACK_S on, its first look then, as a follower started with the run
    # looked first: a run that ends sooner (most instant agents) starts and joins no thread
    # (each a wait for a thread switch on the loop's path; issue 22 item 8).
    run_tree = RunTree(proc.pid)
    try:
        return _wait(request, proc, log, pump, started=started, run_tree=run_tree)
    finally:
        run_tree.stop()


def _wait(
    request: AgentRequest,
    proc: subprocess.Popen[bytes],
    log: _Log,
    pump: Pump,
    *,
    started: float,
    run_tree: RunTree,
) -> _ProcessEnd:
    try:
        ending = wait_or_cancel(
            proc,
            timeout_s=request.timeout_s,
            cancel=request.cancel,
            heartbeat_s=request.heartbeat_s,
            on_heartbeat=lambda: _heartbeat(request, proc.pid, log, time.monotonic() - started),
            once_running=(TRACK_S, run_tree.start),
            output=pump,
        )
    except BaseException:
        # wait_or_cancel killed the group; the rest goes too, found by its tree or its run id
        orphans.sweep(request.run_id, members=run_tree.members)
        raise
    if ending != "exited":
        # Looked at first (a timed-out agent still holds its descendants' parent chains), then
        # a killed run loses everything it started, in its group or a session of its own.
        run_tree.members(run_tree.look())
        kill_group(proc)
        orphans.sweep(request.run_id, members=run_tree.members)
        orphans.reap_adopted()  # the sweep changed the table: read it again
    elif request.look_later is not None:
        # After a clean exit a job the agent left in the background (a training run a
        # barrier waits for) lives on, and ends with the loop (`orphans.guarded`): the look
        # that tells it to the watcher waits for the caller's step to end, a few milliseconds
        # (within TRACK_S, the slack of every look while the agent ran; issue 22 item 8).
        request.look_later(lambda: _look_at_end(run_tree))
    else:
        _look_at_end(run_tree)
    return _ProcessEnd(
        proc.returncode, timed_out=ending == "timed-out", cancelled=ending == "cancelled"
    )


def _look_at_end(run_tree: RunTree) -> None:
    """A clean run's tree looked at once it ended: what it left (adopted by the loop) is told
    to the watcher, and its orphans that exited are reaped. One look at /proc serves both."""
    procs = run_tree.look()
    run_tree.members(procs)
    orphans.reap_adopted(procs)


def _heartbeat(request: AgentRequest, pid: int, log: _Log, elapsed: float) -> None:
    output = log.agent_bytes()
    if log.at_line_start():
        log.line(
            f"heartbeat {iso(request.clock.now())}: agent pid {pid} running "
            f"{elapsed:.0f}s, {output} bytes of output"
        )
    if request.on_heartbeat is not None:
        request.on_heartbeat(Heartbeat(elapsed_s=elapsed, output_bytes=output, pid=pid))


def _skip_rest_of_line(log: IO[bytes], end: int) -> None:
    """Move past the next newline (or to `end`) a small chunk at a time: an oversized line's
    remainder, however long, is never held."""
    while log.tell() < end:
        chunk = log.read(min(SKIP_CHUNK, end - log.tell()))
        if not chunk:
            return
        newline = chunk.find(b"\n")
        if newline >= 0:
            log.seek(newline + 1 - len(chunk), os.SEEK_CUR)
            return


def _reopened(fd: int) -> IO[bytes]:
    """The open log read again through its descriptor, not its name: the agent may have
    deleted the file or put a link in its place meanwhile."""
    return os.fdopen(os.dup(fd), "rb")


def _log_lines(fd: int, start: int, end: int) -> Iterator[bytes]:
    """The agent's lines between two offsets, each at most MAX_EVENT_LINE, heartbeats dropped."""
    with _reopened(fd) as log:
        log.seek(start)
        while log.tell() < end:
            line = log.readline(min(MAX_EVENT_LINE, end - log.tell()))
            if not line:
                return
            if not line.endswith(b"\n") and len(line) == MAX_EVENT_LINE:
                _skip_rest_of_line(log, end)
                continue
            if not line.startswith(HEARTBEAT_PREFIX):
                yield line


def _text_tail(fd: int, start: int, end: int) -> str:
    with _reopened(fd) as log:
        data = tail_of(log, TEXT_TAIL, start=start, end=end)
    lines = data.splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(HEARTBEAT_PREFIX)]
    return b"".join(kept).decode("utf-8", "replace")


@record
class _Reading:
    """What the agent's output said: its final text, cost, tokens and rate limit."""

    final_text: str
    cost_usd: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    rate_limit: RateLimit | None = None
    is_error: bool = False
    problems: tuple[str, ...] = ()


def _read_output(request: AgentRequest, fd: int, start: int, end: int, failed: bool) -> _Reading:
    # Read once the agent ended: its parsers (with zoneinfo, for a reset time's zone) are
    # not on the way to the first agent's start (issue 22 item 8).
    from wild.agents.stream_json import StreamJsonReader, detect_rate_limit  # noqa: PLC0415

    now = request.clock.now()
    if request.output_format == "text":
        text = _text_tail(fd, start, end)
        return _Reading(text, rate_limit=detect_rate_limit(text, now, failed=failed))
    reader = StreamJsonReader()
    for line in _log_lines(fd, start, end):
        reader.feed(line)
    if not reader.events:
        # Not even an init event: the CLI failed before it started (bad flag, no login, root
        # refusing to skip permissions); its plain-text complaint is the best final text.
        text = _text_tail(fd, start, end)
        return _Reading(
            text,
            rate_limit=detect_rate_limit(text, now, failed=failed),
            problems=("the agent printed no stream-json events",),
        )
    summary = reader.summary(now, failed=failed)
    return _Reading(
        final_text=summary.final_text,
        cost_usd=summary.cost_usd,
        input_tokens=summary.input_tokens,
        output_tokens=summary.output_tokens,
        rate_limit=summary.rate_limit,
        is_error=summary.is_error,
    )


def _ending(outcome: _ProcessEnd, duration: float) -> str:
    if outcome.timed_out:
        return f"timed out after {duration:.1f}s; process group killed (exit {outcome.exit_code})"
    if outcome.cancelled:
        return f"cancelled after {duration:.1f}s; process group killed (exit {outcome.exit_code})"
    return f"exit {outcome.exit_code} after {duration:.1f}s"


def _not_started(request: AgentRequest, reason: str) -> AgentRun:
    from wild.agents.signals import parse_signals  # noqa: PLC0415 (see _supervised)

    return AgentRun(
        exit_code=127,  # the shell's "command not found"
        timed_out=False,
        cancelled=False,
        duration_s=0.0,
        final_text="",
        signals=parse_signals(""),
        cost_usd=None,
        input_tokens=None,
        output_tokens=None,
        rate_limited=False,
        rate_limit_reset=None,
        log_path=request.log_path,
        output_bytes=0,
        start_error=reason,
    )


def run_agent(request: AgentRequest) -> AgentRun:
    """Run the agent to completion, timeout or cancel; its process group is handled either way."""
    request.log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **request.env, orphans.RUN_ENV: request.run_id}
    read_fd, write_fd = os.pipe()
    try:
        with stdin_source(request.stdin) as stdin:
            return _run(request, env, read_fd=read_fd, write_fd=write_fd, stdin=stdin)
    finally:
        with contextlib.suppress(OSError):  # the pump's now, if it started
            os.close(read_fd)


def _open_log(request: AgentRequest, env: Mapping[str, str]) -> _Log:
    """The iteration log, its header written; `_pump` copies the agent's output in. Never
    through a link planted at the log's name or in place of `logs/` (write_guard); no
    O_APPEND: the capped log places every byte itself."""
    log_fd = open_own_file(request.log_path, os.O_RDWR | os.O_CREAT, 0o666, own_folder=True)
    capped = CappedLog(log_fd, max_bytes(env), users=2)  # `_run` and the pump
    log = _Log(capped)
    log.line(f"started {iso(request.clock.now())} in {request.cwd}: {_shown(request.argv)}")
    log.start = log.size()
    return log


def _pump(log: _Log, read_fd: int, *, inline: bool = False) -> Pump:
    """The pump that copies the agent's output (the pipe's read end) into the log; `inline`:
    by the thread that waits for the agent (`wait_or_cancel`), a thread of its own only for
    what a job the agent left behind writes after it (`Pump.drain`)."""
    return Pump(os.dup(read_fd), log.capped, inline=inline)


def _run(
    request: AgentRequest,
    env: dict[str, str],
    *,
    read_fd: int,
    write_fd: int,
    stdin: IO[bytes] | int | None,
) -> AgentRun:
    started = time.monotonic()
    # The agent is held at a gate until `on_start` returns: the loop writes the run's record
    # and the agent's pid in one durable write while the process chain starts; nothing of
    # the run, its log included, exists before both are on disk.
    gate, go = os.pipe()
    try:
        confined = confine(request.sandbox, request.argv, request.cwd, env.get("PATH"))
        argv = orphans.dying_with_parent(confined, request.cwd, env.get("PATH"), gated=True)
        # Its stderr is the gate until it passes it; then stderr joins stdout (the log).
        proc = spawn(argv, cwd=request.cwd, env=env, stdout=write_fd, stdin=stdin, stderr=gate)
    except OSError as error:
        os.close(go)
        log = _open_log(request, env)
        _pump(log, read_fd)  # it ends, and lets the log go, at the pipe's end: nobody writes
        try:
            log.line(f"could not start: {error.strerror}")
        finally:
            log.capped.release()
        # An attempt that ended before it began: the loop records and judges it as any
        # failed run (a crash here would look like a killed loop to the next one).
        return _not_started(request, f"{request.argv[0]}: {error.strerror}")
    finally:
        os.close(write_fd)  # the agent holds the pipe now: its last writer's exit ends the pump
        os.close(gate)
    try:
        if request.on_start is not None:
            request.on_start(proc.pid)
    except BaseException:
        os.close(go)  # end of file at the gate: the agent's program never runs
        kill_group(proc)  # nobody would supervise it: no orphan
        orphans.sweep(request.run_id)
        raise
    with contextlib.suppress(BrokenPipeError):  # it died at the gate: its exit is seen below
        os.write(go, b"\n")  # go: the agent's program runs
    os.close(go)
    # The log is opened (its header written) while the agent's program starts, not on its
    # way: the loop's work between the spawn and the go had become the longer side of that
    # window (the log ~0.1 ms; issue 22 item 8). What the agent writes meanwhile waits in the
    # pipe, and comes after the header.
    log, pump = _running(request, proc, lambda: _logged(request, env, read_fd))
    try:
        return _supervised(request, proc, log, pump, started)
    except BaseException:
        # Nobody waits for the agent any more: the pump goes on in a thread of its own, which
        # ends, letting the log go, at the pipe's end (the killed group's, or a job's).
        pump.in_background()
        raise
    finally:
        log.capped.release()


def _logged(request: AgentRequest, env: Mapping[str, str], read_fd: int) -> tuple[_Log, Pump]:
    """The run's log opened and its pump started (the log let go again if the pump fails)."""
    log = _open_log(request, env)
    try:
        return log, _pump(log, read_fd, inline=True)
    except BaseException:
        log.capped.release()
        raise


def _running(
    request: AgentRequest,
    proc: subprocess.Popen[bytes],
    logged: Callable[[], tuple[_Log, Pump]],
) -> tuple[_Log, Pump]:
    """The agent's program running: its log opened and its output's pump started, then
    `request.on_running`; a raise kills the run (nobody would supervise it): a log that
    cannot be opened (a link planted at its name since it was chosen, a full disk) too."""
    try:
        log, pump = logged()
        try:
            if request.on_running is not None:
                request.on_running()
        except BaseException:
            pump.in_background()  # as in `_run`: the killed agent's pipe ends it
            log.capped.release()  # the caller's share: it never gets the log
            raise
    except BaseException:
        kill_group(proc)  # nobody would supervise it: no orphan
        orphans.sweep(request.run_id)
        raise
    return log, pump


def _supervised(
    request: AgentRequest, proc: subprocess.Popen[bytes], log: _Log, pump: Pump, started: float
) -> AgentRun:
    # While the agent works: OpenSSL's sha256 for the loop's later hashing, as fast as before
    # on larger files (wild.digest: CPython's own took the few small hashes before the go).
    digest.load_openssl()
    outcome = _supervise(request, proc, log, pump, started)
    duration = time.monotonic() - started
    pump.drain()  # all the agent wrote is in the log (a job it left may write on)
    end = log.size()
    output_bytes = log.agent_bytes()
    failed = outcome.exit_code != 0 or outcome.timed_out or outcome.cancelled
    reading = _read_output(request, log.capped.fd, log.start, end, failed)
    # Read once the agent ended: its reader is not on the way to the first agent's start.
    from wild.agents.signals import parse_signals  # noqa: PLC0415

    log.end_line()
    log.line(f"ended {iso(request.clock.now())}: {_ending(outcome, duration)}")
    return AgentRun(
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
        cancelled=outcome.cancelled,
        duration_s=duration,
        final_text=reading.final_text,
        signals=parse_signals(reading.final_text),
        cost_usd=reading.cost_usd,
        input_tokens=reading.input_tokens,
        output_tokens=reading.output_tokens,
        rate_limited=reading.rate_limit is not None,
        rate_limit_reset=reading.rate_limit.reset_at if reading.rate_limit else None,
        log_path=request.log_path,
        output_bytes=output_bytes,
        is_error=reading.is_error,
        problems=reading.problems,
    )
