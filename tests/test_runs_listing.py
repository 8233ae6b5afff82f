"""`wild --runs`' kept listing (`.wild/runs.listing.json`), patched from the lines appended
to runs.jsonl: the same table as a full read after appends, compaction and a damaged cache,
and no look at an ended run's files once its row settled (issue 23: `--runs` at 10,000 runs
≤ 1.2× at 10)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wild.commands import runs_cmds, runs_listing, runs_patch
from wild.commands.init import init_wild
from wild.commands.runs_table import format_live, live_json, live_rows
from wild.commands.watch import watch_runs
from wild.metrics.follow import RunMetrics
from wild.output import to_json
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.early_stop import EARLY_STOP
from wild.parsers.runs import RunRecord, SweepRecord
from wild.paths import WildPaths
from wild.store import runs_compaction
from wild.store.files import stat_signature
from wild.store.runs_log import append_records

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
SWEEP = "s20261127-ab12"


def _project(tmp_path: Path, runs: int = 5) -> tuple[WildPaths, list[RunRecord]]:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    spec = {
        "name": "lr",
        "base_command": "python train.py",
        "parameters": {"lr": [0.1]},
        "objective": {"metric": "loss", "mode": "min"},
    }
    queued = [
        RunRecord(
            f"{SWEEP}-{n:03d}", SWEEP, {"lr": 0.1, "seed": n}, "python train.py", "queued",
            queued_at="2026-11-27T10:00:00Z",
        )
        for n in range(runs)
    ]  # fmt: skip
    grid = tuple(r.id for r in reversed(queued))  # a grid order other than the file's
    append_records(paths.runs_log, [SweepRecord(SWEEP, "lr", spec, "active", grid)])
    append_records(paths.runs_log, queued)
    ended = []
    for n, run in enumerate(queued):
        folder = paths.run_dir(run.id)
        folder.mkdir(parents=True)
        (folder / "metrics.jsonl").write_text(
            "".join(f'{{"step": {s}, "loss": {1.0 / (s + n + 1)}}}\n' for s in range(5))
        )
        done = replace(
            run, status="finished", exit_code=0, job_id="42",
            started_at="2026-11-27T10:00:01Z", ended_at=f"2026-11-27T10:{10 + n:02d}:00Z",
        )  # fmt: skip
        append_records(
            paths.runs_log, [replace(done, status="running", exit_code=None, ended_at=None)]
        )
        append_records(paths.runs_log, [done])
        ended.append(done)
    _settle(paths)
    return paths, ended


def _settle(paths: WildPaths) -> None:
    """Every file dated an hour back: settled, as files are a while after their run ended."""
    past = time.time() - 3600
    for folder, _dirs, names in os.walk(paths.root):
        for name in names:
            os.utime(os.path.join(folder, name), (past, past))
        os.utime(folder, (past, past))


def _full_read(paths: WildPaths, sweep: str | None = None) -> str:
    """The table as every line of runs.jsonl and every run's files give it."""
    index, runs, problems = runs_cmds.list_runs(paths, sweep)
    rows = live_rows(paths, index, runs, NOW)
    notes = runs_cmds.run_notes(paths, [run for run, *_ in rows], NOW)
    return format_live(rows, problems, notes)


def _listing(paths: WildPaths, sweep: str | None = None) -> str:
    return runs_cmds.runs_listing(paths, sweep, NOW, as_json=False)


def _full_json(paths: WildPaths, sweep: str | None = None) -> str:
    """`wild --runs --json` as every line of runs.jsonl and every run's files give it."""
    index, runs, _problems = runs_cmds.list_runs(paths, sweep)
    rows = live_rows(paths, index, runs, NOW)
    ended = [run for run, *_ in rows]
    notes = runs_cmds.gate_notes(paths, ended, NOW)
    return to_json(live_json(rows, notes, runs_cmds.deterministic_failures(paths, ended)))


def _listing_json(paths: WildPaths, sweep: str | None = None) -> str:
    return runs_cmds.runs_listing(paths, sweep, NOW, as_json=True)


def test_the_patched_listing_agrees_with_a_full_read_after_appends_and_compaction(
    tmp_path: Path,
) -> None:
    paths, ended = _project(tmp_path)
    assert _listing(paths) == _full_read(paths)
    assert _listing(paths) == _full_read(paths)  # kept: the same again
    # A rerun of one run failed; another run is running again with new metrics.
    append_records(paths.runs_log, [replace(ended[1], attempt=2, exit_code=3, status="failed")])
    with (paths.run_dir(ended[3].id) / "metrics.jsonl").open("a") as out:
        out.write('{"step": 5, "loss": 0.01}\n')
    append_records(
        paths.runs_log,
        [replace(ended[3], status="running", attempt=2, exit_code=None, ended_at=None)],
    )
    patched = _listing(paths)
    assert patched == _full_read(paths)
    assert "failed" in patched and "loss=0.01" in patched
    append_records(paths.runs_log, [replace(ended[3], attempt=2, ended_at="2026-11-27T11:00Z")])
    _settle(paths)
    assert _listing(paths) == _full_read(paths)
    size = paths.runs_log.stat().st_size
    runs_compaction.compact(paths.runs_log, paths.lock)
    assert paths.runs_log.stat().st_size < size  # the file was rewritten: no cursor fits it
    assert _listing(paths) == _full_read(paths)
    assert _listing(paths, SWEEP) == _full_read(paths, SWEEP)
    with paths.runs_log.open("ab") as out:
        out.write(b'{"type": "run", "id": 7}\n{"torn')  # a bad line, then a torn last one
    patched = _listing(paths)
    assert patched == _full_read(paths)
    assert patched.count("problem: ") == 2


@pytest.mark.parametrize(
    "damage",
    [
        b"{not json",
        b'{"format": 1}',
        b"",
    ],
)
def test_a_damaged_kept_listing_is_read_afresh(tmp_path: Path, damage: bytes) -> None:
    paths, ended = _project(tmp_path)
    _listing(paths)
    paths.runs_listing.write_bytes(damage)
    paths.runs_view.write_bytes(damage)
    assert _listing(paths) == _full_read(paths)
    append_records(paths.runs_log, [replace(ended[0], exit_code=2, status="failed")])
    paths.runs_listing.write_bytes(damage)
    assert _listing(paths) == _full_read(paths)


def test_a_kept_table_cut_short_is_drawn_again(tmp_path: Path) -> None:
    paths, _ended = _project(tmp_path)
    _listing(paths)
    whole = paths.runs_view.read_bytes()
    paths.runs_view.write_bytes(whole[:-40])  # as a power cut may leave it
    append_records(paths.runs_log, [])  # nothing appended: the view's cursor still fits
    assert _listing(paths) == _full_read(paths)
    assert paths.runs_view.read_bytes() == whole


def test_kept_rows_that_are_not_rows_are_read_afresh(tmp_path: Path) -> None:
    import orjson

    paths, ended = _project(tmp_path)
    _listing(paths)
    kept: dict[str, Any] = orjson.loads(paths.runs_listing.read_bytes())
    kept["rows"][ended[0].id] = [None, 1, 2]
    paths.runs_listing.write_bytes(orjson.dumps(kept))
    append_records(paths.runs_log, [replace(ended[4], exit_code=1, status="failed")])
    assert _listing(paths) == _full_read(paths)


def test_an_append_redraws_only_its_run_and_looks_at_no_other_runs_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, ended = _project(tmp_path)
    _listing(paths)
    read: list[str] = []
    stats: list[str] = []
    real_refresh = RunMetrics.refresh

    def counting_refresh(self: RunMetrics) -> Any:
        read.append(str(self.roots))
        return real_refresh(self)

    def counting_stat(path: Any) -> Any:
        stats.append(str(path))
        return stat_signature(path)

    monkeypatch.setattr(RunMetrics, "refresh", counting_refresh)
    monkeypatch.setattr("wild.metrics.kept_views.stat_signature", counting_stat)
    append_records(paths.runs_log, [replace(ended[2], exit_code=1, status="failed")])
    assert "failed" in _listing(paths)
    assert len(read) == 1 and ended[2].id in read[0]
    assert not [s for s in stats if "/runs/" in s]  # no other run's folder or file looked at
    read.clear()
    _listing(paths)  # settled: nothing read
    assert read == [] and not [s for s in stats if "/runs/" in s]


def test_watching_the_listing_is_not_woken_by_its_own_kept_files(tmp_path: Path) -> None:
    paths, ended = _project(tmp_path)
    _listing(paths)  # a table of ended runs: kept in runs.view.json
    rerun = replace(ended[1], status="running", attempt=2, exit_code=None, ended_at=None)
    append_records(paths.runs_log, [rerun])  # a run not ended: the next draw drops the view
    shown: list[str] = []
    first = threading.Event()

    def show() -> None:
        shown.append(_listing(paths))  # writes runs.listing.json, removes runs.view.json
        first.set()

    watcher = threading.Thread(target=watch_runs, args=(paths, [], show), kwargs={"max_updates": 2})
    watcher.start()
    assert first.wait(10)
    time.sleep(0.3)  # quiet: its own writes wake no redraw
    assert len(shown) == 1
    append_records(paths.runs_log, [replace(ended[0], exit_code=5, status="failed")])
    watcher.join(10)
    assert not watcher.is_alive() and len(shown) == 2


# What may happen to runs.jsonl and the runs' files between two listings.
_STEPS = st.one_of(
    st.tuples(
        st.just("end"),
        st.integers(0, 4),
        st.sampled_from(["finished", "failed", "stopped"]),
        st.sampled_from([None, 0, 1, 137, 12345]),
        st.integers(1, 12),
        st.sampled_from([0, 7, 123456789]),  # a seed that widens or narrows PARAMS
    ),
    st.tuples(st.just("early"), st.integers(0, 4)),
    st.tuples(st.just("running"), st.integers(0, 4)),
    st.tuples(st.just("metrics"), st.integers(0, 4)),
    st.tuples(st.just("new"), st.integers(0, 99)),
    st.sampled_from([("compact",), ("bad",), ("torn",), ("view",), ("settle",)]),
)


def _step(paths: WildPaths, ended: list[RunRecord], step: tuple[Any, ...]) -> None:
    kind = step[0]
    if kind == "end":
        _, n, status, exit_code, attempt, seed = step
        run = ended[n]
        params = {**run.params, "seed": seed}
        ended[n] = replace(run, status=status, exit_code=exit_code, attempt=attempt, params=params)
        append_records(paths.runs_log, [ended[n]])
    elif kind == "early":
        reason = f"{EARLY_STOP}: worse than the median"
        append_records(paths.runs_log, [replace(ended[step[1]], status="stopped", reason=reason)])
    elif kind == "running":
        run = replace(ended[step[1]], status="running", exit_code=None, ended_at=None)
        append_records(paths.runs_log, [run])
    elif kind == "metrics":  # a run again, writing metrics (an ended run writes none)
        run = replace(ended[step[1]], status="running", exit_code=None, ended_at=None)
        append_records(paths.runs_log, [run])
        with (paths.run_dir(run.id) / "metrics.jsonl").open("a") as out:
            out.write(f'{{"step": 9, "loss": {step[1] / 1000}}}\n')
        return  # its files not settled yet
    elif kind == "new":
        run = replace(ended[0], id=f"{SWEEP}-n{step[1]}", status="failed", exit_code=2)
        append_records(paths.runs_log, [run])
    elif kind == "compact":
        runs_compaction.compact(paths.runs_log, paths.lock)
    elif kind == "bad":
        with paths.runs_log.open("ab") as out:
            out.write(b'{"type": "run", "id": 7}\n')
    elif kind == "torn":
        with paths.runs_log.open("ab") as out:
            out.write(b'{"torn')
    elif kind == "view":  # the kept views damaged: cut short, or another's
        for view in (paths.runs_view, paths.runs_json_view):
            whole = view.read_bytes() if view.exists() else b""
            view.write_bytes(whole[:-3] if len(whole) % 2 else whole.replace(b"1", b"2"))
    _settle(paths)  # files settled, as a while after a run ended


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_STEPS, min_size=1, max_size=8), sweep=st.booleans())
def test_a_table_patched_in_place_agrees_with_a_full_read_at_every_step(
    steps: list[tuple[Any, ...]], sweep: bool
) -> None:
    """Any sequence of ended runs redrawn (wider, narrower), runs stopped early, run again,
    added, compacted, bad and torn lines, damaged views: each listing, table and JSON, is
    the full read's."""
    with tempfile.TemporaryDirectory() as tmp:
        paths, ended = _project(Path(tmp))
        name = SWEEP if sweep else None
        assert _listing(paths, name) == _full_read(paths, name)
        assert _listing_json(paths, name) == _full_json(paths, name)
        for step in steps:
            _step(paths, ended, step)
            assert _listing(paths, name) == _full_read(paths, name), step
            assert _listing_json(paths, name) == _full_json(paths, name), step


def test_an_ended_runs_line_appended_patches_the_kept_table_without_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept rows (runs.listing.json, megabytes at 10,000 runs) are not loaded: the run's
    line is replaced in the kept table's text."""
    from wild.commands import runs_listing

    paths, ended = _project(tmp_path)
    _listing(paths)

    def no_rows(_paths: WildPaths) -> Any:
        raise AssertionError("the kept rows were loaded")

    monkeypatch.setattr(runs_listing, "_load", no_rows)
    append_records(paths.runs_log, [replace(ended[2], exit_code=1, status="failed")])
    _settle(paths)
    patched = _listing(paths)
    monkeypatch.undo()
    assert patched == _full_read(paths) and "failed" in patched


def test_an_ended_runs_line_appended_patches_the_kept_json_without_reading_runs_jsonl_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, ended = _project(tmp_path)
    _listing_json(paths)

    def no_full_read(*_args: Any) -> Any:
        raise AssertionError("runs.jsonl was read whole")

    monkeypatch.setattr(runs_cmds, "read_runs", no_full_read)
    append_records(paths.runs_log, [replace(ended[2], exit_code=1, status="failed")])
    _settle(paths)
    patched = _listing_json(paths)
    monkeypatch.undo()
    assert patched == _full_json(paths) and '"status": "failed"' in patched


def test_the_kept_json_patched_after_an_append_comes_as_the_bytes_it_keeps(
    tmp_path: Path,
) -> None:
    """The print path gets the patched view's bytes themselves (9 MB at 10,000 runs): no
    text decoded of them to be encoded again on the way out (issue 23)."""
    paths, ended = _project(tmp_path)
    _listing_json(paths)
    append_records(paths.runs_log, [replace(ended[1], exit_code=1, status="failed")])
    _settle(paths)
    patched = runs_listing.listing_json(paths, None, NOW, lambda _runs: set())
    assert isinstance(patched, bytes)
    kept = paths.runs_json_view.read_bytes()
    assert kept.endswith(b"\n" + patched)  # the header line, then these very bytes
    assert patched == _full_json(paths).encode() and b'"status": "failed"' in patched
    settled = runs_listing.listing_json(paths, None, NOW, lambda _runs: set())
    assert settled == patched  # as it stands: its bytes again


def _wild_stdout(paths: WildPaths, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "wild", "--dir", str(paths.root), *args],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_wild_runs_json_after_an_append_prints_the_bytes_a_full_read_prints(
    tmp_path: Path,
) -> None:
    """A real `wild --runs --json` printing the patched kept bytes prints byte for byte what
    it prints drawn from scratch, line end included."""
    paths, ended = _project(tmp_path)
    assert _wild_stdout(paths, "--runs", "--json").returncode == 0  # keeps the view
    append_records(paths.runs_log, [replace(ended[3], exit_code=1, status="failed")])
    _settle(paths)
    patched = _wild_stdout(paths, "--runs", "--json")
    assert patched.stdout.endswith(b"]\n") and b'"status": "failed"' in patched.stdout
    for kept in paths.root.glob("*view*"):  # every kept listing gone: drawn from scratch
        kept.unlink()
    afresh = _wild_stdout(paths, "--runs", "--json")
    assert (patched.returncode, patched.stdout, patched.stderr) == (0, afresh.stdout, b"")


def test_wild_runs_json_into_a_pipe_closed_early_stops_quietly(tmp_path: Path) -> None:
    """`wild --runs --json | head`: the reader gone, wild stops with no traceback, as for any
    other output."""
    paths, ended = _project(tmp_path, runs=300)  # more than a pipe's buffer holds
    _wild_stdout(paths, "--runs", "--json")
    append_records(paths.runs_log, [replace(ended[3], exit_code=1, status="failed")])
    _settle(paths)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "wild", "--dir", str(paths.root), "--runs", "--json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as wild:
        assert wild.stdout is not None and wild.stderr is not None
        assert wild.stdout.read(10) == b"[\n  {\n    "
        wild.stdout.close()
        errors = wild.stderr.read()
        wild.wait(timeout=60)
    assert errors == b""  # no traceback, no "Exception ignored" at exit


def _peak_allocated(action: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_patching_and_keeping_the_kept_json_copy_its_bytes_once(tmp_path: Path) -> None:
    """After an append the kept `--runs --json` (9 MB at 10,000 runs) is patched into one new
    copy, then kept and printed as it is: no slices of it joined or header glued on, each
    another copy of the whole (issue 23). Measured as the peak of Python's allocations."""
    paths, ended = _project(tmp_path, runs=400)
    data = _listing_json(paths).encode()
    run_id = ended[200].id
    element = to_json([{"id": run_id, "status": "failed"}]).encode()
    patched: list[bytes | None] = []
    peak = _peak_allocated(
        lambda: patched.append(runs_patch.replace_element(data, run_id, element))
    )
    assert patched[0] is not None and b'"status": "failed"' in patched[0]
    assert peak < 1.5 * len(data), (peak, len(data))  # the patched copy alone
    view = tmp_path / "view.json"
    head = orjson.loads(paths.runs_json_view.read_bytes().split(b"\n", 1)[0])
    cursor = AlertCursor.from_json(head["cursor"])
    assert cursor is not None
    peak = _peak_allocated(lambda: runs_listing.write_view(view, "*", cursor, data, None))
    assert peak < 0.5 * len(data), (peak, len(data))  # written behind its header, not joined
    assert view.read_bytes().endswith(b"\n" + data)
