"""`wild --alert … --choice …` then `wild --wait-alert ID`: a job blocks on the answer."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson

from tests.cli_support import init_wild_dir, invoke
from wild.parsers.alerts import parse_entry, status_update
from wild.store.alerts_log import append_alert

ALERT = ("--alert", "--severity", "warning", "--source", "job-3", "--type", "nan")


def _raise(root: Path) -> str:
    result = invoke(
        *ALERT, "--description", "loss is nan", "--choice", "rerun", "--choice", "stop",
        "--dir", str(root),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output.strip()


def _resolve(root: Path, alert_id: str, choice: str) -> None:
    """Append the resolution as the loop's judge does (another process here)."""
    line = (root / "alerts.jsonl").read_bytes().splitlines()[-1]
    alert, _ = parse_entry(line, 1)
    assert alert is not None and alert.id == alert_id
    now = datetime.now(UTC)
    append_alert(
        root / "alerts.jsonl",
        status_update(alert, "resolved", now, resolution={"choice": choice, "note": None}),
    )


def test_the_waiting_process_prints_the_choice_given_by_another_process(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    alert_id = _raise(root)
    assert alert_id.startswith("alert-")
    waiting = subprocess.Popen(
        [sys.executable, "-m", "wild", "--wait-alert", alert_id, "--timeout", "60"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(0.5)  # let it reach its wait; an earlier answer is found by its first read
        assert waiting.poll() is None, waiting.communicate()
        _resolve(root, alert_id, "rerun")
        out, err = waiting.communicate(timeout=30)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, err
    assert out.strip() == "rerun"


def test_an_already_resolved_alert_returns_at_once(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    alert_id = _raise(root)
    _resolve(root, alert_id, "stop")
    result = invoke("--wait-alert", alert_id, "--dir", str(root))
    assert (result.exit_code, result.output.strip()) == (0, "stop")


def test_a_timeout_exits_124_and_an_unknown_id_exits_6(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    alert_id = _raise(root)
    timed_out = invoke("--wait-alert", alert_id, "--timeout", "0.2", "--dir", str(root))
    assert timed_out.exit_code == 124
    assert "still pending" in timed_out.output
    unknown = invoke("--wait-alert", "alert-nope", "--dir", str(root))
    assert unknown.exit_code == 6
    assert "no alert with id 'alert-nope'" in unknown.output
    lines = [orjson.loads(x) for x in (root / "alerts.jsonl").read_bytes().splitlines()]
    assert [x["status"] for x in lines] == ["pending"]  # waiting wrote nothing


def test_timeout_belongs_to_wait_alert(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    result = invoke("--status", "--timeout", "3", "--dir", str(root))
    assert result.exit_code == 2
    assert "--wait-alert" in result.output
