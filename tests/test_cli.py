"""The CLI contract (SPEC §9): every flag, exact output, exact error text, exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from tests.cli_support import FixedClock, init_wild_dir, invoke
from wild import cli as cli_module
from wild.commands.watch import watch_status
from wild.parsers import human as human_md
from wild.paths import WildPaths
from wild.workspace_view import Workspace

# The smallest complete `wild --alert` command line.
INFO_ALERT = ("--alert", "--severity", "info", "--source", "s", "--type", "t", "--description", "d")
NOW = datetime(2026, 2, 8, 12, 30, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_module, "clock", FixedClock(NOW))


@pytest.fixture
def wild_dir(tmp_path: Path) -> Path:
    root = init_wild_dir(tmp_path)
    return root


def test_init_creates_every_file_and_never_overwrites(tmp_path: Path) -> None:
    root = tmp_path / ".wild"
    first = invoke("--init", "--dir", str(root))
    assert first.exit_code == 0
    assert first.output == (
        f"Initialised {root}: created alerts.jsonl, barriers.md, checks.md, human-policy.md,"
        " human.md, state.json, tasks.md\n"
    )
    (root / "tasks.md").write_text("- [ ] mine\n")
    again = invoke("--init", "--dir", str(root))
    assert again.output == (
        f"Initialised {root}: created nothing; kept existing alerts.jsonl, barriers.md,"
        " checks.md, human-policy.md, human.md, state.json, tasks.md\n"
    )
    assert (root / "tasks.md").read_text() == "- [ ] mine\n"


def test_wild_dir_env_selects_the_folder(tmp_path: Path) -> None:
    root = tmp_path / "elsewhere"
    result = invoke("--init", env={"WILD_DIR": str(root)})
    assert result.exit_code == 0
    assert (root / "tasks.md").is_file()


def test_status_on_fresh_folder(wild_dir: Path) -> None:
    """Issue 24 item 12: a brand-new project said "nothing left: all work is complete"."""
    result = invoke("--status", "--dir", str(wild_dir))
    assert result.exit_code == 0
    assert result.output == (
        f"wild — {wild_dir}\n"
        "Loop: not running (iteration 0)\n"
        "Policy: semi-autonomous (autonomy medium)\n"
        "Human input: 0 pending\n"
        "Alerts: 0 active\n"
        "Tasks: 0/0 complete, 0 in progress, 0 blocked, 0 cancelled\n"
        "Barriers: 0 waiting, 0 satisfied, 0 failed\n"
        'Next: no goal or task yet: start the loop with wild "GOAL"'
        ' (or add a task: wild --add-task "TEXT")\n'
    )
    as_json = orjson.loads(invoke("--status", "--json", "--dir", str(wild_dir)).output)
    assert as_json["next"] == {"kind": "no-goal"}
    # A finished plan is still "complete".
    tasks = wild_dir / "tasks.md"
    tasks.write_text(tasks.read_text() + "- [x] task-001: Done\n")
    done = invoke("--status", "--dir", str(wild_dir)).output
    assert done.endswith("Next: nothing left: all work is complete\n")


def test_status_json_and_problems_with_file_and_line(wild_dir: Path) -> None:
    (wild_dir / "tasks.md").write_text(
        "# Tasks\n- [x] [P1] task-001: done\n- [ ] [P1] task-002: next\n  - dependsOn: task-001\n"
        "- [?] [P2] task-003: odd checkbox\n"
    )
    (wild_dir / "alerts.jsonl").write_text("not json\n")
    result = invoke("--status", "--json", "--dir", str(wild_dir))
    assert result.exit_code == 0
    data = orjson.loads(result.output)
    assert data["tasks"] == {
        "total": 2,
        "complete": 1,
        "inProgress": 0,
        "todo": 1,
        "cancelled": 0,
        "blocked": 0,
    }
    assert data["next"] == {
        "kind": "task",
        "id": "task-002",
        "title": "next",
        "priority": 1,
        "status": "todo",
    }
    assert len(data["problems"]) == 2
    assert data["problems"][0].startswith(f"{wild_dir / 'tasks.md'}:5: ")
    assert data["problems"][1].startswith(f"{wild_dir / 'alerts.jsonl'}:1: ")


def test_list_work_orders_the_whole_queue_with_reasons(wild_dir: Path) -> None:
    (wild_dir / "tasks.md").write_text(
        "- [ ] [P3] task-001: low\n"
        "- [ ] [P1] task-002: high\n"
        "- [ ] [P1] task-003: waits\n  - dependsOn: task-001\n"
        "- [ ] [P2] task-004: gated\n  - blockedBy: barrier-x\n"
    )
    (wild_dir / "barriers.md").write_text("## [WAITING] barrier-x\n- Type: manual\n")
    assert (
        invoke(
            "--alert",
            "--severity",
            "warning",
            "--source",
            "job",
            "--type",
            "slow",
            "--description",
            "slow epoch",
            "--dir",
            str(wild_dir),
        ).exit_code
        == 0
    )
    assert invoke("--human-input", "hello there", "--dir", str(wild_dir)).exit_code == 0
    result = invoke("--list-work", "--dir", str(wild_dir))
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "1. human-input 2026-02-08T12:30:00Z  hello there"
    assert lines[1].startswith("2. alert       alert-20260208-123000-")
    assert lines[1].endswith("[warning] job: slow epoch")
    assert lines[2:] == [
        "3. task        task-002  [P1] high",
        "4. task        task-001  [P3] low",
        "5. blocked     task-003  [P1] waits — waiting for task task-001",
        "6. blocked     task-004  [P2] gated — waiting for barrier barrier-x",
    ]
    as_json = orjson.loads(invoke("--list-work", "--json", "--dir", str(wild_dir)).output)
    assert [item["id"] for item in as_json][2:] == ["task-002", "task-001", "task-003", "task-004"]
    assert as_json[5]["barriers"] == ["barrier-x"]


def test_list_work_json_is_empty_list_when_nothing(wild_dir: Path) -> None:
    result = invoke("--list-work", "--json", "--dir", str(wild_dir))
    assert result.output == "[]\n"
    assert invoke("--list-work", "--dir", str(wild_dir)).output == (
        "No work queued: all work is complete.\n"
    )


def test_human_input_urgent_and_twice_in_one_second(wild_dir: Path) -> None:
    first = invoke("--human-input", "Reduce batch size", "--urgent", "--dir", str(wild_dir))
    assert (
        first.output
        == f"Queued urgent human input 2026-02-08T12:30:00Z in {wild_dir / 'human.md'}\n"
    )
    second = invoke("--human-input", "Then retry", "--dir", str(wild_dir))
    assert (
        second.output == f"Queued human input 2026-02-08T12:30:00.000Z in {wild_dir / 'human.md'}\n"
    )
    text = (wild_dir / "human.md").read_text()
    assert "## [PENDING] 2026-02-08T12:30:00Z - URGENT" in text
    assert "Reduce batch size" in text and "Then retry" in text


def test_human_input_empty_is_a_usage_error(wild_dir: Path) -> None:
    result = invoke("--human-input", "  ", "--dir", str(wild_dir))
    assert result.exit_code == 2
    assert result.output == (
        'Error: --human-input needs some text, e.g. wild --human-input "Use batch size 32"\n'
    )


def test_add_task_with_dependencies(wild_dir: Path) -> None:
    assert invoke("--add-task", "First", "--priority", "1", "--dir", str(wild_dir)).output == (
        "Added task-001: First\n"
    )
    result = invoke(
        "--add-task",
        "Second",
        "--depends-on",
        "task-001",
        "--blocked-by",
        "b1",
        "--dir",
        str(wild_dir),
    )
    assert result.output == "Added task-002: Second\n"
    text = (wild_dir / "tasks.md").read_text()
    assert text.endswith(
        "- [ ] [P1] task-001: First\n"
        "- [ ] [P2] task-002: Second\n  - dependsOn: task-001\n  - blockedBy: b1\n"
    )


TASK_RULE = "letters first, then a digit, -, _ or ., then letters, digits, -, _ or ."
BLOCK_RULE = "a letter first, then letters, digits, -, _ or ."


@pytest.mark.parametrize(
    ("flag", "value", "example"),
    [
        ("--depends-on", "bad id!", "task-001"),
        ("--depends-on", "task-001,task-002", "task-001"),
        ("--depends-on", "prep", "task-001"),
        ("--blocked-by", "1st-barrier", "train-done"),
        ("--blocked-by", "train done", "train-done"),
    ],
)
def test_add_task_refuses_a_relation_that_is_not_an_id(
    wild_dir: Path, flag: str, value: str, example: str
) -> None:
    before = (wild_dir / "tasks.md").read_bytes()
    result = invoke("--add-task", "x", flag, value, "--dir", str(wild_dir))
    assert result.exit_code == 2
    # The rule stated is the one the id was held to: "prep" starts with a letter and holds
    # only letters, yet is no task id (the grammar would read `prep:` as prose).
    rule = TASK_RULE if flag == "--depends-on" else BLOCK_RULE
    assert result.output == (
        f'Error: {flag} "{value}" is not an id: give one id per {flag}, such as {example} '
        f"({rule})\n"
    )
    assert (wild_dir / "tasks.md").read_bytes() == before


def test_add_task_bad_priority(wild_dir: Path) -> None:
    result = invoke("--add-task", "x", "--priority", "0", "--dir", str(wild_dir))
    assert result.exit_code == 2
    assert result.output == "Error: --priority must be 1 or more (1 is the highest), not 0\n"


def test_alert_appends_a_pending_line_and_prints_its_id(wild_dir: Path) -> None:
    result = invoke(
        "--alert",
        "--severity",
        "critical",
        "--source",
        "training-job-3",
        "--type",
        "OOM",
        "--description",
        "GPU memory exhausted",
        "--context",
        '{"batch_size": 64}',
        "--choice",
        "reduce batch",
        "--choice",
        "accumulate",
        "--dir",
        str(wild_dir),
    )
    assert result.exit_code == 0
    alert_id = result.output.strip()
    line = orjson.loads((wild_dir / "alerts.jsonl").read_bytes().splitlines()[0])
    assert line["id"] == alert_id
    assert line["status"] == "pending"
    assert line["severity"] == "critical"
    assert line["context"] == {"batch_size": 64}
    assert line["choices"] == ["reduce batch", "accumulate"]
    assert line["timestamp"] == "2026-02-08T12:30:00Z"


def test_alert_missing_fields_and_bad_context(wild_dir: Path) -> None:
    missing = invoke("--alert", "--severity", "info", "--dir", str(wild_dir))
    assert missing.exit_code == 2
    assert missing.output == "Error: --alert also needs --source, --type, --description\n"
    bad = invoke(
        *INFO_ALERT,
        "--context",
        "[1]",
        "--dir",
        str(wild_dir),
    )
    assert bad.exit_code == 2
    assert bad.output == "Error: --context must be a JSON object such as '{\"batch_size\": 64}'\n"


def test_satisfy_marks_a_barrier_and_reports_unknown_ids(wild_dir: Path) -> None:
    (wild_dir / "barriers.md").write_text(
        "# Barriers\n\n## [WAITING] approve-run\n- Type: manual\n- Created: 2026-02-08T09:00:00Z\n"
    )
    ok = invoke("--satisfy", "approve-run", "--dir", str(wild_dir))
    assert ok.output == "Barrier approve-run is now satisfied\n"
    assert (
        (wild_dir / "barriers.md")
        .read_text()
        .startswith(
            "# Barriers\n\n## [SATISFIED] approve-run\n- Type: manual\n"
            "- Created: 2026-02-08T09:00:00Z\n"
        )
    )
    assert "2026-02-08T12:30:00Z" in (wild_dir / "barriers.md").read_text()
    again = invoke("--satisfy", "approve-run", "--dir", str(wild_dir))
    assert again.output == "Barrier approve-run was already satisfied\n"
    unknown = invoke("--satisfy", "nope", "--dir", str(wild_dir))
    assert unknown.exit_code == 1
    assert unknown.output == (
        f"Error: {wild_dir / 'barriers.md'}: no barrier named nope (known: approve-run); "
        "check the id with `wild --status`\n"
    )


def test_update_and_show_policy(wild_dir: Path) -> None:
    updated = invoke("--update-policy", "autonomous", "--duration", "6h", "--dir", str(wild_dir))
    assert updated.exit_code == 0
    assert updated.output == f"Policy is now autonomous for 6h ({wild_dir / 'human-policy.md'})\n"
    shown = orjson.loads(invoke("--show-policy", "--json", "--dir", str(wild_dir)).output)
    assert shown["mode"] == "autonomous"
    assert shown["expiresAt"] == "2026-02-08T18:30:00Z"
    assert shown["commandApproval"] == "trusted"
    text = invoke("--show-policy", "--dir", str(wild_dir)).output
    assert text.splitlines()[0] == "Mode: autonomous"
    assert "Active from 2026-02-08T12:30:00Z until 2026-02-08T18:30:00Z" in text
    assert "## Policy History" in (wild_dir / "human-policy.md").read_text()


def test_update_policy_unknown_mode(wild_dir: Path) -> None:
    result = invoke("--update-policy", "yolo", "--dir", str(wild_dir))
    assert result.exit_code == 1
    assert result.output.startswith("Error: ")
    assert "yolo" in result.output and "autonomous" in result.output


def test_two_actions_and_no_action_are_usage_errors(wild_dir: Path) -> None:
    both = invoke("--status", "--list-work", "--dir", str(wild_dir))
    assert both.exit_code == 2
    assert (
        both.output == "Error: --status and --list-work cannot be used together; give one action\n"
    )
    none = invoke("--dir", str(wild_dir))
    assert none.exit_code == 2
    assert none.output == (
        'Error: give a goal (wild "GOAL") or an action such as --status; see wild --help\n'
    )


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    result = invoke("--status", "--dir", str(tmp_path / "nowhere"))
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {tmp_path / 'nowhere'} does not exist; "
        "run `wild --init` first (or pass --dir PATH)\n"
    )


def test_migrate_refuses_to_overwrite_without_force(wild_dir: Path, tmp_path: Path) -> None:
    ralph = tmp_path / ".ralph"
    ralph.mkdir()
    (ralph / "ralph-tasks.md").write_text("# Ralph Tasks\n\n- [ ] Build UI\n")
    refused = invoke("--migrate", "--from", str(ralph), "--dir", str(wild_dir))
    assert refused.exit_code == 1
    assert refused.output.startswith("Error: ")
    assert "--force" in refused.output
    forced = invoke("--migrate", "--from", str(ralph), "--force", "--dir", str(wild_dir))
    assert forced.exit_code == 0, forced.output
    assert "task-001: Build UI" in (wild_dir / "tasks.md").read_text()


def test_python_dash_m_wild_in_a_real_subprocess(tmp_path: Path) -> None:
    env = {**os.environ, "WILD_DIR": str(tmp_path / ".wild")}
    init = subprocess.run(
        [sys.executable, "-m", "wild", "--init"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert init.returncode == 0, init.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "wild", "--satisfy", "ghost"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1
    assert bad.stdout == ""
    assert bad.stderr.startswith("Error: ")
    assert "Traceback" not in bad.stderr
    status = subprocess.run(
        [sys.executable, "-m", "wild", "--status", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert orjson.loads(status.stdout)["tasks"]["total"] == 0


def test_status_watch_redraws_when_a_file_changes(wild_dir: Path) -> None:
    seen: list[int] = []

    def show(ws: Workspace) -> None:
        seen.append(len(ws.alerts))
        if len(seen) == 1:
            # Another process raises an alert: the watch must redraw with it.
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "wild",
                    *INFO_ALERT,
                    "--dir",
                    str(wild_dir),
                ],
                check=True,
                capture_output=True,
            )

    assert watch_status(WildPaths(wild_dir), FixedClock(NOW), show, max_updates=2) == 2
    assert seen == [0, 1]


def test_demo_into_a_closed_pipe_exits_quietly() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "wild", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == "\n"
    assert proc.stdout.readline().startswith("== The rl-training story in ")
    proc.stdout.close()  # the reader goes away, as `| head -2` would
    assert proc.wait(timeout=120) == 1
    stderr = proc.stderr.read()
    proc.stderr.close()
    assert "crashed" not in stderr
    assert "Traceback" not in stderr


_ADD_INPUTS = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from wild.commands.edits import add_human_input
from wild.paths import WildPaths
paths = WildPaths(Path(sys.argv[1]))
now = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)  # every writer at the same instant
for n in range(int(sys.argv[3])):
    add_human_input(paths, f"{sys.argv[2]} {n}", urgent=False, now=now)
"""


def test_human_inputs_made_together_get_distinct_keys(wild_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    writers = [
        subprocess.Popen([sys.executable, "-c", _ADD_INPUTS, str(wild_dir), name, "25"], env=env)
        for name in ("a", "b", "c", "d")
    ]
    assert [w.wait(60) for w in writers] == [0] * 4
    inputs = human_md.parse((wild_dir / "human.md").read_text()).inputs
    assert len(inputs) == 100
    assert len({i.key for i in inputs}) == 100
    assert sorted(i.content for i in inputs) == sorted(
        f"{name} {n}" for name in "abcd" for n in range(25)
    )


def test_status_json_watch_prints_one_json_object_per_change(wild_dir: Path) -> None:
    """Issue 24 item 10: `--status --json --watch` printed the text form."""
    wild = [sys.executable, "-m", "wild", "--dir", str(wild_dir)]
    proc = subprocess.Popen(
        [*wild, "--status", "--json", "--watch"], stdout=subprocess.PIPE, text=True
    )
    guard = threading.Timer(30, proc.kill)  # a watch that never prints must not hang the run
    guard.start()
    try:
        assert proc.stdout is not None
        first = orjson.loads(proc.stdout.readline())
        assert first["alerts"]["active"] == 0
        subprocess.run([*wild, *INFO_ALERT], check=True, capture_output=True)
        second = orjson.loads(proc.stdout.readline())  # one line: JSON lines, no screen clear
        assert second["alerts"]["active"] == 1
    finally:
        guard.cancel()
        proc.kill()
        proc.wait()
