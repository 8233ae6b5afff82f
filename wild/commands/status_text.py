"""`wild --status` and `wild --list-work` as text, from their plain data (the JSON form).

Pure and cheap to import: a status whose files have not changed is shown with this module
and `wild.commands.status_view` alone.
"""

from __future__ import annotations

from typing import Any

from wild.output import plural


def _next_text(nxt: dict[str, Any]) -> str:
    if nxt["kind"] == "no-goal":
        return (
            'no goal or task yet: start the loop with wild "GOAL"'
            ' (or add a task: wild --add-task "TEXT")'
        )
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
            f"{runs['stopped']} stopped ({plural(research['sweeps'], 'sweep')})"
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
