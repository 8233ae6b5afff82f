"""Liveness fuzzing: any value in any `.wild/` file, and any text given to a CLI flag, gives
problems or a one-line error, never a crash (exit 3) and never an exception from a parser.

Values are planted into otherwise valid files, so they reach the code that uses them (date
arithmetic, durations, counts), which plain garbage would not: a garbage line is skipped early.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import invoke
from wild.errors import WildError
from wild.parsers import barriers, human, policy, tasks
from wild.parsers.alerts import parse_entry
from wild.parsers.events_log import parse_events
from wild.parsers.state import parse_state
from wild.policy.model import effective_policy, policy_from_document

# Values that broke or may break a reader: out-of-range dates, huge and odd numbers.
EXTREMES = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "0001-01-01",
    "9999-12-31T23:59:59Z",
    "99999999d",
    "99999999999 days",
    "1" * 400 + " days",
    "9" * 5000,
    "-1",
    "0",
    "1e999",
    "inf",
    "nan",
    "Every 99999999999999999999 minutes",
    "Escalate after 99999999999999999999999 failed attempts",
    "",
]

values = st.one_of(
    st.sampled_from(EXTREMES),
    st.text(max_size=20),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.from_regex(r"-?\d{1,22}(\.\d{1,4})? ?(d|h|m|s|days|hours|minutes|weeks|y)", fullmatch=True),
    st.datetimes().map(lambda moment: moment.isoformat() + "+14:00"),
)


def policy_text(v: list[str]) -> str:
    return (
        "# Human Policy\n\n## Current Policy: Autonomous Mode\n\n"
        f"**Active From:** {v[0]}  \n**Duration:** {v[1]}  \n**Expires At:** {v[2]}\n\n"
        "### Settings\n\n"
        "- **Mode:** autonomous\n"
        f"- **Max Retry Attempts:** {v[3]}\n"
        f"- **Progress Reports:** {v[4]}\n"
        f"- **Context Switch Penalty:** {v[5]}\n\n"
        "### Escalation Rules\n\n"
        f"- **Repeated Failures:** {v[6]}\n"
        f"- **Stuck Duration:** {v[7]}\n\n"
        "### Instructions\n\nGo.\n\n---\n\n## Policy History\n"
    )


def tasks_text(v: list[str]) -> str:
    return (
        "# Tasks\n\n"
        f"- [ ] [P{v[0]}] task-{v[1]}: first\n"
        f"  - dependsOn: task-{v[2]}\n"
        f"- [/] [P{v[3]}] task-001: second {v[4]}\n"
        f"- [ ] untitled {v[5]}\n"
    )


def barriers_text(v: list[str]) -> str:
    return (
        "# Barriers\n\n"
        "## [WAITING] barrier-a\n"
        "- Type: command-check\n"
        "- Check: true\n"
        f"- Interval: {v[0]}\n"
        f"- Timeout: {v[1]}\n"
        f"- Last check: {v[2]}\n\n"
        "## [WAITING] barrier-b\n"
        "- Type: count-based\n"
        "- Check: echo 1\n"
        f"- Target: {v[3]}\n"
        f"- Since: {v[4]}\n"
    )


def human_text(v: list[str]) -> str:
    return (
        "# Human Input Queue\n\n"
        f"## [PENDING] {v[0]}\n\n### Input:\n{v[1]}\n\n"
        f"## [PROCESSED] {v[2]}\n\n### Input:\nold\n"
    )


def alerts_bytes(v: list[str]) -> bytes:
    lines = [
        {"id": "alert-1", "severity": "critical", "timestamp": v[0], "description": v[1]},
        {"id": "alert-2", "status": "escalated", "escalatedAt": v[2], "resolvedAt": v[3]},
        {"id": "alert-3", "context": {"attempt": v[4]}, "choices": [v[5]]},
    ]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def state_bytes(v: list[str]) -> bytes:
    state = {
        "format": 1,
        "active": False,
        "iteration": 3,
        "startedAt": v[0],
        "lastProgressReport": v[1],
        "currentWork": {"type": "task", "id": "task-001", "attempt": 1, "startedAt": v[2]},
        "loopProcess": {"pid": 1, "host": "x", "startedAt": v[3], "startTicks": 1},
    }
    return orjson.dumps(state)


def write_folder(root: Path, v: list[str]) -> None:
    root.mkdir()
    (root / "human-policy.md").write_text(policy_text(v))
    (root / "tasks.md").write_text(tasks_text(v))
    (root / "barriers.md").write_text(barriers_text(v))
    (root / "human.md").write_text(human_text(v))
    (root / "alerts.jsonl").write_bytes(alerts_bytes(v))
    (root / "state.json").write_bytes(state_bytes(v))


fields = st.lists(values, min_size=8, max_size=8)
NOW = datetime(2026, 2, 8, tzinfo=UTC)


@pytest.mark.parametrize("extreme", EXTREMES, ids=lambda text: text[:24])
def test_each_extreme_value_in_every_field_is_only_a_problem(extreme: str) -> None:
    parse_everything([extreme] * 8)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".wild"
        write_folder(root, [extreme] * 8)
        for command in ("--status", "--list-work", "--show-policy"):
            result = invoke(command, "--dir", str(root))
            assert result.exit_code == 0, (command, result.output)


@settings(max_examples=150)
@given(fields)
def test_no_parser_raises_on_a_bad_value(v: list[str]) -> None:
    parse_everything(v)


def parse_everything(v: list[str]) -> None:
    """Each file's parser, and the policy's use of its dates; any exception fails the test."""
    read = policy_from_document(policy.parse(policy_text(v)))
    effective_policy(read, read.active_from or NOW)
    effective_policy(read, NOW)
    tasks.parse(tasks_text(v))
    barriers.parse(barriers_text(v))
    human.parse(human_text(v))
    for number, line in enumerate(alerts_bytes(v).splitlines(), start=1):
        parse_entry(line, number)
    parse_state(state_bytes(v), "state.json")


@settings(max_examples=25)
@given(fields)
def test_reading_commands_never_crash_on_any_value(v: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".wild"
        write_folder(root, v)
        for command in ("--status", "--list-work", "--show-policy"):
            result = invoke(command, "--dir", str(root))
            assert result.exit_code in (0, 1), (command, result.output)
            assert "crashed" not in result.output, (command, result.output)


# Each flag that takes a free-text value, with the action it belongs to.
FLAG_CALLS = [
    ("--update-policy", "autonomous", "--duration"),
    ("--update-policy",),
    ("--add-task", "x", "--priority"),
    ("--add-task", "x", "--depends-on"),
    ("--add-task",),
    ("--human-input",),
    ("--alert", "--severity", "info", "--description", "d", "--context"),
    ("--alert", "--severity", "info", "--description"),
    ("--satisfy",),
    ("--approve",),
    ("--generate-check",),
    ("goal", "--agent-cmd", "true", "--max-time"),
    ("goal", "--agent-cmd", "true", "--agent-timeout"),
]

flag_text = st.one_of(st.sampled_from(EXTREMES), st.text(max_size=30), values)


@settings(max_examples=60)
@given(st.sampled_from(FLAG_CALLS), flag_text)
def test_cli_flag_values_give_an_error_not_a_crash(call: tuple[str, ...], text: str) -> None:
    # Loop calls get --max-iterations 1 and a folder whose tasks are done, so a valid value
    # ends at once instead of running an agent.
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".wild"
        assert invoke("--init", "--dir", str(root)).exit_code == 0
        args = [*call, text, "--dir", str(root)]
        if call[0] == "goal":
            args += ["--max-iterations", "1"]
        result = invoke(*args)
        # 0 done, 1 an error naming what to fix, 2 a usage error (a bad flag value), 4 the
        # loop stopped at --max-iterations
        assert result.exit_code in (0, 1, 2, 4), (args, result.output)
        assert "crashed" not in result.output, (args, result.output)
        errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(errors) <= 1, result.output


@pytest.mark.parametrize("extreme", EXTREMES[:6] + EXTREMES[7:8], ids=lambda text: text[:24])
def test_the_loop_starts_and_runs_with_an_extreme_value_in_every_field(extreme: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".wild"
        write_folder(root, [extreme] * 8)
        result = invoke("Goal", "--agent-cmd", "true", "--once", "--dir", str(root))
        assert result.exit_code == 0, result.output
        assert "Error" not in result.output, result.output


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)
STATE_KEYS = ["format", "active", "iteration", "startedAt", "lastProgressReport", "currentWork"]
STATE_KEYS += ["loopProcess", "agentProcess", "alertsFilePosition", "totalCostUsd"]


@settings(max_examples=60)
@given(st.dictionaries(st.sampled_from(STATE_KEYS), json_values), st.binary(max_size=200))
def test_state_and_event_log_garbage_is_reported_not_raised(
    state: dict[str, object], garbage: bytes
) -> None:
    # A state.json of any shape is read or called unreadable; a newer format is the one
    # refusal (wild must not overwrite it), and it is a WildError with what to do.
    try:
        parse_state(orjson.dumps({"format": 1, **state}), "state.json")
    except WildError as error:
        assert "newer" in str(error)
    parse_state(garbage, "state.json")
    parse_state(b'{"format": 1, "iteration": 1' + b"9" * 30 + b', "totalCostUsd": 1e999}', "s")
    parse_events(garbage, "events.log")
    parse_events(orjson.dumps(state) + b"\n" + garbage, "events.log")
