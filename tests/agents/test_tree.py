"""The pure decisions of `wild.agents.tree`: who is inside an agent's tree, and which
processes belong to an agent run, from session, group and parent chain (never environment
alone)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from wild.agents.tree import (
    Proc,
    chain,
    family,
    inside_reason,
    members,
    parse_proc_stat,
    table,
)
from wild.parsers.process_id import ProcessId

LOOP = ProcessId(100, "h", start_ticks=1)
AGENT = ProcessId(200, "h", start_ticks=5)
SHELL = Proc(50, 1, 50, 50, 0)  # the human's shell, the loop's parent
LOOP_P = Proc(100, 50, 50, 50, 1)
AGENT_P = Proc(200, 100, 200, 200, 5)


def test_a_stat_line_with_spaces_and_parentheses_in_the_command_reads() -> None:
    line = "4242 (a (b) c) S 4000 4100 4200 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987 0 0"
    assert parse_proc_stat(4242, line) == Proc(4242, 4000, 4100, 4200, 987)


def test_this_process_is_read_with_its_parent() -> None:
    found = chain(os.getpid())
    assert found[0].pid == os.getpid()
    assert found[1].pid == os.getppid()


def test_the_humans_shell_and_the_loop_itself_are_not_inside() -> None:
    human = Proc(60, 50, 60, 50, 9)
    assert inside_reason([human, SHELL], AGENT, LOOP) is None
    assert inside_reason([LOOP_P, SHELL], AGENT, LOOP) is None


def test_the_agents_session_group_and_descendants_are_inside() -> None:
    same_session = Proc(300, 1, 300, 200, 9)  # its parent is gone; the session stays
    assert "session" in str(inside_reason([same_session], AGENT, LOOP))
    in_pty = Proc(301, 200, 301, 301, 9)  # a session of its own, a child of the agent
    assert "descends from wild's agent" in str(inside_reason([in_pty, AGENT_P], AGENT, LOOP))


def test_an_orphan_adopted_by_the_loop_is_inside_whatever_its_environment() -> None:
    orphan = Proc(400, 100, 400, 400, 9)  # env -i setsid: no run id, its own session
    assert "descends from wild's loop" in str(inside_reason([orphan, LOOP_P, SHELL], None, LOOP))


def test_a_process_started_as_an_agent_taints_its_descendants() -> None:
    agent_of_other_loop = Proc(500, 1, 500, 500, 9, carries_run=True)
    child = Proc(501, 500, 501, 501, 10)
    assert "started as an agent" in str(inside_reason([child, agent_of_other_loop], None, None))


def test_a_reused_pid_is_not_the_recorded_agent() -> None:
    impostor = Proc(200, 1, 200, 200, 77)  # pid 200, another start time
    child = Proc(201, 200, 201, 201, 78)
    assert inside_reason([child, impostor], AGENT, None) is None


def test_members_follow_session_group_ancestry_and_what_was_seen_before() -> None:
    procs = {
        p.pid: p
        for p in (
            SHELL,
            LOOP_P,
            AGENT_P,
            Proc(210, 200, 200, 200, 6),  # in the agent's group
            Proc(220, 210, 220, 220, 7),  # setsid child of a member
            Proc(221, 220, 220, 220, 8),  # its child
            Proc(230, 100, 230, 230, 9),  # an orphan the loop adopted, seen before
            Proc(231, 230, 231, 231, 10),
            Proc(240, 100, 240, 240, 11),  # another child of the loop: not the agent's
        )
    }
    found = members(procs, frozenset({200}), frozenset({(200, 5), (230, 9)}))
    assert found == {200, 210, 220, 221, 230, 231}
    assert 230 not in members(procs, frozenset({200}), frozenset({(230, 99)}))  # reused pid


def _children_from_table(pid: int) -> list[int] | None:
    """What a kernel's /proc children lists say, derived from the whole table (this test's
    kernel may keep no such lists)."""
    return [child for child, proc in table().items() if proc.ppid == pid]


def test_a_family_is_walked_down_the_children_lists_from_its_root() -> None:
    # What this test process had started before (an earlier test's multiprocessing resource
    # tracker, say) is its family too; the walk must find the new ones and nothing beyond.
    before = family(os.getpid(), children_of=_children_from_table)
    assert before is not None
    child = subprocess.Popen(["sh", "-c", "sleep 60 & wait"])
    grandchildren: list[int] | None = []
    try:
        for _ in range(500):  # the shell's own child, once it is started
            grandchildren = _children_from_table(child.pid)
            if grandchildren:
                break
            time.sleep(0.01)
        found = family(os.getpid(), children_of=_children_from_table)
        assert found is not None
        assert found[os.getpid()].pid == os.getpid()
        assert found[child.pid].ppid == os.getpid()
        assert grandchildren and found[grandchildren[0]].ppid == child.pid
        assert set(found) - set(before) == {child.pid, *grandchildren}  # nothing else
        assert os.getpid() in found
    finally:
        for pid in grandchildren or ():
            os.kill(pid, signal.SIGKILL)
        child.kill()
        child.wait()


def test_a_family_reads_each_member_children_lists_once() -> None:
    """The root's lists (a file per thread of the loop) are read once, not once to learn
    whether the kernel keeps such lists and again to walk them."""
    asked: list[int] = []

    def children_of(pid: int) -> list[int] | None:
        asked.append(pid)
        return _children_from_table(pid)

    child = subprocess.Popen(["sleep", "60"])
    try:
        found = family(os.getpid(), children_of=children_of)
    finally:
        child.kill()
        child.wait()
    assert found is not None and child.pid in found
    assert sorted(asked) == sorted(found)  # each member once, the root too


def test_without_the_kernels_children_lists_there_is_no_family() -> None:
    assert family(os.getpid(), children_of=lambda pid: None) is None
