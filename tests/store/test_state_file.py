"""state.json on disk: round trips, unknown keys, the seed's format 0, corrupt and newer files."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.commands.watch import running_loop_pid
from wild.errors import WildError
from wild.liveness import this_host, this_process
from wild.parsers.lines import Problem
from wild.parsers.process_id import ProcessId, process_json
from wild.parsers.state import CurrentWork, LoadedState, LoopState, render_state
from wild.paths import WildPaths
from wild.serve.live import current_iteration
from wild.store.loop_lock import running_loop
from wild.store.state_file import load_state, peek_state, save_state

MOMENT = datetime(2026, 2, 8, 10, 45, 23, tzinfo=UTC)


class FixedClock:
    def now(self) -> datetime:
        return MOMENT

    def monotonic(self) -> float:
        return 0.0


def write_json(path: Path, data: object) -> None:
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))


FULL = LoopState(
    active=True,
    iteration=15,
    started_at="2026-02-08T10:00:00Z",
    prompt="Run training sweep and analyze results",
    agent="opencode",
    model="anthropic/claude-sonnet",
    last_progress_report="2026-02-08T10:30:00Z",
    alerts_file_position={"offset": 4096, "inode": 12, "device": 3},
    current_work=CurrentWork(
        type="alert", id="alert-001", started_at="2026-02-08T10:50:00Z", attempt=2
    ),
    paused=True,
    consecutive_failures=1,
    total_cost_usd=1.25,
    total_tokens=52000,
    recent_summaries=("did a", "did b"),
    loop_process=ProcessId(4242, "lab-1", 98765, "b00t", "2026-02-08T10:00:00Z"),
    agent_process=ProcessId(4300, "lab-1"),
    extra={"futureThing": {"nested": [1, 2]}, "note": "kept"},
)


def test_missing_file_is_a_fresh_state(tmp_path: Path) -> None:
    assert load_state(tmp_path / "state.json") == LoadedState(LoopState(), ())


def test_empty_file_is_a_fresh_state(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b"  \n")
    assert load_state(path) == LoadedState(LoopState(), ())


def test_round_trip_keeps_every_field_and_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    save_state(path, FULL)
    assert load_state(path) == LoadedState(FULL, ())


def test_saved_bytes_are_sorted_camel_case_with_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    state = LoopState(
        iteration=3,
        current_work=CurrentWork(type="task", id="task-002", started_at=None),
        extra={"zeta": 1},
    )
    save_state(path, state)
    assert path.read_text() == (
        "{\n"
        '  "active": false,\n'
        '  "agent": null,\n'
        '  "agentProcess": null,\n'
        '  "alertsFilePosition": null,\n'
        '  "consecutiveFailures": 0,\n'
        '  "currentWork": {\n'
        '    "attempt": 1,\n'
        '    "id": "task-002",\n'
        '    "startedAt": null,\n'
        '    "type": "task"\n'
        "  },\n"
        '  "format": 1,\n'
        '  "iteration": 3,\n'
        '  "lastProgressReport": null,\n'
        '  "loopProcess": null,\n'
        '  "model": null,\n'
        '  "paused": false,\n'
        '  "prompt": null,\n'
        '  "recentSummaries": [],\n'
        '  "startedAt": null,\n'
        '  "totalCostUsd": 0.0,\n'
        '  "totalTokens": 0,\n'
        '  "zeta": 1\n'
        "}\n"
    )


def test_unknown_keys_written_by_someone_else_survive_an_edit(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_json(path, {"format": 1, "iteration": 4, "pluginData": {"x": [1, "y"]}})
    loaded = load_state(path)
    save_state(path, replace(loaded.state, iteration=5))
    data = orjson.loads(path.read_bytes())
    assert data["pluginData"] == {"x": [1, "y"]}
    assert data["iteration"] == 5


def test_seed_format_0_is_migrated_and_bare_offset_dropped(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    # The exact example from seed 001.
    path.write_text(
        "{\n"
        '  "active": true,\n'
        '  "iteration": 15,\n'
        '  "startedAt": "2026-02-08T10:00:00Z",\n'
        '  "prompt": "Run training sweep and analyze results",\n'
        '  "agent": "opencode",\n'
        '  "model": "anthropic/claude-sonnet",\n'
        '  "lastProgressReport": "2026-02-08T10:30:00Z",\n'
        '  "alertsFilePosition": 4096,\n'
        '  "currentWork": {\n'
        '    "type": "alert",\n'
        '    "id": "alert-001",\n'
        '    "startedAt": "2026-02-08T10:50:00Z"\n'
        "  }\n"
        "}\n"
    )
    loaded = load_state(path)
    assert loaded.state == LoopState(
        format=1,
        active=True,
        iteration=15,
        started_at="2026-02-08T10:00:00Z",
        prompt="Run training sweep and analyze results",
        agent="opencode",
        model="anthropic/claude-sonnet",
        last_progress_report="2026-02-08T10:30:00Z",
        alerts_file_position=None,
        current_work=CurrentWork(
            type="alert", id="alert-001", started_at="2026-02-08T10:50:00Z", attempt=1
        ),
    )
    assert loaded.problems == (
        Problem(
            str(path),
            9,
            "alertsFilePosition 4096 has no file identity (old state format); "
            "dropped it, alerts.jsonl will be read again from the start",
        ),
    )
    save_state(path, loaded.state)
    assert orjson.loads(path.read_bytes())["format"] == 1


def test_format_1_object_position_is_kept_as_is(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    position = {"offset": 10, "inode": 5, "device": 1, "size": 10}
    write_json(path, {"format": 1, "alertsFilePosition": position})
    assert load_state(path) == LoadedState(LoopState(alerts_file_position=position), ())


def test_format_1_bare_integer_position_is_a_type_problem(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"format": 1,\n"alertsFilePosition": 12}\n')
    assert load_state(path).problems == (
        Problem(str(path), 2, "alertsFilePosition should be an object, not 12; used null"),
    )


def test_wrong_types_fall_back_to_defaults_with_problems(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(
        '{"format": 1,\n'
        '"iteration": "seven",\n'
        '"active": 1,\n'
        '"totalCostUsd": "cheap",\n'
        '"currentWork": {"type": "task"},\n'
        '"recentSummaries": [1],\n'
        '"loopProcess": {"pid": 0, "host": "h"},\n'
        '"agentProcess": {"pid": 7, "host": "h", "startTicks": "soon"}}\n'
    )
    loaded = load_state(path)
    assert loaded.state == LoopState()
    assert [str(p) for p in loaded.problems] == [
        f'{path}:2: iteration should be an integer, not "seven"; used 0',
        f"{path}:3: active should be true or false, not 1; used false",
        f'{path}:4: totalCostUsd should be a number, not "cheap"; used 0.0',
        f'{path}:5: currentWork needs string type and id, not {{"type":"task"}}; dropped it',
        f"{path}:6: recentSummaries should be a list of strings, not [1]; used []",
        f'{path}:7: loopProcess needs a positive pid and a host, not {{"pid":0,"host":"h"}};'
        " dropped it",
        f"{path}:8: agentProcess has an unreadable start time,"
        f' {{"pid":7,"host":"h","startTicks":"soon"}}; dropped it',
    ]


def test_corrupt_file_is_moved_aside_and_a_fresh_state_used(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b'{"format": 1,\n"iteration": }\n')
    loaded = load_state(path, FixedClock())
    aside = tmp_path / "state.json.corrupt-20260208T104523Z"
    assert loaded == LoadedState(
        LoopState(),
        (
            Problem(
                str(path),
                2,
                "not valid JSON (unexpected character, expected a JSON value); "
                "moved it to state.json.corrupt-20260208T104523Z and started from a fresh state",
            ),
        ),
    )
    assert aside.read_bytes() == b'{"format": 1,\n"iteration": }\n'
    assert not path.exists()


def test_second_corrupt_file_in_the_same_second_gets_its_own_name(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    (tmp_path / "state.json.corrupt-20260208T104523Z").write_text("first")
    path.write_text("[1, 2]")
    loaded = load_state(path, FixedClock())
    assert [str(p) for p in loaded.problems] == [
        f"{path}:1: not a JSON object; moved it to state.json.corrupt-20260208T104523Z-2 "
        "and started from a fresh state"
    ]
    assert (tmp_path / "state.json.corrupt-20260208T104523Z-2").read_text() == "[1, 2]"


def test_newer_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_json(path, {"format": 2, "iteration": 1})
    with pytest.raises(WildError) as caught:
        load_state(path)
    assert str(caught.value) == (
        f"{path}: written by a newer wild (state format 2; this wild reads up to 1); "
        "upgrade wild and run it again"
    )
    assert path.exists()


def test_a_newer_format_is_no_loop_for_every_look(tmp_path: Path) -> None:
    """Only the loop's load refuses a newer state.json; every reader that only looks (which
    loop runs, which iteration) reads it through `peek_state` and sees nothing."""
    paths = WildPaths(tmp_path / ".wild")
    paths.root.mkdir()
    me = process_json(this_process())  # this test's process stands for the running loop
    write_json(paths.state, {"format": 2, "active": True, "iteration": 3, "loopProcess": me})
    assert peek_state(paths.state) is None
    assert running_loop(paths.state) is None
    assert running_loop_pid(paths) is None  # `wild --status --watch` raised here
    assert current_iteration(paths) is None
    write_json(paths.state, {"format": 1, "active": True, "iteration": 3, "loopProcess": me})
    state = peek_state(paths.state)
    assert state is not None and state.iteration == 3 and current_iteration(paths) == 3
    assert running_loop_pid(paths) == os.getpid()
    assert running_loop(paths.state) == f"pid {os.getpid()} on {this_host()}"


def test_save_refuses_extra_keys_that_shadow_known_ones(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"LoopState.extra may not hold the known key\(s\) \['iteration'\]"
    ):
        save_state(tmp_path / "state.json", LoopState(extra={"iteration": 3}))
    assert not (tmp_path / "state.json").exists()


def test_save_refuses_non_finite_cost(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="total_cost_usd must be finite, not nan"):
        render_state(LoopState(total_cost_usd=float("nan")))


def test_save_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    save_state(path, LoopState())
    os.chmod(path, 0o600)
    save_state(path, LoopState(iteration=2))
    assert os.stat(path).st_mode & 0o777 == 0o600


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(
    extra=st.dictionaries(
        st.text(min_size=1, max_size=10).filter(lambda k: k[0] == "x"), json_values
    ),
    iteration=st.integers(0, 10**9),
    prompt=st.none() | st.text(),
    summaries=st.lists(st.text(), max_size=5).map(tuple),
    cost=st.floats(min_value=0, max_value=1e9, allow_nan=False),
)
def test_any_state_round_trips(
    tmp_path: Path,
    *,
    extra: dict[str, Any],
    iteration: int,
    prompt: str | None,
    summaries: tuple[str, ...],
    cost: float,
) -> None:
    state = LoopState(
        iteration=iteration,
        prompt=prompt,
        recent_summaries=summaries,
        total_cost_usd=cost,
        extra=extra,
    )
    path = tmp_path / "state.json"
    path.write_bytes(render_state(state))  # save_state's bytes without its fsyncs
    assert load_state(path) == LoadedState(state, ())


@given(st.binary(max_size=200))
def test_garbage_never_raises_except_newer_format(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "prop" / "state.json"
    path.parent.mkdir(exist_ok=True)
    for leftover in path.parent.iterdir():
        leftover.unlink()
    path.write_bytes(data)
    loaded = load_state(path, FixedClock())
    assert isinstance(loaded.state, LoopState)
