"""A wrapper started ahead of its run and parked (wild.runs.parked): it starts its run only
when the loop says go, after the claim; it exits having run nothing when the loop closes its
pipe (another run came first, the run was stopped) or dies (tests/runs/test_group_commit.py
kills a loop with a parked wrapper inside a step's commit)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.loop_processes import wait_gone
from tests.runs.helpers import drive, events, local, project, queue, supervisor
from wild.parsers.runs import Resources
from wild.runs import wrapper

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
BOUND_S = 20


def _parked_argv(run_dir: Path, instruction: str) -> list[str]:
    argv = [sys.executable, "-I", "-S", str(Path(wrapper.__file__)), "--run-dir", str(run_dir)]
    argv += ["--run-id", "s1-000", "--attempt", "1", "--workdir", str(run_dir.parent)]
    return [*argv, "--go-fd", "0", "--", instruction]


@pytest.mark.parametrize("told", [b"", b"x"])
def test_a_parked_wrapper_not_told_go_exits_having_run_and_written_nothing(
    tmp_path: Path, told: bytes
) -> None:
    run_dir, ran = tmp_path / "run", tmp_path / "ran"
    argv = _parked_argv(run_dir, f"touch {ran}")
    done = subprocess.run(argv, input=told, capture_output=True, timeout=BOUND_S, check=False)
    assert done.returncode == 0, done.stderr
    assert not ran.exists()
    assert not run_dir.exists()  # no pid file, no log, no marker: not even its folder


def test_a_parked_wrapper_told_go_runs_its_run_once(tmp_path: Path) -> None:
    run_dir, ran = tmp_path / "run", tmp_path / "ran"
    argv = _parked_argv(run_dir, f"echo once >> {ran}")
    done = subprocess.run(argv, input=b"g", capture_output=True, timeout=BOUND_S, check=False)
    assert done.returncode == 0, done.stderr
    assert ran.read_text() == "once\n"
    assert '"exit_code": 0' in (run_dir / "exit").read_text()


def test_the_queue_head_starts_in_the_wrapper_parked_for_it(tmp_path: Path) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, f'echo "$WILD_RUN_ID" >> {spawns}; sleep 0.2', 3)
    backend = local(paths, slots=1)
    sup = supervisor(paths, backend)
    assert [run.id for run in sup.step().started] == ids[:1]
    parked = dict(backend._parked)
    assert sorted(parked) == ids[1:3]  # the next two
    assert not (paths.run_dir(ids[1]) / "pid").exists()  # parked, not started
    drive(sup, backend)
    jobs = {e["run"]: e["job"] for e in events(paths, "run-started")}
    assert [jobs[i] for i in ids[1:]] == [str(parked[i].proc.pid) for i in ids[1:]]
    assert Counter(spawns.read_text().split()) == Counter(ids)
    assert backend._parked == {}  # nothing queued: nothing parked


def test_a_wrapper_parked_for_a_run_stopped_while_queued_exits_without_running_it(
    tmp_path: Path,
) -> None:
    paths = project(tmp_path)
    spawns = tmp_path / "spawns"
    ids = queue(paths, f'echo "$WILD_RUN_ID" >> {spawns}; sleep 0.2', 4)
    backend = local(paths, slots=1)
    sup = supervisor(paths, backend)
    sup.step()
    parked = backend._parked[ids[1]]
    assert sup.stop(ids[1])
    sup.step()  # the stopped run is no head any more: the wrapper parked for it goes
    wait_gone(parked.proc.pid, "the wrapper parked for a stopped run")
    assert sorted(backend._parked) == [ids[2], ids[3]]
    drive(sup, backend)
    assert sorted(spawns.read_text().split()) == [ids[0], ids[2], ids[3]]
    assert not (paths.run_dir(ids[1]) / "pid").exists()
    assert not (paths.run_dir(ids[1]) / "exit").exists()
    assert sup.index.runs[ids[1]].status == "stopped"


def test_a_gpu_run_starts_in_its_parked_wrapper_only_on_the_gpus_it_was_parked_with(
    tmp_path: Path,
) -> None:
    """A run's GPUs are known only when it is admitted: a wrapper parked with other GPUs in
    its CUDA_VISIBLE_DEVICES is discarded and the run starts in a fresh one."""
    paths = project(tmp_path)
    seen = tmp_path / "seen"
    line = f'echo "$WILD_RUN_ID $CUDA_VISIBLE_DEVICES" >> {seen}; sleep 0.3'
    ids = queue(paths, line, 3, resources=Resources(gpus=1))
    backend = local(paths, slots=2, environ={"CUDA_VISIBLE_DEVICES": "0,1"})
    sup = supervisor(paths, backend)
    assert [run.id for run in sup.step().started] == ids[:2]  # on GPU 0 and GPU 1
    parked = backend._parked[ids[2]]  # parked with GPU 0, as from an empty pool
    drive(sup, backend)
    gpus = dict(line.split() for line in seen.read_text().splitlines())
    assert sorted(gpus) == ids
    jobs = {e["run"]: e["job"] for e in events(paths, "run-started")}
    assert (jobs[ids[2]] == str(parked.proc.pid)) == (gpus[ids[2]] == "0")


def test_a_parked_wrapper_holds_no_descriptor_of_the_loop_but_its_pipe(tmp_path: Path) -> None:
    """Its pipe's write end stays the loop's alone, so its end of file means the loop is gone
    or let it go (another wrapper holding it would keep a parked one waiting forever)."""
    paths = project(tmp_path)
    queue(paths, "sleep 0.2", 3)
    backend = local(paths, slots=1)
    sup = supervisor(paths, backend)
    sup.step()
    parked = list(backend._parked.values())
    assert len(parked) == 2
    wrappers = [*(one.proc.pid for one in parked), *(p.pid for p in backend._children.values())]
    for one in parked:
        pipe = os.readlink(f"/proc/self/fd/{one.go_fd}")
        for pid in wrappers:
            held = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            assert held.count(pipe) == (1 if pid == one.proc.pid else 0)
    backend.close()
    for one in parked:
        wait_gone(one.proc.pid, "a parked wrapper whose pipe was closed")
    drive(sup, backend)
