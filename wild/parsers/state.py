"""`.wild/state.json` as bytes: the loop's versioned state; lenient to read, strict to write,
migrated. Loading and saving the file is `wild.store.state_file`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, TypeVar

import orjson

from wild.errors import WildError
from wild.output import escape_undecodable
from wild.parsers.lines import Problem
from wild.parsers.process_id import ProcessId, process_json
from wild.record import record, replace

FORMAT = 1
RECENT_SUMMARIES_KEEP = 5

T = TypeVar("T")


@record
class CurrentWork:
    """The piece of work the loop is on: an alert, task, human input or barrier."""

    type: str
    id: str
    started_at: str | None = None
    attempt: int = 1


@record
class LoopState:
    """Everything the loop must remember across restarts; change it with `dataclasses.replace`.

    `alerts_file_position` is opaque here: the alerts module owns its shape (offset plus
    file identity). `extra` holds keys this version does not know, written back untouched.
    """

    format: int = FORMAT
    active: bool = False
    iteration: int = 0
    started_at: str | None = None
    prompt: str | None = None
    agent: str | None = None
    model: str | None = None
    last_progress_report: str | None = None
    alerts_file_position: Mapping[str, Any] | None = None
    current_work: CurrentWork | None = None
    paused: bool = False
    consecutive_failures: int = 0
    total_cost_usd: float = 0.0
    total_tokens: int = 0
    recent_summaries: tuple[str, ...] = ()
    loop_process: ProcessId | None = None  # the loop that wrote this state (kept after it ends)
    agent_process: ProcessId | None = None  # the agent running now (None between runs)
    extra: Mapping[str, Any] = field(default_factory=dict)


@record
class LoadedState:
    """A state read from disk plus what was wrong with the file (already worked around)."""

    state: LoopState
    problems: tuple[Problem, ...]


# JSON key of each field, in the seed's camelCase.
_KEYS = {
    "format": "format",
    "active": "active",
    "iteration": "iteration",
    "started_at": "startedAt",
    "prompt": "prompt",
    "agent": "agent",
    "model": "model",
    "last_progress_report": "lastProgressReport",
    "alerts_file_position": "alertsFilePosition",
    "current_work": "currentWork",
    "paused": "paused",
    "consecutive_failures": "consecutiveFailures",
    "total_cost_usd": "totalCostUsd",
    "total_tokens": "totalTokens",
    "recent_summaries": "recentSummaries",
    "loop_process": "loopProcess",
    "agent_process": "agentProcess",
}
_KNOWN_KEYS = frozenset(_KEYS.values())


def push_summary(state: LoopState, summary: str, keep: int = RECENT_SUMMARIES_KEEP) -> LoopState:
    """Add an iteration summary, dropping the oldest beyond `keep` (the sliding window)."""
    kept = (*state.recent_summaries, summary)[-keep:] if keep > 0 else ()
    return replace(state, recent_summaries=kept)


def _is_int(value: object) -> bool:
    # bool is an int subclass, but `"iteration": true` is a mistake, not 1.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    # NaN and Infinity are not JSON; orjson would write them back as null.
    return _is_int(value) or (isinstance(value, float) and math.isfinite(value))


def _is_opt_str(value: object) -> bool:
    return value is None or isinstance(value, str)


class _Reader:
    """Takes known keys out of the raw object one by one; what is left over is `extra`."""

    def __init__(self, raw: dict[str, Any], text: str, file: str) -> None:
        self.rest = dict(raw)
        self.text = text
        self.file = file
        self.problems: list[Problem] = []

    def line_of(self, key: str) -> int:
        """The 1-based line where `"key"` first appears, so a problem points at it."""
        at = self.text.find(f'"{key}"')
        return self.text.count("\n", 0, at) + 1 if at >= 0 else 1

    def report(self, key: str, message: str) -> None:
        self.problems.append(Problem(self.file, self.line_of(key), message))

    def take(self, key: str, ok: Callable[[object], bool], what: str, default: T) -> T:
        if key not in self.rest:
            return default
        value = self.rest.pop(key)
        if value is None and default is None:
            return default
        if not ok(value):
            self.report(key, f"{key} should be {what}, not {_show(value)}; used {_show(default)}")
            return default
        return value  # type: ignore[no-any-return]

    def total(self, key: str, ok: Callable[[object], bool], what: str, default: T) -> T:
        """A running total: as `take`, and a negative one is a problem too, counted as the
        default, since it would lower what a spending cap counts."""
        value = self.take(key, ok, what, default)
        if value < 0:  # type: ignore[operator]
            self.report(
                key,
                f"{key} is negative ({_show(value)}), and a total never goes down;"
                f" used {_show(default)}",
            )
            return default
        return value

    def current_work(self) -> CurrentWork | None:
        key = _KEYS["current_work"]
        raw = self.take(key, lambda v: isinstance(v, dict), "an object", None)
        if raw is None:
            return None
        kind, work_id = raw.get("type"), raw.get("id")
        started, attempt = raw.get("startedAt"), raw.get("attempt", 1)
        if not (isinstance(kind, str) and isinstance(work_id, str) and _is_opt_str(started)):
            self.report(key, f"{key} needs string type and id, not {_show(raw)}; dropped it")
            return None
        if not _is_int(attempt):
            self.report(key, f"{key}.attempt should be an integer, not {_show(attempt)}; used 1")
            attempt = 1
        return CurrentWork(type=kind, id=work_id, started_at=started, attempt=attempt)

    def process(self, key: str) -> ProcessId | None:
        raw = self.take(key, lambda v: isinstance(v, dict), "an object", None)
        if raw is None:
            return None
        pid, host = raw.get("pid"), raw.get("host")
        ticks, boot, started = raw.get("startTicks"), raw.get("bootId"), raw.get("startedAt")
        if not (_is_int(pid) and pid > 0 and isinstance(host, str)):
            self.report(key, f"{key} needs a positive pid and a host, not {_show(raw)}; dropped it")
            return None
        if not ((ticks is None or _is_int(ticks)) and _is_opt_str(boot) and _is_opt_str(started)):
            # Without a trustworthy start time a reused pid would pass for the process.
            self.report(key, f"{key} has an unreadable start time, {_show(raw)}; dropped it")
            return None
        return ProcessId(pid, host, start_ticks=ticks, boot_id=boot, started_at=started)

    def alerts_position(self, format_found: int) -> Mapping[str, Any] | None:
        key = _KEYS["alerts_file_position"]
        value = self.rest.get(key)
        if format_found == 0 and _is_int(value):
            # The seed stored a bare byte offset; without the file's identity we cannot know
            # it still points into the same alerts.jsonl, so a full re-read is the safe choice.
            del self.rest[key]
            self.report(
                key,
                f"{key} {value} has no file identity (old state format); "
                "dropped it, alerts.jsonl will be read again from the start",
            )
            return None
        position: dict[str, Any] | None = self.take(
            key, lambda v: isinstance(v, dict), "an object", None
        )
        return position


def _show(value: object) -> str:
    """A value as the JSON a user would have typed, cut short."""
    shown = orjson.dumps(value, default=str).decode()
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _from_json(raw: dict[str, Any], text: str, file: str) -> LoadedState:
    reader = _Reader(raw, text, file)
    found = reader.rest.pop("format", 0)
    if not _is_int(found) or found < 0:
        reader.report(
            "format", f"format should be a whole number, not {_show(found)}; read as {FORMAT}"
        )
        found = FORMAT
    if found > FORMAT:
        raise WildError(
            f"{file}: written by a newer wild (state format {found}; this wild reads up to "
            f"{FORMAT}); upgrade wild and run it again"
        )
    k = _KEYS
    summaries: list[str] = reader.take(
        k["recent_summaries"],
        lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v),
        "a list of strings",
        [],
    )
    state = LoopState(
        active=reader.take(k["active"], lambda v: isinstance(v, bool), "true or false", False),
        iteration=reader.take(k["iteration"], _is_int, "an integer", 0),
        started_at=reader.take(k["started_at"], _is_opt_str, "a string", None),
        prompt=reader.take(k["prompt"], _is_opt_str, "a string", None),
        agent=reader.take(k["agent"], _is_opt_str, "a string", None),
        model=reader.take(k["model"], _is_opt_str, "a string", None),
        last_progress_report=reader.take(k["last_progress_report"], _is_opt_str, "a string", None),
        alerts_file_position=reader.alerts_position(found),
        current_work=reader.current_work(),
        paused=reader.take(k["paused"], lambda v: isinstance(v, bool), "true or false", False),
        consecutive_failures=reader.take(k["consecutive_failures"], _is_int, "an integer", 0),
        total_cost_usd=float(reader.total(k["total_cost_usd"], _is_number, "a number", 0.0)),
        total_tokens=reader.total(k["total_tokens"], _is_int, "an integer", 0),
        recent_summaries=tuple(summaries),
        loop_process=reader.process(k["loop_process"]),
        agent_process=reader.process(k["agent_process"]),
        extra=reader.rest,
    )
    # Fields are read in declaration order; report them in the order the user will scroll.
    return LoadedState(state, tuple(sorted(reader.problems, key=lambda p: p.line)))


@record
class Unreadable:
    """Bytes that hold no state at all (not JSON, not an object): where, and what is wrong."""

    line: int
    what: str


def parse_state(data: bytes, file: str) -> LoadedState | Unreadable:
    """The state in state.json's bytes; empty bytes are a fresh state.

    Raises WildError only for a file from a newer wild, which this one must not overwrite.
    """
    if not data.strip():
        return LoadedState(LoopState(), ())
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return Unreadable(exc.lineno, f"not valid JSON ({exc.msg})")
    if not isinstance(raw, dict):
        return Unreadable(1, "not a JSON object")
    # surrogateescape, as everywhere wild reads text: line numbers survive bad bytes
    return _from_json(raw, data.decode("utf-8", "surrogateescape"), file)


def state_to_json(state: LoopState) -> dict[str, Any]:
    """The JSON object for `state`; refuses states that could not be read back the same."""
    if state.format != FORMAT:
        raise ValueError(f"this wild writes state format {FORMAT}, not {state.format}")
    clash = _KNOWN_KEYS & state.extra.keys()
    if clash:
        raise ValueError(f"LoopState.extra may not hold the known key(s) {sorted(clash)}")
    if not math.isfinite(state.total_cost_usd):
        raise ValueError(f"total_cost_usd must be finite, not {state.total_cost_usd}")
    work = state.current_work
    known: dict[str, Any] = {
        _KEYS["format"]: state.format,
        _KEYS["active"]: state.active,
        _KEYS["iteration"]: state.iteration,
        _KEYS["started_at"]: state.started_at,
        _KEYS["prompt"]: state.prompt,
        _KEYS["agent"]: state.agent,
        _KEYS["model"]: state.model,
        _KEYS["last_progress_report"]: state.last_progress_report,
        _KEYS["alerts_file_position"]: (
            None if state.alerts_file_position is None else dict(state.alerts_file_position)
        ),
        _KEYS["current_work"]: work_json(work),
        _KEYS["paused"]: state.paused,
        _KEYS["consecutive_failures"]: state.consecutive_failures,
        _KEYS["total_cost_usd"]: state.total_cost_usd,
        _KEYS["total_tokens"]: state.total_tokens,
        _KEYS["recent_summaries"]: list(state.recent_summaries),
        _KEYS["loop_process"]: process_json(state.loop_process),
        _KEYS["agent_process"]: process_json(state.agent_process),
    }
    return {**state.extra, **known}


def work_json(work: CurrentWork | None) -> dict[str, Any] | None:
    """The current work as state.json holds it."""
    if work is None:
        return None
    return {"type": work.type, "id": work.id, "startedAt": work.started_at, "attempt": work.attempt}


def render_state(state: LoopState) -> bytes:
    """state.json's bytes: 2-space indent, sorted keys, trailing newline (stable diffs)."""
    options = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
    try:
        return orjson.dumps(state_to_json(state), option=options)
    except TypeError:  # text with bytes that are not UTF-8 (a goal given in another encoding)
        return orjson.dumps(escape_undecodable(state_to_json(state)), option=options)
