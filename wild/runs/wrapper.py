"""Runs one research run and leaves its exit marker: the standalone wrapper every backend uses.

Invoked (see wild.runs.backend) as
`python wrapper.py --run-dir DIR --run-id ID --attempt N --workdir W [--time-limit S] --
INSTRUCTION`. It writes its pid to DIR/pid, runs `/bin/sh -c INSTRUCTION` in W (a plain
command, one program and its words, it starts itself, as that shell would: `plain_command`) as
the leader of a process group of its own with stdout and stderr written to DIR/log (through a
pipe, capped: `wild/store/capped_log.py`, loaded by its path, as is `wild/procfs.py`), and, when
the instruction ends, its time limit passes or the wrapper gets SIGTERM/SIGINT, kills that
whole group (SIGTERM, then SIGKILL after a grace) and writes DIR/exit atomically (temp file,
fsync, rename), a JSON object:
`{"run", "attempt", "exit_code", "signal", "ended_at", "host", "reason"}`.

With `--launcher --runs DIR` it is the loop's wrapper launcher instead (wild.runs.launcher):
one interpreter that forks each run's wrapper when the loop asks, after the run's claim is
durable, writes its `pid` file, then lets it run; the forked wrapper runs as above, in a
session of its own, its name (/proc/<pid>/comm) `wild-run`. At end of file on its stdin (the
loop let it go, or died) the launcher exits, having started only what it was asked to.

`reason` is "timeout", "stopped", "start_failed" (then `detail` says why) or null. A run
killed by signal N has `exit_code` 128 + N and `signal` its name, as a shell reports it.

Standard library only and no wild imports: it starts fast and runs on any node that sees
the run folder (a Slurm batch script calls it too). Until the instruction has started it
loads nothing but `os`, `_signal` and `_ctypes` (every import there is time a GPU waits
between runs); the capped log's modules load after. The wrapper makes itself a child
subreaper (Linux), so a background process the instruction leaves behind is reparented to
the wrapper, not to the loop, and is killed with the group when the instruction ends: a run
is over when its marker exists, and nothing of it keeps a slot busy after that.
"""

from __future__ import annotations

# Only what a bare `python -I -S` has loaded already, plus `os`, `_signal` and `_ctypes`, until
# the instruction has started: every import here delays it (issue 23 item 7: the accelerator
# waits while the wrapper starts). argparse, ctypes, subprocess, json, datetime, socket and the
# `signal` module (its enums) cost 1-12 ms each; what the wrapper needs of them is below, in
# a few lines each, and tests/runs/test_wrapper_copies.py checks each copy against the module.
import os
import sys
import time

TYPE_CHECKING = False  # `typing` costs ~10 ms to import (re with it); mypy reads this name
if TYPE_CHECKING:
    import signal as _signal  # the same functions; `_signal` has no type stubs
else:
    import _signal
if TYPE_CHECKING:
    import types
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, NoReturn

GRACE_S = 10.0  # what the group gets between SIGTERM and SIGKILL
KILLED_WAIT_S = 30.0  # how long SIGKILLed members may take to disappear
INSTANT_S = 0.05  # a run over this soon, leaving nothing behind, needs no pump thread
START_FAILED_EXIT = 127  # as a shell reports a command it could not run
USAGE_EXIT = 2  # as argparse exits on a bad command line
_PR_SET_CHILD_SUBREAPER = 36
_STOP_SIGNALS = {_signal.SIGTERM, _signal.SIGINT}
_WAIT_SIGNALS = {_signal.SIGCHLD, *_STOP_SIGNALS}
_USAGE = (
    "usage: wrapper.py --run-dir DIR --run-id ID --attempt N --workdir W "
    "[--time-limit S] [--grace S] -- INSTRUCTION"
)
# Aliases `signal.Signals` does not name a number by (it says SIGABRT, SIGCHLD, SIGIO).
_SIGNAL_ALIASES = frozenset({"SIGIOT", "SIGCLD", "SIGPOLL"})


class Arguments:
    """The wrapper's command line (see the module's docstring)."""

    def __init__(self, values: dict[str, str], instruction: str) -> None:
        self.run_dir = values["--run-dir"]
        self.run_id = values["--run-id"]
        self.attempt = int(values["--attempt"])
        self.workdir = values["--workdir"]
        limit = values.get("--time-limit")
        self.time_limit = None if limit is None else float(limit)
        self.grace = float(values.get("--grace", GRACE_S))
        self.instruction = instruction


class UsageError(Exception):
    """A command line the wrapper cannot run."""


def parse_arguments(argv: Sequence[str]) -> Arguments:
    """`--name value` pairs (or `--name=value`), then `--` and the one instruction."""
    names = {"--run-dir", "--run-id", "--attempt", "--workdir", "--time-limit", "--grace"}
    values: dict[str, str] = {}
    rest = list(argv)
    while rest and rest[0] != "--":
        word = rest.pop(0)
        name, equals, value = word.partition("=")
        if name not in names:
            raise UsageError(f"unknown argument {word!r}")
        if not equals:
            if not rest:
                raise UsageError(f"{name} needs a value")
            value = rest.pop(0)
        values[name] = value
    if len(rest) != 2:
        raise UsageError("give exactly one instruction after --")
    missing = sorted({"--run-dir", "--run-id", "--attempt", "--workdir"} - values.keys())
    if missing:
        raise UsageError(f"missing {', '.join(missing)}")
    try:
        return Arguments(values, rest[1])
    except ValueError as error:
        raise UsageError(f"not a number: {error}") from None


def now_text(seconds: float | None = None) -> str:
    """The time as wild writes times (wild.clock.iso_ms): 2026-02-08T10:45:23.120Z."""
    now = time.time() if seconds is None else seconds
    whole = int(now // 1)
    micros = round((now - whole) * 1_000_000)  # as datetime rounds a timestamp
    if micros >= 1_000_000:
        whole, micros = whole + 1, micros - 1_000_000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{micros // 1000:03d}Z"


def json_text(value: str) -> str:
    """`value` as a JSON string (what json.dumps writes for the ASCII ones; other text is
    kept as UTF-8, which every JSON reader takes)."""
    out = ['"']
    for char in value:
        if char in {'"', "\\"}:
            out.append("\\" + char)
        elif char < " " or char == "\x7f" or 0xD800 <= ord(char) <= 0xDFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def json_object(fields: dict[str, object]) -> str:
    """A flat object of text, whole numbers and nulls on one line (the marker's shape)."""
    parts = []
    for key, value in fields.items():
        if value is None:
            text = "null"
        elif isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        else:
            text = json_text(str(value))
        parts.append(f"{json_text(key)}: {text}")
    return "{" + ", ".join(parts) + "}"


def signal_name(signum: int) -> str:
    """The name a shell and `signal.Signals` give a signal: SIGKILL; "signal N" if none."""
    for name in sorted(dir(_signal)):
        if (
            name.startswith("SIG")
            and not name.startswith("SIG_")
            and name not in _SIGNAL_ALIASES
            and getattr(_signal, name) == signum
        ):
            return name
    return f"signal {signum}"


def write_marker(path: str, text: str) -> None:
    """The exit marker at `path`: written as `write_whole` does, durable, and its folder's
    times touched once it is in place. That attribute change of an entry of `.wild/runs/` is
    what wakes the loop, which watches that one folder, not each run's (a watch per run
    folder held ~0.4 KB of the loop's memory per run for the whole sweep, issue 23)."""
    write_whole(path, text, durable=True, touch_folder=True)


def write_whole(path: str, text: str, *, durable: bool, touch_folder: bool = False) -> None:
    """`path` holds `text` whole or keeps its old content (temp file, rename); `durable`: on
    the disk too (the temp file and the folder fsynced), so a machine crash keeps it;
    `touch_folder`: the folder's times set to now once it is in place (before the folder's
    fsync: whoever that wakes reads it as soon as it could before)."""
    temp = f"{path}.tmp.{os.getpid()}"
    try:
        # O_EXCL | O_NOFOLLOW: never through a link planted at the temp name (as `_open_log`).
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o644)
        try:
            data = text.encode()
            while data:
                data = data[os.write(fd, data) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        try:
            os.remove(temp)
        except OSError:
            pass
        raise
    if touch_folder:
        try:  # a wake only: the loop's slow poll still finds a marker no event announced
            os.utime(os.path.dirname(path) or ".")
        except OSError:
            pass
    if durable:
        try:  # not every filesystem lets a directory be fsynced
            folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        except OSError:
            pass


def _load_by_path(*parts: str) -> types.ModuleType:
    """A standard-library-only module of wild, loaded by its path under `wild/`: this script
    runs with `-I -S` and imports nothing of wild by name. Called only once the instruction
    runs (importlib.util and what these modules import cost milliseconds)."""
    import importlib.util

    wild_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(wild_dir, *parts)
    spec = importlib.util.spec_from_file_location("wild_" + parts[-1].removesuffix(".py"), path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_loaded: dict[str, types.ModuleType] = {}


def _capped_log() -> types.ModuleType:
    """`wild/store/capped_log.py`, the one capped head-and-tail writer."""
    if "capped_log" not in _loaded:
        _loaded["capped_log"] = _load_by_path("store", "capped_log.py")
    return _loaded["capped_log"]


def _procfs() -> types.ModuleType:
    """`wild/procfs.py`: /proc's stat fields and the one liveness rule (a zombie has exited)."""
    if "procfs" not in _loaded:
        _loaded["procfs"] = _load_by_path("procfs.py")
    return _loaded["procfs"]


def _open_log(run_dir: str, *, append: bool = False) -> int:
    """DIR/log, to write to, never through a symbolic link: a link planted at its name (or
    in place of the run folder) would append the run's output to any file the user can
    write. O_NOFOLLOW, relative to a descriptor of the run folder (as wild.store.write_guard
    opens wild's own files; this script imports nothing of wild)."""
    folder = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        # No O_APPEND for the capped log: it places every byte itself. `append`: for the
        # wrapper's own stdout and stderr (as the loop opens it for a wrapper it spawns).
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        if append:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        return os.open("log", flags, 0o644, dir_fd=folder)
    finally:
        os.close(folder)


def become_subreaper() -> bool:
    """prctl(PR_SET_CHILD_SUBREAPER): orphans of the run come to the wrapper, not to init.
    Whether it took."""
    prctl = _prctl()
    try:
        return prctl is not None and bool(prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, TypeError):
        return False  # not Linux, or no prctl: orphans go to init, as without a wrapper


_prctl_function: list[Any] = []  # made once: a launcher makes it before it forks any wrapper


def _prctl() -> Any:
    """libc's prctl through `_ctypes` (the `ctypes` package costs ~10 ms to import and load
    libc by); None where there is none. Made once per process: each of its three classes
    costs a launched wrapper memory of its own (copied pages) when made after the fork."""
    if not _prctl_function:
        try:
            import _ctypes

            class _Int(_ctypes._SimpleCData):  # type: ignore[type-arg]  # what ctypes.c_int is
                _type_ = "i"

            class _Function(_ctypes.CFuncPtr):  # what ctypes.CDLL's functions are
                _flags_ = _ctypes.FUNCFLAG_CDECL
                _restype_ = _Int

            class _Libc:  # what ctypes.CDLL(None) is, to CFuncPtr
                _handle = _ctypes.dlopen(None, 0)  # type: ignore[arg-type]

            _prctl_function.append(_Function(("prctl", _Libc)))  # type: ignore[arg-type]
        except (ImportError, OSError, AttributeError, TypeError):
            _prctl_function.append(None)
    return _prctl_function[0]


def _note(log: Any, text: str) -> None:
    """A line of the wrapper's own in the run's log (a `CappedLog`), so its tail says why the
    run ended."""
    try:
        log.write(f"[wild wrapper {now_text()}] {text}\n".encode(), own=True)
    except OSError:
        pass


def _group_alive(pgid: int) -> bool:
    alive: bool = _procfs().group_alive(pgid)
    return alive


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


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

    def wait(self, timeout: float | None) -> int | None:
        """Until a signal arrives (SIGCHLD: reaped) or `timeout`; the stop signal if one came."""
        got: _signal.struct_siginfo | None
        if timeout is None:
            got = _signal.sigwaitinfo(_WAIT_SIGNALS)
        else:
            got = _signal.sigtimedwait(_WAIT_SIGNALS, max(timeout, 0.0))
        self.reap()
        if got is not None and got.si_signo in _STOP_SIGNALS:
            return int(got.si_signo)
        return None

    def done(self) -> bool:
        return self.status is not None and not _group_alive(self.pid)


def _kill_group(child: _Child, grace_s: float) -> None:
    """SIGTERM the group, let it end within `grace_s`, then SIGKILL what is left; reap all."""
    child.reap()
    if child.done():
        return  # nothing left: its pgid may not be signalled any more, it could be reused
    _signal_group(child.pid, _signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    child.reap()
    while not child.done():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        child.wait(min(left, 0.05))  # members not ours to reap: look again shortly
    if not child.done():
        _signal_group(child.pid, _signal.SIGKILL)
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
            # With `os` alone (`read_small`): a text file would import its codec in every
            # wrapper the launcher forks (as `_name_self` says), and a buffered file object is
            # five more system calls and objects made per read (issue 23).
            found.update(
                int(pid) for pid in _procfs().read_small(f"/proc/{me}/task/{task}/children").split()
            )
        return sorted(found)
    except OSError:  # no /proc/…/children (CONFIG_PROC_CHILDREN): look at every process
        return children_by_scan(me)


def children_by_scan(parent: int) -> list[int]:
    """The processes whose parent is `parent`, from every /proc/<pid>/stat (field 4)."""
    procfs = _procfs()
    found = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        fields = procfs.stat_fields(int(name)) if name.isdigit() else None
        if fields is not None and len(fields) > procfs.PPID and fields[procfs.PPID] == str(parent):
            found.append(int(name))
    return sorted(found)


def _signal_all(pids: Sequence[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_strays(child: _Child, grace_s: float, log: Any) -> None:
    """Kill what left the run's group: SIGTERM, the grace, then SIGKILL (also what they left
    behind: their orphans come to the wrapper in turn), so nothing of the run outlives it."""
    child.reap()
    strays = _children()
    if not strays:
        return
    _note(log, f"{len(strays)} process(es) left the run's process group: stopping them too")
    _signal_all(strays, _signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while _children() and time.monotonic() < deadline:
        child.wait(0.05)
    deadline = time.monotonic() + KILLED_WAIT_S
    while (strays := _children()) and time.monotonic() < deadline:
        _signal_all(strays, _signal.SIGKILL)
        child.wait(0.05)


def _supervise(child: _Child, args: Arguments, log: Any, started: float) -> str | None:
    """Wait for the instruction's end, its time limit (from `started`, monotonic) or a stop;
    the marker's reason."""
    deadline = None if args.time_limit is None else started + args.time_limit
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
            _note(log, f"{signal_name(stop)} received: stopping the run")
            break
    _kill_group(child, args.grace)  # also what the instruction left in the background
    _kill_strays(child, args.grace, log)
    return reason


def _over_at_once(child: _Child, args: Arguments, stops: list[int]) -> bool:
    """Wait up to INSTANT_S (or the time limit, if shorter) for the instruction to end: True
    when it did and left nothing behind (its group gone, no process adopted), so nothing can
    write to its pipe any more. A stop received meanwhile is added to `stops` (then False).
    What the run writes meanwhile waits in the pipe: a run that fills it is not over, and its
    output is copied by a pump from then on."""
    deadline = time.monotonic() + min(INSTANT_S, args.time_limit or INSTANT_S)
    child.reap()
    while child.status is None and not stops:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        stop = child.wait(left)
        if stop is not None:
            stops.append(stop)
    return not stops and child.done() and not _children()


def _exit_fields(status: int | None) -> tuple[int, str | None]:
    if status is None:  # cannot happen once the group is gone; kept honest for the marker
        return -1, None
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        return 128 + signum, signal_name(signum)
    return os.waitstatus_to_exitcode(status), None


def marker_text(
    args: Arguments,
    exit_code: int,
    sig: str | None,
    reason: str | None,
    detail: str | None = None,
) -> str:
    """The exit marker's line (format: wild.runs.markers)."""
    fields: dict[str, object] = {
        "run": args.run_id,
        "attempt": args.attempt,
        "exit_code": exit_code,
        "signal": sig,
        "ended_at": now_text(),
        "host": os.uname().nodename,  # what socket.gethostname() says, without its import
        "reason": reason,
    }
    if detail is not None:
        fields["detail"] = detail
    return json_object(fields) + "\n"


# Words a POSIX shell runs itself rather than as a program (dash's and bash's builtins and
# reserved words): an instruction naming one first is the shell's to run.
_SHELL_WORDS = frozenset({
    ".", ":", "[", "[[", "]]", "alias", "bg", "bind", "break", "builtin", "caller", "case",
    "cd", "chdir", "command", "compgen", "complete", "compopt", "continue", "coproc", "declare",
    "dirs", "disown", "do", "done", "echo", "elif", "else", "enable", "esac", "eval", "exec",
    "exit", "export", "false", "fc", "fg", "fi", "for", "function", "getopts", "hash", "help",
    "history", "if", "in", "jobs", "kill", "let", "local", "logout", "mapfile", "popd",
    "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "select", "set",
    "shift", "shopt", "source", "suspend", "test", "then", "time", "times", "trap", "true",
    "type", "typeset", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
})  # fmt: skip
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
_NAME_CHARS = frozenset(_LETTERS + "0123456789")
_PLAIN = frozenset(_LETTERS + "0123456789" + "./:,+@%=-")  # a word's bytes unquoted, as is
# Variables the shell sets itself (so `$NAME` is not the environment's, and a program it runs
# sees its value, not the environment's): such an instruction is the shell's to run.
_SHELL_SET = frozenset({"IFS", "LINENO", "OPTIND", "PPID", "PWD"})


def plain_command(instruction: str, env: Mapping[str, str]) -> list[str] | None:
    """The words `/bin/sh -c INSTRUCTION` would run as a program, when the instruction is one
    plain command the wrapper reads exactly as the shell does: words of letters, digits and
    `./:,+@%=-`, single-quoted text, and double-quoted text with `\\` before `"`, `\\`,
    `$` or a backquote, and `$NAME` or `${NAME}` of the environment; the first word naming a
    program (no builtin, reserved word or assignment). None for anything else (an operator,
    a redirection, a glob, a tilde, an unquoted backslash or `$`, a command substitution, a
    variable the shell sets itself): the shell runs it.

    Run straight from the wrapper, such a command costs no shell (issue 23: each instant
    run's `/bin/sh -c` was a second exec of a shell, ~0.45 ms of CPU per run)."""
    if any(name in env for name in ("IFS", "OPTIND", "PPID")) or "PATH" not in env:
        return None  # the shell would change them, or look programs up in its own default
    words: list[str] = []
    word: list[str] | None = None  # the word being read; None between words
    at, end = 0, len(instruction)
    while at < end:
        char = instruction[at]
        if char in " \t":
            if word is not None:
                words.append("".join(word))
                word = None
            at += 1
            continue
        word = [] if word is None else word
        if char == "'":
            close = instruction.find("'", at + 1)
            if close < 0:
                return None
            word.append(instruction[at + 1 : close])
            at = close + 1
        elif char == '"':
            read = _double_quoted(instruction, at + 1, env)
            if read is None:
                return None
            text, at = read
            word.append(text)
        elif char in _PLAIN:
            word.append(char)
            at += 1
        else:
            return None
    if word is not None:
        words.append("".join(word))
    if not words or not words[0] or "=" in words[0] or words[0] in _SHELL_WORDS:
        return None
    return words


def _double_quoted(text: str, at: int, env: Mapping[str, str]) -> tuple[str, int] | None:
    """The value of the double-quoted text starting at `at` (after its quote) and where it
    ends (after the closing quote); None when it holds what `plain_command` leaves to the
    shell."""
    out: list[str] = []
    while at < len(text):
        char = text[at]
        if char == '"':
            return "".join(out), at + 1
        if char == "\\":
            following = text[at + 1 : at + 2]
            if following in ('"', "\\", "$", "`"):
                out.append(following)
                at += 2
                continue
            if not following or following == "\n":
                return None
            out.append(char)  # a backslash before anything else stays
            at += 1
        elif char == "`":
            return None
        elif char == "$":
            braced = text[at + 1 : at + 2] == "{"
            start = at + 2 if braced else at + 1
            stop = start
            while stop < len(text) and text[stop] in _NAME_CHARS:
                stop += 1
            name = text[start:stop]
            if not name or name[0] not in _LETTERS or name in _SHELL_SET:
                return None
            if braced:
                if text[stop : stop + 1] != "}":
                    return None
                stop += 1
            out.append(env.get(name, ""))
            at = stop
        else:
            out.append(char)
            at += 1
    return None


def _program(name: str, env: Mapping[str, str]) -> str | None:
    """The file the shell would run for `name`: itself when it has a `/`, else the first
    executable file of that name in the run's PATH (an empty entry: the current folder)."""
    if "/" in name:
        return name
    for folder in env["PATH"].split(":"):
        path = os.path.join(folder or ".", name)
        if os.access(path, os.X_OK) and os.path.isfile(path):
            return path
    return None


def _shell_env(env: Mapping[str, str]) -> Mapping[str, str]:
    """`env` as the shell passes it on to a program: PWD the current folder (the one given,
    when it names it: the shell keeps a path through links as it was given)."""
    given = env.get("PWD")
    if given is not None and given.startswith("/"):
        try:
            if os.path.samestat(os.stat(given), os.stat(".")):
                return env
        except OSError:
            pass
    return {**env, "PWD": os.getcwd()}


def _start(args: Arguments, write_fd: int, env: Mapping[str, str]) -> int:
    """Start `/bin/sh -c INSTRUCTION` in the workdir, leader of a process group of its own,
    stdin /dev/null, stdout and stderr to `write_fd`; its pid. An OSError naming the path
    when the workdir or the shell cannot be reached.

    By `os.posix_spawn` (a vfork: the child shares the wrapper's memory until its exec), not
    `os.fork` + exec: a fork copies a Python process's page tables and faults in its pages on
    write, ~0.6 ms of CPU per run (docs/benchmarks.md, "overhead per run"). Python 3.11's
    posix_spawn has no chdir action, so the wrapper enters the workdir itself around the spawn
    (the shell inherits it) and returns to where it was: the same failure, with the same
    message, as a chdir in the child."""
    # O_PATH: a folder the wrapper may not read (or one since removed) is still returned to.
    here = os.open(".", getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.chdir(args.workdir)
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, write_fd, 1),
            (os.POSIX_SPAWN_DUP2, write_fd, 2),
        ]
        words = plain_command(args.instruction, env)
        program = _program(words[0], env) if words is not None else None
        if words is not None and program is not None:
            try:
                return os.posix_spawn(
                    program, words, _shell_env(env), file_actions=actions, setpgroup=0
                )
            except OSError:
                pass  # not a program after all (a script without `#!`, say): the shell's
        try:
            return os.posix_spawn(
                "/bin/sh",
                ["/bin/sh", "-c", args.instruction],
                env,
                file_actions=actions,
                setpgroup=0,
            )
        except OSError as error:
            if error.filename is None:  # posix_spawn names no path: the shell is what failed
                raise OSError(error.errno, error.strerror, "/bin/sh") from None
            raise
    finally:
        os.fchdir(here)
        os.close(here)


def _start_failed(args: Arguments, exit_path: str, detail: str) -> int:
    text = marker_text(args, START_FAILED_EXIT, None, "start_failed", detail)
    write_marker(exit_path, text)
    return START_FAILED_EXIT


GO = b"g"  # what the launcher writes to a wrapper it forked to start its run


def wait_for_go(fd: int) -> bool:
    """Block on the launched wrapper's descriptor: True on `GO`; False on end of file (its
    only writer, the launcher, closed it or died) or anything else."""
    try:
        data = os.read(fd, 1)
    except OSError:
        return False
    finally:
        os.close(fd)
    return data == GO


LAUNCHER_FLAG = "--launcher"
# /proc/<pid>/comm of a wrapper the launcher forked: its command line is the launcher's, so
# this name (with the run's `pid` file naming it) is what tells it is a run's wrapper.
LAUNCHED_NAME = "wild-run"


def _request_fields(blob: bytes) -> tuple[list[str], dict[str, str]] | None:
    """A launch request's fields (wild.runs.launcher.request: `SIZE\n`, then SIZE bytes of
    fields joined by NUL: the count of wrapper arguments, the arguments, then `NAME=VALUE` per
    variable of the run's environment): its arguments and environment; None when torn."""
    fields = blob.decode("utf-8", "surrogateescape").split("\0")
    if not fields[0].isdigit() or int(fields[0]) > len(fields) - 1:
        return None
    count = int(fields[0])
    env = {}
    for item in fields[1 + count :]:
        name, _equals, value = item.partition("=")
        env[name] = value
    return fields[1 : 1 + count], env


Request = tuple[list[str], dict[str, str]]


class Requests:
    """The launch requests on a descriptor (the loop's pipe), a batch at a time: `batch()`
    waits for one, then takes every other one already written, without waiting. The launcher
    forks a batch's wrappers one after the other, then writes their `pid` files and lets them
    run: after each fork, every page the launcher writes is copied (the wrapper shares it),
    so the work between two forks is what costs."""

    def __init__(self, fd: int, readable: Callable[[int], bool]) -> None:
        self._fd = fd
        self._readable = readable  # whether a read of `fd` would not wait
        self._data = b""
        self._ended = False  # end of file, or a torn request: no request after it

    def batch(self) -> list[Request] | None:
        """The requests written so far (at least one, waited for); None when none is left."""
        taken: list[Request] = []
        while True:
            request = self._take()
            if request is not None:
                taken.append(request)
                continue
            if self._ended or (taken and not self._readable(self._fd)):
                return taken or None
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                self._ended = True
            self._data += chunk

    def _take(self) -> Request | None:
        """The next whole request read, if there is one (a torn one ends the requests)."""
        if self._ended and not self._data:
            return None
        header, newline, rest = self._data.partition(b"\n")
        if not newline:
            if self._ended or (self._data and not self._data.isdigit()):
                self._stop()
            return None
        if not header.isdigit():
            self._stop()
            return None
        size = int(header)
        if len(rest) < size:
            if self._ended:
                self._stop()
            return None
        self._data = rest[size:]
        request = _request_fields(rest[:size])
        if request is None:
            self._stop()
        return request

    def _stop(self) -> None:
        self._ended, self._data = True, b""


def launcher(words: Sequence[str]) -> int:
    """`wrapper.py --launcher --runs DIR`: one interpreter that starts every run's wrapper by
    fork (wild.runs.launcher), so no run waits for a Python start. It reads requests on its
    stdin (a pipe whose write end only the loop holds) and answers each on its stdout with
    `ok PID` (the run's own wrapper process, detached in a session of its own, runs it) or
    `no REASON` (nothing was started). At end of file (the loop closed its end or died) it
    exits; the wrappers it started run on, each on its own, as any wrapper does."""
    if len(words) != 2 or words[0] != "--runs":
        print(f"usage: wrapper.py {LAUNCHER_FLAG} --runs DIR", file=sys.stderr)
        return USAGE_EXIT
    _capped_log()  # loaded once here: every wrapper forked from here has them
    _procfs()
    _prctl()
    _null()
    # Each launched wrapper is reaped as it exits, not left a zombie until the next request:
    # one outliving the launcher would go to the nearest subreaper (an agent loop is one).
    _signal.signal(_signal.SIGCHLD, lambda _signum, _frame: _reap_launched())
    import select  # the launcher's own: no wrapper it forks calls it

    requests = Requests(0, lambda fd: bool(select.select([fd], [], [], 0)[0]))
    while True:
        _reap_launched()
        try:
            batch = requests.batch()
        except OSError:
            batch = None
        if batch is None:
            return 0  # the loop is gone or let the launcher go
        answers = launch_all(batch)
        text = "".join(answer.replace("\n", " ") + "\n" for answer in answers)
        try:
            os.write(1, text.encode(errors="replace"))
        except OSError:
            return 0  # the loop is gone: it reads no answer (the wrappers told go run on)


def _reap_launched() -> None:
    """Collect the launched wrappers that exited (they are the launcher's children)."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def launch(args: Arguments, env: dict[str, str]) -> str:
    """Fork the wrapper of `args`, write its `pid` file, then let it run: `ok PID`; or `no
    REASON` when it was not let run (it then exits having started and written nothing). The
    `pid` is written before the run may start, so a loop that dies meanwhile adopts it."""
    return _let_run(args, _fork(args, env, ()))


def launch_all(requests: Sequence[Request]) -> list[str]:
    """`launch` each request (its wrapper's arguments and environment), their answers in
    order: every wrapper forked first, then each one's `pid` written and its go given, so the
    launcher's own copied pages are paid once a batch, not once a run (issue 23)."""
    forked: list[tuple[Arguments, int, int] | str] = []
    holds: list[int] = []  # the go ends of the wrappers forked so far
    for argv, env in requests:
        try:
            args = parse_arguments(argv)
            pid, hold = _fork(args, env, holds)
        except UsageError as error:
            forked.append(f"no {error}")
        except OSError as error:
            forked.append(f"no cannot fork a wrapper: {error.strerror}")
        else:
            holds.append(hold)
            forked.append((args, pid, hold))
    return [each if isinstance(each, str) else _let_run(each[0], each[1:]) for each in forked]


def _fork(args: Arguments, env: dict[str, str], holds: Sequence[int]) -> tuple[int, int]:
    """Fork the wrapper of `args`, held until its go: its pid and the end its go is written
    to. `holds`: the go ends of the wrappers forked before it and not yet let run, closed in
    the new one (holding one, it would keep that wrapper from seeing its launcher's end)."""
    hold_read, hold_write = os.pipe()
    # A stop can come as soon as the loop has the wrapper's pid: blocked across the fork, it
    # waits in the new wrapper until that has a handler to remember it (`_launched`), never
    # ending it with no marker by the default action.
    _signal.pthread_sigmask(_signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        pid = os.fork()
    except OSError:
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, _STOP_SIGNALS)
        os.close(hold_read)
        os.close(hold_write)
        raise
    if pid == 0:
        for fd in (hold_write, *holds):
            os.close(fd)
        _launched(args, env, hold_read)  # never returns
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, _STOP_SIGNALS)
    os.close(hold_read)
    return pid, hold_write


def _let_run(args: Arguments, held: tuple[int, int]) -> str:
    """Write the `pid` of a held wrapper, then give it its go: `ok PID`, or `no REASON`
    when it was not let run (its go end closed: it exits having started nothing)."""
    pid, hold_write = held
    try:
        try:
            write_whole(os.path.join(args.run_dir, "pid"), f"{pid}\n", durable=False)
        except OSError as error:
            return f"no {args.run_dir}/pid: {error.strerror}"
        try:
            os.write(hold_write, GO)
        except OSError:
            return f"no the wrapper {pid} was gone before its go"
    finally:
        os.close(hold_write)
    return f"ok {pid}"


def _launched(args: Arguments, env: dict[str, str], hold_fd: int) -> NoReturn:
    """The forked wrapper: detached (a session of its own, a subreaper, none of the loop's
    pipes), it waits for the launcher's go, then runs as any wrapper does."""
    code = 1
    try:
        stops = _remembered_stops()  # one before its go too: the run is then stopped at once
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked by `_fork`
        _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)  # its own children are its to reap
        os.setsid()
        os.dup2(_null(), 0)  # the loop's request pipe: its end of file is the launcher's to see
        os.dup2(_null(), 1)  # the launcher's answers
        _name_self(LAUNCHED_NAME)
        become_subreaper()
        if not wait_for_go(hold_fd):
            code = 0
            _exit(code)
        log = _open_log(args.run_dir, append=True)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        # The run's environment goes to its shell as posix_spawn's argument: not made the
        # wrapper's own (`os.environ` cleared and filled: an unsetenv and a putenv per
        # variable, ~90 copied pages of the launcher per run, issue 23). Nothing the wrapper
        # does itself reads its environment but the log's limit, given `env` too.
        code = run(args, pid_written=True, env=env, stops=stops)
    except BaseException:  # its traceback to the run's log, as a wrapper's
        try:
            import traceback

            traceback.print_exc()
        except BaseException:  # noqa: S110
            pass
    _exit(code)


_null_fd: list[int] = []  # opened once, by the launcher before it forks any wrapper


def _null() -> int:
    """A descriptor of /dev/null (close-on-exec), opened once per process."""
    if not _null_fd:
        _null_fd.append(os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC))
    return _null_fd[0]


def _remembered_stops() -> list[int]:
    """A list that each stop signal received from now on is appended to (by a handler)."""
    stops: list[int] = []
    for signum in _STOP_SIGNALS:
        _signal.signal(signum, lambda received, _frame: stops.append(received))
    return stops


def _name_self(name: str) -> None:
    """Set this process's /proc/<pid>/comm. Written as bytes with `os`: a text file would
    import its codec (`encodings.ascii`, which the launcher has not loaded) in every wrapper
    it forks, ~0.3 ms of CPU and a hundred copied pages per run."""
    try:
        comm = os.open("/proc/self/comm", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.write(comm, name.encode("ascii"))
    except OSError:
        pass
    finally:
        os.close(comm)


def _exit(code: int) -> NoReturn:
    """Leave the forked wrapper without the launcher's exit handlers (what it buffered is
    flushed first)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: S110
            pass
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] == [LAUNCHER_FLAG]:
        return launcher(words[1:])
    try:
        args = parse_arguments(words)
    except UsageError as error:
        print(f"{_USAGE}\nwrapper.py: error: {error}", file=sys.stderr)
        return USAGE_EXIT
    return run(args, pid_written=False)


def run(
    args: Arguments,
    *,
    pid_written: bool,
    env: Mapping[str, str] | None = None,
    stops: list[int] | None = None,
) -> int:
    """Run the instruction of `args` to its end and write its marker; the exit code.
    `pid_written`: who started this wrapper wrote its `pid` file before it let it run.
    `env`: the run's environment (default: the wrapper's own). `stops`: the stop signals
    received before (a launched wrapper's, while it waited for its go)."""
    environ = os.environ if env is None else env
    run_dir = args.run_dir
    if stops is None:  # a launched wrapper's handler already remembers into its `stops`
        # Until the signals are blocked below, a stop is remembered by a handler, never lost.
        stops = _remembered_stops()
    if not pid_written:  # a launched wrapper's pid was written before its go (its folder is)
        os.makedirs(run_dir, exist_ok=True)
        # Not fsynced: the pid only finds a live wrapper (a crashed loop's adoption); after a
        # machine crash there is none to find, and whether the run ended is the marker's to say.
        write_whole(os.path.join(run_dir, "pid"), f"{os.getpid()}\n", durable=False)
        become_subreaper()
    exit_path = os.path.join(run_dir, "exit")
    try:
        log_fd = _open_log(run_dir)
    except OSError as error:
        detail = f"{run_dir}/log: {error.strerror}; a symbolic link there is never written through"
        return _start_failed(args, exit_path, detail)
    read_fd, write_fd = os.pipe()
    try:
        pid = _start(args, write_fd, environ)
    except OSError as error:
        detail = f"cannot start the instruction in {args.workdir}: {error}"
        os.close(read_fd)
        capped_log = _capped_log()
        log = capped_log.CappedLog(log_fd, capped_log.max_bytes(environ), users=1)
        _note(log, detail)
        log.release()
        return _start_failed(args, exit_path, detail)
    finally:
        os.close(write_fd)
    # The shell started with default dispositions; from here signals are waited for (by
    # this thread only: the pump, started after, inherits the blocked signals). What the
    # run writes meanwhile waits in the pipe.
    _signal.pthread_sigmask(_signal.SIG_BLOCK, _WAIT_SIGNALS)
    started = time.monotonic()
    child = _Child(pid)
    capped_log = _capped_log()
    reason: str | None = None
    log = capped_log.CappedLog(log_fd, capped_log.max_bytes(environ), users=2)  # and the pump
    if _over_at_once(child, args, stops):
        # Nothing of the run is left to write to the pipe: its output is copied here, with
        # no pump thread (a thread costs a launched wrapper ~0.5 ms of CPU, issue 23).
        capped_log.Pump(read_fd, log, inline=True).finish()
    else:
        pump = capped_log.Pump(read_fd, log)
        if stops:
            _note(log, f"{signal_name(stops[0])} received: stopping the run")
            _kill_group(child, args.grace)
            reason = "stopped"
        else:
            reason = _supervise(child, args, log, started)
        pump.drain()  # the run's last output before the wrapper's own last line
    exit_code, sig = _exit_fields(child.status)
    _note(log, f"ended: exit code {exit_code}" + (f" ({sig})" if sig else ""))
    write_marker(exit_path, marker_text(args, exit_code, sig, reason))
    log.release()
    return exit_code if 0 <= exit_code <= 255 else 1  # what a batch system's accounting shows


if __name__ == "__main__":
    sys.exit(main())
