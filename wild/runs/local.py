"""The `local` run backend: a pool of CPU and GPU slots on this machine, each run a detached
wrapper process that outlives the loop.

`submit` starts `wrapper.py` in a session of its own (not the loop's: a SIGKILLed loop takes
no run with it) and returns the wrapper's pid as the job id. `poll` looks at every active run
in one pass: its exit marker, else whether the wrapper's pid is still that same process
(start time from /proc, or its command line naming the run's folder), else gone (and what
is left of its session is killed, so a lost run holds no slot). `cancel` sends SIGTERM to
the wrapper, which kills the run's group and still writes the marker. `adopt` finds an
attempt a crashed loop started but never recorded, by the `pid` file the wrapper wrote.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from wild import procfs
from wild.errors import WildError
from wild.liveness import probe, this_host
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.process import spawn
from wild.runs import markers
from wild.runs import parked as parked_wrappers
from wild.runs.backend import BackendContext, Observed, Submitted
from wild.runs.parked import Parked
from wild.runs.pool import GPU_FIELD, Pool, free, never_fits, plan
from wild.runs.wrapper_command import WRAPPER, wrapper_argv
from wild.store.write_guard import open_own_file

START_FIELD = "wrapper_start_ticks"  # on a run's line: the wrapper's start time, against pid reuse
NVIDIA_SMI_TIMEOUT_S = 10.0
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
        self._parked: dict[str, Parked] = {}  # by run id
        self._discarded: list[subprocess.Popen[bytes]] = []

    # -- the RunBackend protocol -----------------------------------------------------------

    def admit(self, queued: Iterable[RunRecord], active: Sequence[RunRecord]) -> list[RunRecord]:
        chosen = plan(self.pool, queued, active)
        self._planned = {run.id: gpus for run, gpus in chosen}
        return [run for run, _gpus in chosen]

    def submit(self, run: RunRecord, env: Mapping[str, str]) -> Submitted:
        refusal = never_fits(self.pool, run)
        if refusal is not None:
            raise WildError(f"run {run.id} cannot start: {refusal}")
        gpus = self._planned.pop(run.id, None)
        if gpus is None:
            raise WildError(f"run {run.id}: submit it only after admit gave it its slots")
        run_dir = self.paths.run_dir(run.id)
        run_dir.mkdir(parents=True, exist_ok=True)
        child_env = self._child_env(env, gpus)
        argv = self._argv(run, run_dir)
        proc = self._go_parked(run, argv, child_env, run_dir)
        if proc is None:
            try:
                with os.fdopen(self._open_log(run_dir), "ab") as log:
                    proc = spawn(argv, env=child_env, stdout=log)  # new session, stdin /dev/null
            except OSError as error:
                raise WildError(f"run {run.id}: cannot start its wrapper: {error}") from error
        self._children[run.id] = proc
        seen = probe(proc.pid)
        fields: dict[str, Any] = {GPU_FIELD: list(gpus)}
        if seen is not None and seen.start_ticks is not None:
            fields[START_FIELD] = seen.start_ticks
        return Submitted(job_id=str(proc.pid), host=this_host(), fields=fields)

    def park(self, heads: Sequence[tuple[RunRecord, Mapping[str, str]]]) -> None:
        """Start the wrappers of `heads` (the next runs to start, each with its environment)
        ahead, parked until `submit` says go (wild.runs.parked); a parked wrapper of another
        run is discarded. A run's GPUs are known only when it is admitted: a wrapper is
        parked with those it would get from an empty pool (none for a CPU run; on a machine
        with one GPU, that one), and one admitted with others starts afresh instead."""
        wanted: dict[str, Parked] = {}
        for run, env in heads:
            if never_fits(self.pool, run) is not None:
                continue
            run_dir = self.paths.run_dir(run.id)
            argv = self._argv(run, run_dir)
            child_env = self._child_env(env, _gpus_from_empty_pool(self.pool, run))
            parked = self._parked.pop(run.id, None)
            if parked is not None and parked.fits(argv, child_env) and parked.proc.poll() is None:
                wanted[run.id] = parked
                continue
            if parked is not None:
                self._discard(parked)
            try:
                run_dir.mkdir(parents=True, exist_ok=True)
                log = self._open_log(run_dir)
                try:
                    wanted[run.id] = parked_wrappers.park(run.id, run.attempt, argv, child_env, log)
                finally:
                    os.close(log)
            except OSError:
                continue  # it starts the ordinary way when admitted (and says why, if it fails)
        for parked in self._parked.values():
            self._discard(parked)
        self._parked = wanted

    def close(self) -> None:
        """Discard the parked wrappers (they would exit with the loop anyway)."""
        self.park(())

    def poll(self, active: Sequence[RunRecord]) -> dict[str, Observed]:
        self._reap()
        seen: dict[str, Observed] = {}
        for run in active:
            seen[run.id] = self._observe(run)
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
        its wrapper, found by the `pid` file, if it runs or has ended; None if none is found."""
        run_dir = self.paths.run_dir(run.id)
        marker = markers.read_marker(run_dir)
        pid = markers.read_pid(run_dir)
        if pid is None or not self._is_wrapper_of(run, pid):
            # A wrapper started just before the loop died may not have written its pid yet
            # (its Python is still starting): found by its command line, it is not lost.
            pid = find_wrapper(self.paths, run)
        if pid is not None and self._is_wrapper_of(run, pid):
            gpus = parse_visible_devices(_environ_value(pid, "CUDA_VISIBLE_DEVICES") or "")
            return Submitted(str(pid), this_host(), {GPU_FIELD: list(gpus)})
        if marker.present:
            return Submitted(str(pid) if pid else "", this_host(), {GPU_FIELD: []})
        return None

    def never_started(self, run: RunRecord) -> bool:
        """Whether a claimed attempt never started, as far as this boot of the machine can
        tell: no pid file (a wrapper writes it before it starts the instruction), no exit
        marker and no wrapper process of it. Only for a claim taken in this boot (the page
        cache kept every write): then a loop died between its claims and the start."""
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
        self._discarded = [proc for proc in self._discarded if proc.poll() is None]

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

    def _go_parked(
        self, run: RunRecord, argv: Sequence[str], env: Mapping[str, str], run_dir: Path
    ) -> subprocess.Popen[bytes] | None:
        """The wrapper parked for `run` (claimed by now), started, if it starts exactly what a
        fresh one would; else None (and it is discarded)."""
        parked = self._parked.pop(run.id, None)
        if parked is None:
            return None
        if parked.fits(argv, env) and parked.proc.poll() is None:
            if parked_wrappers.go(parked, run_dir):  # closes its pipe either way
                return parked.proc
            self._discarded.append(parked.proc)  # gone before it read go: reap it
            return None
        self._discard(parked)
        return None

    def _discard(self, parked: Parked) -> None:
        parked_wrappers.discard(parked)
        self._discarded.append(parked.proc)

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


def _gpus_from_empty_pool(pool: Pool, run: RunRecord) -> tuple[str, ...]:
    """The GPUs `plan` would give `run` if nothing ran: a parked wrapper's guess at its own."""
    chosen = plan(pool, [run], [])
    return chosen[0][1] if chosen else ()


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
    """Whether `pid` is this attempt's wrapper, by its command line (pids get reused)."""
    argv = _cmdline(pid)
    wanted = [str(paths.run_dir(run.id)), str(run.attempt)]
    return str(WRAPPER) in argv and all(item in argv for item in wanted) and probe(pid) is not None
