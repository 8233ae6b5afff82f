"""The control file: pause/resume/stop written by other processes, read in order by the loop."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from wild.control import ControlInbox, end_offset, read_pending, request
from wild.errors import UsageError, WildError
from wild.parsers.control import ControlCommand, ControlRequest, ControlState
from wild.paths import WildPaths
from wild.store.self_writes import SelfWrites
from wild.wake import FolderWatcher, Waker, WakeReason


class FixedClock:
    def now(self) -> datetime:
        return datetime(2026, 2, 8, 10, 45, 23, 125000, tzinfo=UTC)

    def monotonic(self) -> float:
        return 0.0


# `wild --pause` and friends as another terminal runs them: argv = folder, command, count.
_REQUEST_CODE = """
import pathlib, sys
from wild.control import request
from wild.paths import WildPaths
for _ in range(int(sys.argv[3])):
    request(WildPaths(pathlib.Path(sys.argv[1])), sys.argv[2])
"""


def _env() -> dict[str, str]:
    # Built per test, after conftest has isolated HOME and dropped WILD_* variables.
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}


@pytest.fixture
def paths(tmp_path: Path) -> WildPaths:
    root = tmp_path / ".wild"
    root.mkdir()
    return WildPaths(root)


def test_request_appends_one_json_line(paths: WildPaths) -> None:
    sent = request(paths, "pause", FixedClock())
    assert sent == ControlRequest("pause", "2026-02-08T10:45:23.125Z")
    assert paths.control.read_bytes() == b'{"command":"pause","ts":"2026-02-08T10:45:23.125Z"}\n'


def test_requests_are_read_in_order_and_the_offset_moves_past_them(paths: WildPaths) -> None:
    for command in ("pause", "resume", "stop"):
        request(paths, command, FixedClock())
    commands, offset = read_pending(paths, 0)
    assert [item.command for item in commands] == ["pause", "resume", "stop"]
    assert offset == paths.control.stat().st_size
    assert read_pending(paths, offset) == ((), offset)


def test_a_line_still_being_written_waits_for_its_end(paths: WildPaths) -> None:
    paths.control.write_bytes(b'{"command":"pause","ts":null}\n{"command":"st')
    commands, offset = read_pending(paths, 0)
    assert commands == (ControlRequest("pause", None),)
    assert offset == len(b'{"command":"pause","ts":null}\n')
    with paths.control.open("ab") as handle:
        handle.write(b'op"}\n')
    assert read_pending(paths, offset) == (
        (ControlRequest("stop", None),),
        paths.control.stat().st_size,
    )


def test_lines_that_are_not_requests_are_skipped_without_error(paths: WildPaths) -> None:
    paths.control.write_bytes(
        b'not json\n[1, 2]\n{"command":"explode"}\n{"command":"resume","ts":7}\n\n'
    )
    commands, offset = read_pending(paths, 0)
    assert commands == (ControlRequest("resume", None),)
    assert offset == paths.control.stat().st_size


def test_missing_file_and_truncated_file(paths: WildPaths) -> None:
    assert read_pending(paths, 40) == ((), 0)
    assert end_offset(paths) == 0
    request(paths, "pause", FixedClock())
    request(paths, "resume", FixedClock())
    _, offset = read_pending(paths, 0)
    # Replaced by something shorter than what we had read: start over.
    paths.control.write_bytes(b'{"command":"stop"}\n')
    assert read_pending(paths, offset) == ((ControlRequest("stop", None),), 19)
    assert end_offset(paths) == 19


def test_unknown_command_and_missing_folder_are_clear_errors(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    with pytest.raises(UsageError) as usage:
        request(paths, "restart")
    assert (
        str(usage.value) == "unknown control command 'restart'; use one of: "
        "pause, resume, stop, recheck, rerun, stop-run"
    )
    with pytest.raises(WildError) as missing:
        request(paths, "stop")
    assert str(missing.value) == (
        f"{tmp_path / '.wild'}: no state folder here; run `wild --init` or pass --dir"
    )


def test_control_state_applies_commands_in_order() -> None:
    def reqs(*commands: ControlCommand) -> list[ControlRequest]:
        return [ControlRequest(command, None) for command in commands]

    assert ControlState().apply(reqs("pause")) == ControlState(paused=True)
    assert ControlState().apply(reqs("pause", "resume")) == ControlState(paused=False)
    assert ControlState().apply(reqs("resume", "pause")) == ControlState(paused=True)
    # Stop is final: a later resume does not cancel it.
    assert ControlState().apply(reqs("pause", "stop", "resume")) == ControlState(
        paused=False, stop_requested=True
    )
    assert ControlState(paused=True).apply([]) == ControlState(paused=True)


def test_requests_from_many_processes_never_mix_lines(paths: WildPaths) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _REQUEST_CODE, str(paths.root), command, "40"], env=_env()
        )
        for command in ("pause", "resume", "stop")
    ]
    assert [writer.wait() for writer in writers] == [0, 0, 0]
    lines = paths.control.read_bytes().splitlines()
    assert sorted(orjson.loads(line)["command"] for line in lines) == sorted(
        ["pause"] * 40 + ["resume"] * 40 + ["stop"] * 40
    )
    commands, _ = read_pending(paths, 0)
    assert len(commands) == 120


def test_a_request_from_another_terminal_wakes_the_watching_loop(paths: WildPaths) -> None:
    watcher = FolderWatcher(paths.root, Waker(), SelfWrites())
    watcher.start()
    try:
        offset = end_offset(paths)
        subprocess.run(
            [sys.executable, "-c", _REQUEST_CODE, str(paths.root), "stop", "1"],
            env=_env(),
            check=True,
        )
        control = os.path.realpath(paths.control)
        assert watcher.wait_for_work(timeout=10.0) == [WakeReason("control", control)]
        commands, _ = read_pending(paths, offset)
        assert ControlState().apply(commands) == ControlState(stop_requested=True)
    finally:
        watcher.stop()


def test_a_request_counts_at_the_next_decision_even_before_the_watcher_reports_it(
    paths: WildPaths,
) -> None:
    """A pause written just as an agent ends must hold the next iteration, even when the
    watcher's event for the control file has not reached the loop yet (a busy machine)."""
    inbox = ControlInbox(paths, threading.Event())
    request(paths, "pause")
    assert [r.command for r in inbox.take()] == ["pause"]  # no on_change came first
    inbox.on_change()  # the late event finds nothing new: the request counts once
    assert inbox.take() == ()
