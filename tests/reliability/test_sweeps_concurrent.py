"""Sweeps recorded at the same time by separate `wild --sweep` processes: none lost, none
merged, each with its own id, task and barrier, and every file still parses cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.cli_support import init_wild_dir
from wild.parsers import barriers as barriers_md
from wild.parsers import tasks as tasks_md
from wild.paths import WildPaths
from wild.store.runs_log import read_runs

WRITERS = 4


def test_concurrent_sweeps_are_all_recorded_whole(tmp_path: Path) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    env = {**os.environ, "WILD_DIR": str(paths.root)}
    sweep = {"name": "c", "base_command": "true", "parameters": {"i": list(range(50))}}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "wild", "--sweep", "-", "--json"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
        )
        for _ in range(WRITERS)
    ]
    outputs = [p.communicate(orjson.dumps(sweep), timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * WRITERS, [err for _, err in outputs]
    summaries = [orjson.loads(out) for out, _ in outputs]
    ids = {s["sweep"] for s in summaries}
    assert len(ids) == WRITERS
    log = read_runs(paths.runs_log)
    assert log.problems == []
    assert set(log.index.sweeps) == ids
    assert len(log.index.runs) == 50 * WRITERS
    tasks = tasks_md.parse(paths.tasks.read_text())
    barriers = barriers_md.parse(paths.barriers.read_text())
    assert (tasks.problems, barriers.problems) == ((), ())
    assert {s["task"] for s in summaries} <= {t.id for t in tasks.tasks}
    assert len({s["task"] for s in summaries}) == WRITERS
    assert {f"sweep-{i}-done" for i in ids} <= {b.id for b in barriers.barriers}
