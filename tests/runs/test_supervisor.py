"""The run supervisor with the local backend: real wrappers, real files, tiny jobs."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.runs.helpers import BOUND_S, drive, events, local, project, queue, supervisor
from wild.errors import WildError
from wild.liveness import probe
from wild.parsers.run_table import RunTable
from wild.parsers.runs import Resources, RunRecord
from wild.runs.backend import BackendContext
from wild.runs.local import LocalBackend

pytestmark = pytest.mark.timeout(60)


def test_ended_runs_get_status_exit_code_and_last_metrics(tmp_path: Path) -> None:
    paths = project(tmp_path)
    good = queue(paths, 'echo \'{"step": 1, "loss": 0.5}\' >> "$WILD_RUN_DIR/metrics.jsonl"')
    bad = queue(paths, "echo boom; exit 3", start=1)
    backend = local(paths)
    sup = supervisor(paths, backend)
    results = drive(sup, backend)
    runs = sup.index.runs
    assert runs[good[0]].status == "finished" and runs[good[0]].exit_code == 0
    assert dict(runs[good[0]].metrics or {}) == {"step": 1, "loss": 0.5}
    assert runs[bad[0]].status == "failed" and runs[bad[0]].exit_code == 3
    assert [run.id for result in results for run in result.failed] == bad
    assert {e["run"] for e in events(paths, "run-started")} == {good[0], bad[0]}
    assert {e["status"] for e in events(paths, "run-ended")} == {"finished", "failed"}


def test_runs_see_their_environment_and_workdir(tmp_path: Path) -> None:
    paths = project(tmp_path)
    out = tmp_path / "env.txt"
    queue(paths, f'echo "$WILD_RUN_ID $WILD_SWEEP_ID $WILD_PARAM_SEED $(pwd)" > {out}')
    backend = local(paths)
    drive(supervisor(paths, backend), backend)
    assert out.read_text().split() == ["s1-000", "s1", "0", str(paths.project)]


def test_no_more_runs_start_than_there_are_slots(tmp_path: Path) -> None:
    paths = project(tmp_path)
    count = tmp_path / "count"
    queue(paths, f"echo x >> {count}; sleep 0.2", 5)
    backend = local(paths, slots=2)
    sup = supervisor(paths, backend)
    first = sup.step()
    assert len(first.started) == 2
    queued = events(paths, "run-queue")[0]
    assert (queued["queued"], queued["waiting"], queued["pool"]["cpu_slots"]) == (5, 3, 2)
    drive(sup, backend)
    assert all(run.status == "finished" for run in sup.index.runs.values())
    assert count.read_text().count("x") == 5


def test_gpu_runs_get_their_own_devices_and_a_restart_knows_them(tmp_path: Path) -> None:
    paths = project(tmp_path)
    go = tmp_path / "go"
    gpu = Resources(gpus=1)
    wait_go = (
        f'echo "$CUDA_VISIBLE_DEVICES" > "$WILD_RUN_DIR/gpu"; '
        f"while [ ! -e {go} ]; do sleep 0.05; done"
    )
    ids = queue(paths, wait_go, 3, resources=gpu)
    cpu_run = queue(paths, 'echo "[$CUDA_VISIBLE_DEVICES]" > "$WILD_RUN_DIR/gpu"', start=3)
    environ = {"CUDA_VISIBLE_DEVICES": "0,1"}
    backend = local(paths, environ=environ)
    first = supervisor(paths, backend).step()
    assert sorted(run.id for run in first.started) == [ids[0], ids[1], cpu_run[0]]
    given = {run.id: run.raw["gpu_ids"] for run in first.started}
    assert sorted([given[ids[0]], given[ids[1]]]) == [["0"], ["1"]] and given[cpu_run[0]] == []
    # A restarted loop's supervisor reads the assignments back: no GPU is free.
    again = supervisor(paths, local(paths, environ=environ))
    assert again.step().started == ()
    go.touch()
    drive(again, again.backends["local"])  # type: ignore[arg-type]
    seen = {run_id: (paths.run_dir(run_id) / "gpu").read_text().strip() for run_id in ids}
    assert sorted(seen.values()) == ["0", "0", "1"] or sorted(seen.values()) == ["0", "1", "1"]
    assert (paths.run_dir(cpu_run[0]) / "gpu").read_text().strip() == "[]"


def test_a_run_too_big_for_the_pool_fails_and_does_not_block_the_queue(tmp_path: Path) -> None:
    paths = project(tmp_path)
    big = queue(paths, "true", resources=Resources(cpus=8))
    small = queue(paths, "true", start=1)
    backend = local(paths, slots=2)
    sup = supervisor(paths, backend)
    first = sup.step()
    assert [run.id for run in first.started] == small
    assert [run.id for run in first.failed] == big
    assert "needs 8 CPUs" in (first.failed[0].reason or "")
    drive(sup, backend)
    assert sup.index.runs[small[0]].status == "finished"


def test_the_time_limit_fails_the_run_and_kills_its_group(tmp_path: Path) -> None:
    paths = project(tmp_path)
    child = tmp_path / "child.pid"
    ids = queue(paths, f"sleep 60 & echo $! > {child}; wait", resources=Resources(time_s=0.5))
    backend = local(paths)
    sup = supervisor(paths, backend)
    drive(sup, backend)
    run = sup.index.runs[ids[0]]
    assert (run.status, run.reason, run.exit_code) == ("failed", "timeout", 143)
    assert probe(int(child.read_text())) is None


def test_stop_kills_a_running_run_and_marks_it_stopped(tmp_path: Path) -> None:
    paths = project(tmp_path)
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    running = queue(paths, f"echo up > {ready}; sleep 60")
    waiting = queue(paths, "true", start=1)
    backend = local(paths, slots=1)
    sup = supervisor(paths, backend)
    sup.step()
    with ready.open() as fifo:
        assert fifo.read() == "up\n"
    assert sup.stop(waiting[0]) and sup.stop(running[0], "stop_sweep")
    assert not sup.stop(waiting[0])  # already over
    drive(sup, backend)
    runs = sup.index.runs
    assert (runs[running[0]].status, runs[running[0]].reason) == ("stopped", "stop_sweep")
    assert (runs[waiting[0]].status, runs[waiting[0]].reason) == ("stopped", "stopped by the human")
    assert [e["run"] for e in events(paths, "run-stop")] == [waiting[0], running[0]]


def test_rerun_keeps_the_old_attempt_and_runs_a_new_one(tmp_path: Path) -> None:
    paths = project(tmp_path)
    flag = tmp_path / "second"
    ids = queue(paths, f"if [ -e {flag} ]; then echo fine; else echo bad; touch {flag}; exit 1; fi")
    backend = local(paths)
    sup = supervisor(paths, backend)
    drive(sup, backend)
    assert sup.index.runs[ids[0]].status == "failed"
    with pytest.raises(WildError, match="no run nope"):
        sup.rerun("nope")
    again = sup.rerun(ids[0])
    assert (again.status, again.attempt, again.exit_code, again.job_id) == ("queued", 2, None, None)
    assert "gpu_ids" not in again.raw and "backend_fields" not in again.raw
    old = paths.run_dir(ids[0]) / "attempt-1"
    assert "bad" in (old / "log").read_text() and (old / "exit").exists()
    drive(sup, backend)
    run = sup.index.runs[ids[0]]
    assert (run.status, run.attempt) == ("finished", 2)
    assert "bad" not in (paths.run_dir(ids[0]) / "log").read_text()


class _Broken(LocalBackend):
    """No wrapper starts: no launcher, and spawning one fails."""

    def _launch(self, runs: Sequence[Any]) -> list[int | None]:
        return [None] * len(runs)

    def _spawn(self, run: RunRecord, argv: Any, env: Mapping[str, str], run_dir: Path) -> int:
        raise OSError(13, "Permission denied")


def test_a_backend_that_fails_to_start_a_run_fails_that_run_not_the_step(tmp_path: Path) -> None:
    paths = project(tmp_path)
    ids = queue(paths, "true")
    context = BackendContext(paths, "test", {"run_slots": "1"})
    sup = supervisor(paths, _Broken(context, environ={}, list_gpus=lambda: ()))
    result = sup.step()
    assert [run.id for run in result.failed] == ids
    assert "Permission denied" in (result.failed[0].reason or "")
    assert sup.step().ended == ()  # and it is not tried again


def test_a_link_planted_at_a_run_log_is_never_appended_to(tmp_path: Path) -> None:
    """An agent put `runs/<id>/log` → a file outside the project before the run started: the
    run fails to start, and the file keeps its bytes (before: the run's output was appended)."""
    paths = project(tmp_path)
    [run_id] = queue(paths, "echo PWNED")
    outside = tmp_path / "authorized_keys"
    outside.write_bytes(b"ssh-ed25519 AAAA mine\n")
    paths.run_dir(run_id).mkdir(parents=True)
    (paths.run_dir(run_id) / "log").symlink_to(outside)
    backend = local(paths)
    sup = supervisor(paths, backend)
    drive(sup, backend)
    assert sup.index.runs[run_id].status == "failed", sup.index.runs[run_id]
    assert outside.read_bytes() == b"ssh-ed25519 AAAA mine\n"


def test_four_quarter_gpu_runs_share_one_gpu_and_a_fifth_waits(tmp_path: Path) -> None:
    paths = project(tmp_path)
    go = tmp_path / "go"
    wait_go = (
        f'echo "$CUDA_VISIBLE_DEVICES" > "$WILD_RUN_DIR/gpu"; '
        f"while [ ! -e {go} ]; do sleep 0.05; done"
    )
    ids = queue(paths, wait_go, 5, resources=Resources(gpus=0.25))
    backend = local(paths, slots=8, environ={"CUDA_VISIBLE_DEVICES": "7"})
    sup = supervisor(paths, backend)
    first = sup.step()
    assert sorted(run.id for run in first.started) == ids[:4]
    assert all(run.raw["gpu_ids"] == ["7"] for run in first.started)
    assert sup.step().started == ()  # the GPU is full: the fifth waits though CPU slots are free
    go.touch()
    drive(sup, backend)
    seen = [(paths.run_dir(run_id) / "gpu").read_text().strip() for run_id in ids]
    assert seen == ["7"] * 5 and sup.index.runs[ids[4]].status == "finished"


def test_a_step_reads_each_run_it_starts_from_its_line_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lean index reads a queued run's line again at each look (issue 23: the loop's CPU
    per run): a step that starts runs, and then looks for the next ready one to keep the
    launcher for, passes over those it started without reading their lines a second time."""
    paths = project(tmp_path)
    ids = queue(paths, "true", 9)
    backend = local(paths, slots=3)
    sup = supervisor(paths, backend)
    assert [run.id for run in sup.step().started] == ids[:3]
    deadline = time.monotonic() + BOUND_S  # bounded: the three end at once
    while not all((paths.run_dir(run_id) / "exit").exists() for run_id in ids[:3]):
        assert time.monotonic() < deadline, "the first three runs left no exit marker"
        time.sleep(0.02)
    reads: Counter[str] = Counter()
    table = sup.index.runs
    assert isinstance(table, RunTable)  # the loop's index is lean
    load = table._load  # how the lean index reads a run's line again

    def counted(run_id: str, offset: int, line: int) -> RunRecord | None:
        reads[run_id] += 1
        return load(run_id, offset, line)

    monkeypatch.setattr(table, "_load", counted)
    result = sup.step()
    started = [run.id for run in result.started]
    assert started == ids[3:6]
    assert {run_id: reads[run_id] for run_id in started} == dict.fromkeys(started, 1)
    drive(sup, backend)
