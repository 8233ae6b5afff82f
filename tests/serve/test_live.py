"""Live updates: what is followed, the hub streams wait on, and a page without timers."""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path

import pytest

from tests.serve.sample import make_project
from wild.serve.live import MOST_RUN_FOLDERS, RUN_FILES, Hub, LiveWatch, followed_folders
from wild.store.runs_log import read_runs


def test_unfinished_runs_and_the_current_log_are_followed(tmp_path: Path) -> None:
    paths = make_project(tmp_path, runs=6, iterations=0)
    index = read_runs(paths.runs_log).index
    wanted = followed_folders(paths, index, iteration=3)
    assert wanted[paths.logs] >= {"iteration-3.log", "iteration-3.1.log"}
    running = {p.name for p in wanted if p != paths.logs}
    assert running == {"s1-000", "s1-003"}  # the others are finished or failed
    assert all(wanted[paths.run_dir(r)] == RUN_FILES for r in running)
    assert followed_folders(paths, None, None) == {}


def test_a_live_runs_tracker_folders_are_followed_too(tmp_path: Path) -> None:
    # Before, only the run folder's own files woke the page: Lightning's nested metrics.csv
    # changed without the page hearing of it.
    paths = make_project(tmp_path, runs=1, iterations=0)
    index = read_runs(paths.runs_log).index
    nested = paths.run_dir("s1-000") / "logs" / "version_0"
    nested.mkdir(parents=True)
    (nested / "metrics.csv").write_text("step,loss\n0,1.0\n")
    wanted = followed_folders(paths, index, None)
    assert wanted[nested] == {"metrics.csv"}
    assert wanted[paths.run_dir("s1-000")] >= RUN_FILES


def test_at_most_so_many_run_folders_are_followed(tmp_path: Path) -> None:
    paths = make_project(tmp_path, runs=0, iterations=0)
    index = read_runs(paths.runs_log).index
    from wild.parsers.runs import RunRecord

    for n in range(MOST_RUN_FOLDERS + 10):
        index.runs[f"r{n}"] = RunRecord(f"r{n}", "s", {}, "x", "running")
    assert len(followed_folders(paths, index, None)) == MOST_RUN_FOLDERS


def test_the_hub_wakes_every_waiting_stream_and_ends_them_on_close() -> None:
    hub = Hub()
    seen: list[int | None] = []
    woken = [threading.Event(), threading.Event()]

    def stream(woke: threading.Event) -> None:
        seen.append(hub.wait_after(0))  # blocks until the bump (or returns it at once)
        woke.set()
        seen.append(hub.wait_after(1))  # blocks until the close

    threads = [threading.Thread(target=stream, args=(woke,)) for woke in woken]
    for thread in threads:
        thread.start()
    hub.bump()
    for woke in woken:
        assert woke.wait(timeout=10)
    hub.close()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(seen, key=str) == [1, 1, None, None]
    assert hub.wait_after(0) is None  # a stream opened after the close ends at once


def test_a_change_on_disk_bumps_the_hub(tmp_path: Path) -> None:
    paths = make_project(tmp_path, runs=0, iterations=0)
    hub = Hub()
    watch = LiveWatch(paths, hub)
    watch.start()
    try:
        with paths.human.open("a") as human:
            human.write("\n## 2026-11-25T12:00:01Z\nmore\n")
        assert hub.wait_after(0) == 1
    finally:
        watch.stop()


@pytest.mark.parametrize("name", ["app.js", "dom.js", "charts.js"])
def test_the_page_never_polls_and_never_writes_html(name: str) -> None:
    script = resources.files("wild.serve").joinpath("static", name).read_text()
    for banned in ("setInterval", "setTimeout", "innerHTML", "outerHTML", "insertAdjacentHTML"):
        assert banned not in script, f"{name} uses {banned}"
