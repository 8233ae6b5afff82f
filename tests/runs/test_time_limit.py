"""A run whose sweep gives no `resources.time` is stopped at the default time limit
(`WILD_RUN_TIME_LIMIT`), its exit marker saying timeout: no run hangs forever."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir
from tests.runs.helpers import drive, local, supervisor
from wild.clock import SystemClock
from wild.loop.model import RecordSweep
from wild.loop.runs_effect import LoopRuns
from wild.parsers.sweeps import SweepSpec, parse_sweep
from wild.paths import WildPaths
from wild.runs import markers
from wild.runs.record_sweep import TIME_LIMIT_ENV, record_sweep
from wild.store.events_log import EventLog

pytestmark = pytest.mark.timeout(60)


def test_a_run_with_no_time_given_is_stopped_at_the_default_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    spec = parse_sweep(
        '{"name": "hang", "base_command": "sleep 30; true", "parameters": {"i": [1]}}'
    )
    assert isinstance(spec, SweepSpec) and spec.resources.time_s is None
    monkeypatch.setenv(TIME_LIMIT_ENV, "1")
    outcome = record_sweep(paths, spec, now=datetime.now(UTC))
    (queued,) = outcome.runs
    assert queued.resources.time_s == 1.0
    backend = local(paths)
    drive(supervisor(paths, backend), backend, limit_s=30)
    marker = markers.read_marker(paths.run_dir(queued.id)).marker
    assert marker is not None and marker.reason == "timeout"
    ended = supervisor(paths, backend).index.runs[queued.id]
    assert (ended.status, ended.reason) == ("failed", "timeout")


def test_a_bad_default_limit_refuses_the_loops_sweep_with_one_line_and_records_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    spec = parse_sweep('{"name": "s", "base_command": "true", "parameters": {"i": [1]}}')
    assert isinstance(spec, SweepSpec)
    monkeypatch.setenv(TIME_LIMIT_ENV, "forever")
    clock = SystemClock()
    runs = LoopRuns(paths, clock, EventLog(paths.events, clock), tag="t", settings={})
    outcome = runs.record(RecordSweep((spec,), "test"))
    assert outcome.recorded == ()
    assert outcome.refused == (
        (f"{TIME_LIMIT_ENV}='forever' is not a duration: write \"HH:MM:SS\", \"90m\" or a "
         "number of seconds",),
    )  # fmt: skip
    assert not paths.runs_log.exists()
