"""run_captured, wait_or_cancel and kill_group: whole groups die, big output, stdin, cancel."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from wild import process
from wild.liveness import probe
from wild.process import (
    OUTPUT_CAP,
    ProcessResult,
    kill_group,
    run_captured,
    shell_argv,
    spawn,
    stdin_source,
    wait_or_cancel,
)
from wild.procfs import group_alive

# Writes the group leader's pid, starts a grandchild and writes its pid, then waits for it.
WITH_GRANDCHILD = "echo $$ > leader.pid; sleep 300 & echo $! > child.pid; "


def _pid_from(path: Path) -> int:
    """The pid a shell wrote to `path`, once it has written the whole line."""
    for _ in range(2000):
        if path.exists() and path.read_text().endswith("\n"):
            return int(path.read_text())
        time.sleep(0.005)
    raise AssertionError(f"{path.name} was never written")


def test_a_clean_exit_returns_the_output_and_exit_code(tmp_path: Path) -> None:
    result = run_captured(shell_argv("echo hello; exit 3"), timeout_s=30, cwd=tmp_path)
    assert (result.exit_code, result.timed_out, result.cancelled) == (3, False, False)
    assert (result.output, result.stderr) == ("hello\n", "")


def test_timeout_kills_the_whole_group_including_grandchildren(tmp_path: Path) -> None:
    result = run_captured(shell_argv(WITH_GRANDCHILD + "wait"), timeout_s=1, cwd=tmp_path)
    assert (result.exit_code, result.timed_out, result.cancelled) == (None, True, False)
    assert probe(_pid_from(tmp_path / "child.pid")) is None
    assert group_alive(_pid_from(tmp_path / "leader.pid")) is False


def test_a_clean_exit_leaves_no_background_grandchild_behind(tmp_path: Path) -> None:
    result = run_captured(shell_argv(WITH_GRANDCHILD + "echo started"), timeout_s=30, cwd=tmp_path)
    assert (result.exit_code, result.timed_out, result.output) == (0, False, "started\n")
    assert probe(_pid_from(tmp_path / "child.pid")) is None
    assert group_alive(_pid_from(tmp_path / "leader.pid")) is False


def test_kill_group_sigkills_a_grandchild_that_ignores_sigterm(tmp_path: Path) -> None:
    # An ignored signal stays ignored across exec, so `sleep` inherits the trap.
    argv = shell_argv("trap '' TERM; sleep 300 & echo $! > child.pid; wait")
    with (tmp_path / "out").open("wb") as out:
        proc = spawn(argv, cwd=tmp_path, stdout=out)
        child = _pid_from(tmp_path / "child.pid")
        kill_group(proc, grace_s=0.1)
    assert proc.returncode is not None
    assert probe(child) is None
    assert group_alive(proc.pid) is False


def test_megabytes_of_output_do_not_deadlock_and_the_tail_is_kept(tmp_path: Path) -> None:
    lines = 5 * 1024 * 1024 // 8  # 8-byte lines: 5 MiB, far beyond a pipe's 64 KiB
    script = (
        f"import sys\nsys.stdout.buffer.write(b''.join(b'%07d\\n' % i for i in range({lines})))"
    )
    result = run_captured([sys.executable, "-c", script], timeout_s=120, cwd=tmp_path)
    tail_lines = range(lines - OUTPUT_CAP // 8, lines)
    assert (result.exit_code, result.timed_out) == (0, False)
    assert result.output == "".join(f"{i:07d}\n" for i in tail_lines)
    assert result.output.endswith("0655359\n")


def test_stdin_is_fed_from_a_regular_file(tmp_path: Path) -> None:
    source = tmp_path / "message.txt"
    source.write_bytes(b"first line\n$(not run) 'quoted'\nno newline")
    script = (
        "import os, stat, sys\n"
        "print(stat.S_ISREG(os.fstat(0).st_mode))\n"
        "sys.stdout.write(sys.stdin.read())\n"
    )
    result = run_captured([sys.executable, "-c", script], timeout_s=30, stdin=source)
    assert result.output == "True\nfirst line\n$(not run) 'quoted'\nno newline"
    assert source.read_bytes() == b"first line\n$(not run) 'quoted'\nno newline"


def test_without_stdin_the_child_reads_an_empty_dev_null() -> None:
    result = run_captured(shell_argv("cat; echo end"), timeout_s=30)
    assert (result.exit_code, result.output) == (0, "end\n")


def test_a_missing_stdin_file_raises_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_captured(shell_argv("touch ran"), timeout_s=30, cwd=tmp_path, stdin=tmp_path / "no")
    assert not (tmp_path / "ran").exists()


def test_stderr_goes_to_its_own_file_and_tail(tmp_path: Path) -> None:
    err = tmp_path / "stderr.txt"
    err.write_text("stale content from an earlier run\n")
    command = "echo out; echo err >&2; echo more; echo again >&2"
    result = run_captured(shell_argv(command), timeout_s=30, stderr_path=err)
    assert (result.output, result.stderr) == ("out\nmore\n", "err\nagain\n")
    assert err.read_text() == "err\nagain\n"


def test_stderr_is_interleaved_without_its_own_file() -> None:
    result = run_captured(shell_argv("echo out; echo err >&2; echo more"), timeout_s=30)
    assert (result.output, result.stderr) == ("out\nerr\nmore\n", "")


def test_stderr_keeps_only_its_tail(tmp_path: Path) -> None:
    script = "import sys\nsys.stderr.write('x' * 100000 + 'END')\n"
    result = run_captured(
        [sys.executable, "-c", script], timeout_s=30, stderr_path=tmp_path / "err"
    )
    assert result.stderr == "x" * (OUTPUT_CAP - 3) + "END"
    assert result.output == ""


def test_cancel_kills_the_group_and_says_so(tmp_path: Path) -> None:
    cancel = threading.Event()
    results: list[ProcessResult] = []
    # A timeout the test never reaches: only the cancel can end this run as "cancelled".
    runner = threading.Thread(
        target=lambda: results.append(
            run_captured(
                shell_argv(WITH_GRANDCHILD + "wait"), timeout_s=120, cwd=tmp_path, cancel=cancel
            )
        )
    )
    runner.start()
    child = _pid_from(tmp_path / "child.pid")
    assert probe(child) is not None
    cancel.set()
    runner.join()
    [result] = results
    assert (result.exit_code, result.timed_out, result.cancelled) == (None, False, True)
    assert probe(child) is None
    assert group_alive(_pid_from(tmp_path / "leader.pid")) is False


def test_cancel_is_noticed_within_one_poll_of_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cancel = threading.Event()
    waits: list[float | None] = []
    real_wait = subprocess.Popen.wait

    def counting_wait(proc: subprocess.Popen[bytes], timeout: float | None = None) -> int:
        waits.append(timeout)
        if len(waits) == 2:
            cancel.set()  # set between two polls, as another thread would
        return real_wait(proc, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", counting_wait)
    monkeypatch.setattr(process, "exit_notice", lambda pid: None)  # a kernel without pidfds
    result = run_captured(shell_argv("sleep 300"), timeout_s=120, cancel=cancel)
    assert result.cancelled is True
    # Two polls while running; then kill_group's final reap. No poll after the cancel.
    assert len(waits) == 3


def test_an_exit_is_noticed_by_its_pidfd_and_reaped_without_polling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits: list[float | None] = []
    real_wait = subprocess.Popen.wait

    def counting_wait(proc: subprocess.Popen[bytes], timeout: float | None = None) -> int:
        waits.append(timeout)
        return real_wait(proc, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", counting_wait)
    proc = spawn(shell_argv("sleep 0.3; exit 3"))
    # A cancel event makes the wait look at it every CANCEL_POLL_S: the exit itself wakes it.
    assert wait_or_cancel(proc, timeout_s=60, cancel=threading.Event()) == "exited"
    assert proc.returncode == 3
    # No timed `Popen.wait` poll: one wait that reaps the exited child, or none where the exit
    # fell between a step's end and its look (`Popen.poll` reaped it then; a loaded machine).
    assert waits in ([None], [])
    with pytest.raises(ChildProcessError):
        os.waitpid(proc.pid, os.WNOHANG)  # reaped: no zombie left


def test_a_cancel_is_noticed_while_waiting_on_the_pidfd(tmp_path: Path) -> None:
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    result = run_captured(shell_argv("sleep 300"), timeout_s=120, cancel=cancel, cwd=tmp_path)
    assert result.cancelled is True


def test_an_already_set_cancel_runs_nothing(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    result = run_captured(shell_argv("touch ran"), timeout_s=30, cwd=tmp_path, cancel=cancel)
    assert result == ProcessResult(None, False, 0.0, "", "", cancelled=True)
    assert not (tmp_path / "ran").exists()


def test_probe_counts_a_zombie_as_exited() -> None:
    assert probe(os.getpid()) is not None
    proc = subprocess.Popen(["true"])
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped: a zombie
    assert Path(f"/proc/{proc.pid}").exists()
    assert probe(proc.pid) is None
    proc.wait()
    assert probe(proc.pid) is None


def test_wait_or_cancel_without_timeout_or_cancel_waits_for_the_exit() -> None:
    proc = spawn(shell_argv("exit 4"))
    assert wait_or_cancel(proc, timeout_s=None) == "exited"
    assert proc.returncode == 4


def test_wait_or_cancel_leaves_a_timed_out_group_to_the_caller(tmp_path: Path) -> None:
    proc = spawn(shell_argv("sleep 300"), cwd=tmp_path)
    assert wait_or_cancel(proc, timeout_s=0) == "timed-out"
    assert group_alive(proc.pid) is True
    kill_group(proc, grace_s=0.1)
    assert group_alive(proc.pid) is False


def test_heartbeats_come_until_the_child_exits(tmp_path: Path) -> None:
    proc = spawn(shell_argv("while [ ! -e go ]; do sleep 0.01; done"), cwd=tmp_path)
    beats: list[int] = []

    def on_beat() -> None:
        beats.append(len(beats) + 1)
        if len(beats) == 3:
            (tmp_path / "go").touch()
            proc.wait()  # exited before the next look: no fourth beat

    ending = wait_or_cancel(proc, timeout_s=None, heartbeat_s=0.01, on_heartbeat=on_beat)
    assert (ending, beats, proc.returncode) == ("exited", [1, 2, 3], 0)


def test_a_crashing_heartbeat_kills_the_group(tmp_path: Path) -> None:
    proc = spawn(shell_argv(WITH_GRANDCHILD + "wait"), cwd=tmp_path)

    def explode() -> None:
        _pid_from(tmp_path / "child.pid")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match=r"^boom$"):
        wait_or_cancel(proc, timeout_s=None, heartbeat_s=0.01, on_heartbeat=explode)
    assert probe(_pid_from(tmp_path / "child.pid")) is None
    assert group_alive(proc.pid) is False


def test_a_heartbeat_interval_must_be_positive() -> None:
    proc = spawn(shell_argv("exit 0"))
    with pytest.raises(ValueError, match=r"^heartbeat_s must be positive, not 0$"):
        wait_or_cancel(proc, timeout_s=None, heartbeat_s=0, on_heartbeat=lambda: None)
    proc.wait()


def test_stdin_source_writes_bytes_to_a_regular_file() -> None:
    with stdin_source(b"the prompt\n") as source:
        assert not isinstance(source, int)
        assert stat.S_ISREG(os.fstat(source.fileno()).st_mode)
        assert source.read() == b"the prompt\n"
    with stdin_source(None) as nothing:
        assert nothing == subprocess.DEVNULL


def test_a_childs_stdin_bytes_are_a_file_of_no_name_it_reads_whole(tmp_path: Path) -> None:
    prompt = "the prompt, ünïcode and all\n".encode() * 500
    with stdin_source(prompt) as source:
        assert not isinstance(source, int)
        done = subprocess.run(
            ["/bin/sh", "-c", "readlink /proc/self/fd/0; cat"],
            stdin=source, capture_output=True, check=True, cwd=tmp_path,
        )  # fmt: skip
    named, _, read = done.stdout.partition(b"\n")
    assert named.startswith(b"/memfd:wild-stdin")  # in memory: no file on any disk
    assert read == prompt


def test_without_memfd_a_childs_stdin_bytes_are_an_unlinked_temp_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_memfd(name: str, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "memfd_create", no_memfd)
    with stdin_source(b"the prompt\n") as source:
        assert not isinstance(source, int)
        assert os.fstat(source.fileno()).st_nlink == 0  # no name reaches it
        done = subprocess.run(["cat"], stdin=source, capture_output=True, check=True)
    assert done.stdout == b"the prompt\n"


def test_once_running_is_called_once_when_the_process_outlives_it(tmp_path: Path) -> None:
    proc = spawn(shell_argv("while [ ! -e go ]; do sleep 0.01; done"), cwd=tmp_path)
    calls: list[int] = []

    def once() -> None:
        calls.append(1)
        (tmp_path / "go").touch()

    ending = wait_or_cancel(
        proc, timeout_s=None, cancel=threading.Event(), once_running=(0.02, once)
    )
    assert (ending, calls) == ("exited", [1])


def test_once_running_is_not_called_for_a_process_that_ends_sooner(tmp_path: Path) -> None:
    proc = spawn(shell_argv("exit 0"), cwd=tmp_path)
    calls: list[int] = []
    assert wait_or_cancel(proc, timeout_s=None, once_running=(60.0, lambda: calls.append(1)))
    assert calls == []
