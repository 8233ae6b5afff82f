"""A status after an edit of tasks.md alone joins tasks.md's part, read again, to the rest it
kept (`wild.commands.status_tasks`): whatever the edits, the status shown is the one a read
of every file from scratch gives (issue 22 item 8)."""

from __future__ import annotations

import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_status_cache import rewrite_in_place
from wild.clock import RACY_NS
from wild.commands.init import init_wild
from wild.commands.status import status_data
from wild.commands.status_cache import status_now
from wild.parsers.runs import RunRecord, SweepRecord
from wild.paths import WildPaths
from wild.store.runs_log import append_records
from wild.workspace import load_workspace

NOW = datetime(2026, 2, 8, 12, 0, tzinfo=UTC)
SCALE = int(os.environ.get("WILD_FUZZ_SCALE", "1"))  # `WILD_FUZZ_SCALE=50`: a long fuzz
BARRIERS = "# Barriers\n\n## [WAITING] barrier-1\n- Type: manual\n\n## [FAILED] barrier-2\n"
# Lines a person (or an agent) adds to tasks.md: plain, linked, waiting, broken, not UTF-8.
TASK_LINES = (
    b"- [ ] [P1] task-101: Train\n",
    b"- [/] task-102: Plot\n",
    b"- [x] task-103: Done\n",
    b"- [-] task-104: Dropped\n",
    b"- [ ] [P3] edit: A note\n",
    b"- [ ] task-105: After\n  - dependsOn: task-101\n",
    b"- [ ] task-106: Gated\n  - blockedBy: barrier-1, barrier-2, barrier-9\n",
    b"- [ ] task-107: Loop\n  - dependsOn: task-107\n",
    b"- [ ] [P1] task-101: Twice\n",
    b"- [?] task-108: Bad box\n",
    b"- [ ] [Px] task-109: Bad priority\n",
    b"- [ ] task-110: Caf\xe9 in Latin-1\n",
    b"  - dependsOn: task-101\n",
    b"- [ ] analysis-1: Look at the sweep\n",
)
ALERT = (
    b'{"id":"alert-%d","timestamp":"2026-02-08T11:00:00Z","severity":"warning",'
    b'"source":"job","type":"t","description":"d","status":"pending"}\n'
)

edits = st.one_of(
    st.tuples(st.just("append"), st.lists(st.sampled_from(TASK_LINES), min_size=1, max_size=3)),
    st.tuples(st.just("rewrite"), st.lists(st.sampled_from(TASK_LINES), max_size=4)),
    st.tuples(st.just("in place"), st.sampled_from(["tasks", "barriers", "human", "policy"])),
    st.tuples(st.just("alert"), st.integers(1, 3)),
    st.tuples(st.just("sweep"), st.integers(1, 2)),
    st.tuples(st.just("backup"), st.none()),
    st.tuples(st.just("chmod"), st.none()),
)


def later() -> int:
    """A clock an hour on: every file is settled, so any kept part may be used."""
    return int((datetime.now(UTC) + timedelta(hours=1)).timestamp()) * 10**9


def apply(paths: WildPaths, kind: str, arg: Any) -> None:
    if kind == "append":
        with paths.tasks.open("ab") as handle:
            handle.write(b"".join(arg))
    elif kind == "rewrite":
        paths.tasks.write_bytes(b"# Tasks\n\n" + b"".join(arg))
    elif kind == "in place":
        target = getattr(paths, arg)
        if target.stat().st_size >= 2:
            rewrite_in_place(target)
    elif kind == "alert":
        with paths.alerts.open("ab") as handle:
            handle.write(ALERT % arg)
    elif kind == "sweep":  # a sweep whose runs ended: its analysis task decides the stage
        run = RunRecord(f"s{arg}-001", f"s{arg}", {}, "true", "finished")
        sweep = SweepRecord(f"s{arg}", f"s{arg}", {}, "active", (run.id,), task="analysis-1")
        append_records(paths.runs_log, [sweep, run])
    elif kind == "backup":  # a good copy kept: a tasks.md with no task is then damaged
        paths.backup.mkdir(exist_ok=True)
        (paths.backup / f"tasks.md.{time.time_ns()}").write_bytes(TASK_LINES[0])
    else:
        paths.tasks.chmod(paths.tasks.stat().st_mode ^ 0o222)  # read-only, then writable


def from_scratch(paths: WildPaths) -> Any:
    return status_data(load_workspace(paths, NOW), NOW, lambda _process: "gone")


@settings(max_examples=40 * SCALE, deadline=None)
@given(
    barriers=st.booleans(),
    steps=st.lists(st.tuples(edits, st.booleans()), min_size=1, max_size=8),
)
def test_a_status_after_any_edits_is_the_status_from_scratch(
    barriers: bool, steps: list[tuple[tuple[str, Any], bool]]
) -> None:
    """Each step an edit, then a status: with every file settled (the kept parts usable) or
    right after the edit (the files changed within RACY_NS are not trusted). The project
    starts with barriers, or as `wild --init` makes it (nothing but tasks for the queue)."""
    with tempfile.TemporaryDirectory() as folder:
        paths = WildPaths(Path(folder) / ".wild")
        init_wild(paths)
        if barriers:
            paths.barriers.write_text(BARRIERS)
        start = (*TASK_LINES[:3], *TASK_LINES[5:8], TASK_LINES[-1])  # linked, gated, analysis
        paths.tasks.write_bytes(b"# Tasks\n\n" + b"".join(start))
        apply(paths, "backup", None)
        apply(paths, "sweep", 0)
        status_now(paths, NOW, lambda _process: "gone", later)
        for (kind, arg), settled in steps:
            apply(paths, kind, arg)
            clock = later if settled else (lambda: time.time_ns() + RACY_NS // 4)
            shown = status_now(paths, NOW, lambda _process: "gone", clock)
            assert shown == from_scratch(paths), (kind, arg, settled)
        os.chmod(paths.tasks, 0o644)
