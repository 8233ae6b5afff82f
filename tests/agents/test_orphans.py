"""No agent outlives its run or its loop: the sweep by run id, and the parent-death signal."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.fake_agent import ARGV
from wild import procfs
from wild.agents import orphans
from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest, run_agent
from wild.liveness import probe

ROOT = Path(__file__).resolve().parents[2]
FAKE = ARGV
DEADLINE_S = 30.0  # never reached when healthy


def _host_run(script: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """A loop stand-in run to its end, with only the system's programs on its PATH."""
    return subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), *args],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=DEADLINE_S,
        check=False,
    )


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def _pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


def _script(tmp_path: Path, actions: list[dict[str, Any]]) -> Path:
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"iterations": [actions]}))
    return script


def test_the_run_id_is_read_from_a_proc_environ_block() -> None:
    block = b"PATH=/bin\0WILD_AGENT_RUN=ab12.7\0HOME=/root\0"
    assert orphans.run_value(block) == "ab12.7"
    assert orphans.run_value(b"PATH=/bin\0") is None
    assert orphans.run_value(b"") is None


@pytest.mark.parametrize(
    ("value", "run", "part"),
    [
        ("ab12.7", "ab12.7", True),
        ("ab12.7", "ab12", True),  # a loop's id names every agent run it started
        ("ab12.70", "ab12.7", False),
        ("ab123.7", "ab12", False),
        (None, "ab12", False),
    ],
)
def test_a_process_belongs_to_its_run_and_to_its_loop(
    value: str | None, run: str, part: bool
) -> None:
    assert orphans.belongs(value, run) is part


# A grandchild that clears its environment (no WILD_AGENT_RUN) and leaves the agent's session.
ENV_I_SETSID = ["env", "-i", str(shutil.which("setsid")), str(shutil.which("sleep")), "3600"]


def _run_with_grandchild(
    tmp_path: Path, spawn: list[str] | None = None, **options: Any
) -> tuple[AgentRun, int]:
    pid_file = tmp_path / "grandchild.pid"
    script = _script(
        tmp_path,
        [
            {"spawn": spawn, "pid_file": str(pid_file), "setsid": spawn is None},
            {"print": "started a job"},
            {"sleep": options.pop("sleep", 0)},
        ],
    )
    run = run_agent(
        AgentRequest(
            argv=FAKE,
            cwd=tmp_path,
            log_path=tmp_path / "iteration-1.log",
            env={"WILD_FAKE_SCRIPT": str(script), "PYTHONPATH": str(ROOT)},
            **options,
        )
    )
    grandchild = _pid(pid_file)
    assert grandchild is not None
    return run, grandchild


def test_a_killed_run_leaves_no_setsid_grandchild_behind(tmp_path: Path) -> None:
    run, grandchild = _run_with_grandchild(tmp_path, sleep=600, timeout_s=1.0)
    assert run.timed_out
    # In a session of its own, out of reach of the group kill: found by its run id.
    assert probe(grandchild) is None


def test_a_timed_out_run_leaves_no_env_i_setsid_grandchild_behind(tmp_path: Path) -> None:
    """Found by the agent's tree (its parent chain), not by the variable it cleared."""
    run, grandchild = _run_with_grandchild(tmp_path, ENV_I_SETSID, sleep=600, timeout_s=1.0)
    try:
        assert run.timed_out
        assert probe(grandchild) is None
    finally:
        subprocess.run(["kill", "-9", str(grandchild)], check=False, capture_output=True)


def test_a_job_left_by_a_clean_run_lives_on_until_the_loop_ends(tmp_path: Path) -> None:
    run, grandchild = _run_with_grandchild(tmp_path)
    try:
        assert run.exit_code == 0
        assert probe(grandchild) is not None  # a training run a barrier may wait for
    finally:
        subprocess.run(["kill", "-9", str(grandchild)], check=False, capture_output=True)


# A loop stand-in: runs one agent that starts a `setsid` grandchild and sleeps, until killed.
# It first notes which program sets the agent's parent-death signal (setpriv, or "" for ours).
HOST = """
import sys
from pathlib import Path
from wild.agents import orphans
from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest, run_agent
here = Path(sys.argv[1])
(here / "helper").write_text(orphans.setpriv() or "")
run_agent(AgentRequest(argv=(sys.executable, sys.argv[2]), cwd=here,
                       log_path=here / "iteration-1.log",
                       env={"WILD_FAKE_SCRIPT": str(here / "script.json")}))
"""


@pytest.fixture(params=["setpriv", "python"])
def helper_path(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A PATH with util-linux's setpriv on it, or one without (the Python program then)."""
    if request.param == "python":
        empty = tmp_path / "bin"
        empty.mkdir()
        return str(empty)
    if SETPRIV is None:
        pytest.skip("util-linux's setpriv with --pdeathsig is not installed")
    return f"{Path(SETPRIV).parent}:/usr/bin:/bin"


SETPRIV = orphans.setpriv()


def test_an_agent_dies_with_the_process_that_started_it(tmp_path: Path, helper_path: str) -> None:
    agent_file, grandchild_file = tmp_path / "agent.json", tmp_path / "grandchild.pid"
    _script(
        tmp_path,
        [
            {"spawn": None, "pid_file": str(grandchild_file), "setsid": True},
            {"record": str(agent_file)},
            {"sleep": 600},
        ],
    )
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(tmp_path), ARGV[1]],
        env={"PYTHONPATH": str(ROOT), "PATH": helper_path},
    )
    try:
        _wait_until(agent_file.exists, "the agent to start")
        assert (tmp_path / "helper").read_text() == (SETPRIV if "bin:" in helper_path else "")
        agent = orjson.loads(agent_file.read_bytes())["pid"]
        grandchild = _pid(grandchild_file)
        assert grandchild is not None
        host.send_signal(signal.SIGKILL)  # no chance to clean up
        host.wait()
        _wait_until(lambda: probe(agent) is None, "the agent to die with its parent")
        # Its grandchild, reparented to init, is found by the run id it inherited.
        run = orjson.loads(agent_file.read_bytes())["env"]["WILD_AGENT_RUN"]
        assert probe(grandchild) is not None
        assert orphans.sweep(run) == {grandchild}
        assert probe(grandchild) is None
    finally:
        host.kill()
        host.wait()
        if agent_file.exists():  # never leave the test's processes behind
            orphans.sweep(orjson.loads(agent_file.read_bytes())["env"]["WILD_AGENT_RUN"])


# A loop stand-in that is a child subreaper; its agent leaves a `setsid` grandchild that has
# dropped its environment (`env -i`), so no run id can find it: only its parentage. The host
# says whether the job still ran after the agent's run, before the guard ended.
SUBREAPER_HOST = """
import sys
from pathlib import Path
from wild.agents import orphans
from wild.agents.runner import AgentRequest, run_agent
from wild.liveness import probe
here = Path(sys.argv[1])
with orphans.guarded("test-loop"):
    assert orphans.is_subreaper()
    run_agent(AgentRequest(argv=(sys.executable, sys.argv[2]), cwd=here,
                           log_path=here / "iteration-1.log",
                           env={"WILD_FAKE_SCRIPT": str(here / "script.json")}))
    grandchild = int((here / "grandchild.pid").read_text())
    (here / "between-runs").write_text(str(probe(grandchild) is not None))
assert not orphans.is_subreaper()
"""


def test_a_loop_kills_the_orphans_it_adopted_when_it_ends(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    sleeper = ["env", "-i", sys.executable, "-c", "import time; time.sleep(600)"]
    _script(tmp_path, [{"spawn": sleeper, "pid_file": str(pid_file), "setsid": True}])
    host = _host_run(SUBREAPER_HOST, tmp_path, ARGV[1])
    grandchild = _pid(pid_file)
    assert grandchild is not None
    try:
        assert host.returncode == 0
        assert (tmp_path / "between-runs").read_text() == "True"
        assert probe(grandchild) is None
    finally:
        subprocess.run(["kill", "-9", str(grandchild)], check=False, capture_output=True)


# A loop stand-in whose agent leaves a job that exits at once: a zombie the loop adopted, reaped
# by the run's last look. Given `look_later`, the run returns before that look, which is made
# when the caller calls what it was handed; without it, before the run returns.
LOOK_LATER_HOST = """
import sys
import time
from pathlib import Path
from wild import procfs
from wild.agents import orphans
from wild.agents.runner import AgentRequest, run_agent
here = Path(sys.argv[1])
AGENT = ("sh", "-c", "(sleep 0.05 & echo $! > orphan.pid); sleep 0.5")
def zombie():
    fields = procfs.stat_fields(int((here / "orphan.pid").read_text()))
    return fields is not None and fields[procfs.STATE] == "Z"
found = []
with orphans.guarded("test-loop"):
    looks = []
    run_agent(AgentRequest(argv=AGENT, cwd=here, log_path=here / "iteration-1.log",
                           look_later=looks.append))
    found += [len(looks), zombie()]
    looks[0]()
    found.append(zombie())
    run_agent(AgentRequest(argv=AGENT, cwd=here, log_path=here / "iteration-2.log"))
    found.append(zombie())
(here / "found").write_text(" ".join(map(str, found)))
"""


def test_a_clean_runs_last_look_is_made_when_the_caller_says(tmp_path: Path) -> None:
    """The loop makes it once its step is over, off the way to the next agent's start (issue
    22 item 8): until then what the agent left waits (here a zombie it adopted, unreaped)."""
    host = _host_run(LOOK_LATER_HOST, tmp_path)
    assert host.returncode == 0
    assert (tmp_path / "found").read_text() == "1 True False False"


def test_a_program_that_cannot_run_fails_before_anything_starts(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(FileNotFoundError):
        orphans.dying_with_parent(["no-such-agent"], tmp_path, "/usr/bin:/bin")
    with pytest.raises(PermissionError):  # not executable
        orphans.dying_with_parent(["./agent.sh"], tmp_path, None)
    script.chmod(0o755)
    argv = orphans.dying_with_parent(["./agent.sh", "x"], tmp_path, None)
    assert argv[-2:] == ["./agent.sh", "x"]  # found relative to the agent's own folder


@pytest.mark.parametrize("helper", ["/usr/bin/setpriv", None])
def test_the_agent_starts_through_setpriv_when_it_is_there(
    helper: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(orphans, "setpriv", lambda: helper)
    argv = orphans.dying_with_parent(["sh", "-c", "echo hi"], tmp_path, "/usr/bin:/bin")
    if helper is None:
        assert argv[:4] == [sys.executable, "-I", "-S", "-c"]
    else:
        assert argv[:4] == [helper, "--pdeathsig", "KILL", "--"]
    # the loop, no gate, then the agent
    assert argv[-5:] == [str(os.getpid()), "-", "sh", "-c", "echo hi"]


@pytest.mark.skipif(SETPRIV is None, reason="util-linux's setpriv is not installed")
@pytest.mark.parametrize("helper", [SETPRIV, None])
def test_an_agent_whose_loop_died_before_the_signal_was_set_kills_itself(
    helper: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper checks, once the signal is set, that its parent is still the loop: if the loop
    died first (here: the pid it names is another's), no signal would ever come."""
    monkeypatch.setattr(orphans, "setpriv", lambda: helper)
    argv = orphans.dying_with_parent(["sh", "-c", "echo hi"], tmp_path, "/usr/bin:/bin")
    ours = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert (ours.returncode, ours.stdout) == (0, "hi\n")  # our child: the agent runs
    loop = argv.index(str(os.getpid()))
    orphaned = subprocess.run(
        [*argv[:loop], "1", *argv[loop + 1 :]], capture_output=True, text=True, check=False
    )
    assert (orphaned.returncode, orphaned.stdout) == (-signal.SIGKILL, "")


@pytest.mark.skipif(SETPRIV is None, reason="util-linux's setpriv is not installed")
@pytest.mark.parametrize("helper", [SETPRIV, None, "no prctl"])
def test_a_gated_agent_runs_only_once_told_go_and_never_at_end_of_file(
    helper: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop writes the run's record while the agent waits at its gate (its stderr): a
    newline lets it run, with stderr joined to stdout; end of file (the loop closed the gate,
    or died) ends it having run nothing."""
    if helper == "no prctl":
        monkeypatch.setattr(orphans, "_prctl", lambda: None)
    else:
        monkeypatch.setattr(orphans, "setpriv", lambda: helper)
    marker = tmp_path / "ran"
    agent = ["sh", "-c", f"touch {marker}; echo out; echo err >&2"]
    argv = orphans.dying_with_parent(agent, tmp_path, "/usr/bin:/bin", gated=True)
    for word, runs in [(b"\n", True), (b"", False)]:
        gate, go = os.pipe()
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=gate, cwd=tmp_path)
        os.close(gate)
        assert child.stdout is not None
        if word:
            os.write(go, word)
        os.close(go)
        output = child.stdout.read()
        assert child.wait() == (0 if runs else orphans.GATE_CLOSED_EXIT)
        assert (marker.exists(), output) == ((True, b"out\nerr\n") if runs else (False, b""))
        child.stdout.close()
        marker.unlink(missing_ok=True)


@pytest.mark.parametrize(("said", "swept"), [(b"done\n", False), (b"", True)])
def test_the_watcher_starts_python_to_sweep_only_when_the_loop_died(
    tmp_path: Path, said: bytes, swept: bool
) -> None:
    """A loop that ends says so (it swept already); a killed one's pipe just ends."""
    python = tmp_path / "python"  # stands in for the interpreter: notes how it was started
    python.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "started"}\n')
    python.chmod(0o755)
    watcher = subprocess.Popen(
        ["/bin/sh", "-c", orphans._WATCH, str(python), "ab12"], stdin=subprocess.PIPE
    )
    assert watcher.stdin is not None
    watcher.stdin.write(said)
    watcher.stdin.close()  # the loop's end, or its death
    assert watcher.wait(DEADLINE_S) == 0
    started = tmp_path / "started"
    assert (started.read_text() if started.exists() else None) == (
        "-m wild.agents.orphan_watch ab12\n" if swept else None
    )


# What the stand-ins below count: their machine-wide /proc scans (a `scandir("/proc")` each).
SCAN_COUNTER = """
scans = []
real_scandir = os.scandir
def counting(path="."):
    if os.fspath(path) == "/proc":
        scans.append(path)
    return real_scandir(path)
"""


# A loop stand-in that counts its machine-wide /proc scans (a `scandir("/proc")` each) while one
# instant agent runs and ends cleanly, after the tree is looked at only at the run's end.
COUNTING_HOST = (
    """
import os, sys
from pathlib import Path
from wild.agents import orphans, tracking
from wild.agents.runner import AgentRequest, run_agent
here = Path(sys.argv[1])
tracking.TRACK_S = 3600.0  # no look while the agent runs: only the looks at its end count
"""
    + SCAN_COUNTER
    + """with orphans.guarded("test-loop"):
    os.scandir = counting
    run = run_agent(AgentRequest(argv=("sh", "-c", "echo done"), cwd=here,
                                 log_path=here / "iteration-1.log"))
    os.scandir = real_scandir
    assert run.exit_code == 0
(here / "scans").write_text(str(len(scans)))
"""
)


def test_the_end_of_a_clean_run_reads_the_process_table_at_most_once(tmp_path: Path) -> None:
    """Its tree, the orphans the loop adopted and their reaping share one look at /proc (none
    where the kernel keeps children lists: the loop's family is walked instead)."""
    host = _host_run(COUNTING_HOST, tmp_path)
    assert host.returncode == 0
    assert int((tmp_path / "scans").read_text()) <= 1


# A loop stand-in on a kernel that keeps /proc children lists (made from the whole table here,
# where the kernel may keep none): its agent starts an `env -i setsid` grandchild, which only the
# tree can find, and is timed out; the grandchild must be gone when the run returns.
FAMILY_HOST = """
import sys
from pathlib import Path
from wild import procfs
from wild.agents import orphans, tree
from wild.agents.runner import AgentRequest, run_agent
from wild.liveness import probe
here = Path(sys.argv[1])
looks = []
def children_of(pid, threads=None):  # the whole table has no threads: all of pid's
    looks.append(pid)
    return [child for child, proc in tree.table().items() if proc.ppid == pid]
procfs.children = children_of
with orphans.guarded("test-loop"):
    run = run_agent(AgentRequest(argv=(sys.executable, sys.argv[2]), cwd=here,
                                 log_path=here / "iteration-1.log", timeout_s=1.0,
                                 env={"WILD_FAKE_SCRIPT": str(here / "script.json")}))
    grandchild = int((here / "grandchild.pid").read_text())
    alive = probe(grandchild) is not None
    (here / "after-run").write_text(f"{run.timed_out} {alive} {bool(looks)}")
"""


def test_the_loops_family_finds_a_timed_out_runs_env_i_setsid_grandchild(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    _script(
        tmp_path,
        [{"spawn": ENV_I_SETSID, "pid_file": str(pid_file)}, {"sleep": 600}],
    )
    host = _host_run(FAMILY_HOST, tmp_path, ARGV[1])
    grandchild = _pid(pid_file)
    assert grandchild is not None
    try:
        assert host.returncode == 0
        # Timed out; the grandchild was killed by the run's end; the family walk was used.
        assert (tmp_path / "after-run").read_text() == "True False True"
    finally:
        subprocess.run(["kill", "-9", str(grandchild)], check=False, capture_output=True)


# A loop stand-in whose agent is started by a thread of its own (the spawner), and whose agent's
# child is orphaned (reparented by the kernel to the loop's first thread); a third thread has a
# child of its own, as the barrier checker's commands are. The run's look reads the spawner's
# and the first thread's children lists only.
THREADS_HOST = """
import os
import subprocess
import threading
import time
from pathlib import Path
import sys
from wild import procfs
from wild.agents import orphans
from wild.agents.tracking import RunTree
here = Path(sys.argv[1])
hold = threading.Event()
started = {}
def start(name, argv):
    started[name] = (threading.get_native_id(), subprocess.Popen(argv, stdout=subprocess.PIPE))
    hold.wait()
read = []
real_read_small = procfs.read_small
def reading(path):
    read.append(path)
    return real_read_small(path)
procfs.read_small = reading
AGENT = ["sh", "-c", "sleep 60 & echo $!; sleep 60"]
with orphans.guarded("test-loop"):
    for name, argv in (("agent", AGENT), ("other", ["sleep", "60"])):
        threading.Thread(target=start, args=(name, argv), daemon=True).start()
    while len(started) < 2:
        time.sleep(0.01)
    spawner, agent = started["agent"]
    other = started["other"][1]
    orphan = int(agent.stdout.readline())
    try:
        os.kill(agent.pid, 9)  # its child is orphaned: adopted by the loop's first thread
        agent.wait()
        for _ in range(500):
            if procfs.stat_fields(orphan)[1] == str(os.getpid()):
                break
            time.sleep(0.01)
        read.clear()
        found = RunTree(agent.pid, spawner).look()
        loop = f"/proc/{os.getpid()}/"
        lists = {path.split("/")[-2] for path in read if path.startswith(loop)}
        expected = {str(os.getpid()), str(spawner)}
        (here / "look").write_text(f"{orphan in found} {other.pid in found} {lists == expected}")
    finally:
        other.kill()
        os.kill(orphan, 9)
        hold.set()
"""


def test_a_runs_look_reads_the_spawners_and_the_first_threads_lists_only(tmp_path: Path) -> None:
    """An orphan of the run is found (it hangs from the loop's first thread); a child of
    another of the loop's threads is not, nor is that thread's list read (issue 22 item 8)."""
    if procfs.children(os.getpid()) is None:
        pytest.skip("this kernel keeps no children lists")
    host = _host_run(THREADS_HOST, tmp_path)
    assert host.returncode == 0
    assert (tmp_path / "look").read_text() == "True False True"


# A loop stand-in that counts its looks at /proc as its guard starts: once with no child, once
# with a child it started before (which the guard must not take for an orphan of its own).
START_HOST = (
    """
import os
import subprocess
import sys
from pathlib import Path
from wild.agents import orphans
here = Path(sys.argv[1])
"""
    + SCAN_COUNTER
    + """os.scandir = counting
with orphans.guarded("test-loop"):
    alone = len(scans)
child = subprocess.Popen(["sleep", "30"])
scans.clear()
with orphans.guarded("test-loop-2"):
    with_child = len(scans)
    adopted = child.pid in orphans.adopted()
child.kill()
child.wait()
(here / "scans").write_text(f"{alone} {with_child} {adopted}")
"""
)


def test_a_guard_started_with_no_child_reads_no_process_table(tmp_path: Path) -> None:
    """A loop's start has no child yet: one system call says so, where the guard read every
    process of the machine (issue 22 item 8); with a child, the table is read as before, and
    that child is not taken for an orphan."""
    host = _host_run(START_HOST, tmp_path)
    assert host.returncode == 0
    alone, with_child, adopted = (tmp_path / "scans").read_text().split()
    assert (alone, adopted) == ("0", "False")
    assert int(with_child) >= 1


def test_a_program_is_looked_up_where_exec_would_find_it(tmp_path: Path) -> None:
    """Each PATH folder in turn, a relative or empty one from the agent's own folder, the first
    executable file found; a long PATH (17 folders here) looked up as strings, without a Path
    built per folder (~0.2 ms per agent start)."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "late").mkdir()
    for folder in ("bin", "late", "."):
        (tmp_path / folder / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "late" / "tool").chmod(0o755)
    (tmp_path / "tool").chmod(0o755)
    # bin/tool is not executable: passed over for the next folder's.
    assert orphans.find_program("tool", tmp_path, "bin:late") == tmp_path / "late" / "tool"
    assert orphans.find_program("tool", tmp_path, ":late") == tmp_path / "." / "tool"
    assert orphans.find_program("tool", tmp_path, f"/nowhere:{tmp_path}/late") == (
        tmp_path / "late" / "tool"
    )
    assert orphans.find_program("./tool", tmp_path, "/usr/bin") == tmp_path / "tool"
    with pytest.raises(PermissionError):
        orphans.find_program("tool", tmp_path, "bin")
    with pytest.raises(FileNotFoundError):
        orphans.find_program("tool", tmp_path, "/nowhere")


def test_a_program_found_runnable_is_taken_again_while_it_still_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop starts the same agent program every iteration: its PATH search is made once
    and the file found is checked again (a runnable file), not searched for again; a program
    gone or no longer executable since fails before anything starts, as it did the first time."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    searched: list[str] = []
    real_find = orphans.find_program

    def noting_find(program: str, cwd: Path, path: str | None) -> Path:
        searched.append(program)
        return real_find(program, cwd, path)

    monkeypatch.setattr(orphans, "find_program", noting_find)
    path = f"/nowhere:/nowhere/else:{bin_dir}"
    for _ in range(3):
        orphans.dying_with_parent(["tool", "x"], tmp_path, path, gated=True)
    assert searched == ["tool"]
    tool.chmod(0o644)
    with pytest.raises(PermissionError):
        orphans.dying_with_parent(["tool"], tmp_path, path, gated=True)
    tool.unlink()
    with pytest.raises(FileNotFoundError):
        orphans.dying_with_parent(["tool"], tmp_path, path, gated=True)
    assert searched == ["tool", "tool", "tool"]
