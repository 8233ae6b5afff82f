"""A read command imports only what it uses: not the loop, the webhook, the demo or filelock.

Each of these costs a user time at every `wild --status` (issue 8: `import wild.cli` took
130 ms and 295 modules because status pulled in the loop, http.server, ssl, email and the demo).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Run the CLI in a fresh interpreter, then list every module it ended up importing.
PROBE = """
import sys
from wild.cli import cli
try:
    cli.main(sys.argv[2:], prog_name="wild", standalone_mode=False)
finally:
    with open(sys.argv[1], "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
"""

# Modules a read command must never import (a name or a package prefix).
HEAVY = (
    "wild.loop",  # the loop and its driver
    "wild.barriers.webhook",
    "http.server",
    "wild.commands.demo",
    "wild.commands.run_loop",
    "wild_stories.agent",
    "filelock",  # 17 ms on its own; a read takes no lock
    "asyncio",
    "ssl",
    "email",
    "dateutil",  # ~5 ms; only a hand-written, non-ISO time needs it (wild.clock.parse_time)
)
# Modules only a write or a failure needs (issue 22 item 8: a read costs little more than
# starting Python with click).
WRITES_ONLY = (
    "ctypes",  # ~2 ms; renameat2 for a swap (wild.store.files)
    "secrets",  # ~1 ms with hmac; a new alert's id
    "wild.commands.failures",  # the crash log and the error messages
)


def imported_by(args: list[str], tmp_path: Path) -> list[str]:
    listing = tmp_path / "modules.txt"
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(listing), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return listing.read_text().splitlines()


def heavy(modules: list[str], names: tuple[str, ...] = HEAVY) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in names)]


@pytest.fixture
def wild_dir(tmp_path: Path) -> Path:
    root = tmp_path / ".wild"
    subprocess.run([sys.executable, "-m", "wild", "--init", "--dir", str(root)], check=True)
    return root


@pytest.mark.parametrize(
    "action", [["--status"], ["--status", "--json"], ["--list-work"], ["--show-policy"]]
)
def test_a_read_command_imports_none_of_the_heavy_modules(
    wild_dir: Path, tmp_path: Path, action: list[str]
) -> None:
    modules = imported_by([*action, "--dir", str(wild_dir)], tmp_path)
    shown_by = ("wild.commands.status", "wild.commands.work_queue", "wild.commands.policy_show")
    assert any(module in modules for module in shown_by)
    assert heavy(modules, HEAVY + WRITES_ONLY) == []


# What `wild --status` shows and `wild --list-work` does not: the state's facts (state.json,
# the loop's liveness), the composed view, the runs' stages.
STATUS_ONLY = (
    "wild.commands.status",
    "wild.commands.status_facts",
    "wild.commands.status_view",
    "wild.runs.stage",
)


@pytest.mark.parametrize("action", [["--list-work"], ["--list-work", "--json"]])
def test_list_work_imports_the_queue_not_the_status(
    wild_dir: Path, tmp_path: Path, action: list[str]
) -> None:
    modules = imported_by([*action, "--dir", str(wild_dir)], tmp_path)
    assert "wild.selection" in modules  # it did select (this check can fail)
    assert [m for m in STATUS_ONLY if m in modules] == []


def test_the_probe_sees_what_a_command_imports(wild_dir: Path, tmp_path: Path) -> None:
    """The check can fail: a hand-written, non-ISO time in the policy needs dateutil, so it
    shows up in the listing. (Writes no longer import filelock: wild takes its flock itself.)"""
    policy = wild_dir / "human-policy.md"
    text = policy.read_text().replace(
        "### Settings", "**Expires At:** Feb 8 2030 4pm\n\n### Settings", 1
    )
    policy.write_text(text)
    modules = imported_by(["--show-policy", "--dir", str(wild_dir)], tmp_path)
    assert heavy(modules) == ["dateutil", *(m for m in modules if m.startswith("dateutil."))]


def test_a_write_takes_the_lock_without_importing_filelock(wild_dir: Path, tmp_path: Path) -> None:
    modules = imported_by(["--add-task", "x", "--dir", str(wild_dir)], tmp_path)
    assert heavy(modules) == []


# What reads and parses the files: a status whose files did not change needs none of it.
PARSING = (
    "wild.workspace",
    "wild.selection",
    "wild.store",
    "wild.parsers.tasks",
    "wild.parsers.alerts",
    "wild.parsers.human",
    "wild.parsers.policy",
    "wild.parsers.barriers",
    "wild.parsers.state",
    "wild.commands.status",
)

# The same probe, with every file taken as settled however recent (the status cache
# otherwise trusts no file changed in the last 2 s, and this test would have to sleep).
SETTLED = "import wild.commands.status_cache as c; c.RACY_NS = -(10**18)\n" + PROBE


def parsing(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in PARSING)]


@pytest.mark.parametrize(
    "action", [["--status"], ["--status", "--json"], ["--list-work"], ["--list-work", "--json"]]
)
def test_a_read_of_unchanged_files_imports_no_parser(
    wild_dir: Path, tmp_path: Path, action: list[str]
) -> None:
    """`--status` and `--list-work` keep what they showed (wild.commands.status_cache)."""
    args = [*action, "--dir", str(wild_dir)]
    first = subprocess.run(
        [sys.executable, "-c", SETTLED, str(tmp_path / "first.txt"), *args],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    assert first.returncode == 0
    # The first status read the files (so this check can fail), the second only its cache.
    assert "wild.parsers.tasks" in parsing((tmp_path / "first.txt").read_text().splitlines())
    listing = tmp_path / "second.txt"
    subprocess.run(
        [sys.executable, "-c", SETTLED, str(listing), *args], check=True, stdout=subprocess.DEVNULL
    )
    assert parsing(listing.read_text().splitlines()) == []
    (wild_dir / "tasks.md").write_text("# Tasks\n\n- [ ] [P1] task-001: New\n")
    subprocess.run(
        [sys.executable, "-c", SETTLED, str(listing), *args], check=True, stdout=subprocess.DEVNULL
    )
    assert "wild.parsers.tasks" in parsing(listing.read_text().splitlines())


def test_a_status_after_an_edit_of_tasks_md_reads_no_state_json(
    wild_dir: Path, tmp_path: Path
) -> None:
    """The common edit (a task added by hand) moves the files' part alone: state.json's facts
    stay kept, so its reader and the state store behind it are not imported (issue 22)."""
    modules = _status_modules_after_a_task_added(wild_dir, tmp_path)
    assert "wild.parsers.tasks" in modules  # it did read the files again (this can fail)
    state = ("wild.parsers.state", "wild.store.state_file", "wild.commands.status_facts")
    assert [m for m in state if m in modules] == []


def test_a_status_after_the_loop_wrote_state_json_reads_it_alone(
    wild_dir: Path, tmp_path: Path
) -> None:
    """While a loop runs it rewrites state.json often: that status parses nothing else."""
    listing = tmp_path / "modules.txt"
    for _ in range(2):
        args = [sys.executable, "-c", SETTLED, str(listing), "--status", "--dir", str(wild_dir)]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        (wild_dir / "state.json").write_text('{"format": 1, "active": false, "iteration": 2}')
    modules = listing.read_text().splitlines()
    assert "wild.parsers.state" in modules  # it did read state.json again (this can fail)
    others = [m for m in parsing(modules) if m not in {"wild.parsers.state", "wild.store"}]
    assert [m for m in others if not m.startswith("wild.store.")] == []


def test_a_status_after_an_edit_of_tasks_md_reads_only_the_queues_files(
    wild_dir: Path, tmp_path: Path
) -> None:
    """The rest of the files' part (policy, checks, runs, approvals) stays kept: only tasks.md
    and the files the queue is selected from are read again (wild.commands.status_tasks)."""
    modules = _status_modules_after_a_task_added(wild_dir, tmp_path)
    assert "wild.parsers.tasks" in modules  # it did read tasks.md again (this can fail)
    rest = (
        "wild.workspace",
        "wild.parsers.policy",
        "wild.parsers.checks",
        "wild.parsers.runs",
        "wild.parsers.runs_summary",
        "wild.barriers.approvals",
        "wild.policy",
        # A project as `wild --init` makes it: no alert, barrier or human input for the queue,
        # so those files are not read again either, nor hashed.
        "wild.parsers.barriers",
        "wild.parsers.human",
        "wild.parsers.alerts",
        "wild.store.alerts_summary",
        "hashlib",
    )
    assert heavy(modules, rest) == []


def _status_modules_after_a_task_added(wild_dir: Path, tmp_path: Path) -> list[str]:
    """The modules `wild --status` loads right after a task is appended to tasks.md by hand
    (a status before it kept every file's part)."""
    listing = tmp_path / "modules.txt"
    args = [sys.executable, "-c", SETTLED, str(listing), "--status", "--dir", str(wild_dir)]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    with (wild_dir / "tasks.md").open("a") as tasks:
        tasks.write("- [ ] [P3] edit: A note\n")
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return listing.read_text().splitlines()
