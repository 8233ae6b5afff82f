"""`wild --status` and `wild --list-work`: the state at a glance and the ordered work queue.

The loop's own words in state.json are checked, not repeated: `"active": true` left by a
killed loop is read against the process it names (`wild.liveness`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from wild.clock import iso, parse_time
from wild.liveness import Liveness, check
from wild.parsers.human import HumanQueue
from wild.parsers.loop_state import recorded
from wild.parsers.state import LoopState, ProcessId
from wild.runs.stage import counts, stage_in
from wild.selection import Selection, WorkItem, select_work
from wild.store.state_file import load_state
from wild.workspace import Workspace, trust_problems

Judge = Callable[[ProcessId], Liveness]


def item_json(item: WorkItem) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": item.kind, "id": item.id, "title": item.title}
    for key, value in (
        ("reason", item.reason),
        ("severity", item.severity),
        ("priority", item.priority),
        ("status", item.status),
    ):
        if value is not None:
            data[key] = value
    if item.barriers:
        data["barriers"] = list(item.barriers)
    if item.urgent:
        data["urgent"] = True
    return data


def _last_written(path: os.PathLike[str]) -> datetime | None:
    """When the loop last wrote state.json (only the loop writes it after `--init`)."""
    try:
        return datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
    except OSError:
        return None


def _seconds(since: str | None, until: datetime | None) -> int | None:
    start = parse_time(since)
    if start is None or until is None:
        return None
    return max(0, int((until - start).total_seconds()))


def loop_json(
    state: LoopState, now: datetime, last_seen: datetime | None, judge: Judge
) -> dict[str, Any]:
    """The loop as it really is: `state` says what it recorded, `judge` whether it still runs.

    `state` is one of running, stopped (ended as it should), died (state.json says active but
    its process is gone or its pid reused: killed or crashed), elsewhere (another host, not
    checkable from here) and unknown (active, but no process recorded by an older wild).
    """
    process = state.loop_process
    found: Liveness | None = judge(process) if state.active and process is not None else None
    if not state.active:
        word = "stopped"
    elif process is None:
        word = "unknown"
    elif found in ("gone", "reused"):
        word = "died"
    else:
        word = "running" if found == "running" else "elsewhere"
    running = word in ("running", "elsewhere", "unknown")
    seen = None if running or process is None or last_seen is None else iso(last_seen)
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
        "iteration": state.iteration,
        "paused": state.paused,
        "goal": state.prompt,
    }


def agent_json(state: LoopState, loop: dict[str, Any], now: datetime, judge: Judge) -> Any:
    """The agent the loop runs now; after the loop died, one it left running (orphaned)."""
    agent = state.agent_process
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


def work_json(state: LoopState, loop: dict[str, Any], now: datetime) -> Any:
    work = state.current_work
    if work is None:
        return None
    running = loop["state"] in ("running", "elsewhere")
    return {
        "type": work.type,
        "id": work.id,
        "attempt": work.attempt,
        "startedAt": work.started_at,
        # Left by a loop that is not running, the work waits for the next one to resume it.
        "runningForS": _seconds(work.started_at, now) if running else None,
    }


def totals_json(state: LoopState, loop: dict[str, Any], now: datetime) -> dict[str, Any]:
    """What the work cost since the first loop started here (across restarts)."""
    until = now if loop["lastSeen"] is None else parse_time(loop["lastSeen"])
    return {
        "since": state.started_at,
        "elapsedS": _seconds(state.started_at, until),
        "costUsd": state.total_cost_usd,
        "tokens": state.total_tokens,
    }


def state_json(state: LoopState, loop: dict[str, Any], now: datetime) -> Any:
    """The loop's state machine state (wild/loop/states.py) and how long it has been in it:
    until now while the loop runs, else until it was last seen."""
    found = recorded(state.extra)
    if found is None:
        return None
    until = now if loop["lastSeen"] is None else parse_time(loop["lastSeen"])
    return {"name": found.state, "since": found.since, "forS": _seconds(found.since, until)}


def questions_json(human: HumanQueue) -> list[dict[str, Any]]:
    """Questions wild asked the human that have no answer yet."""
    return [
        {
            "key": entry.key,
            "related": entry.related_alert,
            "question": entry.content.strip().split("\n", 1)[0],
        }
        for entry in human.inputs
        if entry.status == "question"
    ]


def status_data(
    ws: Workspace,
    now: datetime | None = None,
    judge: Judge = check,
    selection: Selection | None = None,
) -> dict[str, Any]:
    """Everything `--status` shows, as plain data (the JSON form); `selection` when the caller
    has made it already (the dashboard shows the whole queue too)."""
    now = now or datetime.now(UTC)
    selection = selection if selection is not None else select_work(ws.snapshot())
    tasks = Counter(t.status for t in ws.tasks.tasks)
    # Items made from tasks carry a priority; held inputs and escalated alerts do not.
    blocked_tasks = sum(
        1 for item in selection.queue if item.kind == "blocked" and item.priority is not None
    )
    alerts = [a for a in ws.alerts if a.status != "resolved"]
    severities = Counter(a.severity for a in alerts)
    barrier_counts = Counter(b.status for b in ws.barriers.barriers)
    check_counts = Counter(c.status for c in ws.checks.checks)
    loaded = load_state(ws.paths.state)
    state = loaded.state
    loop = loop_json(state, now, _last_written(ws.paths.state), judge)
    return {
        "dir": str(ws.paths.root),
        "loop": loop,
        "agent": agent_json(state, loop, now, judge),
        "work": work_json(state, loop, now),
        "loopState": state_json(state, loop, now),
        "totals": totals_json(state, loop, now),
        "questions": questions_json(ws.human),
        "policy": {
            "mode": ws.policy.mode,
            "autonomy": ws.policy.autonomy_level,
            "note": ws.policy_note,
        },
        "human": {"pending": sum(1 for h in ws.human.inputs if h.status == "pending")},
        "research": research_json(ws),
        "alerts": {
            "active": len(alerts),
            "inProgress": sum(1 for a in alerts if a.status == "in-progress"),
            "pending": sum(1 for a in alerts if a.status == "pending"),
            "escalated": sum(1 for a in alerts if a.status == "escalated"),
            "critical": severities["critical"],
            "warning": severities["warning"],
            "info": severities["info"],
        },
        "tasks": {
            "total": len(ws.tasks.tasks),
            "complete": tasks["complete"],
            "inProgress": tasks["in-progress"],
            "todo": tasks["todo"],
            "cancelled": tasks["cancelled"],
            "blocked": blocked_tasks,
        },
        "barriers": {
            "waiting": barrier_counts["waiting"],
            "satisfied": barrier_counts["satisfied"],
            "failed": barrier_counts["failed"],
        },
        "checks": {
            "total": len(ws.checks.checks),
            "passing": check_counts["passing"],
            "failing": check_counts["failing"],
            "pending": check_counts["pending"],
            "strategy": ws.checks.strategy,
            "mode": ws.checks.mode,
        },
        "next": _next_json(selection),
        "problems": [str(p) for p in (*ws.problems, *loaded.problems)]
        + list(selection.problems)
        + [message for _, message in ws.refusals]
        + list(ws.notices)
        + trust_problems(ws),
    }


def _next_json(selection: Selection) -> dict[str, Any]:
    if selection.item is None:
        return {"kind": "complete"}
    data = item_json(selection.item)
    data["kind"] = selection.kind
    return data


def _next_text(nxt: dict[str, Any]) -> str:
    if nxt["kind"] == "complete":
        return "nothing left: all work is complete"
    if nxt["kind"] == "blocked":
        return f"waiting — {nxt['id']}: {nxt.get('reason', '')}"
    return f"{nxt['kind']} {nxt['id']} — {nxt['title']}"


def span(seconds: int) -> str:
    """`45s`, `3m 12s`, `2h 05m`, `3d 4h`: precise enough to read at a glance."""
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h"


def _loop_text(loop: dict[str, Any]) -> str:
    iteration = f"iteration {loop['iteration']}"
    paused = ", paused" if loop["paused"] else ""
    state, pid = loop["state"], loop["pid"]
    if state == "running":
        return f"running{paused} (pid {pid}, for {span(loop['runningForS'] or 0)}; {iteration})"
    if state == "elsewhere":
        return f"running on {loop['host']}{paused} (pid {pid}, not checked from here; {iteration})"
    if state == "unknown":
        return f"running?{paused} (no pid recorded, cannot check; {iteration})"
    if loop["lastSeen"] is None:
        return f"not running ({iteration})"
    seen = f"last seen {loop['lastSeen']}, {span(loop['lastSeenAgoS'] or 0)} ago"
    if state == "died":
        what = "is another process now" if loop["pidReused"] else "is gone"
        return f"not running ({seen}; killed or crashed: its pid {pid} {what}; {iteration})"
    return f"not running ({seen}; {iteration})"


def _agent_text(agent: dict[str, Any]) -> str:
    pid = agent["pid"]
    if agent["orphaned"]:
        return f"Agent: pid {pid} still runs without its loop; stop it with `kill -- -{pid}`"
    running = agent["runningForS"]
    return f"Agent: pid {pid}" + (f", running for {span(running)}" if running is not None else "")


def _work_text(work: dict[str, Any]) -> str:
    text = f"Work: {work['type']} {work['id']}"
    if work["attempt"] > 1:
        text += f" (attempt {work['attempt']})"
    if work["runningForS"] is None:
        return text + ", interrupted; the next loop resumes it"
    return text + f", for {span(work['runningForS'])}"


def _totals_text(totals: dict[str, Any]) -> str:
    elapsed = totals["elapsedS"]
    time = f"{span(elapsed)} since {totals['since']}, " if elapsed is not None else ""
    return f"Spent: {time}${totals['costUsd']:.2f}, {totals['tokens']:,} tokens"


def research_json(ws: Workspace) -> dict[str, Any]:
    """The research stage and the run counts (SPEC §7), from runs.jsonl and the alerts."""
    return {
        "stage": stage_in(ws.runs, ws.open_alerts, ws.tasks.tasks),
        "sweeps": len(ws.runs.sweeps),
        "runs": counts(ws.runs.runs.values()).to_json(),
    }


def format_status(data: dict[str, Any]) -> str:
    loop = data["loop"]
    alerts = data["alerts"]
    tasks = data["tasks"]
    barriers = data["barriers"]
    policy = f"Policy: {data['policy']['mode']} (autonomy {data['policy']['autonomy']})"
    if data["policy"]["note"]:
        policy += f" — {data['policy']['note']}"
    alert_line = f"Alerts: {alerts['active']} active"
    if alerts["active"]:
        alert_line += (
            f" ({alerts['critical']} critical, {alerts['warning']} warning, {alerts['info']} info;"
            f" {alerts['inProgress']} in progress, {alerts['escalated']} escalated)"
        )
    lines = [f"wild — {data['dir']}", f"Loop: {_loop_text(loop)}"]
    if data["agent"] is not None:
        lines.append(_agent_text(data["agent"]))
    if data["work"] is not None:
        lines.append(_work_text(data["work"]))
    found = data["loopState"]
    if found is not None:
        held = f" for {span(found['forS'])}" if found["forS"] is not None else ""
        lines.append(f"State: {found['name']}{held}")
    if data["totals"]["since"] is not None:
        lines.append(_totals_text(data["totals"]))
    lines += [policy, f"Human input: {data['human']['pending']} pending"]
    questions = data["questions"]
    if questions:
        lines.append(f"Questions for you ({len(questions)} open; answer with wild --human-input):")
        lines.extend(
            f"  {q['key']}" + (f" ({q['related']})" if q["related"] else "") + f": {q['question']}"
            for q in questions
        )
    lines += [
        alert_line,
        f"Tasks: {tasks['complete']}/{tasks['total']} complete, {tasks['inProgress']} in progress,"
        f" {tasks['blocked']} blocked, {tasks['cancelled']} cancelled",
        f"Barriers: {barriers['waiting']} waiting, {barriers['satisfied']} satisfied,"
        f" {barriers['failed']} failed",
    ]
    research = data["research"]
    if research["sweeps"]:
        runs = research["runs"]
        lines.append(
            f"Stage: {research['stage']} — runs: {runs['running']} running, {runs['queued']} "
            f"queued, {runs['finished']} finished, {runs['failed']} failed, "
            f"{runs['stopped']} stopped ({research['sweeps']} sweeps)"
        )
    checks = data["checks"]
    if checks["total"]:
        lines.append(
            f"Checks: {checks['passing']}/{checks['total']} passing, {checks['failing']} failing,"
            f" {checks['pending']} not run (strategy {checks['strategy']}, mode {checks['mode']})"
        )
    lines.append(f"Next: {_next_text(data['next'])}")
    if data["problems"]:
        lines.append(f"Problems ({len(data['problems'])}):")
        lines.extend(f"  {p}" for p in data["problems"])
    return "\n".join(lines)


def list_work_data(ws: Workspace) -> list[dict[str, Any]]:
    return [item_json(item) for item in select_work(ws.snapshot()).queue]


def format_work(items: list[dict[str, Any]]) -> str:
    if not items:
        return "No work queued: all work is complete."
    width = len(str(len(items)))
    lines = []
    for number, item in enumerate(items, 1):
        tag = ""
        if item.get("urgent"):
            tag = "[URGENT] "
        elif "severity" in item:
            tag = f"[{item['severity']}] "
        elif "priority" in item:
            tag = f"[P{item['priority']}] "
        line = f"{number:>{width}}. {item['kind']:<11} {item['id']}  {tag}{item['title']}"
        if item.get("reason"):
            line += f" — {item['reason']}"
        lines.append(line)
    return "\n".join(lines)
