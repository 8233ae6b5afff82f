"""The run's totals that the limits count (`--max-iterations`, `--max-time`, `--max-cost`,
`--max-tokens`), as state.json holds them and as the ledger outside the project keeps them
(`wild.store.totals_ledger`): taking the higher of the two, and the ledger's bytes.

Totals only grow during a run, so the higher figure of each is the true one: an agent that
writes garbage over state.json, links it away or deletes it cannot lower what was spent.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from wild.parsers.jsonl import NEWLINE, loads
from wild.parsers.state import LoopState
from wild.record import record, replace

# state.json `extra` keys of the run's counted agent runs and running time (wild.loop.limits).
COUNTED = "countedIterations"
RUNNING_S = "runningSeconds"
LEDGER_FORMAT = 2  # JSON lines, one per raise (1: one indented document, wild 0.2)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _amount(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.0
    return max(0.0, float(value))


@record
class Totals:
    """What a run has used so far; each field only grows."""

    iteration: int = 0
    counted: int = 0
    running_s: float = 0.0
    cost_usd: float = 0.0
    tokens: int = 0

    @classmethod
    def of(cls, state: LoopState) -> Totals:
        return cls(
            iteration=_count(state.iteration),
            counted=_count(state.extra.get(COUNTED)),
            running_s=_amount(state.extra.get(RUNNING_S)),
            cost_usd=_amount(state.total_cost_usd),
            tokens=_count(state.total_tokens),
        )

    @classmethod
    def from_json(cls, raw: object) -> Totals:
        """Leniently: a damaged entry counts nothing (what is missing reads as 0)."""
        if not isinstance(raw, Mapping):
            return cls()
        return cls(
            iteration=_count(raw.get("iteration")),
            counted=_count(raw.get(COUNTED)),
            running_s=_amount(raw.get(RUNNING_S)),
            cost_usd=_amount(raw.get("totalCostUsd")),
            tokens=_count(raw.get("totalTokens")),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            COUNTED: self.counted,
            RUNNING_S: self.running_s,
            "totalCostUsd": self.cost_usd,
            "totalTokens": self.tokens,
        }

    def at_least(self, other: Totals) -> Totals:
        """The higher figure of each."""
        # Field by field, not `astuple` (a deep copy of each): asked twice or more per raise.
        return Totals(
            iteration=max(self.iteration, other.iteration),
            counted=max(self.counted, other.counted),
            running_s=max(self.running_s, other.running_s),
            cost_usd=max(self.cost_usd, other.cost_usd),
            tokens=max(self.tokens, other.tokens),
        )

    def covers(self, other: Totals, time_grain_s: float = 0.0) -> bool:
        """Whether no figure of `other` is higher than ours, its running time by no more than
        `time_grain_s` (what a ledger may lag behind while nothing else moved)."""
        if other.running_s < self.running_s + time_grain_s:
            other = replace(other, running_s=min(other.running_s, self.running_s))
        return self.at_least(other) == self

    def describe(self) -> str:
        return (
            f"${self.cost_usd:.2f}, {self.tokens} tokens, {self.counted} iterations counted,"
            f" {self.running_s:.0f} s running"
        )


def from_events(events: Iterable[Mapping[str, Any]]) -> Totals:
    """What events.log's `agent-end` lines add up to: the last resort when state.json and the
    ledger both count nothing (a lower bound: a run killed before its line is not in it)."""
    ends = [e for e in events if e.get("kind") == "agent-end"]
    return Totals(
        iteration=max((_count(e.get("iteration")) for e in ends), default=0),
        counted=len(ends),
        running_s=sum(_amount(e.get("duration_s")) for e in ends),
        cost_usd=sum(_amount(e.get("cost_usd")) for e in ends),
        tokens=sum(_count(e.get("input_tokens")) + _count(e.get("output_tokens")) for e in ends),
    )


def raised(state: LoopState, totals: Totals) -> LoopState:
    """`state` with every total at least `totals`' (nothing else changes)."""
    high = Totals.of(state).at_least(totals)
    extra = {**state.extra, COUNTED: high.counted, RUNNING_S: high.running_s}
    return replace(
        state,
        iteration=high.iteration,
        total_cost_usd=high.cost_usd,
        total_tokens=high.tokens,
        extra=extra,
    )


def ledger_entry(data: bytes, project: str) -> Totals:
    """One project's totals in wild 0.1's ledger of every project of the machine
    (`{"format": 1, "projects": {"/path": {...}}}`; none recorded, or damaged bytes: all
    zero), without making a record of every other project's.

    Bytes that do not name the project as a JSON writer spells it (orjson, or `json` with its
    `\\u` escapes) hold no entry of it and are not parsed: a project started since wild 0.2
    has none, and the whole machine's ledger is ~1 ms to parse at each fresh project's launch
    (issue 22 item 8)."""
    if orjson.dumps(project) not in data and json.dumps(project).encode() not in data:
        return Totals()
    try:
        document = loads(data) if data.strip() else {}
    except ValueError:
        return Totals()
    projects = document.get("projects") if isinstance(document, dict) else None
    raw = projects.get(project) if isinstance(projects, dict) else None
    return Totals() if raw is None else Totals.from_json(raw)


def project_ledger(data: bytes, project: str) -> Totals:
    """The totals in a project's own ledger file: each figure's highest over its JSON lines
    that name the project (`ledger_line`; wild 0.2 wrote one indented document, which may
    lead the lines). A line torn by a crash, damaged, or naming another project counts
    nothing: the caller's higher figures then cover it."""
    found = Totals()
    for document in _documents(data):
        if isinstance(document, dict) and document.get("project") == project:
            found = found.at_least(Totals.from_json(document.get("totals")))
    return found


def _documents(data: bytes) -> list[object]:
    """The JSON values of a ledger file, each read by the one decoder of a JSON line
    (`wild.parsers.jsonl.loads`): wild 0.2's indented document first when the file starts
    with one (orjson's two-space indent closes it with a `}` of its own line), then a value a
    line; what does not parse (a line torn by a crash, damaged bytes) is left out."""
    parts = data.split(NEWLINE)
    if data.startswith(b"{\n"):  # wild 0.2's document, lines appended after it
        head, closing, rest = data.partition(b"\n}\n")
        parts = [head + closing, *rest.split(NEWLINE)]
    documents: list[object] = []
    for part in parts:
        with contextlib.suppress(ValueError):
            documents.append(loads(part))
    return documents


def ledger_line(project: str, totals: Totals) -> bytes:
    """One raise of a project's ledger file, a JSON line:
    `{"format": 2, "project": "/path", "totals": {...}}`. The file is these lines, appended
    one per raise and rewritten as one now and then (`wild.store.totals_ledger`)."""
    document = {"format": LEDGER_FORMAT, "project": project, "totals": totals.to_json()}
    return orjson.dumps(document) + b"\n"
