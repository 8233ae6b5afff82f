"""Telling a running loop from a dead one's leftovers: its pid, start time, boot and host."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from wild.liveness import check, liveness, parse_stat, probe, this_host, this_process
from wild.parsers.process_id import ProcessId

# A real /proc/<pid>/stat line, its command holding a space and a parenthesis.
STAT = (
    "4242 (python (x) y) S 1 4242 4242 0 -1 4194304 1500 0 0 0 12 3 0 0 20 0 3 0 "
    "98765 300000000 5000 18446744073709551615 1 1 0 0 0 0 0 16781312 2 0 0 0 17 3 0 0 0 0 0"
)
LOOP = ProcessId(4242, "lab-1", start_ticks=98765, boot_id="boot-a")


def test_parse_stat_counts_fields_after_the_command() -> None:
    assert parse_stat(STAT) == ("S", 98765)
    assert parse_stat("4242 (short) Z 1 2") is None  # cut short: no start time
    assert parse_stat("garbage") is None


def test_the_same_process_is_running() -> None:
    assert liveness(LOOP, LOOP, "lab-1") == "running"


def test_no_process_with_the_pid_is_gone() -> None:
    assert liveness(LOOP, None, "lab-1") == "gone"


def test_a_pid_reused_by_another_process_is_not_the_loop() -> None:
    other = ProcessId(4242, "lab-1", start_ticks=123456, boot_id="boot-a")
    assert liveness(LOOP, other, "lab-1") == "reused"


def test_the_same_pid_and_ticks_after_a_reboot_are_another_process() -> None:
    after_reboot = ProcessId(4242, "lab-1", start_ticks=98765, boot_id="boot-b")
    assert liveness(LOOP, after_reboot, "lab-1") == "reused"


def test_without_start_times_only_the_pid_is_checked() -> None:
    bare = ProcessId(4242, "lab-1")
    assert liveness(bare, ProcessId(4242, "lab-1", start_ticks=1), "lab-1") == "running"
    assert liveness(LOOP, ProcessId(4242, "lab-1"), "lab-1") == "running"


def test_a_loop_on_another_host_cannot_be_checked_from_here() -> None:
    assert liveness(LOOP, None, "lab-2") == "elsewhere"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_probe_reads_this_process_and_sees_a_reaped_one_gone() -> None:
    me = this_process("2026-02-08T10:00:00Z")
    assert me.pid == os.getpid() and me.host == this_host()
    assert me.start_ticks is not None and me.boot_id
    assert me.started_at == "2026-02-08T10:00:00Z"
    assert check(me) == "running"

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert probe(child.pid) is None
    recorded = ProcessId(child.pid, this_host(), start_ticks=me.start_ticks, boot_id=me.boot_id)
    assert check(recorded) == "gone"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_probe_sees_a_zombie_as_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
        assert probe(child.pid) is None
    finally:
        child.wait()


def test_probe_refuses_process_group_pids() -> None:
    assert probe(0) is None
    assert probe(-1) is None
