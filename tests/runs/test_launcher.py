"""The wrapper launcher (wild.runs.launcher): one interpreter per loop forks every run's
wrapper. Each run still has a wrapper process of its own, started exactly once, only when the
loop asks (after its claim); the launcher exits at end of file (the loop let it go or died),
and a loop that died while a launcher still had its request adopts the run rather than
starting it again (tests/runs/test_group_commit.py kills loops inside a step's commit)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.loop_processes import alive, children, wait_gone
from tests.runs.helpers import drive, events, local, project, queue, supervisor
from wild import procfs
from wild.clock import SystemClock, iso_ms
from wild.liveness import boot_id, probe
from wild.paths import WildPaths
from wild.runs import attempts, decide, wrapper
from wild.runs import launcher as launchers
from wild.runs import local as local_backend
from wild.runs.launcher import Launcher, launcher_argv, request
from wild.runs.supervisor import RunSupervisor
from wild.runs.wrapper_command import wrapper_argv

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
BOUND_S = 20
# What a command line and an environment can hold: no NUL, no unpaired surrogate.
_NO_NUL = st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=["Cs"]))


@contextlib.contextmanager
def _requests_on_a_pipe() -> Iterator[tuple[wrapper.Requests, int]]:
    """Requests read off a real pipe, as the launcher reads its stdin; the pipe's write end
    (closed by the test when it says end of file)."""
    read_fd, write_fd = os.pipe()
    try:
        yield (
            wrapper.Requests(read_fd, lambda fd: bool(select.select([fd], [], [], 0)[0])),
            write_fd,
        )
    finally:
        os.close(read_fd)
        with contextlib.suppress(OSError):
            os.close(write_fd)


@given(
    st.lists(_NO_NUL, min_size=1, max_size=5),
    st.dictionaries(_NO_NUL.filter(lambda name: "=" not in name), _NO_NUL, max_size=5),
)
def test_a_request_reads_back_as_written(args: list[str], env: dict[str, str]) -> None:
    with _requests_on_a_pipe() as (requests, write_fd):
        os.write(write_fd, request(args, env))
        os.close(write_fd)
        assert requests.batch() == [(args, env)]


@pytest.mark.parametrize("sent", [b"", b"12\nshort"])
def test_a_launcher_at_end_of_file_exits_having_started_nothing(
    tmp_path: Path, sent: bytes
) -> None:
    argv = launcher_argv(sys.executable, tmp_path / "runs")
    done = subprocess.run(argv, input=sent, capture_output=True, timeout=BOUND_S, check=False)
    assert (done.returncode, done.stdout) == (0, b"")
    assert not (tmp_path / "runs").exists()


def _args(run_dir: Path, instruction: str) -> list[str]:
    argv = ["--run-dir", str(run_dir), "--run-id", run_dir.name, "--attempt", "1"]
    return [*argv, "--workdir", str(run_dir.parent), "--", instruction]


def test_each_run_asked_for_runs_once_in_a_detached_wrapper_of_its_own(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    run_dirs = [tmp_path / f"r{number}" for number in range(3)]
    for run_dir in run_dirs:
        run_dir.mkdir()
    launcher = Launcher(sys.executable, tmp_path)
    line = 'echo "$RUN $(cut -d" " -f4,6 /proc/$PPID/stat)" >> ' + str(ran)
    pids = [launcher.launch(_args(d, line), {"RUN": d.name}, d) for d in run_dirs]
    for run_dir in run_dirs:
        wait_gone(int((run_dir / "pid").read_text()), "a launched wrapper")
    launcher.close()
    wait_gone(launcher.pid, "a launcher let go")
    assert [int((d / "pid").read_text()) for d in run_dirs] == pids
    assert len(set(pids)) == 3 and launcher.pid not in pids
    seen = dict(line.split(" ", 1) for line in ran.read_text().splitlines())
    # Each wrapper is the launcher's child, leader of a session of its own.
    assert seen == {d.name: f"{launcher.pid} {pid}" for d, pid in zip(run_dirs, pids, strict=True)}
    assert all('"exit_code": 0' in (d / "exit").read_text() for d in run_dirs)


def test_a_launched_run_lives_by_its_own_environment_not_the_launchers(tmp_path: Path) -> None:
    """The run's environment reaches its shell, and the log's limit is the run's
    `WILD_MAX_LOG_BYTES` (the wrapper reads it from the request, not from its own environment,
    which is the launcher's: it is not rewritten per run)."""
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    launcher = Launcher(sys.executable, tmp_path)
    limit = 64 * 1024
    line = 'echo "$ONLY_THE_RUN"; head -c 300000 /dev/zero | tr "\\0" x'
    env = {"PATH": os.environ["PATH"], "ONLY_THE_RUN": "seen", "WILD_MAX_LOG_BYTES": str(limit)}
    pid = launcher.launch(_args(run_dir, line), env, run_dir)
    assert pid is not None
    wait_gone(pid, "a launched wrapper")
    launcher.close()
    wait_gone(launcher.pid, "a launcher let go")
    log = (run_dir / "log").read_bytes()
    assert log.startswith(b"seen\n")
    assert b"WILD_MAX_LOG_BYTES" in log  # the cut's notice names the limit's variable
    assert limit // 2 < len(log) < limit + 4096  # cut to the run's limit, not 100 MB


def test_a_sweep_starts_in_wrappers_forked_by_one_launcher_each_run_once(tmp_path: Path) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    # Each run writes its id and its wrapper's parent: the launcher.
    line = f'echo "$WILD_RUN_ID $(cut -d" " -f4 /proc/$PPID/stat)" >> {spawns}'
    ids = queue(paths, line, 8)
    backend = local(paths, slots=3)
    sup = supervisor(paths, backend)
    sup.step()
    launcher = backend._launcher
    assert launcher is not None
    drive(sup, backend)
    started = dict(line.split() for line in spawns.read_text().splitlines())
    assert Counter(line.split()[0] for line in spawns.read_text().splitlines()) == Counter(ids)
    assert set(started.values()) == {str(launcher.pid)}  # one interpreter for all 8 runs
    jobs = {e["run"]: e["job"] for e in events(paths, "run-started")}
    assert jobs == {i: (paths.run_dir(i) / "pid").read_text().strip() for i in ids}
    assert backend._children == {}  # no wrapper was spawned on its own
    sup.step()  # nothing queued or running: the launcher is let go
    assert backend._launcher is None
    wait_gone(launcher.pid, "the launcher of a finished sweep")


def test_the_launched_wrappers_hold_none_of_the_launchers_pipes(tmp_path: Path) -> None:
    """End of file on the launcher's stdin must mean the loop let go or died, and on its
    stdout that the launcher is gone: a wrapper holding either pipe would blur both."""
    paths = project(tmp_path)
    ids = queue(paths, f'touch {tmp_path}/"$WILD_RUN_ID"; sleep 0.3', 2)
    backend = local(paths, slots=2)
    sup = supervisor(paths, backend)
    sup.step()
    launcher = backend._launcher
    assert launcher is not None
    for run_id in ids:  # each run has started: its wrapper is past its setup
        while not (tmp_path / run_id).exists():
            time.sleep(0.01)

    def pipes(pid: int) -> list[str]:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        return sorted(link for link in links if link.startswith("pipe:"))

    its_own = sorted(os.readlink(f"/proc/{launcher.pid}/fd/{fd}") for fd in (0, 1))
    assert pipes(launcher.pid) == its_own  # stdin and stdout, nothing else of the loop's
    for run_id in ids:
        assert not set(pipes(int(sup.index.runs[run_id].job_id or "0"))) & set(its_own)
    drive(sup, backend)


def _a_claimed_run(tmp_path: Path) -> tuple[WildPaths, Path, str, bytes]:
    """A project with one run queued and claimed by a loop that then died, and that loop's
    request to its launcher to start it; the run writes its id to the returned `spawns`
    file each time it is started."""
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    [run_id] = queue(paths, f'echo "$WILD_RUN_ID" >> {spawns}')
    run = supervisor(paths, local(paths)).index.runs[run_id]
    run_dir = paths.run_dir(run_id)
    claim = attempts.claim_text(iso_ms(SystemClock().now()), 999_999, boot_id())
    assert attempts.claim_all([(run_dir, 1, claim)]) == [True]
    argv = wrapper_argv(run, python=sys.executable, run_dir=str(run_dir), workdir=str(tmp_path))
    env = decide.run_env(run, str(paths.root), str(run_dir), dict(os.environ))
    return paths, spawns, run_id, request(argv[4:], env)


def _hand_on_and_die(dead: Launcher, asked: bytes) -> None:
    """What the dead loop did last: it asked `dead` to start the run, then was gone."""
    os.write(dead._requests, asked)
    os.close(dead._requests)


def _next_loop_while_the_launcher_resumes(dead: Launcher, paths: WildPaths) -> RunSupervisor:
    """The next loop's sweep driven to its end while the stopped `dead` launcher goes on
    after a second; the launcher is gone when it returns."""
    resume = threading.Timer(1.0, os.kill, (dead.pid, signal.SIGCONT))
    resume.start()
    backend = local(paths)
    sup = supervisor(paths, backend)
    drive(sup, backend)
    resume.join()
    dead.proc.wait(timeout=BOUND_S)
    return sup


def test_a_dead_loops_launcher_still_starting_a_run_is_waited_for_then_the_run_is_adopted(
    tmp_path: Path,
) -> None:
    """The loop died right after it asked the launcher: the launcher has read the request but
    not yet written the run's `pid`. The next loop must not take that for a run that never
    started (it would start it again): it waits until the dead loop's launcher is gone."""
    paths, spawns, run_id, asked = _a_claimed_run(tmp_path)
    dead = Launcher(sys.executable, paths.runs)
    os.kill(dead.pid, signal.SIGSTOP)  # it has not read its request yet when the loop dies
    _hand_on_and_die(dead, asked)
    sup = _next_loop_while_the_launcher_resumes(dead, paths)
    assert spawns.read_text().split() == [run_id]  # once: adopted, not started again
    assert [e["run"] for e in events(paths, "run-adopted")] == [run_id]
    assert events(paths, "run-unclaimed") == []
    assert sup.index.runs[run_id].status == "finished"


def test_a_launcher_still_in_its_exec_is_waited_for_before_it_is_handed_a_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For a moment after `Popen` returned (the kernel closed the exec's close-on-exec pipe),
    a launcher's /proc command line still reads empty: the kernel sets it later in the exec.
    A loop that handed it a request then and died left a launcher the next loop could not
    see: that loop took the run for never started and started it, and the launcher started
    it again (seen about once in 30 runs of the test above under load; at once, half of 150
    launchers read so). Forced here: each launcher's command line reads empty 3 times."""
    paths, spawns, run_id, asked = _a_claimed_run(tmp_path)
    real, empty_reads = launchers.procfs_cmdline, Counter[int]()

    def in_exec(pid: int) -> list[str]:
        """A launcher's (this process's child; a launched wrapper is the launcher's) reads
        empty the first 3 times."""
        argv, fields = real(pid), procfs.stat_fields(pid) or []
        ours = fields[procfs.PPID : procfs.PPID + 1] == [str(os.getpid())]
        if "--launcher" in argv and ours and empty_reads[pid] < 3:
            empty_reads[pid] += 1
            return [""]
        return argv

    monkeypatch.setattr(launchers, "procfs_cmdline", in_exec)
    dead = Launcher(sys.executable, paths.runs)
    os.kill(dead.pid, signal.SIGSTOP)
    _hand_on_and_die(dead, asked)
    sup = _next_loop_while_the_launcher_resumes(dead, paths)
    assert spawns.read_text().split() == [run_id]  # once: adopted, not started again
    assert [e["run"] for e in events(paths, "run-adopted")] == [run_id]
    assert sup.index.runs[run_id].status == "finished"


def test_a_dead_loops_launcher_stalled_past_the_wait_is_killed_not_taken_for_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dead loop's launcher that has read a request and stalls longer than the next loop
    waits (stopped here; starved of CPU on a loaded machine) must not start the run after
    that loop, seeing no `pid`, gave the claim back and started it: it is killed first."""
    paths, spawns, run_id, asked = _a_claimed_run(tmp_path)
    dead = Launcher(sys.executable, paths.runs)
    os.kill(dead.pid, signal.SIGSTOP)  # stalled until the next loop has done its work
    _hand_on_and_die(dead, asked)
    monkeypatch.setattr(local_backend, "ORPHAN_LAUNCHER_WAIT_S", 0.2)
    backend = local(paths)
    sup = supervisor(paths, backend)
    drive(sup, backend)
    with contextlib.suppress(ProcessLookupError):
        os.kill(dead.pid, signal.SIGCONT)  # it would start the run now, were it alive
    dead.proc.wait(timeout=BOUND_S)
    assert spawns.read_text().split() == [run_id]  # once: by the next loop alone
    assert [e["run"] for e in events(paths, "run-unclaimed")] == [run_id]
    assert sup.index.runs[run_id].status == "finished"


def test_a_dead_loops_launcher_that_cannot_be_killed_holds_its_run_and_is_named_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dead loop's launcher the next loop may not kill (PermissionError: another user's)
    or that never goes: the wait for it ends, its one line names it and what to do, and the
    run it may still start is neither started again, nor adopted, nor given up as lost,
    step after step, without waiting again; once it is gone, the run starts, once. (Before,
    the kill was tried every 10 ms without end.)"""
    paths, spawns, run_id, _asked = _a_claimed_run(tmp_path)
    stuck = 4_000_000  # above any pid_max: no real process is ever signalled
    there = [True]
    looks = [0]
    kills: list[int] = []
    real_kill = os.kill

    def orphans(runs_dir: Path, own: int | None) -> list[int]:
        looks[0] += 1
        assert looks[0] < 5_000, "the wait for a launcher that cannot be killed has no end"
        return [stuck] if there[0] else []

    def kill(pid: int, signum: int) -> None:
        if pid != stuck:
            real_kill(pid, signum)
            return
        kills.append(signum)
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(launchers, "orphans", orphans)
    monkeypatch.setattr(os, "kill", kill)
    monkeypatch.setattr(local_backend, "ORPHAN_LAUNCHER_WAIT_S", 0.05)
    monkeypatch.setattr(local_backend, "ORPHAN_LAUNCHER_KILL_WAIT_S", 0.05, raising=False)
    backend = local(paths)
    sup = supervisor(paths, backend)
    first = sup.step()
    (line,) = first.problems
    assert str(stuck) in line and f"kill -9 {stuck}" in line and "Operation not permitted" in line
    assert kills and set(kills) == {signal.SIGKILL}
    tried = len(kills)
    for _ in range(3):  # looked at again each step: not waited for, not named again
        assert sup.step().problems == ()
    assert len(kills) == tried
    assert not spawns.exists()
    for kind in ("run-unclaimed", "run-lost", "run-adopted", "run-started"):
        assert events(paths, kind) == []
    assert sup.index.runs[run_id].status == "queued"
    there[0] = False  # its owner stopped it
    drive(sup, backend)
    assert spawns.read_text().split() == [run_id]  # once: it never had started
    assert [e["run"] for e in events(paths, "run-unclaimed")] == [run_id]
    assert sup.index.runs[run_id].status == "finished"


# An agent loop stand-in (a child subreaper, wild.agents.orphans.guarded) running a sweep: its
# launcher is SIGKILLed while a run goes, so the run's wrapper comes to the loop. The loop's
# end kills the orphans it adopted, but not a run's wrapper: runs outlive their loop.
SUBREAPER_LOOP = """
import os, signal, sys, time
from pathlib import Path
from tests.runs.helpers import local, project, queue, supervisor
from wild import procfs
from wild.agents import orphans
here = Path(sys.argv[1])
with orphans.guarded("test-loop"):
    paths = project(here)
    [run_id] = queue(paths, "sleep 30")
    backend = local(paths)
    sup = supervisor(paths, backend)
    sup.step()
    wrapper = int(sup.index.runs[run_id].job_id)
    os.kill(backend._launcher.pid, signal.SIGKILL)
    backend._launcher.proc.wait()
    deadline = time.monotonic() + 20
    while procfs.stat_fields(wrapper)[procfs.PPID] != str(os.getpid()):
        assert time.monotonic() < deadline, "the wrapper did not come to the loop"
        time.sleep(0.01)
(here / "wrapper").write_text(str(wrapper))
"""


def test_a_launched_wrapper_that_came_to_an_agent_loop_outlives_the_loop(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", SUBREAPER_LOOP, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    wrapper = int((tmp_path / "wrapper").read_text())
    try:
        assert probe(wrapper) is not None  # its run goes on
    finally:
        os.kill(wrapper, signal.SIGTERM)  # it stops its run and writes the marker
        wait_gone(wrapper, "the run's wrapper")


def test_a_wrapper_that_ends_while_it_is_looked_for_is_adopted_by_its_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adoption looks for the attempt's wrapper, then for its exit marker. A wrapper seen
    running at the first look may end before the second, its marker written as it ends: the
    attempt is adopted by that marker, not reported lost (seen under load: an instant run
    started by a dead loop's launcher was marked lost though it ran to its end)."""
    paths = project(tmp_path)
    [run_id] = queue(paths, "true")
    backend = local(paths)
    run = supervisor(paths, backend).index.runs[run_id]
    run_dir = paths.run_dir(run_id)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "pid").write_text("4242\n")
    looks: list[int] = []

    def ends_after_the_first_look(_self: object, _run: object, pid: int) -> bool:
        looks.append(pid)
        if len(looks) == 1:
            return True  # running at the first look
        (run_dir / "exit").write_text(f'{{"run": "{run_id}", "attempt": 1, "exit_code": 0}}')
        return False  # ended since, its marker written

    monkeypatch.setattr(type(backend), "_is_wrapper_of", ends_after_the_first_look)
    monkeypatch.setattr(local_backend, "find_wrapper", lambda _paths, _run: None)
    found = backend.adopt(run)
    assert looks and found is not None
    assert found.job_id == "4242"


def test_a_batch_is_every_request_already_written_and_waits_for_none_more() -> None:
    """The launcher takes every request the loop wrote at once (a step's starts), and only
    those: a request half written stays for the next batch, and end of file ends them."""
    asked = [([f"--run-id={n}"], {"N": str(n)}) for n in range(3)]
    third = request(*asked[2])
    with _requests_on_a_pipe() as (requests, write_fd):
        os.write(write_fd, request(*asked[0]) + request(*asked[1]) + third[:5])
        assert requests.batch() == asked[:2]
        os.write(write_fd, third[5:])
        assert requests.batch() == asked[2:]
        os.close(write_fd)
        assert requests.batch() is None


@pytest.mark.parametrize("torn", [b"x\n", b"12\nshort", b"5"])
def test_a_torn_request_ends_the_batches_after_the_whole_ones(torn: bytes) -> None:
    whole = (["--run-id=a"], {"A": "1"})
    with _requests_on_a_pipe() as (requests, write_fd):
        os.write(write_fd, request(*whole) + torn)
        os.close(write_fd)
        assert requests.batch() == [whole]
        assert requests.batch() is None


def test_a_batch_is_forked_whole_before_any_of_its_runs_is_let_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After each fork every page the launcher writes is copied (the new wrapper shares it):
    a batch's wrappers are forked one after the other, then each one's `pid` is written and
    its go given, in order (issue 23: ~40 copied pages of the launcher per run less)."""
    done: list[str] = []
    pids = iter(range(90001, 90004))
    real_pipe, held = os.pipe, []  # each held wrapper's end, kept open here to read its go

    def pipe() -> tuple[int, int]:
        ends = real_pipe()
        held.append(os.dup(ends[0]))
        return ends

    def fork() -> int:
        done.append("fork")
        return next(pids)

    def write_whole(path: str, text: str, *, durable: bool) -> None:
        done.append(f"pid {Path(path).parent.name} {text.strip()}")

    monkeypatch.setattr(os, "pipe", pipe)
    monkeypatch.setattr(os, "fork", fork)
    monkeypatch.setattr(wrapper, "write_whole", write_whole)
    batch: list[wrapper.Request] = [(_args(tmp_path / f"r{n}", "true"), {}) for n in range(3)]
    answers = wrapper.launch_all(batch)
    assert answers == ["ok 90001", "ok 90002", "ok 90003"]
    assert done == ["fork"] * 3 + ["pid r0 90001", "pid r1 90002", "pid r2 90003"]
    assert [os.read(end, 8) for end in held] == [wrapper.GO] * 3
    for end in held:
        os.close(end)


def test_a_wrapper_its_launcher_never_lets_run_exits_while_its_batch_runs_on(
    tmp_path: Path,
) -> None:
    """A wrapper forked after another in the same batch does not hold that one's go end: the
    first, never let run (its `pid` could not be written), sees its end closed and exits
    while the second runs on."""
    missing, going = tmp_path / "missing", tmp_path / "going"
    going.mkdir()
    launcher = Launcher(sys.executable, tmp_path)
    env = {"PATH": os.environ["PATH"]}
    asked = [(_args(missing, "true"), env, missing), (_args(going, "sleep 60"), env, going)]
    answers = launcher.launch_all(asked)
    assert answers[0] is None and answers[1] is not None
    deadline = time.monotonic() + BOUND_S  # bounded, as `wait_gone`
    # The launcher's children: the wrapper of `going` alone, once the other one left.
    while [pid for pid in children(launcher.pid) if alive(pid)] != [answers[1]]:
        assert time.monotonic() < deadline, "the wrapper never let run is still there"
        time.sleep(0.02)
    os.kill(answers[1], signal.SIGTERM)
    wait_gone(answers[1], "a stopped wrapper")
    launcher.close()
    wait_gone(launcher.pid, "a launcher let go")
    assert not missing.exists()
    assert '"reason": "stopped"' in (going / "exit").read_text()


STOPPED_BEFORE_ITS_GO = """
import os, signal, sys, time
from wild.runs import wrapper
run_dir = sys.argv[1]
argv = ["--run-dir", run_dir, "--run-id", "r", "--attempt", "1", "--workdir", run_dir]
args = wrapper.parse_arguments([*argv, "--", "sleep 60"])
pid, hold = wrapper._fork(args, {"PATH": os.environ["PATH"]}, [])
os.kill(pid, signal.SIGTERM)  # as soon as its pid is known, before its go
time.sleep(0.3)
print(wrapper._let_run(args, (pid, hold)), flush=True)
os.waitpid(pid, 0)
"""


def test_a_wrapper_stopped_as_soon_as_it_is_forked_leaves_a_stopped_marker(
    tmp_path: Path,
) -> None:
    """A stop can reach a launched wrapper the moment the loop has its pid, before it has a
    handler of its own: it is remembered, never the default action's silent death, and the
    run, once let run, ends "stopped" with its marker."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_BEFORE_ITS_GO, str(run_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.startswith("ok "), done.stdout + done.stderr
    marker = (run_dir / "exit").read_text()
    assert '"reason": "stopped"' in marker, marker
