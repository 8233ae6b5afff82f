"""Liveness regressions: a huge value from a job degrades only its own item, and what wild
prints to the terminal is capped."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson

from tests.cli_support import init_wild_dir, invoke
from wild.output import SHOWN_LINE_CHARS, capped, cut
from wild.parsers.alerts import MAX_LINE_BYTES, encode_alert, parse_entry, status_update
from wild.parsers.oversize import LONGEST_VALUE_CHARS

BIG = 10_000_000
NOW = datetime(2026, 2, 8, tzinfo=UTC)
MARKER_CHARS = 40  # "… (9999999 more bytes)" and some


def _append_huge_alert(root: Path) -> int:
    """The line's length, without its newline."""
    record = {
        "id": "alert-big",
        "severity": "critical",
        "source": "job",
        "type": "OOM",
        "description": "x" * BIG,
    }
    with (root / "alerts.jsonl").open("ab") as file:
        file.write(orjson.dumps(record) + b"\n")
    return len(orjson.dumps(record))


def _longest_line(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_a_10_mb_alert_line_does_not_stop_the_loop_nor_flood_the_terminal(
    tmp_path: Path,
) -> None:
    root = init_wild_dir(tmp_path)
    _append_huge_alert(root)
    result = invoke("Goal", "--agent-cmd", "sh -c 'cat >/dev/null'", "--once", "--dir", str(root))
    assert result.exit_code == 0, result.output[:2000]
    assert "🤖 Iteration 1: alert alert-big" in result.output
    assert _longest_line(result.output) <= SHOWN_LINE_CHARS + MARKER_CHARS
    assert "more bytes)" in result.output
    # wild's own state line for the alert is written, small, and the job's line is kept whole
    lines = (root / "alerts.jsonl").read_bytes().splitlines()
    assert len(lines[0]) > BIG
    assert all(len(line) <= MAX_LINE_BYTES for line in lines[1:]) and len(lines) > 1


def test_status_names_the_oversize_line_and_stays_short(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    size = _append_huge_alert(root)
    result = invoke("--status", "--dir", str(root))
    assert result.exit_code == 0
    assert _longest_line(result.output) <= SHOWN_LINE_CHARS + MARKER_CHARS
    assert (
        f"alerts.jsonl:1: alert alert-big: the line is {size} bytes, over the "
        f"{MAX_LINE_BYTES}-byte limit; wild uses it with values cut to {LONGEST_VALUE_CHARS} "
        "characters (the file keeps them whole); put large output in a file and name it in "
        "the context"
    ) in result.output


def test_json_output_is_not_cut(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    long_title = "t" * (3 * SHOWN_LINE_CHARS)
    invoke("--add-task", long_title, "--dir", str(root))
    shown = orjson.loads(invoke("--list-work", "--json", "--dir", str(root)).output)
    assert long_title in orjson.dumps(shown).decode()


def test_an_oversize_line_of_many_small_values_keeps_its_essential_fields() -> None:
    record = {"id": "a", "severity": "info", "description": "d"}
    record |= {f"k{n}": "v" * 100 for n in range(20_000)}
    alert, problems = parse_entry(orjson.dumps(record), 1)
    assert alert is not None and (alert.id, alert.severity, alert.description) == ("a", "info", "d")
    assert set(alert.raw) == {"id", "severity", "description"}
    assert len(problems) == 1


def test_cut_says_how_many_bytes_were_left_out() -> None:
    assert cut("short", 10) == "short"
    assert cut("abcdé" * 3, 5) == "abcdé… (12 more bytes)"
    assert capped("a\n" + "b" * 12, 10) == "a\nbbbbbbbbbb… (2 more bytes)"


def test_wild_s_own_line_for_an_alert_always_fits_however_long_the_guidance() -> None:
    near_limit = {"id": "a", "severity": "info", "description": "d" * (MAX_LINE_BYTES - 100)}
    alert, problems = parse_entry(orjson.dumps(near_limit), 1)
    assert alert is not None and problems == ()  # under the limit: used as it is
    for update in (
        status_update(alert, "in-progress", NOW),
        status_update(alert, "pending", NOW, humanGuidance="g" * (2 * MAX_LINE_BYTES)),
        status_update(alert, "resolved", NOW, resolution="r" * (2 * MAX_LINE_BYTES)),
    ):
        assert len(encode_alert(update)) <= MAX_LINE_BYTES
        assert update["id"] == "a" and "more bytes)" in orjson.dumps(update).decode()
