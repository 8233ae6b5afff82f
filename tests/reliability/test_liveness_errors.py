"""Errors instead of crashes, under real conditions: a full tmpfs, a read-only `.wild/` and an
unreadable file as an unprivileged user, a folder where a file belongs. Each CLI command and
the loop's start give one `Error:` line naming the file and what to do, with exit 1; a full
disk in the middle of a loop is waited out. Crash logs never overwrite each other.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.cli_support import init_wild_dir, invoke
from tests.loop.harness import TASK, new_project, say
from tests.reliability.liveness_system import (
    fill,
    give_to_nobody,
    needs_root,
    python_as_nobody,
    run_as_nobody,
    small_tmpfs,
)
from wild.commands import failures
from wild.commands.actions import HANDLERS
from wild.wake import WakeReason

ALERT = ("--alert", "--severity", "info", "--source", "s", "--type", "t", "--description", "d")
# Every command that writes, and the loop's start (one iteration at most, an agent that exits).
WRITERS: dict[str, tuple[str, ...]] = {
    "add-task": ("--add-task", "New task"),
    "alert": ALERT,
    "human-input": ("--human-input", "Hello"),
    # A tightening: a loosening asks the human on /dev/tty first (tests/test_human_acts.py).
    "update-policy": ("--update-policy", "interactive"),
    "loop": ("Goal", "--agent-cmd", "true", "--max-iterations", "1"),
}
READERS = (("--status",), ("--list-work",), ("--show-policy",))


def _one_error_line(output: str, *, crash: bool = False) -> str:
    lines = output.splitlines()
    errors = [line for line in lines if line.startswith("Error: ")]
    assert len(errors) == 1, output
    assert "Traceback" not in output and ("crashed" in output) == crash, output
    return errors[0]


# ---------------------------------------------------------------------------- a full disk


@pytest.fixture
def full_disk() -> Iterator[Path]:
    """A project on a 1 MiB tmpfs that is then filled to the last byte; its `.wild/`."""
    with small_tmpfs("1m") as mount:
        root = init_wild_dir(mount)
        assert invoke("--add-task", "Old task", "--dir", str(root)).exit_code == 0
        fill(mount)
        yield root


@needs_root()
@pytest.mark.parametrize("command", list(WRITERS))
def test_a_full_disk_is_one_error_line_naming_the_file(full_disk: Path, command: str) -> None:
    before = {p.name: p.read_bytes() for p in full_disk.iterdir() if p.is_file()}
    result = invoke(*WRITERS[command], "--dir", str(full_disk))
    assert result.exit_code == 1, result.output
    error = _one_error_line(result.output)
    assert error.startswith(f"Error: {full_disk}/"), error
    assert error.endswith(": No space left on device; free some disk space, then try again")
    assert not list(full_disk.glob(".*.tmp")), "a temp file was left behind"
    for name in ("tasks.md", "human.md", "human-policy.md"):
        assert (full_disk / name).read_bytes() == before[name]


@needs_root()
def test_on_a_full_disk_reading_still_works_and_init_names_the_file(full_disk: Path) -> None:
    for command in READERS:
        result = invoke(*command, "--dir", str(full_disk))
        assert result.exit_code == 0, result.output
    fresh = invoke("--init", "--dir", str(full_disk.parent / "other"))
    assert fresh.exit_code == 1
    assert "No space left on device; free some disk space, then try again" in (
        _one_error_line(fresh.output)
    )


@needs_root()
def test_a_disk_that_fills_mid_loop_is_waited_out_and_the_work_goes_on() -> None:
    with small_tmpfs("2m") as mount:
        sim = new_project(mount, "- [ ] [P1] task-001: Train\n- [ ] [P2] task-002: Eval\n")

        def fill_then_free_at_the_next_wait(_request: Any) -> None:
            fill(mount)
            assert sim.watcher is not None

            def free() -> WakeReason:
                (mount / "filler").unlink()
                return WakeReason("file", str(sim.paths.tasks))

            sim.watcher.queued.append(free)

        sim.script = [[{"call": fill_then_free_at_the_next_wait}, *say(TASK)], say(TASK)]
        result = sim.run()
        assert (result.reason, result.iterations) == ("complete", 2)
        assert sim.task_status("task-001") == sim.task_status("task-002") == "complete"
        warnings = [line for line in sim.out if line.startswith("⚠️  ")]
        assert warnings and "No space left on device; free some disk space" in warnings[0]
        assert "(retrying in 1 s, attempt 1)" in warnings[0]


# ------------------------------------------------------------------- permissions, for real


@pytest.fixture
def nobodys_project() -> Iterator[tuple[Path, Path]]:
    """A project owned by nobody, as a user's own: (project folder, nobody's home)."""
    base = Path(tempfile.mkdtemp(prefix="wild-nobody-"))
    try:
        base.chmod(0o755)
        project, home = base / "project", base / "home"
        home.mkdir()
        root = init_wild_dir(project)
        assert invoke("--add-task", "Old task", "--dir", str(root)).exit_code == 0
        give_to_nobody(base)
        yield project, home
    finally:
        shutil.rmtree(base)


def _read_only(folder: Path) -> None:
    for path in folder.iterdir():
        path.chmod(0o444 if path.is_file() else 0o555)
    folder.chmod(0o555)


@needs_root()
def test_the_unprivileged_user_runs_this_interpreter_with_its_packages(tmp_path: Path) -> None:
    """In a venv, the nobody runs use the venv (its prefix, its packages), not the base
    interpreter its python links to, which lacks wild's dependencies on a fresh machine."""
    home = tmp_path / "home"
    home.mkdir()
    give_to_nobody(tmp_path)
    code = "import sys, orjson, click, watchdog; print(sys.prefix)"
    result = python_as_nobody(["-c", code], cwd=tmp_path, home=home)
    assert (result.returncode, result.stdout.strip()) == (0, sys.prefix), result.stderr


@needs_root()
def test_a_read_only_wild_folder_is_one_error_line_for_each_writer(
    nobodys_project: tuple[Path, Path],
) -> None:
    project, home = nobodys_project
    wild_dir = project / ".wild"
    _read_only(wild_dir)
    before = {p.name: p.read_bytes() for p in wild_dir.iterdir() if p.is_file()}
    for command, args in WRITERS.items():
        result = run_as_nobody(args, cwd=project, home=home)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        error = _one_error_line(result.stderr)
        # An append (`--alert`) needs no writable folder: the write guard refuses the
        # read-only file itself, naming the chmod (issue 20, item 11).
        assert re.fullmatch(
            r"Error: (\S*/)?\.wild/[^/ ]+: Permission denied; make it and its folder readable "
            "and writable by this user, then try again",
            error,
        ) or re.fullmatch(
            r"Error: (\S*/)?\.wild/([^/ ]+): the file is read-only \(mode 444\), so wild will"
            r" not replace it; run `chmod u\+w (\S*/)?\.wild/\2` to let wild edit it",
            error,
        ), (command, error)
    for reader in (*READERS, ("--init",)):
        result = run_as_nobody(reader, cwd=project, home=home)
        assert result.returncode == 0, (reader, result.stderr)
    assert {p.name: p.read_bytes() for p in wild_dir.iterdir() if p.is_file()} == before


@needs_root()
def test_an_unreadable_file_is_one_error_line_naming_it(
    nobodys_project: tuple[Path, Path],
) -> None:
    project, home = nobodys_project
    (project / ".wild" / "tasks.md").chmod(0o000)
    for command in (READERS[0], WRITERS["loop"]):
        result = run_as_nobody(command, cwd=project, home=home)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert _one_error_line(result.stderr) == (
            "Error: .wild/tasks.md: Permission denied; make it and its folder readable and "
            "writable by this user, then try again"
        )


@needs_root()
def test_a_wild_folder_made_read_only_mid_loop_stops_it_with_one_line(
    nobodys_project: tuple[Path, Path],
) -> None:
    project, home = nobodys_project
    agent = project / "agent.sh"
    agent.write_text(f"#!/bin/sh\ncat >/dev/null\nchmod 555 .wild\necho '{TASK}'\n")
    agent.chmod(0o755)
    os.chown(agent, 65534, 65534)
    result = run_as_nobody(
        ["Goal", "--agent-cmd", str(agent), "--max-iterations", "2"], cwd=project, home=home
    )
    (project / ".wild").chmod(0o755)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert re.fullmatch(
        r"Error: \S*/\.wild/(state\.json|tasks\.md|events\.log): Permission denied; make it "
        "and its folder readable and writable by this user, then try again",
        _one_error_line(result.stderr),
    ), result.stderr


# ------------------------------------------------------------------ a folder for a file


@pytest.mark.parametrize(
    "args", [WRITERS["add-task"], WRITERS["loop"], *READERS[:2]], ids=lambda args: args[0]
)
def test_tasks_md_being_a_folder_is_one_error_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    root = init_wild_dir(tmp_path)
    (root / "tasks.md").unlink()
    (root / "tasks.md").mkdir()
    result = invoke(*args, "--dir", str(root))
    assert result.exit_code == 1, result.output
    assert _one_error_line(result.output) == (
        f"Error: {root}/tasks.md: Is a directory; a folder stands where a file should be "
        "(or the reverse); move it aside"
    )


# ------------------------------------------------------------------------- crash logs


def test_crash_logs_in_the_same_second_do_not_overwrite_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class FrozenTime(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> FrozenTime:
            return cls(2026, 2, 8, 10, 0, 0, tzinfo=UTC)

    monkeypatch.setattr(failures, "datetime", FrozenTime)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    crashes = iter(["first", "second"])

    def crash(_call: Any) -> None:
        raise RuntimeError(next(crashes))

    monkeypatch.setitem(HANDLERS, "status", crash)
    root = init_wild_dir(tmp_path)
    for _ in range(2):
        result = invoke("--status", "--dir", str(root))
        assert result.exit_code == 3
    logs = sorted(tmp_path.glob("wild-crash-20260208T100000*.log"))
    assert len(logs) == 2
    assert {log.read_text().splitlines()[-1] for log in logs} == {
        "RuntimeError: first",
        "RuntimeError: second",
    }


def test_a_crash_log_that_cannot_be_written_still_gives_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))

    def crash(_call: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setitem(HANDLERS, "status", crash)
    result = invoke("--status", "--dir", str(init_wild_dir(tmp_path)))
    assert result.exit_code == 3
    error = _one_error_line(result.output, crash=True)
    assert error.startswith(
        "Error: wild crashed (RuntimeError: boom); no crash log could be written ("
    )
    assert error.endswith(
        "No such file or directory; check that the path exists); "
        "please report it with the command you ran"
    )
    assert os.listdir(tmp_path) == [".wild"]
