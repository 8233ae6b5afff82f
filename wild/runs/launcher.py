"""The wrapper launcher: one wrapper interpreter per loop that starts every run's wrapper by
fork, so a run waits for no Python start and costs no interpreter's CPU (issue 23, "Speed and
scale": 10,000 instant runs each paid one, about 10 ms of CPU on a machine of 2 cores).

The local backend starts `wrapper.py --launcher --runs DIR` once, its stdin the read end of a
pipe whose only write end the loop holds, its stdout a pipe back. For each run, once the run's
claim is durable, the loop writes one request (the wrapper's arguments and the run's
environment, `request`) and reads the answer; a step's starts are written together. The
launcher takes every request written so far as one batch: it forks each one's wrapper
(detached: a session of its own, a subreaper), then writes each run's `pid` file and lets it
run, and answers `ok PID` for each, all the batch's answers in one write (after each fork
the launcher copies every page it writes: forks one after the other copy fewer, issue 23).
Each run keeps a wrapper process of its own, its job id as before. The launcher reads end of
file when the loop closes its end or dies, and exits: it never outlives its loop, and a
run it was never asked for never starts. A launcher that fails or is gone costs nothing but
speed: the run's wrapper is spawned the ordinary way, unless its `pid` file shows the launcher
let it run (then it is that run's wrapper, never a second one).
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from wild import procfs
from wild.process import spawn
from wild.runs import markers
from wild.runs.wrapper import LAUNCHED_NAME, LAUNCHER_FLAG
from wild.runs.wrapper_command import WRAPPER

ANSWER_TIMEOUT_S = 30.0  # a launcher silent this long is stuck: killed, runs spawned instead
KNOWN_POLL_S = 0.0005  # how often a just-started launcher's command line is read again


def request(args: Sequence[str], env: Mapping[str, str]) -> bytes:
    """One request as wrapper.py's `Requests` reads it."""
    fields = [str(len(args)), *args, *(f"{name}={value}" for name, value in env.items())]
    blob = "\0".join(fields).encode("utf-8", "surrogateescape")
    return f"{len(blob)}\n".encode() + blob


def launcher_argv(python: str, runs_dir: Path) -> list[str]:
    """The launcher's command line: `--runs` names the project's runs folder, so a launcher
    a dead loop left is found by it (`orphans`)."""
    return [python, "-I", "-S", str(WRAPPER), LAUNCHER_FLAG, "--runs", str(runs_dir)]


class Launcher:
    """A started launcher: its process, the loop's end of its request pipe, and its answers."""

    def __init__(self, python: str, runs_dir: Path) -> None:
        # Close-on-exec, all four: the launcher gets only its own ends, as stdin and stdout.
        read_fd, self._requests = os.pipe()
        self._answers, answer_fd = os.pipe()
        try:
            self.proc = spawn(
                launcher_argv(python, runs_dir),
                stdin=read_fd,
                stdout=answer_fd,
                stderr=subprocess.DEVNULL,
            )
        except BaseException:
            os.close(self._requests)
            os.close(self._answers)
            raise
        finally:
            os.close(read_fd)
            os.close(answer_fd)
        self._buffer = b""
        self._closed = False  # the loop's ends are closed (their numbers may be reused)
        if not self._known(runs_dir):
            self.close(kill=True)
            raise OSError(f"the wrapper launcher {self.pid} ended or never showed its command line")

    def _known(self, runs_dir: Path) -> bool:
        """Wait until the launcher is what `orphans` finds; False if it ended first or never
        is. `Popen` returns once the exec closed its close-on-exec pipe, but the kernel sets
        the new command line later in the exec: read at once, it is often still empty. A
        loop that handed it a request then and died left a launcher the next loop could not
        see, so that loop took the run for never started and started it, and the launcher
        started it again. No request goes to a launcher before it can be seen."""
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        while not is_launcher(self.pid, runs_dir):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(KNOWN_POLL_S)
        return True

    @property
    def pid(self) -> int:
        return self.proc.pid

    def launch(self, args: Sequence[str], env: Mapping[str, str], run_dir: Path) -> int | None:
        """`launch_all` of one run."""
        return self.launch_all([(args, env, run_dir)])[0]

    def launch_all(
        self, runs: Sequence[tuple[Sequence[str], Mapping[str, str], Path]]
    ) -> list[int | None]:
        """Start the wrapper of each run (its arguments, environment and folder; its claim
        durable): their pids, asked for together and answered in order (one round trip for a
        step's starts). None for a run the launcher started nothing for (then spawn it the
        ordinary way). When the launcher dies or stalls before it answers, it is killed and
        each unanswered run's `pid` file says whether it was let run (written before its go)."""
        if not self._closed:
            with contextlib.suppress(OSError):  # gone: no answer comes, each `pid` file tells
                os.write(self._requests, b"".join(request(a, e) for a, e, _d in runs))
        pids: list[int | None] = []
        for _args, _env, run_dir in runs:
            try:
                answer = None if self._closed else self._answer()
            except OSError:
                answer = None
            if answer is None:
                self.close(kill=True)
                pids.append(markers.read_pid(run_dir))
            elif answer.startswith("ok ") and answer[3:].isdigit():
                pids.append(int(answer[3:]))
            else:
                pids.append(None)  # it said why it started nothing (a `pid` it could not write)
        return pids

    def _answer(self) -> str | None:
        """The next answer line; None at end of file or after ANSWER_TIMEOUT_S."""
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._answers], [], [], ANSWER_TIMEOUT_S)
            if not ready:
                return None
            chunk = os.read(self._answers, 4096)
            if not chunk:
                return None
            self._buffer += chunk
        line, _newline, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, *, kill: bool = False) -> None:
        """Let the launcher go (end of file: it exits; wrappers it started run on); `kill`:
        SIGKILL it too and wait, so nothing more can start from it."""
        if not self._closed:
            self._closed = True
            os.close(self._requests)
            os.close(self._answers)
        if kill:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            self.proc.wait()
        self.proc.poll()  # reaped now if it has exited; the backend reaps it later otherwise


def is_launched_wrapper(pid: int) -> bool:
    """Whether `pid` is a run's wrapper a launcher forked (its command line is the
    launcher's; its name says what it became)."""
    try:
        name = Path(f"/proc/{pid}/comm").read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return False
    return name == LAUNCHED_NAME and LAUNCHER_FLAG in procfs_cmdline(pid)


def procfs_cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def is_launcher(pid: int, runs_dir: Path) -> bool:
    """Whether `pid` is a launcher of `runs_dir`'s runs, by its command line (a wrapper it
    forked has the same one until its name tells it apart)."""
    argv = procfs_cmdline(pid)
    mine = argv[-5:-1] == launcher_argv("", runs_dir)[3:]  # the cmdline ends with a NUL
    return mine and not is_launched_wrapper(pid)


def orphans(runs_dir: Path, own: int | None) -> list[int]:
    """Launchers of this project's runs other than `own`: a dead loop's, still starting what
    it was asked for (a request read, its run's `pid` not yet written). Every launcher that
    may hold a request is found: none is asked before `is_launcher` sees it (`_known`)."""
    found = []
    for name in os.listdir("/proc") if os.path.isdir("/proc/self") else ():
        if not name.isdigit() or int(name) == own:
            continue
        if is_launcher(int(name), runs_dir) and procfs.running(int(name)):
            found.append(int(name))
    return found
