"""The dashboard runs on the webhook's hardened server (`wild.http_guard`): slow clients from
127.0.0.1 hold no one out, and one that trickles its request is dropped at the deadline."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.test_webhook_attacks import SLOW_HEADERS, open_clients, trickle_until_dropped
from tests.serve.conftest import Client
from tests.serve.sample import make_project
from wild.clock import SystemClock
from wild.serve.server import Dashboard


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Client]:
    paths = make_project(tmp_path)
    with Dashboard(paths, SystemClock(), port=0, request_deadline=1.0) as dashboard:
        yield Client(dashboard, paths)


def test_a_trickling_client_is_dropped_at_the_deadline(board: Client) -> None:
    slow = open_clients(board.board.port, 1)
    try:
        # A byte every 20 ms renews any per-receive timeout for ever; the deadline does not.
        assert trickle_until_dropped(slow, SLOW_HEADERS) == 0
    finally:
        slow[0].close()


def test_slow_sockets_lock_out_no_page(board: Client) -> None:
    attackers: list[socket.socket] = open_clients(board.board.port, 8)
    try:
        for attacker in attackers:
            attacker.send(SLOW_HEADERS[:10])
        assert [board.get("/api/view").status for _ in range(20)] == [200] * 20
    finally:
        for attacker in attackers:
            attacker.close()
