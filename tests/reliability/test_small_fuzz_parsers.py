"""Fuzzing the parsers beyond their own property tests: structured garbage and mutated real files.

tests/parsers and tests/store already check, per parser, that random text round-trips and that
random bytes never raise. Here the inputs are nearer to what breaks things: JSON with the right
keys and the wrong values (huge integers, wrong types, nesting) for state.json, the alerts
summary and the alerts cursor; events.log lines; and the shipped templates, the golden files
and the docs' examples with lines dropped, repeated, swapped and spliced with trouble. Each
parse must not raise, a Markdown file must render back byte for byte, a JSON state must survive
a write and a re-read unchanged, and the commands that read a mutated `.wild/` file must end
with exit 0 or 1, never crash (3).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import init_wild_dir, invoke
from wild.errors import WildError
from wild.output import escape_undecodable
from wild.parsers import barriers, human, tasks
from wild.parsers import policy as policy_parser
from wild.parsers.alerts_file import AlertCursor, parse_appended, plan_compaction
from wild.parsers.alerts_summary import VERSION, decode_summary, encode_summary
from wild.parsers.events_log import RESERVED, encode_event, parse_events
from wild.parsers.lines import split_lines
from wild.parsers.state import FORMAT, LoadedState, Unreadable, parse_state, render_state

ROOT = Path(__file__).resolve().parents[2]
SCALE = int(os.environ.get("WILD_FUZZ_SCALE", "1"))  # `WILD_FUZZ_SCALE=50`: a long fuzz

# ------------------------------------------------------------------------------- JSON values

BIG = [0, -1, 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1, 10**30]
SCALARS = (
    st.none()
    | st.booleans()
    | st.sampled_from(BIG)
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "x", "2026-02-08T10:00:00Z", "0001-01-01T00:00:00+14:00", "\udcff"])
    | st.text(max_size=8)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)


def objects(shape: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects with any subset of `shape`'s keys (its strategy or any JSON) and a stray key."""
    keys = st.sampled_from([*shape, "x"])

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        chosen = draw(st.lists(keys, unique=True, max_size=len(shape) + 1))
        return {k: draw(shape.get(k, JSON) | JSON) for k in chosen}

    return build()


def dumped(value: object) -> bytes:
    """JSON text as any writer might produce it (Python's json: big integers, NaN, \\udcff)."""
    return json.dumps(value).encode("utf-8", "surrogatepass")


# ------------------------------------------------------------------------------- state.json

CURSOR = {
    "dev": st.sampled_from(BIG),
    "ino": st.sampled_from(BIG),
    "offset": st.sampled_from(BIG),
    "lineCount": st.sampled_from(BIG),
    "head": st.text(max_size=4),
    "tail": st.text(max_size=4),
}
PROCESS = {
    "pid": st.sampled_from(BIG),
    "host": st.text(max_size=4),
    "startTicks": st.sampled_from(BIG),
    "bootId": st.text(max_size=4),
    "startedAt": SCALARS,
}
WORK = {"type": st.text(max_size=5), "id": st.text(max_size=5), "attempt": st.sampled_from(BIG)}
STATE = {
    "format": st.sampled_from([FORMAT, 0, 2, "1", 1.0, True]),
    "active": st.booleans(),
    "iteration": st.sampled_from(BIG),
    "startedAt": SCALARS,
    "prompt": st.text(max_size=8),
    "alertsFilePosition": objects(CURSOR),
    "currentWork": objects(WORK),
    "paused": st.booleans(),
    "consecutiveFailures": st.sampled_from(BIG),
    "totalCostUsd": st.floats() | st.sampled_from(BIG),
    "totalTokens": st.sampled_from(BIG),
    "recentSummaries": st.lists(SCALARS, max_size=3),
    "loopProcess": objects(PROCESS),
    "agentProcess": objects(PROCESS),
}


@settings(max_examples=50 * SCALE)
@given(objects(STATE))
def test_any_state_object_loads_and_survives_a_write_and_a_reread(raw: dict[str, Any]) -> None:
    try:
        loaded = parse_state(dumped(raw), "state.json")
    except WildError:  # only a newer wild's file, which this one must not overwrite
        assert isinstance(raw.get("format"), int) and raw["format"] > FORMAT
        return
    if isinstance(loaded, Unreadable):  # NaN, an integer past 64 bits, a lone surrogate
        return
    again = parse_state(render_state(loaded.state), "state.json")
    assert again == LoadedState(loaded.state, ())


# ------------------------------------------------------------------------------- events.log


@settings(max_examples=40 * SCALE)
@given(
    st.lists(st.binary(max_size=30) | st.builds(dumped, JSON), max_size=6), st.binary(max_size=8)
)
def test_any_events_log_parses_and_keeps_every_whole_object(
    lines: list[bytes], tail: bytes
) -> None:
    data = b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n" + tail
    events, problems = parse_events(data, "events.log")
    assert all(isinstance(event, dict) for event in events)
    # Each non-blank line is an event or one problem on its own line; so is a torn tail.
    *whole, torn = data.split(b"\n")
    filled = [n for n, line in enumerate(whole, start=1) if line.strip()]
    assert len(events) + len([p for p in problems if p.line <= len(whole)]) == len(filled)
    assert {p.line for p in problems} <= {*filled, len(whole) + 1}
    assert any(p.line == len(whole) + 1 for p in problems) == bool(torn.strip())


@settings(max_examples=30 * SCALE)
@given(
    st.lists(
        st.tuples(
            st.text(max_size=6),
            st.sampled_from([None, "evt-1"]),
            st.dictionaries(st.text(max_size=6).filter(lambda k: k not in RESERVED), JSON),
        ),
        max_size=5,
    )
)
def test_every_encoded_event_reads_back_the_same(events: list[tuple[str, str | None, Any]]) -> None:
    try:
        data = b"".join(
            encode_event(f"evt-{n}", "2026-02-08T10:00:00Z", kind, cause, payload)
            for n, (kind, cause, payload) in enumerate(events)
        )
    except TypeError:  # orjson refuses what JSON cannot hold: integers past 64 bits
        return
    parsed, problems = parse_events(data, "events.log")
    assert problems == []
    # Text with bytes that are not UTF-8 (\udcff) is logged with each such byte as `\xNN`.
    assert parsed == [
        escape_undecodable(
            {"id": f"evt-{n}", "ts": "2026-02-08T10:00:00Z", "kind": kind, "cause": cause} | payload
        )
        for n, (kind, cause, payload) in enumerate(events)
    ]


# ------------------------------------------------------------- alerts: summary and cursor

ALERT = {
    "id": st.sampled_from(["alert-001", "alert-002", "", " "]),
    "severity": st.sampled_from(["critical", "warning", "info", "CRITICAL", "fatal"]),
    "status": st.sampled_from(["pending", "in-progress", "resolved", "ignored", "done"]),
    "context": JSON,
    "choices": st.lists(SCALARS, max_size=3),
    "description": st.text(max_size=8),
}
SUMMARY = {
    "version": st.sampled_from([VERSION, 0, 2, "1"]),
    "cursor": objects(CURSOR),
    "open": st.lists(objects({"line": st.sampled_from(BIG), "alert": objects(ALERT)}), max_size=3),
    "problems": st.lists(st.lists(SCALARS, max_size=3), max_size=3),
    "counts": JSON,
}


@settings(max_examples=50 * SCALE)
@given(objects(SUMMARY))
def test_any_alerts_summary_decodes_or_is_rebuilt_and_survives_a_rewrite(
    raw: dict[str, Any],
) -> None:
    summary = decode_summary(dumped(raw))
    if summary is not None:
        assert decode_summary(encode_summary(summary)) == summary
    cursor = AlertCursor.from_json(raw.get("cursor"))
    if cursor is not None:
        assert AlertCursor.from_json(cursor.to_json()) == cursor


@settings(max_examples=30 * SCALE)
@given(
    st.lists(st.binary(max_size=20) | st.builds(dumped, objects(ALERT)), max_size=6),
    st.sampled_from(BIG[:6]),
)
def test_any_alert_lines_parse_and_compact(lines: list[bytes], before: int) -> None:
    data = b"\n".join(lines)
    appended = parse_appended(data, before)
    assert 0 <= appended.consumed <= len(data)
    plan_compaction(data)


# --------------------------------------------------------- the Markdown files, mutated

# Values out of range (year 1 at +14:00, 99999999d) are tests/reliability/test_liveness_*'s.
TROUBLE_LINES = [
    "",
    "```",
    "~~~",
    "<!--",
    "-->",
    "---",
    "#",
    "## [PENDING] 2026-02-30T25:61:00Z - URGENT",
    "## [WAITING] barrier-x",
    "## [SATISFIED] barrier-x",
    "## Current Policy: Hands Off (forever)",
    "**Expires At:** 2026-13-45T00:00:00Z",
    "**Active From:** yesterday",
    "**Duration:** 0s",
    "- **Mode:** hands-off",
    "- **Command Approval:** trusted",
    "- Interval: 0s",
    "- Timeout: -1s",
    "- Type: count-based",
    "- Target: 99999999999999999999999",
    "- [ ] task-001: again",
    "- [x] task-002: b [depends: task-003]",
    "- [ ] task-003: c [depends: task-002] [priority: 99999999999999999999]",
    "- [ ] task-004: d [blockedBy: barrier-x, barrier-y] [priority: -1]",
    "### Instructions",
    "### Settings",
    "\ufeff# BOM",
    "\x00",
    "a\u2028b\x85c\x0cd\x0b",
    "\udcff\udcfe",
    "x" * 3000,
]
GOLDEN = ROOT / "tests" / "parsers" / "golden"
TEMPLATES = ROOT / "templates" / ".wild"


def seeds(file: str, *golden: str) -> list[str]:
    """The shipped template, golden files and docs/formats.md examples of one `.wild/` file."""
    from tests.test_docs import FORMATS_DOC, examples

    found = [(TEMPLATES / file).read_text(), *((GOLDEN / g).read_text() for g in golden)]
    return found + [e.text for e in examples(FORMATS_DOC.read_text()) if e.file == file]


@st.composite
def mutated(draw: st.DrawFn, texts: list[str]) -> str:
    """A real file with lines dropped, repeated, swapped, replaced, endings changed, cut short."""
    lines = split_lines(draw(st.sampled_from(texts)))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(lines)))
        there = lines[at] if at < len(lines) else ""
        ending = there[len(there.rstrip("\r\n")) :] or "\n"
        trouble = draw(st.sampled_from(TROUBLE_LINES) | st.text(max_size=12))
        what = draw(st.sampled_from(["drop", "repeat", "swap", "insert", "value", "eol", "cut"]))
        if what == "drop" and there:
            del lines[at]
        elif what == "repeat" and there:
            lines.insert(at, there)
        elif what == "swap" and there:
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], there
        elif what == "value" and ":" in there:
            key = re.match(r"[^:]*:\**", there)
            lines[at] = f"{key.group(0) if key else ''} {trouble}{ending}"
        elif what == "eol" and there:
            lines[at] = there.rstrip("\r\n") + draw(st.sampled_from(["\r\n", "\r", "", "\n\n"]))
        elif what == "cut":
            lines = lines[:at] + ([there[: draw(st.integers(0, len(there)))]] if there else [])
        else:
            lines.insert(at, trouble + ending)
    return "".join(lines)


TASKS = seeds("tasks.md", "tasks_seed001.md")
BARRIERS = seeds("barriers.md", "barriers_seed.md", "barriers_tolerant.md")
HUMAN = seeds("human.md", "human_seed.md", "human_tolerant.md")
POLICY = seeds("human-policy.md", "policy_seed001.md", "policy_tolerant.md")
PARSERS = {
    "tasks.md": (TASKS, tasks.parse, tasks.render),
    "barriers.md": (BARRIERS, barriers.parse, barriers.render),
    "human.md": (HUMAN, human.parse, human.render),
    "human-policy.md": (POLICY, policy_parser.parse, policy_parser.render),
}


@pytest.mark.parametrize("file", sorted(PARSERS))
def test_a_mutated_real_file_round_trips_byte_for_byte(file: str) -> None:
    texts, parse, render = PARSERS[file]

    @settings(max_examples=40 * SCALE)
    @given(mutated(texts))
    def check(text: str) -> None:
        assert render(parse(text)) == text  # type: ignore[operator]

    check()


@pytest.fixture(scope="module")
def wild_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_wild_dir(tmp_path_factory.mktemp("fuzz-files"))


@pytest.mark.parametrize("file", sorted(PARSERS))
def test_commands_that_read_a_mutated_file_never_crash(wild_dir: Path, file: str) -> None:
    texts = PARSERS[file][0]
    kept = (wild_dir / file).read_bytes()

    @settings(max_examples=12 * SCALE)
    @given(mutated(texts))
    def check(text: str) -> None:
        (wild_dir / file).write_bytes(text.encode("utf-8", "surrogateescape"))
        for action in (["--status", "--json"], ["--list-work"], ["--show-policy"]):
            result = invoke(*action, "--dir", str(wild_dir))
            assert result.exit_code in (0, 1), (action, result.output)

    try:
        check()
    finally:
        (wild_dir / file).write_bytes(kept)


# An action that writes each file, and whether it only appends (then the old bytes stay first).
WRITERS = {
    "tasks.md": (["--add-task", "Plot the loss curves"], True),
    "human.md": (["--human-input", "Use the smaller model"], True),
    "barriers.md": (["--satisfy", "barrier-x"], False),
    "human-policy.md": (["--update-policy", "autonomous", "--duration", "6h"], False),
}


@pytest.mark.parametrize("file", sorted(WRITERS))
def test_commands_that_write_a_mutated_file_never_crash_nor_lose_it(
    wild_dir: Path, file: str
) -> None:
    texts = PARSERS[file][0]
    action, appends = WRITERS[file]
    kept = (wild_dir / file).read_bytes()

    @settings(max_examples=10 * SCALE)
    @given(mutated(texts))
    def check(text: str) -> None:
        before = text.encode("utf-8", "surrogateescape")
        (wild_dir / file).write_bytes(before)
        result = invoke(*action, "--dir", str(wild_dir))
        assert result.exit_code in (0, 1), (action, result.output)
        after = (wild_dir / file).read_bytes()
        if result.exit_code == 1:
            assert after == before  # refused: untouched
        elif appends:
            assert after.startswith(before.rstrip(b"\r\n"))

    try:
        check()
    finally:
        (wild_dir / file).write_bytes(kept)
