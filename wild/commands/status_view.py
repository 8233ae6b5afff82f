"""`wild --status` from plain data: the loop's facts judged against now, and the text.

Everything here works on JSON-shaped data, so a status whose files have not changed since
the last one (`wild.commands.status_cache`) is shown without importing a parser: this module
needs only the clock and the liveness check. What the files say is computed by
`wild.commands.status`; the two parts meet in `compose`.

The loop's own words in state.json are checked, not repeated: `"active": true` left by a
killed loop is read against the process it names (`wild.liveness`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from wild.clock import parse_time
from wild.liveness import Liveness
from wild.parsers.process_id import ProcessId, process_from_json

Judge = Callable[[ProcessId], Liveness]
Data = dict[str, Any]


def _seconds(since: str | None, until: datetime | None) -> int | None:
    start = parse_time(since)
    if start is None or until is None:
        return None
    return max(0, int((until - start).total_seconds()))


def loop_json(facts: Data, now: datetime, judge: Judge) -> Data:
    """The loop as it really is: `facts` say what it recorded, `judge` whether it still runs.

    `state` is one of running, stopped (ended as it should), died (state.json says active but
    its process is gone or its pid reused: killed or crashed), elsewhere (another host, not
    checkable from here) and unknown (active, but no process recorded by an older wild).
    """
    process = process_from_json(facts["loopProcess"])
    active = facts["active"]
    found: Liveness | None = judge(process) if active and process is not None else None
    if not active:
        word = "stopped"
    elif process is None:
        word = "unknown"
    elif found in ("gone", "reused"):
        word = "died"
    else:
        word = "running" if found == "running" else "elsewhere"
    running = word in ("running", "elsewhere", "unknown")
    last_seen = facts["lastWritten"]
    seen = None if running or process is None else last_seen
    return {
        "active": word == "running",
        "state": word,
        "pid": process.pid if process else None,
        "host": process.host if process else None,
        "pidReused": found == "reused",
        "startedAt": process.started_at if process else None,
        "runningForS": _seconds(process.started_at, now) if process and running else None,
        "lastSeen": seen,
        "lastSeenAgoS": _seconds(seen, now),
        "iteration": facts["iteration"],
        "paused": facts["paused"],
        "goal": facts["prompt"],
    }


def agent_json(facts: Data, loop: Data, now: datetime, judge: Judge) -> Data | None:
    """The agent the loop runs now; after the loop died, one it left running (orphaned)."""
    agent = process_from_json(facts["agentProcess"])
    if agent is None or loop["state"] in ("stopped", "unknown"):
        return None
    if loop["state"] == "died":
        if judge(agent) != "running":
            return None
        return {"pid": agent.pid, "startedAt": agent.started_at, "orphaned": True}
    return {
        "pid": agent.pid,
        "startedAt": agent.started_at,
        "runningForS": _seconds(agent.started_at, now),
        "orphaned": False,
    }


def work_json(facts: Data, loop: Data, now: datetime) -> Data | None:
    work = facts["work"]
    if work is None:
        return None
    running = loop["state"] in ("running", "elsewhere")
    return {
        "type": work["type"],
        "id": work["id"],
        "attempt": work["attempt"],
        "startedAt": work["startedAt"],
        # Left by a loop that is not running, the work waits for the next one to resume it.
        "runningForS": _seconds(work["startedAt"], now) if running else None,
    }


def _until(loop: Data, now: datetime) -> datetime | None:
    """Durations run until now while the loop runs, else until it was last seen."""
    return now if loop["lastSeen"] is None else parse_time(loop["lastSeen"])


def totals_json(facts: Data, loop: Data, now: datetime) -> Data:
    """What the work cost since the first loop started here (across restarts)."""
    return {
        "since": facts["startedAt"],
        "elapsedS": _seconds(facts["startedAt"], _until(loop, now)),
        "costUsd": facts["costUsd"],
        "tokens": facts["tokens"],
    }


def state_json(facts: Data, loop: Data, now: datetime) -> Data | None:
    """The loop's state machine state (wild/loop/states.py) and how long it has been in it."""
    found = facts["recorded"]
    if found is None:
        return None
    since = found["since"]
    return {"name": found["state"], "since": since, "forS": _seconds(since, _until(loop, now))}


def compose(directory: str, files: Data, facts: Data, now: datetime, judge: Judge) -> Data:
    """Everything `--status` shows (the JSON form): the files' part as computed from them,
    the loop's part judged now."""
    loop = loop_json(facts, now, judge)
    return {
        "dir": directory,
        "loop": loop,
        "agent": agent_json(facts, loop, now, judge),
        "work": work_json(facts, loop, now),
        "loopState": state_json(facts, loop, now),
        "totals": totals_json(facts, loop, now),
        **{key: value for key, value in files.items() if key not in _PROBLEM_PARTS},
        "next": _next(files["next"], loop, files["tasks"]),
        "problems": [*files["fileProblems"], *facts["problems"], *files["moreProblems"]],
    }


def _next(nxt: Data, loop: Data, tasks: Data) -> Data:
    """Nothing to do in a project that never had a goal or a task is a start, not an end."""
    if nxt.get("kind") == "complete" and not loop.get("goal") and not tasks.get("total"):
        return {"kind": "no-goal"}
    return nxt


_PROBLEM_PARTS = ("fileProblems", "moreProblems")
