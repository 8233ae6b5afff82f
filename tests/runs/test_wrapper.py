"""The run wrapper: its pid file, its log, its atomic exit marker, and group kills on a time
limit or a stop, run as the real standalone script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wild.liveness import probe
from wild.runs import wrapper

WRAPPER = Path(wrapper.__file__)
BOUND_S = 20  # no test waits longer than this for a wrapper
pytestmark = pytest.mark.timeout(60)  # a wrapper that never writes the FIFO must not hang


def start(
    run_dir: Path, instruction: str, *extra: str, workdir: Path | None = None
) -> subprocess.Popen[bytes]:
    argv = [sys.executable, str(WRAPPER), "--run-dir", str(run_dir), "--run-id", "s1-000"]
    argv += [
        "--attempt",
        "2",
        "--workdir",
        str(workdir or run_dir.parent),
        *extra,
        "--",
        instruction,
    ]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run(run_dir: Path, instruction: str, *extra: str, workdir: Path | None = None) -> int:
    return start(run_dir, instruction, *extra, workdir=workdir).wait(timeout=BOUND_S)


def marker(run_dir: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((run_dir / "exit").read_text())
    return loaded


def test_a_run_that_exits_leaves_its_log_pid_and_marker(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "s1-000"
    assert run(run_dir, "echo out; echo err >&2; pwd; exit 3") == 3
    found = marker(run_dir)
    assert found["run"] == "s1-000" and found["attempt"] == 2
    assert found["exit_code"] == 3 and found["signal"] is None and found["reason"] is None
    assert found["host"] == os.uname().nodename and found["ended_at"]
    log = (run_dir / "log").read_text()
    assert "out\nerr\n" in log and str(tmp_path / "runs") in log  # ran in --workdir
    assert (run_dir / "pid").read_text().strip().isdigit()
    assert sorted(p.name for p in run_dir.iterdir()) == ["exit", "log", "pid"]  # no temp left


def test_a_finished_run_has_exit_code_zero_and_the_log_is_appended(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / "log").write_text("earlier attempt\n")
    assert run(run_dir, "echo second", workdir=tmp_path) == 0
    assert marker(run_dir)["exit_code"] == 0
    assert (run_dir / "log").read_text().startswith("earlier attempt\nsecond\n")


def test_an_instruction_killed_by_a_signal_reports_it_as_a_shell_does(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    run(run_dir, "kill -9 $$", workdir=tmp_path)
    found = marker(run_dir)
    assert (found["exit_code"], found["signal"], found["reason"]) == (137, "SIGKILL", None)


def test_an_instruction_that_cannot_start_still_leaves_a_marker(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    assert run(run_dir, "true", workdir=tmp_path / "missing") == wrapper.START_FAILED_EXIT
    found = marker(run_dir)
    assert found["reason"] == "start_failed" and found["exit_code"] == 127
    assert "missing" in found["detail"] and "missing" in (run_dir / "log").read_text()


def _arguments(workdir: Path, instruction: str) -> wrapper.Arguments:
    words = ["--run-dir", str(workdir), "--run-id", "r", "--attempt", "1", "--workdir"]
    return wrapper.parse_arguments([*words, str(workdir), "--", instruction])


def _no_fork() -> int:
    raise AssertionError("the wrapper forked a Python process to start its shell")


def test_the_shell_is_spawned_without_a_fork_in_the_workdir_in_a_group_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The instruction's shell starts by posix_spawn (no copy of the wrapper's memory, issue
    23's overhead per run): in the workdir, the leader of its own group, stdin /dev/null,
    stdout and stderr to the pipe; the wrapper is back in its own folder after."""
    monkeypatch.setattr(os, "fork", _no_fork)
    workdir = tmp_path / "work"
    workdir.mkdir()
    args = _arguments(workdir, 'pwd; echo err >&2; ps -o pgid= -p $$; cat; echo "$GIVEN" end')
    here = os.getcwd()
    read_fd, write_fd = os.pipe()
    pid = wrapper._start(args, write_fd, {"PATH": os.environ["PATH"], "GIVEN": "given"})
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        out = pipe.read().decode().split()
    assert os.waitpid(pid, 0)[1] == 0
    # `cat` read nothing (/dev/null); the environment is the one given, not the wrapper's.
    assert out == [str(workdir), "err", str(pid), "given", "end"]
    assert "GIVEN" not in os.environ
    assert os.getcwd() == here


def test_a_shell_that_cannot_start_names_what_failed(tmp_path: Path) -> None:
    args = _arguments(tmp_path / "missing", "true")
    here = os.getcwd()
    with pytest.raises(FileNotFoundError) as raised:
        wrapper._start(args, 1, os.environ)
    assert str(raised.value) == f"[Errno 2] No such file or directory: '{tmp_path / 'missing'}'"
    assert os.getcwd() == here


def _gone(pid: int) -> bool:
    return probe(pid) is None


def test_the_time_limit_kills_the_whole_group_grandchildren_too(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    grand = tmp_path / "grand.pid"
    instruction = f"sh -c 'sleep 60 & echo $! > {grand}; wait' & wait"
    assert run(run_dir, instruction, "--time-limit", "0.5", "--grace", "2", workdir=tmp_path) == 143
    found = marker(run_dir)
    assert (found["reason"], found["signal"]) == ("timeout", "SIGTERM")
    assert _gone(int(grand.read_text()))
    assert "time limit of 0.5 s reached" in (run_dir / "log").read_text()


def test_a_group_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    instruction = "trap '' TERM; sleep 60 & wait; wait"
    assert (
        run(run_dir, instruction, "--time-limit", "0.3", "--grace", "0.3", workdir=tmp_path) == 137
    )
    assert marker(run_dir)["reason"] == "timeout"


def test_background_leftovers_are_killed_when_the_instruction_ends(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    left = tmp_path / "left.pid"
    assert run(run_dir, f"sleep 60 & echo $! > {left}; exit 0", workdir=tmp_path) == 0
    assert marker(run_dir)["exit_code"] == 0
    assert _gone(int(left.read_text()))


# A daemon that leaves the run's process group and session, as `setsid` or a daemonising
# server does: it writes its pid, then sleeps (ignoring SIGTERM when told to).
ESCAPE = (
    "import os, signal, sys, time\n"
    "os.setsid()\n"
    "if sys.argv[2] == 'stubborn': signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
    "time.sleep(60)\n"
)


@pytest.mark.parametrize("kind", ["polite", "stubborn"])
def test_a_process_that_left_the_group_is_killed_when_the_run_ends(
    tmp_path: Path, kind: str
) -> None:
    """Out of the group, a `setsid` daemon escapes the group kill; the wrapper, its subreaper,
    finds it among its own children once its parent has died, and kills it too."""
    run_dir = tmp_path / "r"
    (tmp_path / "escape.py").write_text(ESCAPE)
    left = tmp_path / "left.pid"
    instruction = (
        f"sh -c '{sys.executable} escape.py {left} {kind} & sleep 0.2' &"
        f" while [ ! -s {left} ]; do sleep 0.05; done; exit 0"
    )
    assert run(run_dir, instruction, "--grace", "0.5", workdir=tmp_path) == 0
    assert marker(run_dir)["exit_code"] == 0
    assert _gone(int(left.read_text()))
    assert "left the run's process group" in (run_dir / "log").read_text()


def test_children_are_found_without_proc_children_too() -> None:
    """The fallback for kernels without /proc/<pid>/task/<tid>/children: a scan of /proc."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert sleeper.pid in wrapper.children_by_scan(os.getpid())
        assert sleeper.pid not in wrapper.children_by_scan(1)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sleeper.pid not in wrapper.children_by_scan(os.getpid())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_wrapper_kills_the_group_and_still_writes_the_marker(
    tmp_path: Path, signum: signal.Signals
) -> None:
    run_dir = tmp_path / "r"
    ready, grand = tmp_path / "ready", tmp_path / "grand.pid"
    os.mkfifo(ready)
    proc = start(
        run_dir, f"sleep 60 & echo $! > {grand}; echo up > {ready}; wait", workdir=tmp_path
    )
    with ready.open() as fifo:  # blocks until the instruction runs: no sleep, no polling
        assert fifo.read() == "up\n"
    proc.send_signal(signum)
    assert proc.wait(timeout=BOUND_S) == 143
    found = marker(run_dir)
    assert (found["reason"], found["exit_code"], found["signal"]) == ("stopped", 143, "SIGTERM")
    assert _gone(int(grand.read_text()))
    assert f"{signum.name} received" in (run_dir / "log").read_text()


def test_the_marker_is_replaced_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "exit"
    wrapper.write_marker(str(target), '{"old": 1}\n')

    def no_disk(_fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_disk)
    with pytest.raises(OSError):
        wrapper.write_marker(str(target), '{"new": 2}\n')
    assert target.read_text() == '{"old": 1}\n'  # never a torn or half-written marker
    assert [p.name for p in tmp_path.iterdir()] == ["exit"]  # the temp file is cleaned up


@pytest.mark.parametrize("dangling", [False, True])
def test_a_link_at_the_run_log_is_never_appended_through(tmp_path: Path, dangling: bool) -> None:
    """An agent planted `runs/<id>/log` → a file outside the project: the run does not start
    (its marker says why), and the file the link names is neither created nor appended to."""
    run_dir = tmp_path / "runs" / "s1-000"
    run_dir.mkdir(parents=True)
    outside = tmp_path / "outside" / "authorized_keys"
    outside.parent.mkdir()
    if not dangling:
        outside.write_bytes(b"ssh-ed25519 AAAA mine\n")
    (run_dir / "log").symlink_to(outside)
    assert run(run_dir, "echo PWNED") == wrapper.START_FAILED_EXIT
    found = marker(run_dir)
    assert found["reason"] == "start_failed"
    assert "a symbolic link there is never written through" in found["detail"]
    if dangling:
        assert not outside.exists()
    else:
        assert outside.read_bytes() == b"ssh-ed25519 AAAA mine\n"


def test_becoming_a_subreaper_makes_its_prctl_once_per_process() -> None:
    """A launcher makes prctl's function before it forks: a launched wrapper that becomes a
    subreaper defines no class of its own (each is memory a fork must copy)."""
    import _ctypes

    pid = os.fork()
    if pid == 0:  # the child becomes the subreaper, not the test's process
        code = 1
        try:
            made = wrapper._prctl()
            before = len(_ctypes.CFuncPtr.__subclasses__())
            took = wrapper.become_subreaper() and wrapper.become_subreaper()
            after = len(_ctypes.CFuncPtr.__subclasses__())
            code = 0 if took and made is wrapper._prctl() and after == before else 3
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


# Runs the wrapper in a process of its own, counting the threads it starts.
COUNT_THREADS = """
import sys, threading
from wild.runs import wrapper
started = []
start = threading.Thread.start
def counted(thread):
    started.append(thread.name)
    start(thread)
threading.Thread.start = counted
code = wrapper.main(sys.argv[1:])
print(len(started), code)
"""


def threads_started(run_dir: Path, instruction: str) -> tuple[int, int]:
    argv = ["--run-dir", str(run_dir), "--run-id", "r", "--attempt", "1"]
    argv += ["--workdir", str(run_dir.parent), "--", instruction]
    done = subprocess.run(
        [sys.executable, "-c", COUNT_THREADS, *argv],
        capture_output=True, text=True, timeout=BOUND_S, check=True,
    )  # fmt: skip
    count, code = done.stdout.split()
    return int(count), int(code)


def test_an_instant_run_is_logged_without_a_pump_thread(tmp_path: Path) -> None:
    """A run over at once, leaving nothing behind, has its output copied by the wrapper
    itself: no thread started (issue 23: ~0.5 ms of CPU per launched wrapper)."""
    run_dir = tmp_path / "r"
    assert threads_started(run_dir, "echo out; echo err >&2; exit 4") == (0, 4)
    assert (run_dir / "log").read_text().startswith("out\nerr\n")
    assert marker(run_dir)["exit_code"] == 4


def test_a_run_that_goes_on_or_fills_its_pipe_is_copied_by_a_pump(tmp_path: Path) -> None:
    """A run still going after the instant wait, or blocked on a full pipe (more than a pipe
    holds, written at once), gets its pump: every byte reaches the log."""
    for name, instruction in [
        ("slow", "sleep 0.3; head -c 200000 /dev/zero | tr '\\0' x"),
        ("full", "head -c 200000 /dev/zero | tr '\\0' x"),
    ]:
        run_dir = tmp_path / name
        assert threads_started(run_dir, instruction) == (1, 0)
        assert (run_dir / "log").read_text().partition("[wild wrapper")[0] == "x" * 200000


NEW_MODULES = """
import sys
sys.path.insert(0, sys.argv[1])
import wrapper
before = set(sys.modules)
code = wrapper.main(sys.argv[2:])
print(" ".join(sorted(set(sys.modules) - before)), code, sep="|")
"""


def test_a_run_imports_no_codec_in_its_wrapper(tmp_path: Path) -> None:
    """A launched wrapper is forked from the launcher: a module it imports is paid by every run
    (a codec: ~0.3 ms of CPU and about a hundred copied pages, issue 23). Reading its own
    children from /proc (after every run) takes bytes, no codec; run as the launcher runs it,
    with `-I -S`."""
    run_dir = tmp_path / "r"
    argv = ["--run-dir", str(run_dir), "--run-id", "r", "--attempt", "1"]
    argv += ["--workdir", str(tmp_path), "--", "echo out"]
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", NEW_MODULES, str(WRAPPER.parent), *argv],
        capture_output=True, text=True, timeout=BOUND_S, check=True,
    )  # fmt: skip
    imported, code = done.stdout.strip().split("|")
    assert code == "0"
    assert [name for name in imported.split() if name.startswith("encodings")] == []
    assert marker(run_dir)["exit_code"] == 0


LAUNCHER_MODULES = """
import sys
sys.path.insert(0, sys.argv[1])
import wrapper
code = wrapper.main(["--launcher", "--runs", sys.argv[2]])  # stdin at its end: returns
print(" ".join(sorted(sys.modules)), " ".join(sorted(wrapper._loaded)), code, sep="|")
"""


def test_the_launcher_forks_its_wrappers_without_threading_loaded(tmp_path: Path) -> None:
    """Every run's wrapper is a fork of the launcher: a launcher that imported `threading` runs
    its after-fork handler in each of them (~115 more copied pages and ~0.4 ms of CPU per fork
    here, issue 23). What it loads before its first fork leaves `threading` out; only a run
    that needs a pump thread imports it (`test_a_run_that_goes_on_or_fills_its_pipe_…`)."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", LAUNCHER_MODULES, str(WRAPPER.parent), str(tmp_path)],
        capture_output=True, text=True, timeout=BOUND_S, check=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    modules, preloaded, code = done.stdout.strip().split("|")
    assert code == "0"
    assert "capped_log" in preloaded.split()  # what every wrapper writes its log with
    assert "threading" not in modules.split()


def test_a_plain_command_runs_as_the_wrappers_own_child_with_no_shell_between(
    tmp_path: Path,
) -> None:
    """A plain command (one program, its words) is started by the wrapper itself, not by a
    `/bin/sh -c` that forks it and waits (issue 23: a second shell per run): the program's
    parent is the wrapper, and it sees the workdir as PWD, as a shell would give it."""
    run_dir, workdir = tmp_path / "r", tmp_path / "work"
    workdir.mkdir()
    wrapper_proc = start(run_dir, "sh -c 'echo \"$PPID $PWD\"'", workdir=workdir)
    assert wrapper_proc.wait(timeout=BOUND_S) == 0
    assert f"{wrapper_proc.pid} {workdir}\n" in (run_dir / "log").read_text()


def test_a_program_the_wrapper_cannot_start_itself_is_left_to_the_shell(tmp_path: Path) -> None:
    """An executable script without `#!` is no program for exec: the shell runs it, as it
    would have; a program not found is the shell's to report."""
    script = tmp_path / "script"
    script.write_text('echo "ran as a script"\n')
    script.chmod(0o755)
    run_dir = tmp_path / "r"
    assert run(run_dir, "./script", workdir=tmp_path) == 0
    assert "ran as a script\n" in (run_dir / "log").read_text()
    missing = tmp_path / "m"
    assert run(missing, "no-such-program-of-wild a", workdir=tmp_path) == 127
    assert marker(missing)["exit_code"] == 127 and marker(missing)["reason"] is None
    assert "not found" in (missing / "log").read_text()


# A launched wrapper's run in a process of its own, where making a folder is refused.
NO_FOLDER_MADE = """
import os, sys
from wild.runs import wrapper
def refused(*_args, **_kwargs):
    raise AssertionError("a folder was made")
os.makedirs = refused
print(wrapper.run(wrapper.parse_arguments(sys.argv[1:]), pid_written=True))
"""


def test_a_launched_wrapper_makes_no_folder_its_launcher_wrote_the_pid_in(tmp_path: Path) -> None:
    """The launcher wrote the run's `pid` in the run's folder before the go, and the wrapper
    opened the log there: it does not make the folder again (`os.makedirs` of a folder that
    is there raises and catches FileExistsError: CPU and copied pages in every launched
    wrapper, issue 23)."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    argv = ["--run-dir", str(run_dir), "--run-id", "r", "--attempt", "1"]
    argv += ["--workdir", str(tmp_path), "--", "true"]
    done = subprocess.run(
        [sys.executable, "-c", NO_FOLDER_MADE, *argv],
        capture_output=True, text=True, timeout=BOUND_S, check=False,
    )  # fmt: skip
    assert done.stdout.split() == ["0"], done.stderr
    assert marker(run_dir)["exit_code"] == 0


def test_the_wrappers_children_are_read_without_a_file_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A wrapper reads /proc's lists of its children with `os` alone (`procfs.read_small`):
    a buffered file object per read is five more system calls, and objects made in every
    launched wrapper, at each run's end (issue 23)."""
    wrapper._procfs()  # loaded before `open` is refused (the launcher has it loaded)
    sleeper = subprocess.Popen(["sleep", "30"])

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a file object was opened")

    try:
        monkeypatch.setattr("builtins.open", refused)
        assert sleeper.pid in wrapper._children()
    finally:
        monkeypatch.undo()
        sleeper.kill()
        sleeper.wait()


def test_a_launched_wrapper_takes_dev_null_from_its_launcher() -> None:
    """The launcher opens /dev/null once, before it forks any wrapper; a launched wrapper puts
    that descriptor in place of the loop's pipes (an open and a close less per run). It is
    close-on-exec: no run inherits it."""
    null = wrapper._null()
    assert wrapper._null() == null
    assert os.fstat(null).st_rdev == os.stat(os.devnull).st_rdev
    assert not os.get_inheritable(null)
