"""Iterations, stats, health and burndown from events.log lines."""

from __future__ import annotations

from typing import Any

import pytest

from wild.serve import history


def start(
    n: int, event_id: str, work: str = "task-001", ts: str = "2026-01-01T00:00:0"
) -> dict[str, Any]:
    return {
        "id": event_id,
        "kind": "agent-start",
        "iteration": n,
        "work_type": "task",
        "work_id": work,
        "ts": f"{ts}{n}Z",
    }


def end(n: int, cause: str, **fields: Any) -> dict[str, Any]:
    base = {
        "kind": "agent-end",
        "cause": cause,
        "iteration": n,
        "exit_code": 0,
        "timed_out": False,
        "cancelled": False,
        "duration_s": 2.5,
        "signals": ["TASK_COMPLETE"],
        "ts": f"2026-01-01T00:00:0{n}.5Z",
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    ("fields", "word"),
    [
        ({}, "done"),
        ({"signals": []}, "partial"),
        ({"exit_code": 1}, "failed"),
        ({"is_error": True}, "failed"),
        ({"timed_out": True}, "timed out"),
        ({"cancelled": True, "exit_code": -9}, "stopped"),
        ({"signals": ["NEED_HUMAN_INPUT"]}, "partial"),
    ],
)
def test_outcome(fields: dict[str, Any], word: str) -> None:
    assert history.outcome(end(1, "x", **fields)) == word


def test_iterations_pair_start_and_end_lines_and_keep_every_column() -> None:
    events = [
        start(1, "a"),
        end(
            1,
            "a",
            agent="claude",
            cost_usd=0.5,
            input_tokens=100,
            output_tokens=20,
            files_changed=["train.py"],
            log="/p/.wild/logs/iteration-1.log",
        ),
        start(2, "b"),
        end(2, "b", exit_code=2, cost_usd=None),
        start(3, "c"),
    ]
    rows = history.iterations(events)
    assert [(r["iteration"], r["outcome"]) for r in rows] == [
        (1, "done"),
        (2, "failed"),
        (3, "running"),
    ]
    first = rows[0]
    assert (first["agent"], first["costUsd"], first["tokens"], first["durationS"]) == (
        "claude",
        0.5,
        120,
        2.5,
    )
    assert first["filesChanged"] == ["train.py"]
    assert rows[1]["filesChanged"] is None  # not recorded: shown as unknown, not as none
    assert history.stats(rows) == {
        "iterations": 3,
        "successRate": 0.5,
        "costUsd": 0.5,
        "tokens": 120,
        "errors": 1,
    }
    assert history.health(rows) == [
        {"iteration": 1, "outcome": "done"},
        {"iteration": 2, "outcome": "failed"},
        {"iteration": 3, "outcome": "running"},
    ]


def test_a_start_without_an_end_before_the_last_was_interrupted() -> None:
    rows = history.iterations([start(1, "a"), start(2, "b"), end(2, "b")])
    assert [r["outcome"] for r in rows] == ["interrupted", "done"]


def test_an_end_whose_start_was_lost_still_counts() -> None:
    rows = history.iterations([end(4, "gone", cost_usd=1.0), {"kind": "agent-end"}])
    assert [r["iteration"] for r in rows] == [4, None]
    assert history.stats(rows)["costUsd"] == 1.0


def test_burndown_steps_down_per_finished_task_and_ends_at_the_count_now() -> None:
    events = [
        start(1, "a"),
        end(1, "a"),
        {"kind": "task-added", "ts": "2026-01-01T00:00:01.7Z"},
        start(2, "b"),
        end(2, "b"),
    ]
    rows = history.iterations(events)
    points = history.burndown(events, rows, open_now=3, now="2026-01-01T00:01:00.000Z")
    assert [p["open"] for p in points] == [4, 3, 3, 4, 4, 3, 3]
    assert points[-1] == {"at": "2026-01-01T00:01:00.000Z", "open": 3}
    assert [p["at"] for p in points] == sorted(p["at"] for p in points)
