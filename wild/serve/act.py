"""The page's actions, each a call of the same core function as its CLI flag (wild/commands).

A request body is one JSON object `{"action": NAME, ...fields}`; fields are checked here
(types, which task statuses) and everything else is the core function's job, so the page and
the CLI refuse the same things with the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, get_args

from wild import control
from wild.clock import Clock
from wild.commands import answers, barrier_cmds, edits
from wild.errors import UsageError
from wild.parsers import tasks as tasks_md
from wild.paths import WildPaths
from wild.policy.model import parse_duration

TASK_STATUSES: tuple[tasks_md.TaskStatus, ...] = get_args(tasks_md.TaskStatus)


def _text(body: Mapping[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise UsageError(f"the request needs {key!r} as text")
    return value


def _status(body: Mapping[str, Any], key: str) -> tasks_md.TaskStatus:
    value = _text(body, key)
    if value not in TASK_STATUSES:
        raise UsageError(f"{key} must be one of {', '.join(TASK_STATUSES)}, not {value!r}")
    return value


def _human_input(paths: WildPaths, clock: Clock, body: Mapping[str, Any]) -> str:
    urgent = body.get("urgent") is True
    key = edits.add_human_input(paths, _text(body, "text"), urgent=urgent, now=clock.now())
    return f"Queued {'urgent ' if urgent else ''}human input {key}"


def _answer(paths: WildPaths, clock: Clock, body: Mapping[str, Any]) -> str:
    alert_id, choice = _text(body, "id"), _text(body, "choice")
    answers.answer_alert(paths, alert_id, choice, now=clock.now())
    return f"Answered {alert_id}: {choice}"


def _policy(paths: WildPaths, clock: Clock, body: Mapping[str, Any]) -> str:
    mode = _text(body, "mode")
    given = body.get("duration") or None
    duration = parse_duration(given) if isinstance(given, str) else None
    edits.update_policy(paths, mode, duration=duration, now=clock.now())
    return f"Policy is now {mode}" + (f" for {given}" if duration else "")


def _satisfy(paths: WildPaths, clock: Clock, body: Mapping[str, Any]) -> str:
    barrier_id = _text(body, "id")
    changed = edits.satisfy_barrier(paths, barrier_id, now=clock.now())
    return f"Barrier {barrier_id} {'is now' if changed else 'was already'} satisfied"


def _approve(paths: WildPaths, clock: Clock, body: Mapping[str, Any]) -> str:
    # The page names the command it showed by its hash: a command changed since is refused.
    barrier_id, seen = _text(body, "id"), _text(body, "sha256")
    command, digest = barrier_cmds.approve_barrier(paths, barrier_id, clock.now(), seen=seen)
    return f"Approved {barrier_id}: {command} (sha256 {digest[:12]})"


def _add_task(paths: WildPaths, _clock: Clock, body: Mapping[str, Any]) -> str:
    priority = body.get("priority", 2)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise UsageError("priority must be a whole number (1 is highest)")
    text = _text(body, "text")
    task_id = edits.add_task(paths, text, priority=priority, depends_on=(), blocked_by=())
    return f"Added {task_id}"


def _tick(paths: WildPaths, _clock: Clock, body: Mapping[str, Any]) -> str:
    task_id = _text(body, "id")
    status = _status(body, "status")
    answers.tick_task(paths, task_id, status, seen=_status(body, "seen"))
    return f"{task_id} is now {status}"


def _control(command: str) -> Callable[[WildPaths, Clock, Mapping[str, Any]], str]:
    def send(paths: WildPaths, clock: Clock, _body: Mapping[str, Any]) -> str:
        control.request(paths, command, clock)
        return f"Asked the loop to {command}"

    return send


ACTIONS: dict[str, Callable[[WildPaths, Clock, Mapping[str, Any]], str]] = {
    "human-input": _human_input,
    "answer-alert": _answer,
    "update-policy": _policy,
    "satisfy": _satisfy,
    "approve": _approve,
    "add-task": _add_task,
    "tick-task": _tick,
    "pause": _control("pause"),
    "resume": _control("resume"),
    "stop": _control("stop"),
}


def perform(paths: WildPaths, clock: Clock, body: object) -> str:
    """Run the action `body` names; returns what to tell the user, raises WildError."""
    if not isinstance(body, Mapping) or not isinstance(body.get("action"), str):
        raise UsageError('the request body must be a JSON object with an "action"')
    action = ACTIONS.get(body["action"])
    if action is None:
        raise UsageError(f"unknown action {body['action']!r}; known: {', '.join(ACTIONS)}")
    return action(paths, clock, body)
