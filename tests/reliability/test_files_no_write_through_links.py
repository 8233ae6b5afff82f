"""No write leaves the project, and the loop holds the work instead of exiting (issue 20,
items 10, 11 and 13): an agent (the fake agent, a real process) plants links where wild
writes its log or events.log, or deletes its own log; `--alert` and `--pause` meet files
the user made read-only. wild writes nothing through a link, says so once, holds the work,
and goes on once a human has removed the link."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir, invoke
from tests.test_loop import (
    TASK,
    Actions,
    loop_options,
    project,
    say,
    script,
    state_of,
    task_status,
)
from wild.loop import io_errors
from wild.loop.driver import Loop
from wild.paths import WildPaths
from wild.store import files
from wild.store.loop_lock import take_loop_lock

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

HELD = "The work is held and goes on once that is fixed"
SECRET = b"ssh-ed25519 AAAA the user's own key\n"


def _outside(tmp_path: Path) -> Path:
    """A folder beside the project (the project is `tmp_path`), with a file already there."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "authorized_keys").write_bytes(SECRET)
    return outside


def _run(paths: WildPaths, on_line: Callable[[str], None] = lambda _line: None) -> list[str]:
    lines: list[str] = []

    def out(line: str) -> None:
        lines.append(line)
        on_line(line)

    result = Loop(paths, loop_options(), out=out).run()
    assert result.reason == "complete", lines
    return lines


def test_a_dangling_link_at_the_next_log_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next iteration's log name holds a link to a file that does not exist yet: the
    agent's output goes to a log of its own in `.wild/logs/`, never to the link's target."""
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    outside = _outside(tmp_path)
    target = outside / "planted"
    plant: Actions = [
        {"symlink": ".wild/logs/iteration-2.log", "to": str(target)},
        {"symlink": ".wild/logs/iteration-3.prompt.md", "to": str(outside / "authorized_keys")},
        {"exit": 1},
    ]
    script(monkeypatch, tmp_path, plant, [{"exit": 1}], say("lots of output", TASK))

    _run(paths)

    assert not target.exists()
    assert (outside / "authorized_keys").read_bytes() == SECRET
    assert "lots of output" in (paths.logs / "iteration-3.2.log").read_text()
    assert (paths.logs / "iteration-2.log").is_symlink()  # left for the human to see


def test_logs_replaced_by_a_link_hold_the_work_until_the_link_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    outside = _outside(tmp_path)
    script(monkeypatch, tmp_path, [{"symlink": ".wild/logs", "to": str(outside)}], say(TASK))
    monkeypatch.setattr(io_errors, "HELD_WAIT_S", 0.05)

    def human(line: str) -> None:
        if HELD in line:
            paths.logs.unlink()  # the human removes the link; wild makes the folder anew

    lines = _run(paths, human)

    assert [line for line in lines if HELD in line] == [
        f"⚠️  {paths.logs}: a symbolic link, and wild does not create or append to its own"
        f" files through links (one could lead anywhere). Remove it (`rm {paths.logs}`);"
        f" wild makes the file anew. {HELD}"
    ]
    assert sorted(p.name for p in outside.iterdir()) == ["authorized_keys"]
    assert task_status(paths, "task-001") == "complete"


def test_events_log_linked_out_of_the_project_holds_the_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    outside = _outside(tmp_path)
    link: Actions = [{"symlink": ".wild/events.log", "to": str(outside / "authorized_keys")}]
    script(monkeypatch, tmp_path, link, say(TASK))
    monkeypatch.setattr(io_errors, "HELD_WAIT_S", 0.05)

    def human(line: str) -> None:
        if HELD in line:
            paths.events.unlink()

    lines = _run(paths, human)

    assert len([line for line in lines if HELD in line]) == 1
    assert (outside / "authorized_keys").read_bytes() == SECRET
    assert task_status(paths, "task-001") == "complete"


def test_an_agent_deleting_its_own_log_is_read_from_the_open_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    script(monkeypatch, tmp_path, [*say(TASK), {"delete_file": ".wild/logs/iteration-1.log"}])

    _run(paths)

    assert task_status(paths, "task-001") == "complete"


@pytest.mark.parametrize(
    ("name", "command"),
    [
        (
            "alerts.jsonl",
            ("--alert", "--severity", "warning", "--source", "job", "--type", "nan",
             "--description", "loss is nan"),
        ),
        ("control", ("--pause",)),
    ],
)  # fmt: skip
def test_a_read_only_file_is_never_appended_to(
    tmp_path: Path, name: str, command: tuple[str, ...]
) -> None:
    """Even as root, who may write any file: wild reads the user's intent from the mode."""
    root = init_wild_dir(tmp_path)
    path = root / name
    path.write_bytes(b"")
    path.chmod(0o444)

    # --pause reaches only a running loop (nothing is kept for a later one): one holds the
    # folder's loop lock, as a loop does.
    with take_loop_lock(root):
        result = invoke(*command, "--dir", str(root))

    assert result.exit_code == 1
    assert f"{path}: the file is read-only (mode 444)" in result.output
    assert f"chmod u+w {path}" in result.output
    assert path.read_bytes() == b""
    assert os.stat(path).st_mode & 0o777 == 0o444


HOLD_LOCK = """
import sys, time
from pathlib import Path
from filelock import FileLock
with FileLock(sys.argv[1]):
    Path(sys.argv[2]).write_text("held")
    while not Path(sys.argv[3]).exists():
        time.sleep(0.01)
"""


def test_an_agent_holding_the_lock_holds_the_work_not_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process (an agent's doing) holds `.wild/.lock` past wild's wait: the loop says
    so once, in words that name the lock, and goes on once it is released."""
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    script(monkeypatch, tmp_path, say(TASK))
    monkeypatch.setattr(files, "LOCK_TIMEOUT_S", 0.2)
    monkeypatch.setattr(io_errors, "HELD_WAIT_S", 0.05)
    held, release = tmp_path / "held", tmp_path / "release"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(paths.lock), str(held), str(release)]
    )
    try:
        while not held.exists():
            assert holder.poll() is None
            time.sleep(0.01)

        def human(line: str) -> None:
            if HELD in line:
                release.write_text("go")

        lines = _run(paths, human)
    finally:
        release.write_text("go")
        holder.wait(timeout=30)

    [said] = [line for line in lines if HELD in line]
    assert f"{paths.lock} is held by another process" in said
    assert "type and permissions" not in said
    assert task_status(paths, "task-001") == "complete"


@pytest.mark.parametrize("name", [".lock", "loop.lock"])
def test_a_lock_file_linked_out_of_the_project_is_never_opened_through(
    tmp_path: Path, name: str
) -> None:
    """filelock opened `.wild/.lock` with O_TRUNC: a link there emptied the file it named."""
    root = init_wild_dir(tmp_path)
    outside = _outside(tmp_path) / "authorized_keys"
    (root / name).unlink(missing_ok=True)
    (root / name).symlink_to(outside)
    command = ("--add-task", "x") if name == ".lock" else ("Ship it", "--max-iterations", "1")

    # An agent that exists wherever the suite runs: the loop checks its program before any file.
    result = invoke(*command, "--dir", str(root), env={"WILD_CLAUDE_BINARY": "true"})

    assert result.exit_code == 1
    assert f"{root / name}: a symbolic link to {outside}" in result.output
    assert outside.read_bytes() == SECRET


def test_state_json_linked_out_mid_run_is_moved_aside_and_the_counts_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent replaces state.json with a link out of the project while it runs (and
    heartbeats save the running time): the link is moved aside (kept to look at), nothing is
    written through it, the run is not lost, and the counters go on from where they were."""
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n- [ ] [P1] task-002: Test\n")
    outside = _outside(tmp_path)
    link: Actions = [
        {"symlink": ".wild/state.json", "to": str(outside / "authorized_keys")},
        {"sleep": 0.3},
        *say(TASK),
    ]
    script(monkeypatch, tmp_path, link, say(TASK))

    result = Loop(paths, loop_options(heartbeat_s=0.05), out=lambda _line: None).run()

    assert (result.reason, result.iterations) == ("complete", 2)
    assert (tmp_path / "agent-script.json.runs").read_text() == "2"  # the run was not lost
    assert (outside / "authorized_keys").read_bytes() == SECRET
    [aside] = paths.root.glob("state.json.corrupt-*")
    assert aside.is_symlink() and not paths.state.is_symlink()
    assert state_of(paths).iteration == 2
