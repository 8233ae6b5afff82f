"""Guards against slow and greedy webhook clients: connection caps, the rate-limited report
line, and the one-deadline reader."""

from __future__ import annotations

import socket
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.http_guard import (
    Bucket,
    ConnectionLimits,
    DeadlineReader,
    RefusalLog,
    admit_line,
)


def test_limits_count_per_client_and_in_total() -> None:
    limits = ConnectionLimits(total=3, per_client=2)
    assert limits.admit("a") is None
    assert limits.admit("a") is None
    assert limits.admit("a") == "2 connections from it are open already"
    assert limits.admit("b") is None
    assert limits.admit("c") == "3 connections are open already"
    limits.release("a")
    assert limits.admit("c") is None
    assert limits.open_now() == 3


def test_the_bucket_lets_a_burst_through_then_one_line_per_refill() -> None:
    bucket = Bucket(burst=2, window=10.0, tokens=2.0, at=0.0)
    verdicts = []
    for now in (0.0, 0.0, 0.0, 0.0, 4.0, 5.0):
        bucket, ok, held_back = admit_line(bucket, now)
        verdicts.append((ok, held_back))
    assert verdicts == [(True, 0), (True, 0), (False, 0), (False, 0), (False, 0), (True, 3)]


@given(st.lists(st.floats(min_value=0, max_value=1000), max_size=200))
def test_the_bucket_keeps_its_rate_and_loses_no_count(gaps: list[float]) -> None:
    bucket = Bucket(burst=3, window=60.0, tokens=3.0, at=0.0)
    now, written, said_held_back = 0.0, 0, 0
    for gap in gaps:
        now += gap
        bucket, ok, held_back = admit_line(bucket, now)
        written += ok
        said_held_back += held_back
    # Every refusal is either a line, or counted in a later line, or still being counted.
    assert written + said_held_back + bucket.held_back == len(gaps)
    assert written <= 3 + now * 3 / 60.0 + 1e-9


def test_the_report_says_how_many_lines_it_held_back() -> None:
    lines: list[str] = []
    moment = [0.0]
    log = RefusalLog(lines.append, burst=1, window=10.0, monotonic=lambda: moment[0])
    for _ in range(5):
        log.refused("127.0.0.1:1", "401 no")
    moment[0] = 10.0
    log.refused("127.0.0.1:2", "timed out")
    assert lines == [
        "webhook: refused 127.0.0.1:1: 401 no",
        "webhook: refused 127.0.0.1:2: timed out (4 more refused before this one)",
    ]


def test_the_deadline_holds_however_the_client_trickles() -> None:
    server_side, client_side = socket.socketpair()
    stop = threading.Event()

    def trickle() -> None:
        # A byte every 10 ms: a per-receive timeout of any length would never fire.
        while not stop.wait(0.01):
            try:
                client_side.send(b"x")
            except OSError:
                return

    sender = threading.Thread(target=trickle)
    sender.start()
    try:
        reader = DeadlineReader(server_side, 0.3)
        buffer = bytearray(1)
        with pytest.raises(TimeoutError, match=r"no complete request within 0\.3 s"):
            while True:
                reader.readinto(buffer)
        assert reader.expired
    finally:
        stop.set()
        sender.join()
        server_side.close()
        client_side.close()


def test_a_full_cap_drops_the_oldest_slow_connection_and_refuses_only_when_all_answer() -> None:
    pairs = [socket.socketpair() for _ in range(3)]
    try:
        limits = ConnectionLimits(total=2, per_client=2)
        first, second, third = (server for server, _client in pairs)
        assert limits.admit("a", first) is None
        assert limits.admit("a", second) is None
        assert limits.admit("a", third) is None  # room made: `first` is hung up
        assert pairs[0][1].recv(1) == b""
        assert limits.dropped() == ["a"] and limits.dropped() == []
        limits.answering(second)
        limits.answering(third)
        extra, extra_peer = socket.socketpair()
        with extra, extra_peer:
            assert limits.admit("a", extra) == "2 connections from it are open already"
        assert limits.open_now() == 2
        limits.release("a", second)
        assert limits.open_now() == 1
    finally:
        for server, client in pairs:
            server.close()
            client.close()
