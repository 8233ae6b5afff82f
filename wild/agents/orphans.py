"""No agent outlives its loop: a parent-death signal, a child subreaper, and a sweep that finds
and kills whatever an agent run left behind by the run id every agent process inherits.

A SIGKILLed loop can clean nothing up. Three things cover for it:
- the agent gets SIGKILL from the kernel when the loop's thread that spawned it dies
  (`PR_SET_PDEATHSIG`, set by a tiny program that then execs the agent: util-linux's
  `setpriv` where it is installed, else a Python one);
- the loop is a child subreaper, so a `setsid` grandchild whose parent died is reparented to
  the loop (not to init) while the loop lives;
- every agent process carries `WILD_AGENT_RUN=<run id>` in its environment, which its children
  inherit whatever session or group they move to: `sweep` finds them by it when a run is
  killed, when the loop ends (a watcher process does it if the loop was SIGKILLed), and when
  a restarted loop recovers a killed one's run.

Between iterations a job the agent started in the background (a training run a barrier waits
for) is left running: it is work in progress, not an orphan, until its loop ends.

Linux only; elsewhere the prctl calls do nothing and the sweep finds nothing (no /proc).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from wild import libc, procfs
from wild.agents import tree, watch_pipe
from wild.process import no_spawning, spawn

RUN_ENV = tree.RUN_ENV
SWEEP_GRACE_S = 0.5  # what leftovers get between SIGTERM and SIGKILL
GONE_WAIT_S = 5.0  # how long a SIGKILLed process may take to disappear
_SWEEP_PASSES = 5  # a process may fork while we sweep: look again until nothing is found
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37

Prctl = Callable[..., int]


@functools.cache  # looked up once: it is asked for at every spawn and after every run
def _prctl() -> Prctl | None:
    """libc's prctl, from the symbols already loaded (no library search, no subprocess;
    `wild.libc`: not the `ctypes` package, ~1.1 ms more before the first agent's start)."""
    if not os.path.isdir("/proc/self"):
        return None
    return libc.function("prctl")


def become_subreaper(flag: bool = True) -> bool:
    """Orphaned descendants are reparented to this process instead of init (`flag` False: no
    longer); False if unsupported."""
    prctl = _prctl()
    return prctl is not None and prctl(_PR_SET_CHILD_SUBREAPER, int(flag), 0, 0, 0) == 0


def is_subreaper() -> bool:
    prctl = _prctl()
    if prctl is None:
        return False
    # The second argument is here where to store the flag (a bare int would be cut to 32 bits).
    return bool(libc.int_out(prctl, _PR_GET_CHILD_SUBREAPER, 0, 0, 0))


# Sets the parent-death signal, then becomes the agent (exec keeps the pid and the signal).
# A separate program rather than a `preexec_fn`: running Python between fork and exec in a
# process with threads (the loop's watcher and checker) can deadlock. If the parent died
# before the prctl, no signal would ever come: the child kills itself instead.
_EXEC_DYING_WITH_PARENT = """
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    os.kill(os.getpid(), signal.SIGKILL)
if sys.argv[2] == "gated":
    if os.read(2, 1) != b"\\n":
        os._exit(125)
    os.dup2(1, 2)
try:
    os.execvp(sys.argv[3], sys.argv[3:])
except OSError as error:
    sys.stderr.write(f"[wild] could not start {sys.argv[3]}: {error.strerror}\\n")
    os._exit(127)
"""


# The same with util-linux's setpriv, a C program: it sets the signal and execs a POSIX shell
# that makes the same parent check ($PPID is read at the shell's start, after the prctl) and
# execs the agent (`gated`: once the loop says go). About a millisecond where the Python
# program costs an interpreter's start (15-30 ms) before the agent runs.
_CHECK_PARENT_THEN_EXEC = (
    'if [ "$PPID" != "$1" ]; then kill -s KILL $$; fi; '
    'if [ "$2" = gated ]; then read -r go <&2 || exit 125; exec 2>&1; fi; '
    'shift 2; exec "$@"'
)
# The gate alone, where no parent-death signal can be set: wait for the loop's word, then exec.
_GATE_THEN_EXEC = 'read -r go <&2 || exit 125; exec 2>&1; exec "$@"'
GATE_CLOSED_EXIT = 125  # the loop closed the gate (or died) before saying go: nothing ran


@functools.cache  # looked up once: the loop's PATH does not change while it runs
def setpriv() -> str | None:
    """util-linux's `setpriv` if it is on PATH and can set a parent-death signal (2.33+)."""
    try:  # `find_program`, not shutil.which: shutil is not on the launch's way (issue 22)
        found = find_program("setpriv", Path(os.getcwd()), os.environ.get("PATH"))
    except OSError:
        return None
    try:  # an older setpriv, or busybox's, has no --pdeathsig: its help text does not name it
        return str(found) if b"--pdeathsig" in found.read_bytes() else None
    except OSError:
        return None


def dying_with_parent(
    argv: Sequence[str], cwd: Path, path: str | None, *, gated: bool = False
) -> list[str]:
    """`argv` run so that it gets SIGKILL when the thread that starts it dies (Linux).

    `gated`: the child's stderr is the read end of a pipe, its gate: the program is exec'd
    only once a newline arrives on it, with stderr joined to stdout; at end of file (the loop
    closed it, or died) the child exits with GATE_CLOSED_EXIT having run nothing. The loop
    makes the run's record durable while the child waits there, then says go
    (`wild.agents.runner`). Stderr, not a descriptor of its own: a POSIX shell redirects only
    descriptors 0-9, and the loop's are numbered higher.

    Raises FileNotFoundError or PermissionError, as exec would, when the program cannot run:
    the caller learns it here rather than from an exit status.
    """
    program = argv[0]
    held = "gated" if gated else "-"
    no_prctl = _prctl() is None
    if no_prctl and not gated:
        return [str(find_program(program, cwd, path)), *argv[1:]]  # exec'd by this path
    check_runnable(program, cwd, path)  # exec'd by its name, by the gate or the helper
    if no_prctl:
        return ["/bin/sh", "-c", _GATE_THEN_EXEC, "sh", *argv]
    loop = str(os.getpid())
    helper = setpriv()
    if helper is not None:
        return [helper, "--pdeathsig", "KILL", "--", "/bin/sh", "-c", _CHECK_PARENT_THEN_EXEC,
                "sh", loop, held, *argv]  # fmt: skip
    return [sys.executable, "-I", "-S", "-c", _EXEC_DYING_WITH_PARENT, loop, held, *argv]


# The last program `check_runnable` found, by (name, folder, PATH): the loop starts the same
# agent program every iteration, and a PATH search was ~80 µs of each start (issue 22 item 8).
_runnable: dict[tuple[str, str, str | None], str] = {}


def check_runnable(program: str, cwd: Path, path: str | None) -> None:
    """Raise what `find_program` raises when exec would not find `program` runnable. A program
    found before is taken again while it is still a runnable file: the exec that follows looks
    it up by its name itself, so whichever file it finds, one runs."""
    key = (program, str(cwd), path)
    found = _runnable.get(key)
    if found is not None and os.path.isfile(found) and os.access(found, os.X_OK):
        return
    _runnable[key] = str(find_program(program, cwd, path))


def find_program(program: str, cwd: Path, path: str | None) -> Path:
    """Where exec would find `program` (a name with a slash is relative to the child's cwd)."""
    if "/" in program:
        candidates = [os.path.join(cwd, program)]
    else:
        directories = (path if path is not None else os.defpath).split(os.pathsep)
        # Joined as strings: a Path per folder of a long PATH took ~0.2 ms per agent start.
        candidates = [os.path.join(cwd, directory or ".", program) for directory in directories]
    denied = False
    for candidate in candidates:
        if os.path.isfile(candidate):
            if os.access(candidate, os.X_OK):
                return Path(candidate)
            denied = True
    if denied:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def run_value(environ: bytes) -> str | None:
    """The `WILD_AGENT_RUN` value in a /proc/<pid>/environ (NUL-separated); None if absent."""
    prefix = f"{RUN_ENV}=".encode()
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode("utf-8", "replace")
    return None


def belongs(value: str | None, run: str) -> bool:
    """Whether a process carrying `value` is part of `run`: that run, or one of its sub-runs
    (`<run>.<n>`: a loop's id names all its agent runs)."""
    return value is not None and (value == run or value.startswith(run + "."))


def _pids() -> Iterator[int]:
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                yield int(entry.name)


def _open(pid: int) -> int | None:
    """A pidfd for `pid`, so the signal reaches this process even if the pid is reused."""
    try:
        return os.pidfd_open(pid)
    except (ProcessLookupError, PermissionError):
        return None
    except OSError:
        return -1  # no pidfds here (old kernel): signal by pid


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""  # gone, a zombie, or not ours to read


def _signal(pid: int, pidfd: int, signum: int) -> bool:
    try:
        if pidfd >= 0:
            signal.pidfd_send_signal(pidfd, signum)
        else:
            os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


# The processes of a run found by its tree (pid, start ticks): `wild.agents.tracking`.
Members = Callable[[], set[tuple[int, int]]]


def _no_members() -> set[tuple[int, int]]:
    return set()


def signal_run(run: str, signum: int, members: Members = _no_members) -> set[int]:
    """Send `signum` to every process (but this one) of `run`: those that carry its id, and
    the `members()` of its tree (which a child cannot leave by clearing its environment);
    the pids signalled."""
    signalled: set[int] = set()
    for _ in range(_SWEEP_PASSES):
        found = False
        in_tree = dict(members())
        for pid in _pids():
            if pid == os.getpid() or pid in signalled:
                continue
            pidfd = _open(pid)
            if pidfd is None:
                continue
            try:
                # The pidfd is opened first: what we read is that process's, or it is dead.
                ours = pid in in_tree and _ticks(pid) == in_tree[pid]
                ours = ours or belongs(run_value(_environ(pid)), run)
                if ours and _signal(pid, pidfd, signum):
                    signalled.add(pid)
                    found = True
            finally:
                if pidfd >= 0:
                    os.close(pidfd)
        if not found:
            break
    return signalled


def _ticks(pid: int) -> int | None:
    proc = tree.read_proc(pid)
    return proc.start_ticks if proc is not None else None


def _reap(pids: set[int]) -> None:
    """Collect the exit status of those that are our children (subreaped orphans included)."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def wait_gone(pids: set[int], limit_s: float) -> bool:
    """Wait up to `limit_s` for every pid to exit (a zombie has), reaping our own."""
    deadline = time.monotonic() + limit_s
    while True:
        _reap(pids)
        left = {pid for pid in pids if procfs.running(pid)}
        if not left:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def sweep(run: str, grace_s: float = SWEEP_GRACE_S, members: Members = _no_members) -> set[int]:
    """Kill every process of `run` (SIGTERM, `grace_s`, then SIGKILL) and reap what was ours;
    returns the pids it found. Safe to call when nothing is left."""
    found = signal_run(run, signal.SIGTERM, members)
    if found and not wait_gone(found, grace_s):
        found |= signal_run(run, signal.SIGKILL, members)
        wait_gone(found, GONE_WAIT_S)
    return found


def _parent(pid: int) -> int | None:
    fields = procfs.stat_fields(pid)
    ppid = fields[procfs.PPID] if fields is not None and len(fields) > procfs.PPID else ""
    return int(ppid) if ppid.isdigit() else None


# Inside `guarded`: the children this process had before, which are not orphans of ours.
_guarded_from: set[int] | None = None


def _children(procs: Mapping[int, tree.Proc] | None = None) -> set[int]:
    me = os.getpid()
    if procs is not None:
        return {pid for pid, proc in procs.items() if proc.ppid == me}
    return {pid for pid in _pids() if _parent(pid) == me}


def _children_at_start() -> set[int]:
    """`_children()` as the guard starts, with no look at /proc where the process has no child
    at all (a loop's start: it has spawned nothing yet), which one system call tells: the
    kernel keeps no children lists here (no CONFIG_PROC_CHILDREN), and every process of the
    machine was read (issue 22 item 8: ~90 files before the first agent's start)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)  # reaps nothing
    except ChildProcessError:
        return set()  # no child: nor any descendant that could be adopted meanwhile
    return _children()


def adopted(procs: Mapping[int, tree.Proc] | None = None) -> set[int]:
    """Inside `guarded`: the orphans reparented to us (children we did not start: descendants
    of an agent whose parent died), zombies included. Outside it, none: the process's other
    children are not ours to judge (a test runner's, say), nor those it had before. `procs`:
    a process table just read (`wild.agents.tracking.RunTree.look`), so /proc is not read
    again."""
    before = _guarded_from
    if before is None or not is_subreaper():
        return set()
    with no_spawning() as ours:
        return _children(procs) - ours - before


def reap_adopted(procs: Mapping[int, tree.Proc] | None = None) -> set[int]:
    """Collect the adopted orphans that have exited (so no zombie piles up); the pids reaped."""
    exited = {pid for pid in adopted(procs) if not procfs.running(pid)}
    _reap(exited)
    return exited


def sweep_adopted(grace_s: float = SWEEP_GRACE_S) -> set[int]:
    """Kill and reap the orphans adopted inside `guarded` (see `adopted`); the pids found."""
    found = adopted()
    # Our unreaped children keep their pids: signalling by pid cannot hit another process.
    for pid in found:
        _signal(pid, -1, signal.SIGTERM)
    if found and not wait_gone(found, grace_s):
        for pid in found:
            _signal(pid, -1, signal.SIGKILL)
        wait_gone(found, GONE_WAIT_S)
    _reap(found)
    return found


# The watcher waits in a POSIX shell, which starts in a millisecond, and starts Python to sweep
# only if the loop died: an interpreter's start no longer competes with the loop's own before
# its first agent. The loop that ends in its `finally` has swept already: it says so with the
# line `done`; a killed loop's pipe just ends (`read` fails). Before that, the loop tells it each
# process it found in an agent's tree (`wild.agents.watch_pipe`), which it passes on to Python.
_WATCH = (
    'pids=; while read -r line; do if [ "$line" = done ]; then exit 0; fi; pids="$pids $line"; '
    'done; exec "$0" -m wild.agents.orphan_watch "$1" $pids </dev/null'
)


@contextlib.contextmanager
def guarded(loop_id: str) -> Iterator[None]:
    """While the block runs, no process of the loop's agent runs (`<loop_id>.*`) outlives it.

    This process becomes a child subreaper, and a watcher process kills what is left of the
    runs as soon as this one ends, by SIGKILL too (see `wild.agents.orphan_watch`). At the
    block's end, leftovers and adopted orphans are killed here, and the watcher exits.
    """
    global _guarded_from  # noqa: PLW0603 - one guard per process: the loop's
    was_subreaper = is_subreaper()
    become_subreaper()
    _guarded_from = _children_at_start()
    read_end, write_end = os.pipe()  # not inheritable: agents never hold the write end
    try:
        with os.fdopen(read_end, "rb", buffering=0) as source:
            spawn(
                ["/bin/sh", "-c", _WATCH, sys.executable, loop_id],
                stdin=source,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
    except BaseException:
        os.close(write_end)
        _guarded_from = None
        raise
    watch_pipe.attach(write_end)
    try:
        yield
    finally:
        sweep(loop_id, members=watch_pipe.told_members)
        sweep_adopted()
        # All swept: the watcher reads the line and exits; not waited for (Popen reaps it).
        # Killed before this line, the loop leaves the watcher to sweep again.
        watch_pipe.detach(b"done\n")
        _guarded_from = None
        if not was_subreaper:
            become_subreaper(False)
