"""`wild --sweep FILE --run` and `wild --run-sweeps`: sweeps run to the end with no agent, in
real `python -m wild` processes with the real local backend."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wild.barriers.approvals import approve
from wild.commands.init import init_wild
from wild.parsers.sweeps import SweepSpec, parse_sweep
from wild.paths import WildPaths
from wild.runs.resolve import program
from wild.store.events_log import read_events
from wild.store.runs_log import read_runs

pytestmark = pytest.mark.timeout(120)

BOUND_S = 60.0
# Each run waits for the test's `go` file (when asked to), then logs its loss.
TRAIN = """
import json, os, sys, time
args = dict(a[2:].split("=", 1) for a in sys.argv[1:])
go = os.environ.get("GO_FILE")
while go and not os.path.exists(go):
    time.sleep(0.02)
with open(os.path.join(os.environ["WILD_RUN_DIR"], "metrics.jsonl"), "a") as out:
    out.write(json.dumps({"step": 1, "loss": float(args["lr"]) + int(args["seed"])}) + "\\n")
"""
SWEEP = {
    "name": "lr",
    "base_command": "python train.py",
    "parameters": {"lr": [0.1, 0.2], "seed": [0, 1]},
    "resources": {"cpus": 1, "time": "00:01:00"},
}


def make_project(tmp_path: Path, *, approved: bool = True) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "train.py").write_text(TRAIN)
    text = json.dumps(SWEEP)
    (root / "sweep.json").write_text(text)
    init_wild(WildPaths(root / ".wild"))
    if approved:  # as a human's `wild --approve` of the sweep's program would
        spec = parse_sweep(text)
        assert isinstance(spec, SweepSpec)
        approve(root, program(spec, python=sys.executable))
    return root


def wild(root: Path, *args: str, go: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "GO_FILE": str(go) if go else ""}
    return subprocess.Popen(
        [sys.executable, "-m", "wild", *args, "--run-slots", "2"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def runs_of(root: Path) -> dict[str, tuple[str, int]]:
    index = read_runs(root / ".wild" / "runs.jsonl").index
    return {run.id: (run.status, run.attempt) for run in index.runs.values()}


def until(predicate: object, what: str) -> None:
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_sweep_runs_to_the_end_with_no_agent_and_prints_progress_and_the_table(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path)
    proc = wild(root, "--sweep", "sweep.json", "--run")
    output, _ = proc.communicate(timeout=BOUND_S)
    assert proc.returncode == 0, output
    assert set(runs_of(root).values()) == {("finished", 1)}
    assert "4/4 runs done (4 finished), 0 running" in output
    assert "| lr=0.1 * | 2 | 0.6 ± 0.7071 | 0.1 | 1.1 |" in output  # the --compare table


def test_a_runner_killed_mid_sweep_is_taken_up_again_and_no_run_starts_twice(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path)
    go = tmp_path / "go"
    first = wild(root, "--sweep", "sweep.json", "--run", go=go)
    until(lambda: sorted(s for s, _ in runs_of(root).values()).count("running") == 2, "2 runs")
    first.kill()  # SIGKILL: no cleanup at all
    first.communicate(timeout=BOUND_S)
    second = wild(root, "--run-sweeps", go=go)
    go.touch()
    output, _ = second.communicate(timeout=BOUND_S)
    assert second.returncode == 0, output
    assert set(runs_of(root).values()) == {("finished", 1)}
    events, _problems = read_events(root / ".wild" / "events.log")
    started = sorted(e["run"] for e in events if e["kind"] == "run-started")
    assert started == sorted(runs_of(root)), started  # each run started exactly once


def test_runs_awaiting_approval_are_said_and_the_runner_exits_non_zero(tmp_path: Path) -> None:
    root = make_project(tmp_path, approved=False)
    proc = wild(root, "--sweep", "sweep.json", "--run")
    output, _ = proc.communicate(timeout=BOUND_S)
    assert proc.returncode == 1, output
    assert "4 runs of sweep" in output and "await your approval" in output
    assert set(runs_of(root).values()) == {("queued", 1)}


def test_ctrl_c_with_no_terminal_leaves_the_runs_and_stop_run_sweep_stops_them(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path)
    go = tmp_path / "go"
    proc = wild(root, "--sweep", "sweep.json", "--run", go=go)
    until(lambda: sorted(s for s, _ in runs_of(root).values()).count("running") == 2, "2 runs")
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=BOUND_S)
    assert proc.returncode == 130, output
    assert "Left 4 runs queued or running: `wild --run-sweeps` takes them up again" in output
    assert sorted(s for s, _ in runs_of(root).values()) == [
        "queued",
        "queued",
        "running",
        "running",
    ]
    sweep_id = next(iter(runs_of(root))).rsplit("-", 1)[0]
    stop = subprocess.run(
        [sys.executable, "-m", "wild", "--stop-run", sweep_id],
        cwd=root, capture_output=True, text=True, timeout=BOUND_S, check=False,
    )  # fmt: skip
    assert stop.returncode == 0, stop.stderr
    assert stop.stdout.startswith("Stopping 4 runs: ")
    # The running two were signalled (their wrappers kill them); a runner records their ends.
    settle = wild(root, "--run-sweeps")
    output, _ = settle.communicate(timeout=BOUND_S)
    assert settle.returncode == 0, output
    assert set(runs_of(root).values()) == {("stopped", 1)}


def test_ctrl_c_on_a_terminal_asks_and_yes_stops_the_runs(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    go = tmp_path / "go"
    leader, follower = os.openpty()
    env = {**os.environ, "GO_FILE": str(go)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wild", "--sweep", "sweep.json", "--run", "--run-slots", "2"],
        cwd=root, env=env, stdin=follower, stdout=follower, stderr=follower,
    )  # fmt: skip
    os.close(follower)
    try:
        until(lambda: sorted(s for s, _ in runs_of(root).values()).count("running") == 2, "runs")
        proc.send_signal(signal.SIGINT)
        seen = b""
        deadline = time.monotonic() + BOUND_S
        while b"[y/N]" not in seen and time.monotonic() < deadline:
            seen += os.read(leader, 4096)
        assert b"Stop the 4 runs left? [y/N]" in seen, seen
        os.write(leader, b"y\n")
        assert proc.wait(timeout=BOUND_S) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    # The queued two never start; the running two were signalled (their wrappers kill them).
    assert sorted(s for s, _ in runs_of(root).values()) == [
        "running",
        "running",
        "stopped",
        "stopped",
    ]
    settle = wild(root, "--run-sweeps")  # records the ends of the two it signalled
    output, _ = settle.communicate(timeout=BOUND_S)
    assert settle.returncode == 0, output
    assert set(runs_of(root).values()) == {("stopped", 1)}


def test_run_is_refused_before_recording_while_a_loop_holds_the_folder(tmp_path: Path) -> None:
    from wild.store.loop_lock import take_loop_lock

    root = make_project(tmp_path)
    with take_loop_lock(root / ".wild"):  # as a running loop holds it
        proc = wild(root, "--sweep", "sweep.json", "--run")
        output, _ = proc.communicate(timeout=BOUND_S)
    assert proc.returncode == 1, output
    assert "runs its sweeps itself; give the sweep without --run" in output
    assert runs_of(root) == {}


def test_run_sweeps_with_nothing_queued_says_so(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    proc = wild(root, "--run-sweeps")
    output, _ = proc.communicate(timeout=BOUND_S)
    assert proc.returncode == 0, output
    assert "no run is queued or running; nothing to run" in output
