"""`wild --sweep FILE|-` and `wild --runs`: exact output and errors; nothing recorded on error."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from tests.cli_support import FixedClock, init_wild_dir, invoke
from wild import cli as cli_module
from wild.commands import watch
from wild.parsers import tasks as tasks_md
from wild.parsers.runs import RunRecord, RunStatus
from wild.paths import WildPaths
from wild.runs import signing
from wild.store.runs_log import append_records, read_runs

NOW = datetime(2026, 11, 25, 12, 30, tzinfo=UTC)
SWEEP = {
    "name": "lr",
    "base_command": "python train.py",
    "parameters": {"lr": [0.1, 0.01, 0.001], "seed": [1, 2]},
    "max_runs": 4,
}


@pytest.fixture(autouse=True)
def _fixed_clock_and_no_backend_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_module, "clock", FixedClock(NOW))
    monkeypatch.delenv("WILD_RUN_BACKEND", raising=False)


@pytest.fixture
def wild_dir(tmp_path: Path) -> Path:
    return init_wild_dir(tmp_path)


def write_sweep(tmp_path: Path, data: object) -> str:
    path = tmp_path / "sweep.json"
    path.write_bytes(orjson.dumps(data))
    return str(path)


def test_sweep_records_runs_and_prints_the_id_count_and_cut(wild_dir: Path, tmp_path: Path) -> None:
    result = invoke("--dir", str(wild_dir), "--sweep", write_sweep(tmp_path, SWEEP))
    assert result.exit_code == 0, result.output
    sweep_id, summary, approval, how = result.output.splitlines()
    assert sweep_id.startswith("s20261125-") and len(sweep_id) == len("s20261125-1a2b")
    task = tasks_md.parse((wild_dir / "tasks.md").read_text()).tasks[-1].id
    assert summary == (
        "4 runs queued; max_runs cut the grid: its last 2 points are left out "
        f'("sample": true draws the kept points at random); analysis {task} waits for barrier '
        f"sweep-{sweep_id}-done"
    )
    assert approval == "They run once you approve their command: python train.py"
    assert how == f"  wild --approve {sweep_id}"
    listed = invoke("--dir", str(wild_dir), "--runs", "--sweep", sweep_id)
    # The default policy requires approval: each run says how to give it, and its limit.
    held = f"queued (awaiting approval: wild --approve {sweep_id})"
    status = "STATUS".ljust(len(held))
    assert listed.output == (
        f"ID                  {status}  ATTEMPT  EXIT  LIMIT     STEP  ELAPSED  ETA  PARAMS"
        "          METRICS\n"
        f"{sweep_id}-001  {held}  1        -     24:00:00  -     -        -    lr=0.1 seed=1   -\n"
        f"{sweep_id}-002  {held}  1        -     24:00:00  -     -        -    lr=0.1 seed=2   -\n"
        f"{sweep_id}-003  {held}  1        -     24:00:00  -     -        -    lr=0.01 seed=1  -\n"
        f"{sweep_id}-004  {held}  1        -     24:00:00  -     -        -    lr=0.01 seed=2  -\n"
    )
    waiting = invoke("--dir", str(wild_dir), "--approve")
    assert f"  {sweep_id}: python train.py" in waiting.output.splitlines()
    approved = invoke("--dir", str(wild_dir), "--approve", sweep_id)
    assert approved.output.startswith(f"Approved {sweep_id}: python train.py (sha256 ")
    assert '"command":"recheck"' in (wild_dir / "control").read_text()  # a loop starts them now
    listed = invoke("--dir", str(wild_dir), "--runs", "--sweep", sweep_id)
    assert listed.output.splitlines()[1] == (
        f"{sweep_id}-001  queued  1        -     24:00:00  -     -        -    lr=0.1 seed=1   -"
    )


def test_a_sampled_grid_says_so_and_its_runs_hold_the_drawn_points(
    wild_dir: Path, tmp_path: Path
) -> None:
    sampled = {**SWEEP, "sample": True, "seed": 3}
    result = invoke("--dir", str(wild_dir), "--sweep", write_sweep(tmp_path, sampled))
    assert result.exit_code == 0, result.output
    assert "4 runs queued; max_runs sampled them at random, 2 grid points left out;" in (
        result.output
    )
    runs = orjson.loads(invoke("--dir", str(wild_dir), "--runs", "--json").output)
    drawn = [r["params"] for r in runs]
    assert len({(p["lr"], p["seed"]) for p in drawn}) == 4  # distinct grid points
    assert drawn != [
        dict(lr=0.1, seed=1),
        dict(lr=0.1, seed=2),
        dict(lr=0.01, seed=1),
        dict(lr=0.01, seed=2),
    ]  # not the first four: seed 3 draws others


def test_a_random_search_records_each_runs_drawn_values_in_its_params(
    wild_dir: Path, tmp_path: Path
) -> None:
    search = {
        "name": "lr",
        "base_command": "python train.py",
        "method": "random",
        "count": 3,
        "seed": 11,
        "parameters": {"lr": {"distribution": "log_uniform", "min": 1e-4, "max": 1e-1}},
    }
    result = invoke("--dir", str(wild_dir), "--sweep", write_sweep(tmp_path, search))
    assert result.exit_code == 0, result.output
    runs = orjson.loads(invoke("--dir", str(wild_dir), "--runs", "--json").output)
    drawn = [r["params"]["lr"] for r in runs]
    assert len(set(drawn)) == 3 and all(1e-4 <= lr <= 1e-1 for lr in drawn)
    assert [r["resolved_instruction"] for r in runs] == [
        f"python train.py --lr={orjson.dumps(lr).decode()}" for lr in drawn
    ]


def test_runs_json_is_the_list_of_records(wild_dir: Path, tmp_path: Path) -> None:
    invoke("--dir", str(wild_dir), "--sweep", write_sweep(tmp_path, SWEEP), "--run-backend", "x")
    runs = orjson.loads(invoke("--dir", str(wild_dir), "--runs", "--json").output)
    assert [r["resolved_instruction"] for r in runs] == [
        "python train.py --lr=0.1 --seed=1",
        "python train.py --lr=0.1 --seed=2",
        "python train.py --lr=0.01 --seed=1",
        "python train.py --lr=0.01 --seed=2",
    ]
    assert {(r["status"], r["backend"]) for r in runs} == {("queued", "x")}


def test_an_invalid_sweep_exits_2_with_every_error_and_records_nothing(
    wild_dir: Path, tmp_path: Path
) -> None:
    before = {p.name: p.read_bytes() for p in wild_dir.iterdir() if p.is_file()}
    skill = {"kind": "python_script", "target": "t.py", "code": "x"}
    bad = {"name": "x", "parameters": {"lr": []}, "skill": skill}
    result = invoke("--dir", str(wild_dir), "--sweep", write_sweep(tmp_path, bad))
    assert result.exit_code == 2
    assert result.output == (
        f"Error: the sweep in {tmp_path}/sweep.json launched nothing; fix these and run again:\n"
        '  - "parameters.lr" must be a non-empty list of values, e.g. [0.1, 0.01]\n'
        '  - "skill.code": inline code is refused; put it in a file in the project and '
        'reference it with "skill": {"kind": …, "target": …}\n'
    )
    missing_target = {k: v for k, v in SWEEP.items() if k != "base_command"}
    missing_target["skill"] = {"kind": "python_script", "target": "train.py"}
    result = invoke("--dir", str(wild_dir), "--sweep", write_sweep(tmp_path, missing_target))
    assert result.exit_code == 2
    assert "no file" in result.output and "train.py" in result.output
    after = {p.name: p.read_bytes() for p in wild_dir.iterdir() if p.is_file()}
    assert after == before
    assert not WildPaths(wild_dir).runs_log.exists()


def test_a_missing_sweep_file_is_no_such_file(wild_dir: Path, tmp_path: Path) -> None:
    """Issue 24 item 11: it said "not valid JSON: … zero-length … document"."""
    missing = tmp_path / "missing.json"
    result = invoke("--sweep", str(missing), "--dir", str(wild_dir))
    assert result.exit_code == 2
    assert result.output == (
        f"Error: --sweep {missing}: no such file; give a sweep file (JSON, YAML or W&B) or -\n"
    )
    assert not (wild_dir / "runs.jsonl").exists()


def test_runs_of_an_unknown_sweep_and_of_none(wild_dir: Path) -> None:
    assert invoke("--dir", str(wild_dir), "--runs").output == (
        "No runs yet; start a sweep with `wild --sweep FILE`.\n"
    )
    assert invoke("--dir", str(wild_dir), "--runs", "--json").output == "[]\n"
    result = invoke("--dir", str(wild_dir), "--runs", "--sweep", "s1")
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {wild_dir}/runs.jsonl: no sweep s1 (known: none yet); "
        "list them all with `wild --runs`\n"
    )


def test_run_backend_belongs_to_sweep(wild_dir: Path) -> None:
    result = invoke("--dir", str(wild_dir), "--status", "--run-backend", "x")
    assert result.exit_code == 2
    assert "--run-backend belongs to --sweep or the loop" in result.output


def test_sweep_from_stdin_in_a_real_subprocess(wild_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "WILD_DIR": str(wild_dir), "WILD_RUN_BACKEND": "slurm"}
    done = subprocess.run(
        [sys.executable, "-m", "wild", "--sweep", "-", "--json"],
        input=orjson.dumps(SWEEP),
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary = orjson.loads(done.stdout)
    assert (summary["runs"], summary["cut"]) == (4, 2)
    log = read_runs(WildPaths(wild_dir).runs_log)
    assert {r.backend for r in log.index.runs.values()} == {"slurm"}
    assert log.index.sweeps[summary["sweep"]].task == summary["task"]


def append_runs(root: Path, statuses: tuple[RunStatus, ...]) -> None:
    """Runs s1-001, s1-002, ... of sweep s1 with these statuses."""
    key = signing.load_key()
    runs = [
        signing.sign(key, RunRecord(f"s1-00{n}", "s1", {}, "true", s))
        for n, s in enumerate(statuses, start=1)
    ]
    append_records(root / "runs.jsonl", runs)


def test_stop_run_all_stops_every_open_run_with_no_loop_running(wild_dir: Path) -> None:
    append_runs(wild_dir, ("queued", "queued", "finished"))
    result = invoke("--stop-run", "all", "--dir", str(wild_dir))
    assert result.exit_code == 0, result.output
    assert "Stopping 2 runs: s1-001, s1-002" in result.output
    statuses = {r.id: r.status for r in read_runs(wild_dir / "runs.jsonl").index.runs.values()}
    assert statuses == {"s1-001": "stopped", "s1-002": "stopped", "s1-003": "finished"}


def test_stop_run_all_asks_a_running_loop_once_per_open_run(
    wild_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    append_runs(wild_dir, ("running", "queued", "failed"))
    monkeypatch.setattr(watch, "running_loop_pid", lambda paths: 4242)
    result = invoke("--stop-run", "all", "--dir", str(wild_dir))
    assert result.output == "Stopping 2 runs: s1-001, s1-002\n"
    requests = [orjson.loads(line) for line in (wild_dir / "control").read_bytes().splitlines()]
    assert [(r["command"], r["target"]) for r in requests] == [
        ("stop-run", "s1-001"),
        ("stop-run", "s1-002"),
    ]
    again = invoke("--rerun", "s1-003", "--dir", str(wild_dir))
    assert again.output == f"Asked the loop in {wild_dir} to rerun s1-003\n"


def test_stop_run_with_a_sweep_id_stops_every_open_run_of_that_sweep_only(
    wild_dir: Path, tmp_path: Path
) -> None:
    spec = tmp_path / "sweep.json"
    spec.write_bytes(orjson.dumps(SWEEP))
    first = orjson.loads(invoke("--sweep", str(spec), "--json", "--dir", str(wild_dir)).output)
    other = orjson.loads(invoke("--sweep", str(spec), "--json", "--dir", str(wild_dir)).output)
    result = invoke("--stop-run", first["sweep"], "--dir", str(wild_dir))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Stopping 4 runs: ")
    index = read_runs(wild_dir / "runs.jsonl").index
    assert {r.status for r in index.of_sweep(first["sweep"])} == {"stopped"}
    assert {r.status for r in index.of_sweep(other["sweep"])} == {"queued"}


def test_a_sweep_run_at_once_is_not_held_as_recorded_while_it_runs(
    wild_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `--sweep FILE --run` held the recorded sweep's record (its spec and every run id, ~0.1
    # KB a run) for the whole run, beside the runner's own read of runs.jsonl.
    import gc

    from wild.commands import sweep_run
    from wild.parsers.runs import SweepRecord

    held: list[list[str]] = []

    def run_sweeps(*_args: object, sweeps: tuple[str, ...], **_kwargs: object) -> None:
        gc.collect()
        # `type(o) is`, not isinstance: that reads each object's `__class__`, which some of
        # torch's objects (loaded by other tests of this worker) answer with a warning.
        alive = [o for o in gc.get_objects() if type(o) is SweepRecord]
        held.append([o.id for o in alive if o.id in sweeps])

    monkeypatch.setattr(sweep_run, "run_sweeps", run_sweeps)
    result = invoke("--dir", str(wild_dir), "--sweep", write_sweep(tmp_path, SWEEP), "--run")
    assert result.exit_code == 0, result.output
    assert held == [[]]
