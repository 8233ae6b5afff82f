"""The `local` run backend: a pool of CPU and GPU slots on this machine, each run a detached
wrapper process that outlives the loop.

`submit` starts the run's `wrapper.py` in a session of its own (not the loop's: a SIGKILLed
loop takes no run with it), forked by the loop's wrapper launcher (wild.runs.launcher: no
Python start per run) or, without one, spawned; it returns the wrapper's pid as the job id.
`poll` looks at every active run in one pass: its exit marker, else whether the wrapper's
pid is still that same process (start time from /proc, or its command line naming the run's
folder), else gone (and what is left of its session is killed, so a lost run holds no slot).
`cancel` sends SIGTERM to the wrapper, which kills the run's group and still writes the
marker. `adopt` finds an attempt a crashed loop started but never recorded, by the `pid` file
the wrapper (or the launcher) wrote.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from wild import procfs
from wild.errors import WildError
from wild.liveness import probe, this_host
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.process import spawn, started_for_us
from wild.runs import launcher as launchers
from wild.runs import markers
from wild.runs.backend import AdoptionDeferred, BackendContext, Observed, Submitted
from wild.runs.launcher import Launcher
from wild.runs.pool import GPU_FIELD, Pool, free, never_fits, plan
from wild.runs.wrapper_command import WRAPPER, wrapper_argv
from wild.store.write_guard import open_own_file

START_FIELD = "wrapper_start_ticks"  # on a run's line: the wrapper's start time, against pid reuse
NVIDIA_SMI_TIMEOUT_S = 10.0
ORPHAN_LAUNCHER_WAIT_S = 10.0  # a dead loop's launcher ends once it read its last request
ORPHAN_LAUNCHER_KILL_WAIT_S = 5.0  # then, killed, it is gone at once unless it cannot be killed
_AGENT_RUN_ENV = "WILD_AGENT_RUN"  # the agent's processes are swept by it: runs must not carry it


def parse_visible_devices(text: str) -> tuple[str, ...]:
    """The GPU ids in a CUDA_VISIBLE_DEVICES value ("" or "-1": none)."""
    ids = tuple(part.strip() for part in text.split(",") if part.strip())
    return () if ids and ids[0].startswith("-") else ids


def parse_nvidia_smi(output: str) -> tuple[str, ...]:
    """GPU indices from `nvidia-smi -L` ("GPU 0: NVIDIA A100 (UUID: …)" a line)."""
    ids = []
    for line in output.splitlines():
        head = line.split(":", 1)[0].split()
        if len(head) == 2 and head[0] == "GPU" and head[1].isdigit():
            ids.append(head[1])
    return tuple(ids)


def nvidia_smi_gpus() -> tuple[str, ...]:
    """This machine's GPUs by `nvidia-smi -L`; none when it is absent or fails."""
    program = shutil.which("nvidia-smi")
    if program is None:
        return ()
    try:
        done = subprocess.run(
            [program, "-L"],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    return parse_nvidia_smi(done.stdout) if done.returncode == 0 else ()


def run_slots(settings: Mapping[str, str]) -> int:
    """CPU slots from `run_slots` (--run-slots), else the core count."""
    text = settings.get("run_slots")
    if text is None or not str(text).strip():
        return os.cpu_count() or 1
    try:
        slots = int(str(text).strip())
    except ValueError:
        slots = 0
    if slots < 1:
        raise WildError(f"--run-slots {text!r}: give a whole number of CPU slots, 1 or more")
    return slots


def _session_members(sid: int) -> list[int]:
    """The pids whose session is `sid` (field 6 of /proc/<pid>/stat)."""
    members = []
    for name in os.listdir("/proc") if os.path.isdir("/proc/self") else ():
        fields = procfs.stat_fields(int(name)) if name.isdigit() else None
        if fields is not None and fields[procfs.SESSION : procfs.SESSION + 1] == [str(sid)]:
            members.append(int(name))
    return members


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _environ_value(pid: int, name: str) -> str | None:
    try:
        data = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    prefix = f"{name}=".encode()
    for item in data.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode(errors="replace")
    return None


class LocalBackend:
    """Runs on this machine, as many at once as the pool's slots allow."""

    name = "local"

    def __init__(
        self,
        context: BackendContext,
        *,
        environ: Mapping[str, str] | None = None,
        list_gpus: Callable[[], tuple[str, ...]] = nvidia_smi_gpus,
    ) -> None:
        self.paths = context.paths
        env = os.environ if environ is None else environ
        visible = env.get("CUDA_VISIBLE_DEVICES")
        gpus = parse_visible_devices(visible) if visible is not None else list_gpus()
        self.pool = Pool(cpus=run_slots(context.settings), gpus=gpus)
        self._planned: dict[str, tuple[str, ...]] = {}
        self._children: dict[str, subprocess.Popen[bytes]] = {}
        self._launcher: Launcher | None = None
        self._launcher_failed = False  # it could not start or broke: runs are spawned
        self._closed: list[subprocess.Popen[bytes]] = []  # launchers let go, to reap
        self._orphans_gone = False  # no launcher of a dead loop is left (adoption waits)
        # Launchers of a dead loop that outlived SIGKILL: looked for again, never waited on.
        self._unkillable: dict[int, str] = {}  # pid: why (the kill's error)
        self._kill_errors: dict[int, str] = {}
        self._said: set[int] = set()  # those named to the human already
        self._launched: dict[str, int] = {}  # runs going in wrappers the launcher started

    # -- the RunBackend protocol -----------------------------------------------------------

    def admit(self, queued: Iterable[RunRecord], active: Sequence[RunRecord]) -> list[RunRecord]:
        chosen = plan(self.pool, queued, active)
        self._planned = {run.id: gpus for run, gpus in chosen}
        return [run for run, _gpus in chosen]

    def submit(self, run: RunRecord, env: Mapping[str, str]) -> Submitted:
        started = self.submit_all([(run, env)])[0]
        if isinstance(started, WildError):
            raise started
        return started

    def submit_all(
        self, runs: Sequence[tuple[RunRecord, Mapping[str, str]]]
    ) -> list[Submitted | WildError]:
        """`submit` each run (admitted, its claim durable), the launcher asked for all of them
        at once: what started each, or why it could not start."""
        results: list[Submitted | WildError | None] = []
        asked: list[tuple[int, list[str], dict[str, str], Path, tuple[str, ...]]] = []
        for run, env in runs:
            refusal = never_fits(self.pool, run)
            gpus = self._planned.pop(run.id, None)
            if refusal is not None:
                results.append(WildError(f"run {run.id} cannot start: {refusal}"))
            elif gpus is None:
                message = f"run {run.id}: submit it only after admit gave it its slots"
                results.append(WildError(message))
            else:
                run_dir = self.paths.run_dir(run.id)
                try:
                    run_dir.mkdir(parents=True, exist_ok=True)
                except OSError as error:
                    results.append(WildError(f"run {run.id}: cannot make {run_dir}: {error}"))
                    continue
                argv, child_env = self._argv(run, run_dir), self._child_env(env, gpus)
                asked.append((len(results), argv, child_env, run_dir, gpus))
                results.append(None)
        pids = self._launch([(argv, env, run_dir) for _i, argv, env, run_dir, _g in asked])
        for (at, argv, env, run_dir, gpus), launched in zip(asked, pids, strict=True):
            run = runs[at][0]
            if launched is not None:
                self._launched[run.id] = launched
                started_for_us(launched)  # should its launcher die, an agent loop adopts it
                results[at] = self._submitted(launched, gpus)
                continue
            try:
                results[at] = self._submitted(self._spawn(run, argv, env, run_dir), gpus)
            except OSError as error:
                results[at] = WildError(f"run {run.id}: cannot start its wrapper: {error}")
        return [result for result in results if result is not None]

    def _spawn(
        self, run: RunRecord, argv: Sequence[str], env: Mapping[str, str], run_dir: Path
    ) -> int:
        """Start the run's wrapper on its own (no launcher): its pid."""
        with os.fdopen(self._open_log(run_dir), "ab") as log:
            proc = spawn(argv, env=env, stdout=log)  # new session, stdin /dev/null
        self._children[run.id] = proc
        return proc.pid

    def _submitted(self, pid: int, gpus: tuple[str, ...]) -> Submitted:
        seen = probe(pid)
        fields: dict[str, Any] = {GPU_FIELD: list(gpus)}
        if seen is not None and seen.start_ticks is not None:
            fields[START_FIELD] = seen.start_ticks
        return Submitted(job_id=str(pid), host=this_host(), fields=fields)

    def park(self, heads: Sequence[tuple[RunRecord, Mapping[str, str]]]) -> None:
        """Have the wrapper launcher ready while runs are queued (`heads`: the next ones), so
        a start waits for no interpreter; let it go when none is (it exits)."""
        if not heads and not self._launched:  # it reaps the wrappers it started: kept till then
            self._let_launcher_go()
        elif self._launcher is None and not self._launcher_failed:
            self._start_launcher()

    def close(self) -> None:
        """Let the launcher go (it would exit with the loop anyway)."""
        self._let_launcher_go()

    def poll(self, active: Sequence[RunRecord]) -> dict[str, Observed]:
        self._reap()
        seen: dict[str, Observed] = {}
        for run in active:
            seen[run.id] = self._observe(run)
        for run_id, pid in list(self._launched.items()):
            if run_id not in seen or seen[run_id].liveness != "running":
                del self._launched[run_id]
                started_for_us(pid, ours=False)
        return seen

    def cancel(self, run: RunRecord) -> None:
        pid = self._pid(run)
        if pid is None or not self._alive(run, pid):
            self._kill_leftovers(pid)
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)  # the wrapper kills the group and writes the marker

    # -- beyond the protocol ---------------------------------------------------------------

    def adopt(self, run: RunRecord) -> Submitted | None:
        """The handle of an attempt started but never recorded (the loop died in between):
        its wrapper, found by the `pid` file, if it runs or has ended; None if none is found.
        AdoptionDeferred while a dead loop's launcher that could not be killed is left (it
        may still start the run)."""
        self._await_orphan_launchers()
        run_dir = self.paths.run_dir(run.id)
        pid = markers.read_pid(run_dir)
        if pid is None or not self._is_wrapper_of(run, pid):
            # A wrapper started just before the loop died may not have written its pid yet
            # (its Python is still starting): found by its command line, it is not lost.
            pid = find_wrapper(self.paths, run)
        if pid is not None and self._is_wrapper_of(run, pid):
            gpus = parse_visible_devices(_environ_value(pid, "CUDA_VISIBLE_DEVICES") or "")
            return Submitted(str(pid), this_host(), {GPU_FIELD: list(gpus)})
        # Read once no wrapper is seen, not before the look: a wrapper writes its marker before
        # it exits, so one that ended during the look has left it (read first, a run ending
        # just then had neither: it was reported lost, though it ran to its end).
        marker = markers.read_marker(run_dir)
        if marker.present:
            return Submitted(str(pid) if pid else "", this_host(), {GPU_FIELD: []})
        return None

    def never_started(self, run: RunRecord) -> bool:
        """Whether a claimed attempt never started, as far as this boot of the machine can
        tell: no pid file (a wrapper writes it before it starts the instruction), no exit
        marker and no wrapper process of it. Only for a claim taken in this boot (the page
        cache kept every write): then a loop died between its claims and the start. Never
        while a dead loop's launcher that could not be killed is left."""
        try:
            self._await_orphan_launchers()
        except AdoptionDeferred:
            return False
        run_dir = self.paths.run_dir(run.id)
        return (
            markers.read_pid(run_dir) is None
            and not markers.read_marker(run_dir).present
            and find_wrapper(self.paths, run) is None
        )

    def describe(self, active: Sequence[RunRecord]) -> dict[str, Any]:
        """The pool for events.log: slots total and free."""
        left = free(self.pool, active)
        return {
            "cpu_slots": self.pool.cpus,
            "cpu_free": left.cpus,
            "gpus": list(self.pool.gpus),
            "gpus_free": list(left.gpus),
            "gpu_shares_free": {gpu: float(share) for gpu, share in left.shares},
        }

    # -- internals -------------------------------------------------------------------------

    def _reap(self) -> None:
        """Collect wrappers of ours that exited, so no zombie stays behind."""
        for run_id, proc in list(self._children.items()):
            if proc.poll() is not None:
                del self._children[run_id]
        self._closed = [proc for proc in self._closed if proc.poll() is None]

    def _start_launcher(self) -> None:
        try:
            self._launcher = Launcher(sys.executable, self.paths.runs)
        except OSError:
            self._launcher_failed = True  # runs are spawned one by one, as without it

    def _let_launcher_go(self) -> None:
        if self._launcher is not None:
            self._launcher.close()
            self._closed.append(self._launcher.proc)
            self._launcher = None

    def _launch(
        self, runs: Sequence[tuple[Sequence[str], Mapping[str, str], Path]]
    ) -> list[int | None]:
        """The pid of each run's wrapper the launcher started (each run: its wrapper's command
        line, environment and folder); None for one it started none for."""
        if runs and self._launcher is None and not self._launcher_failed:
            self._start_launcher()
        launcher = self._launcher
        if launcher is None or not runs:
            return [None] * len(runs)
        # A wrapper's command line is `python -I -S wrapper.py ARGS`: the launcher takes ARGS.
        pids = launcher.launch_all([(argv[4:], env, run_dir) for argv, env, run_dir in runs])
        if not launcher.alive():
            self._launcher_failed = True  # it died or stalled: not asked again
            self._let_launcher_go()
        return pids

    def _await_orphan_launchers(self) -> None:
        """Wait until no launcher of a dead loop is left: one may have read a request and not
        yet written its run's `pid` (then the run would look never started). One still there
        after ORPHAN_LAUNCHER_WAIT_S (stopped, or starved of CPU) is killed, then waited for:
        taken for gone while it could still start a run, its run was started twice. Killed,
        it starts nothing more, and each run's `pid` says whether it was let run.

        One that outlives its kill by ORPHAN_LAUNCHER_KILL_WAIT_S (not ours to kill, or a
        process the kernel cannot end) is not waited for again: AdoptionDeferred, with a line
        naming it the first time, until it is gone."""
        if self._orphans_gone:
            return
        own = self._launcher.pid if self._launcher is not None else None
        if self._unkillable:  # waited for once: only looked for
            left = launchers.orphans(self.paths.runs, own)
            if left:
                raise AdoptionDeferred(self._unkillable_line(left))
            self._unkillable = {}
            self._orphans_gone = True
            return
        deadline = time.monotonic() + ORPHAN_LAUNCHER_WAIT_S
        given_up_at = deadline + ORPHAN_LAUNCHER_KILL_WAIT_S
        while left := launchers.orphans(self.paths.runs, own):
            now = time.monotonic()
            if now >= given_up_at:
                self._unkillable = {
                    pid: self._kill_errors.get(pid, "still there after SIGKILL") for pid in left
                }
                raise AdoptionDeferred(self._unkillable_line(left))
            if now >= deadline:
                for pid in left:
                    self._kill_orphan(pid)
            time.sleep(0.01)
        self._kill_errors.clear()
        self._orphans_gone = True

    def _kill_orphan(self, pid: int) -> None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        except OSError as error:  # PermissionError: another user's, or not ours to kill
            self._kill_errors[pid] = f"kill: {error.strerror or error}"

    def _unkillable_line(self, left: Sequence[int]) -> str:
        """The one line that names the launchers left, said once (then an empty message)."""
        new = [pid for pid in left if pid not in self._said]
        self._said.update(new)
        if not new:
            return ""
        named = ", ".join(f"{pid} ({self._unkillable.get(pid, 'still there')})" for pid in new)
        return (
            f"a dead loop's run launcher could not be stopped: pid {named}; the runs it may "
            f"still start are neither started again nor adopted until it is gone: stop it "
            f"(`kill -9 {' '.join(map(str, new))}`, as its owner or root)"
        )

    def _child_env(self, env: Mapping[str, str], gpus: tuple[str, ...]) -> dict[str, str]:
        child_env = {k: v for k, v in env.items() if k != _AGENT_RUN_ENV}
        if self.pool.gpus:  # a CPU run on a GPU machine sees no GPU rather than all of them
            child_env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
        return child_env

    def _argv(self, run: RunRecord, run_dir: Path) -> list[str]:
        workdir = str(self.paths.project / run.workdir)
        return wrapper_argv(run, python=sys.executable, run_dir=str(run_dir), workdir=workdir)

    def _open_log(self, run_dir: Path) -> int:
        """The run's log, to append the wrapper's output to: never through a link planted at
        `runs/<id>/log` (write_guard), or the run's output would go to the file it names."""
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        return open_own_file(run_dir / markers.LOG, flags, own_folder=True)

    def _observe(self, run: RunRecord) -> Observed:
        run_dir = self.paths.run_dir(run.id)
        ended = self._ended(run, run_dir)
        if ended is not None:
            return ended
        if run.host is not None and run.host != this_host():
            return Observed("unknown", f"runs on {run.host}, not on this host")
        pid = self._pid(run)
        if pid is not None and self._alive(run, pid):
            return Observed("running")
        # It may have written its marker and exited since the first look.
        ended = self._ended(run, run_dir)
        if ended is not None:
            return ended
        self._kill_leftovers(pid)
        return Observed("gone", f"wrapper process {pid} is gone and left no exit marker")

    def _ended(self, run: RunRecord, run_dir: Path) -> Observed | None:
        read = markers.read_marker(run_dir)
        return Observed("ended", read.problem) if read.ends(run.attempt) else None

    def _pid(self, run: RunRecord) -> int | None:
        if run.job_id is not None and run.job_id.isdigit():
            return int(run.job_id)
        return markers.read_pid(self.paths.run_dir(run.id))

    def _alive(self, run: RunRecord, pid: int) -> bool:
        return wrapper_alive(self.paths, run, pid)

    def _is_wrapper_of(self, run: RunRecord, pid: int) -> bool:
        return is_wrapper_of(self.paths, run, pid)

    def _kill_leftovers(self, pid: int | None) -> None:
        """Kill what is left of a vanished wrapper's session (its orphaned instruction).

        Only when no process has the pid: Linux keeps a pid that still names a session from
        being reused, so every member found is the old run's.
        """
        if pid is None or probe(pid) is not None:
            return
        for member in _session_members(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(member, signal.SIGKILL)


def wrapper_alive(paths: WildPaths, run: RunRecord, pid: int) -> bool:
    """Whether `pid` still is the wrapper of `run`'s attempt (its start time, as recorded,
    or else its command line: pids get reused)."""
    seen = probe(pid)
    if seen is None:
        return False
    recorded = run.raw.get(START_FIELD)
    if isinstance(recorded, int) and seen.start_ticks is not None:
        return recorded == seen.start_ticks
    return is_wrapper_of(paths, run, pid)


def find_wrapper(paths: WildPaths, run: RunRecord) -> int | None:
    """The pid of this attempt's wrapper, by the command lines of every process (for a
    wrapper that has not written its `pid` file yet); None when none runs."""
    for name in os.listdir("/proc") if os.path.isdir("/proc/self") else ():
        if name.isdigit() and is_wrapper_of(paths, run, int(name)):
            return int(name)
    return None


def is_wrapper_of(paths: WildPaths, run: RunRecord, pid: int) -> bool:
    """Whether `pid` is this attempt's wrapper, by its command line (pids get reused); a
    wrapper the launcher forked has the launcher's, and is known by its name and the run's
    `pid` file, which the launcher wrote before it let it run."""
    argv = _cmdline(pid)
    wanted = [str(paths.run_dir(run.id)), str(run.attempt)]
    if str(WRAPPER) not in argv or probe(pid) is None:
        return False
    if all(item in argv for item in wanted):
        return True
    run_dir = paths.run_dir(run.id)
    launched = launchers.is_launched_wrapper(pid) and markers.read_pid(run_dir) == pid
    return launched
