"""A `.wild/` project with something in every section of the dashboard, for its tests."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import orjson

from wild.clock import SystemClock
from wild.commands import edits
from wild.commands.init import init_wild
from wild.parsers.runs import Resources, RunRecord, SweepRecord, encode_record
from wild.paths import WildPaths
from wild.store.events_log import EventLog

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
XSS = '<img src=x onerror="document.body.dataset.pwned=1">Train <b>model</b>'


def _runs(paths: WildPaths, count: int) -> None:
    ids = tuple(f"s1-{i:03d}" for i in range(count))
    lines = [
        encode_record(
            SweepRecord("s1", "clip-vs-offpolicy", {"parameters": {}}, "active", run_ids=ids)
        )
    ]
    for i, run_id in enumerate(ids):
        status = "running" if i % 3 == 0 else ("finished" if i % 3 == 1 else "failed")
        run = RunRecord(
            id=run_id,
            sweep="s1",
            params={"clip_coef": [0.2, 0.28][i % 2], "batch_size": 64},
            resolved_instruction=f"python train.py --clip_coef={i}",
            status=status,  # type: ignore[arg-type]
            resources=Resources(),
            exit_code=None if status == "running" else (0 if status == "finished" else 1),
        )
        lines.append(encode_record(run))
        folder = paths.run_dir(run_id)
        folder.mkdir(parents=True, exist_ok=True)
        metrics = [
            {"step": s, "loss": 2.0 * math.exp(-s / (20 + i)) + 0.1, "reward": s * 0.01 * (i + 1)}
            for s in range(0, 60, 2)
        ]
        (folder / "metrics.jsonl").write_bytes(
            b"".join(orjson.dumps(m, option=orjson.OPT_APPEND_NEWLINE) for m in metrics)
        )
        (folder / "log").write_text(f"epoch 1 of run {run_id}\n")
    paths.runs_log.write_bytes(b"".join(lines))


def _iterations(paths: WildPaths, count: int) -> None:
    events = EventLog(paths.events, SystemClock())
    start = events.append("loop-start", goal="demo", agent="fake")
    paths.logs.mkdir(exist_ok=True)
    for n in range(1, count + 1):
        began = events.append(
            "agent-start", cause=start, iteration=n, work_type="task", work_id=f"task-00{n}"
        )
        log = paths.logs / f"iteration-{n}.log"
        log.write_text(f"iteration {n} log line\n<script>not html</script>\n")
        failed = n % 4 == 0
        events.append(
            "agent-end",
            cause=began,
            iteration=n,
            exit_code=1 if failed else 0,
            timed_out=False,
            cancelled=False,
            duration_s=12.5 * n,
            signals=[] if failed else ["TASK_COMPLETE"],
            agent="claude",
            model=None,
            cost_usd=0.02 * n,
            input_tokens=1000 * n,
            output_tokens=200 * n,
            is_error=False,
            problems=[],
            files_changed=["train.py", "README.md"][: n % 3],
            log=str(log),
        )


def make_project(root: Path, *, runs: int = 4, iterations: int = 5) -> WildPaths:
    """A project under `root` with tasks (one an XSS payload), alerts, a barrier, input and runs."""
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    edits.add_task(paths, XSS, priority=1, depends_on=(), blocked_by=())
    edits.add_task(
        paths, "Plot the loss curves", priority=2, depends_on=(), blocked_by=("train-done",)
    )
    edits.raise_alert(
        paths,
        severity="critical",
        source="job-3",
        alert_type="OOM",
        description="CUDA out of memory <script>alert(1)</script>",
        context={"batch_size": 64},
        choices=("rerun", "ignore", "stop_sweep"),
        now=NOW,
    )
    paths.barriers.write_text(
        paths.barriers.read_text()
        + "\n## [WAITING] train-done\n- Type: manual\n- Blocks: task-002\n"
    )
    edits.add_human_input(paths, "Use batch size 32 from now on", urgent=False, now=NOW)
    _runs(paths, runs)
    _iterations(paths, iterations)
    return paths
