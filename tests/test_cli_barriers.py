"""CLI flags for barriers and the running loop: --check-barriers, --approve, --generate-check,
--pause/--resume/--stop."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.cli_support import init_wild_dir, invoke
from wild.policy.presets import preset
from wild.store.loop_lock import take_loop_lock

BARRIERS = """\
# Barriers

## [WAITING] data-ready
- Type: command-check
- Check: test -f ready.flag
- Interval: 60s

## [WAITING] approval
- Type: manual
"""


@pytest.fixture
def wild_dir(tmp_path: Path) -> Path:
    root = init_wild_dir(tmp_path)
    (root / "barriers.md").write_text(BARRIERS)
    return root


def test_approve_lists_then_approves_a_command(wild_dir: Path) -> None:
    listing = invoke("--approve", "--dir", str(wild_dir))
    assert listing.output == (
        "Commands awaiting approval (run wild --approve ID for each you trust):\n"
        "  data-ready: test -f ready.flag\n"
    )
    approved = invoke("--approve", "data-ready", "--dir", str(wild_dir))
    assert approved.exit_code == 0
    assert approved.output.startswith("Approved data-ready: test -f ready.flag (sha256 ")
    assert invoke("--approve", "--dir", str(wild_dir)).output == (
        "No barrier or check commands await approval.\n"
    )
    manual = invoke("--approve", "approval", "--dir", str(wild_dir))
    assert manual.exit_code == 1
    assert manual.output == (
        f"Error: {wild_dir / 'barriers.md'}: barrier approval runs no command (type manual); "
        "nothing to approve\n"
    )


def test_check_barriers_refuses_unapproved_then_runs_approved(wild_dir: Path) -> None:
    project = wild_dir.parent
    (project / "ready.flag").write_text("")
    first = orjson.loads(invoke("--check-barriers", "--json", "--dir", str(wild_dir)).output)
    assert [(r["id"], r["ran"], r["satisfied"]) for r in first] == [
        ("data-ready", False, False),
        ("approval", False, False),
    ]
    assert "## [WAITING] data-ready" in (wild_dir / "barriers.md").read_text()
    invoke("--approve", "data-ready", "--dir", str(wild_dir))
    second = invoke("--check-barriers", "--dir", str(wild_dir))
    assert second.exit_code == 0
    assert second.output.startswith("data-ready: satisfied — ")
    assert "## [SATISFIED] data-ready" in (wild_dir / "barriers.md").read_text()
    # The manual barrier is untouched by a check pass.
    assert "## [WAITING] approval" in (wild_dir / "barriers.md").read_text()


def test_check_barriers_trusted_policy_runs_without_approval(wild_dir: Path) -> None:
    assert invoke("--update-policy", "autonomous", "--dir", str(wild_dir)).exit_code == 0
    rows = orjson.loads(invoke("--check-barriers", "--json", "--dir", str(wild_dir)).output)
    assert [(r["id"], r["ran"], r["satisfied"]) for r in rows] == [
        ("data-ready", True, False),
        ("approval", False, False),
    ]


def test_generate_check_writes_an_executable_script(wild_dir: Path) -> None:
    result = invoke("--generate-check", "data-ready", "--dir", str(wild_dir))
    script = wild_dir.parent / "scripts" / "check_barriers" / "data-ready.sh"
    assert result.output == f"Wrote {script}\n"
    assert script.stat().st_mode & 0o100
    assert "test -f ready.flag" in script.read_text()
    unknown = invoke("--generate-check", "ghost", "--dir", str(wild_dir))
    assert unknown.exit_code == 1
    assert unknown.output == (
        f"Error: {wild_dir / 'barriers.md'}: no barrier named ghost "
        "(known: data-ready, approval); check the id with `wild --status`\n"
    )


@pytest.mark.parametrize("command", ["pause", "resume", "stop"])
def test_control_flags_append_a_request(wild_dir: Path, command: str) -> None:
    with take_loop_lock(wild_dir):  # a loop runs on the folder
        result = invoke(f"--{command}", "--dir", str(wild_dir))
    assert result.output == f"Asked the loop in {wild_dir} to {command}\n"
    line = orjson.loads((wild_dir / "control").read_bytes().splitlines()[-1])
    assert line["command"] == command


@pytest.mark.parametrize("command", ["pause", "resume", "stop"])
def test_control_flags_with_no_loop_running_say_so_and_keep_nothing(
    wild_dir: Path, command: str
) -> None:
    """Issue 24 item 9: they said "Asked the loop … to stop", exited 0, and were ignored."""
    with take_loop_lock(wild_dir):
        pass  # a loop ran here once, and ended
    result = invoke(f"--{command}", "--dir", str(wild_dir))
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {wild_dir}: no wild loop is running here, so there is nothing to {command};"
        " nothing was written (start one with `wild`)\n"
    )
    assert not (wild_dir / "control").exists()


def test_loop_once_with_a_custom_agent(tmp_path: Path) -> None:
    root = tmp_path / ".wild"
    invoke("--init", "--dir", str(root))
    invoke("--add-task", "Say hello", "--dir", str(root))
    agent = tmp_path / "agent.sh"
    agent.write_text(
        '#!/bin/sh\necho "hello from $WILD_WORK_ID"\necho "<promise>TASK_COMPLETE</promise>"\n'
    )
    agent.chmod(0o755)
    result = invoke("Greet", "--agent-cmd", str(agent), "--once", "--dir", str(root))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "wild stopped: one iteration done (1 iteration)"
    assert "- [x] [P2] task-001: Say hello" in (root / "tasks.md").read_text()
    log = (root / "logs" / "iteration-1.log").read_text()
    assert "hello from task-001" in log


def test_loop_flag_errors(tmp_path: Path) -> None:
    root = tmp_path / ".wild"
    invoke("--init", "--dir", str(root))
    unknown = invoke("Goal", "--agent", "nope", "--dir", str(root))
    assert unknown.exit_code == 2
    assert unknown.output.startswith("Error: unknown agent 'nope'; choose one of: claude, ")
    bad_time = invoke("Goal", "--max-time", "soon", "--dir", str(root))
    assert bad_time.exit_code == 2
    assert bad_time.output == (
        'Error: --max-time soon: invalid duration "soon"; '
        "use a number with a unit, e.g. 6h, 90m, 2d or 1h30m\n"
    )
    empty = invoke("  ", "--agent-cmd", "true", "--dir", str(root))
    assert empty.exit_code == 2
    assert empty.output == (
        'Error: the goal is empty; say what the agent should achieve: wild "GOAL"\n'
    )
    with_action = invoke("Goal", "--status", "--dir", str(root))
    assert with_action.exit_code == 2
    assert with_action.output == "Error: a goal cannot be combined with --status\n"


def test_approve_at_notify_approves_the_policy_notify_command(wild_dir: Path) -> None:
    policy = wild_dir / "human-policy.md"
    policy.write_text(
        policy.read_text().replace(
            "- **Command Approval:** required",
            "- **Notify Command:** notify-send wild\n- **Command Approval:** required",
        )
    )
    listing = invoke("--approve", "--dir", str(wild_dir)).output.splitlines()
    assert listing[-1] == "  @notify: notify-send wild"
    approved = invoke("--approve", "@notify", "--dir", str(wild_dir))
    assert approved.output.startswith("Approved @notify: notify-send wild (sha256 ")
    assert "@notify" not in invoke("--approve", "--dir", str(wild_dir)).output


def test_loop_starts_under_the_policy_given(tmp_path: Path) -> None:
    root = tmp_path / ".wild"
    invoke("--init", "--dir", str(root))
    agent = tmp_path / "agent.sh"
    agent.write_text("#!/bin/sh\ncat >/dev/null\necho '<promise>COMPLETE</promise>'\n")
    agent.chmod(0o755)
    result = invoke(
        "Goal",
        "--agent-cmd",
        str(agent),
        "--policy",
        "wild_night",
        "--duration",
        "2h",
        "--dir",
        str(root),
    )
    assert result.exit_code == 0, result.output
    shown = orjson.loads(invoke("--show-policy", "--json", "--dir", str(root)).output)
    assert (shown["mode"], shown["preset"]) == (preset("wild_night").mode, "wild_night")
    assert shown["expiresAt"] is not None
    custom = tmp_path / "my-policy.md"
    custom.write_text(
        "# Human Policy\n\n## Current Policy: Hands-Off Mode\n\n### Settings\n\n"
        "- **Mode:** hands-off\n\n### Instructions\n\nDo everything yourself.\n"
    )
    again = invoke(
        "Goal", "--agent-cmd", str(agent), "--policy-file", str(custom), "--dir", str(root)
    )
    assert again.exit_code == 0, again.output
    assert (root / "human-policy.md").read_text() == custom.read_text()
    shown = orjson.loads(invoke("--show-policy", "--json", "--dir", str(root)).output)
    assert (shown["mode"], shown["instructions"].strip()) == (
        "hands-off",
        "Do everything yourself.",
    )
    missing = invoke(
        "Goal",
        "--agent-cmd",
        str(agent),
        "--policy-file",
        str(tmp_path / "nope.md"),
        "--dir",
        str(root),
    )
    assert missing.exit_code == 1
    assert missing.output == (
        f"Error: {tmp_path / 'nope.md'}: no such policy file; "
        "check the path given to --policy-file\n"
    )


def test_a_fresh_loop_reads_the_policy_before_checking_barriers(wild_dir: Path) -> None:
    """Under a policy that trusts commands, the first check pass runs the command: the checker
    never sees the loop without its policy (no spurious unapproved-command alert)."""
    project = wild_dir.parent
    (project / "ready.flag").write_text("")
    (wild_dir / "tasks.md").write_text("- [ ] [P1] task-001: Train\n  - blockedBy: data-ready\n")
    agent = project / "agent.sh"
    agent.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        'if [ "$WILD_WORK_TYPE" = planning ]; then echo "<promise>COMPLETE</promise>"; '
        'else echo "<promise>TASK_COMPLETE</promise>"; fi\n'
    )
    agent.chmod(0o755)
    result = invoke(
        "Goal", "--agent-cmd", str(agent), "--policy", "autonomous", "--dir", str(wild_dir)
    )
    assert result.exit_code == 0, result.output
    assert "## [SATISFIED] data-ready" in (wild_dir / "barriers.md").read_text()
    assert "unapproved-command" not in (wild_dir / "alerts.jsonl").read_text()
    assert "- [x] [P1] task-001: Train" in (wild_dir / "tasks.md").read_text()
