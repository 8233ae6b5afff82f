"""wild/procfs.py, the one /proc reader: a zombie has exited wherever wild asks (the loop's
process groups, state.json's liveness, the agent sweep, and the run wrapper's own copy)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from wild import procfs
from wild.agents import orphans
from wild.liveness import probe
from wild.runs import wrapper


@pytest.fixture
def zombie_leader() -> Iterator[int]:
    """A process-group leader that has exited and is not reaped yet: a zombie."""
    proc = subprocess.Popen(["true"], start_new_session=True)
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
    fields = procfs.stat_fields(proc.pid)
    assert fields is not None and fields[procfs.STATE] == "Z"
    yield proc.pid
    proc.wait()


def test_a_zombie_counts_as_gone_everywhere(zombie_leader: int) -> None:
    assert not procfs.running(zombie_leader)
    assert probe(zombie_leader) is None
    assert orphans.wait_gone({zombie_leader}, 0.0)
    # The group's one member is a zombie: every group check says it is gone, the run
    # wrapper's (which loads wild/procfs.py by its path) included.
    assert not procfs.group_alive(zombie_leader)
    assert not wrapper._group_alive(zombie_leader)


def test_a_running_process_and_its_group_are_alive() -> None:
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert procfs.running(proc.pid) and probe(proc.pid) is not None
        assert procfs.group_alive(proc.pid) and wrapper._group_alive(proc.pid)
        assert wrapper.children_by_scan(os.getpid()).count(proc.pid) == 1
    finally:
        proc.kill()
        proc.wait()
    assert not procfs.running(proc.pid) and not wrapper._group_alive(proc.pid)


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        ("42 (a b) c) S 1 42 42 0", ["S", "1", "42", "42", "0"]),
        ("42 (sh) Z 7 9 9", ["Z", "7", "9", "9"]),
        ("garbage", None),
        ("42 (sh)", None),
    ],
)
def test_split_stat_counts_fields_from_the_last_parenthesis(
    line: str, fields: list[str] | None
) -> None:
    assert procfs.split_stat(line) == fields


def test_a_process_children_are_listed_where_the_kernel_keeps_the_lists() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        found = procfs.children(os.getpid())
        assert found is None or child.pid in found  # None: a kernel without children lists
    finally:
        child.kill()
        child.wait()
    assert procfs.children(2**22 + 1) is None  # beyond any pid: no such process


def test_a_thread_that_ends_while_the_lists_are_read_leaves_the_others_lists_standing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A thread of the process listed under /proc/<pid>/task that ends before its children
    list is read (the agent runner's pump thread as the agent exits) is skipped: not an
    answer of None, which made the loop read every process of the machine instead."""
    if procfs.children(os.getpid()) is None:
        pytest.skip("this kernel keeps no children lists")  # nothing to skip a thread of
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    listed = list(os.scandir(f"/proc/{os.getpid()}/task"))  # the thread among them
    done.set()
    thread.join()
    ended = [entry for entry in listed if not os.path.exists(entry.path)]
    for _ in range(1000):  # the kernel removes the thread's entry a moment after join
        if ended:
            break
        time.sleep(0.001)
        ended = [entry for entry in listed if not os.path.exists(entry.path)]
    assert ended, "the ended thread's /proc entry never went"
    child = subprocess.Popen(["sleep", "60"])
    try:
        # The ended thread first, as a thread that ends mid-read comes before the others.
        monkeypatch.setattr(os, "scandir", lambda _path: iter(ended + listed))
        found = procfs.children(os.getpid())
    finally:
        child.kill()
        child.wait()
    assert found is not None and child.pid in found


def test_real_path_agrees_with_realpath_wherever_a_path_leads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file, a folder, links inside and out, a chain, `..` after a link, a dangling link, a
    loop, a missing file or folder, a relative path: the same answer as `os.path.realpath`."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_text("x")
    (tmp_path / "out").mkdir()
    (tmp_path / "a" / "to-b").symlink_to("b")
    (tmp_path / "a" / "to-f").symlink_to(tmp_path / "a" / "b" / "f")
    (tmp_path / "a" / "chain").symlink_to("to-f")
    (tmp_path / "a" / "to-out").symlink_to(tmp_path / "out")
    (tmp_path / "a" / "dangling").symlink_to("nowhere")
    (tmp_path / "a" / "loop1").symlink_to("loop2")
    (tmp_path / "a" / "loop2").symlink_to("loop1")
    monkeypatch.chdir(tmp_path / "a")
    cases = [
        tmp_path / "a" / "b" / "f", tmp_path / "a" / "b", tmp_path / "a" / "to-b" / "f",
        tmp_path / "a" / "chain", tmp_path / "a" / "to-out", tmp_path / "a" / "to-b" / ".." / "b",
        tmp_path / "a" / "dangling", tmp_path / "a" / "loop1", tmp_path / "a" / "b" / "missing",
        tmp_path / "missing" / "deeper", Path("to-b/f"), Path("."), Path("b/./f"),
    ]  # fmt: skip
    for case in cases:
        assert procfs.real_path(case) == os.path.realpath(case), case
        assert procfs.real_path(str(case)) == os.path.realpath(case), case


def test_a_held_step_resolves_each_folder_once_on_its_own_thread(tmp_path: Path) -> None:
    """`hold_real_folders`: the loop's step between two moments the outside world acts asks
    for the project's real path ~15 times; it is resolved once, on the loop's thread only,
    and afresh once released. Files are resolved at every call."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "f").write_text("")
    (second / "f").write_text("")
    link = tmp_path / "link"
    link.symlink_to(first)
    procfs.hold_real_folders()
    try:
        assert procfs.real_folder(link) == str(first)
        link.unlink()
        link.symlink_to(second)
        assert procfs.real_folder(link) == str(first)  # held: asked once this step
        assert procfs.real_path(link / "f") == str(second / "f")  # a file: every call
        elsewhere: list[str] = []
        thread = threading.Thread(target=lambda: elsewhere.append(procfs.real_folder(link)))
        thread.start()
        thread.join()
        assert elsewhere == [str(second)]  # another thread holds nothing
    finally:
        procfs.release_real_folders()
    assert procfs.real_folder(link) == str(second)
    procfs.hold_real_folders()
    procfs.hold_real_folders()  # holding again keeps what is held
    try:
        assert procfs.real_folder(link) == str(second)
        link.unlink()
        link.symlink_to(first)
        procfs.hold_real_folders()
        assert procfs.real_folder(link) == str(second)
    finally:
        procfs.release_real_folders()
