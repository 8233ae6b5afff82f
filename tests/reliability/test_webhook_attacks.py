"""Webhook attacks on a live 127.0.0.1 server: replays (also across a restart), stale and bad
signatures, slowloris clients, stalled bodies and connection floods.

Deadlines are short here (the server takes them as arguments) so the suite stays quick; every
wait is bounded and none of them is an assertion about how long something took.
"""

from __future__ import annotations

import http.client
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from tests.barriers.conftest import T0, FakeClock
from tests.barriers.test_checker import wait_until
from wild.barriers.webhook import WebhookServer
from wild.barriers.webhook_auth import REPLAYED, UNAUTHORIZED, sign
from wild.paths import WildPaths

SECRET = b"replay-me-if-you-can"
ALERT = orjson.dumps({"severity": "critical", "type": "job-failed", "description": "OOM"})
GOOD_CLIENT = "127.0.0.2"  # a second loopback address: another client as far as caps go


@dataclass
class Lines:
    """The server's report lines, awaitable."""

    lines: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def __call__(self, line: str) -> None:
        with self.changed:
            self.lines.append(line)
            self.changed.notify_all()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[str]:
        with self.changed:
            self.changed.wait_for(lambda: len(self.lines) >= count, timeout)
            return list(self.lines)


@dataclass
class Hook:
    server: WebhookServer
    port: int
    paths: WildPaths
    clock: FakeClock
    report: Lines

    def post(
        self,
        body: bytes,
        headers: dict[str, str],
        source: str = "127.0.0.1",
    ) -> tuple[int, dict[str, object]]:
        connection = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=10, source_address=(source, 0)
        )
        try:
            connection.request("POST", "/alerts", body=body, headers=headers)
            response = connection.getresponse()
            return response.status, orjson.loads(response.read())
        finally:
            connection.close()

    def alerts(self) -> int:
        return len(self.paths.alerts.read_bytes().splitlines()) if self.paths.alerts.exists() else 0


Start = Callable[..., Hook]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """Starts webhook servers on one `.wild/` folder; all are stopped at the end."""
    paths = WildPaths(tmp_path / ".wild")
    paths.root.mkdir()
    clock = FakeClock()
    running: list[WebhookServer] = []

    def _start(**options: object) -> Hook:
        report = Lines()
        server = WebhookServer(
            paths,
            token=None,
            secret=SECRET,
            wake=lambda _id: None,
            clock=clock,
            report=report,
            **options,  # type: ignore[arg-type]
        )
        running.append(server)
        return Hook(server, server.start(), paths, clock, report)

    yield _start
    for server in running:
        server.stop()


def signed(
    body: bytes = ALERT, at: float | None = None, delivery: str | None = None
) -> dict[str, str]:
    timestamp = str(int(T0.timestamp() if at is None else at))
    headers = {"X-Wild-Timestamp": timestamp, "X-Wild-Signature": sign(SECRET, timestamp, body)}
    return headers if delivery is None else headers | {"X-Wild-Delivery": delivery}


# -- replay -----------------------------------------------------------------------------


def test_a_good_request_is_accepted_once_and_its_replay_refused(start: Start) -> None:
    hook = start()
    assert hook.post(ALERT, signed())[0] == 200
    assert hook.post(ALERT, signed()) == (409, {"error": REPLAYED})
    assert REPLAYED == "this signature was already used (a replay); sign each request afresh"
    assert hook.alerts() == 1


def test_a_replay_is_refused_whatever_delivery_id_it_claims(start: Start) -> None:
    # The delivery header is not signed: an attacker may change it, and it must not help.
    hook = start()
    assert hook.post(ALERT, signed(delivery="job-42"))[0] == 200
    assert hook.post(ALERT, signed(delivery="forged-1"))[0] == 409
    assert hook.post(ALERT, signed())[0] == 409
    assert hook.alerts() == 1


def test_a_replay_after_a_restart_on_the_same_folder_is_refused(start: Start) -> None:
    first = start()
    assert first.post(ALERT, signed())[0] == 200
    first.server.stop()
    again = start()
    assert again.post(ALERT, signed()) == (409, {"error": REPLAYED})
    # Not a server that refuses everything: the same body signed afresh is accepted.
    assert again.post(ALERT, signed(at=T0.timestamp() + 1))[0] == 200
    assert again.alerts() == 2


def test_a_redelivery_after_a_restart_is_acknowledged_not_applied(start: Start) -> None:
    first = start()
    assert first.post(ALERT, signed(delivery="job-42"))[0] == 200
    first.server.stop()
    again = start()
    resent = signed(at=T0.timestamp() + 5, delivery="job-42")
    assert again.post(ALERT, resent) == (200, {"ok": True, "duplicate": True})
    assert again.alerts() == 1


@pytest.mark.parametrize(("offset", "word"), [(-301, "old"), (301, "ahead"), (-86400, "old")])
def test_a_timestamp_outside_the_window_is_refused(start: Start, offset: int, word: str) -> None:
    hook = start()
    status, reply = hook.post(ALERT, signed(at=T0.timestamp() + offset))
    assert (status, reply) == (
        401,
        {
            "error": f"X-Wild-Timestamp is {abs(offset)} s {word}, outside the 300 s window; "
            "sign again with the current time"
        },
    )
    assert hook.alerts() == 0


def test_the_window_is_configurable(start: Start) -> None:
    hook = start(tolerance=10)
    assert hook.post(ALERT, signed(at=T0.timestamp() - 11))[0] == 401
    assert hook.post(ALERT, signed(at=T0.timestamp() - 10))[0] == 200


def test_a_bad_signature_is_refused(start: Start) -> None:
    hook = start()
    forged = signed() | {"X-Wild-Signature": sign(b"guessed", str(int(T0.timestamp())), ALERT)}
    assert hook.post(ALERT, forged) == (401, {"error": UNAUTHORIZED})
    assert hook.post(ALERT + b" ", signed()) == (401, {"error": UNAUTHORIZED})
    assert hook.alerts() == 0


def test_spent_ids_leave_the_file_with_their_window(start: Start) -> None:
    hook = start()
    assert hook.post(ALERT, signed())[0] == 200
    assert hook.paths.webhook_seen.read_bytes().count(b"\n") == 1
    hook.server.stop()
    hook.clock.advance(301)
    start()
    assert hook.paths.webhook_seen.read_bytes() == b""


# -- slow and greedy clients ------------------------------------------------------------


def open_clients(port: int, count: int, source: str = "127.0.0.1") -> list[socket.socket]:
    address = ("127.0.0.1", port)
    return [
        socket.create_connection(address, timeout=10, source_address=(source, 0))
        for _ in range(count)
    ]


def trickle_until_dropped(clients: list[socket.socket], message: bytes, bound: float = 8.0) -> int:
    """Send `message` a byte per client every 20 ms, far inside any per-read timeout, until the
    server closes each; returns how many were still open when `bound` ran out."""
    still_open = list(clients)
    limit = time.monotonic() + bound
    sent = 0
    while still_open and time.monotonic() < limit:
        for client in list(still_open):
            try:
                client.send(message[sent % len(message) : sent % len(message) + 1])
            except OSError:
                still_open.remove(client)
        sent += 1
        readable, _, _ = select.select(still_open, [], [], 0.02)
        for client in readable:
            try:
                closed = client.recv(4096) == b""
            except OSError:
                closed = True
            if closed:
                still_open.remove(client)
    return len(still_open)


SLOW_HEADERS = b"POST /alerts HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Pad: " + b"a" * 60000


def test_slowloris_clients_do_not_block_a_good_one_and_are_dropped_at_the_deadline(
    start: Start, capfd: pytest.CaptureFixture[str]
) -> None:
    hook = start(request_deadline=1.0, max_per_client=4)
    attackers = open_clients(hook.port, 4)
    try:
        for attacker in attackers:
            attacker.send(SLOW_HEADERS[:10])
        assert wait_until(lambda: hook.server.limits.open_now() == 4)
        # Every slot of 127.0.0.1 is held by a slow client; another client is served at once.
        assert hook.post(ALERT, signed(), source=GOOD_CLIENT)[0] == 200
        assert trickle_until_dropped(attackers, SLOW_HEADERS[10:]) == 0
    finally:
        for attacker in attackers:
            attacker.close()
    lines = hook.report.wait_for(4)
    dropped = [line for line in lines if line.endswith("no complete request within 1 s")]
    assert len(dropped) == 4, lines
    assert all(line.startswith("webhook: refused 127.0.0.1:") for line in dropped)
    assert "Traceback" not in capfd.readouterr().err
    assert hook.alerts() == 1


def test_a_stalled_body_is_dropped_with_one_line_and_no_traceback(
    start: Start, capfd: pytest.CaptureFixture[str]
) -> None:
    hook = start(request_deadline=0.5)
    body = ALERT
    head = (
        f"POST /alerts HTTP/1.1\r\nHost: 127.0.0.1:{hook.port}\r\n"
        f"X-Wild-Timestamp: {int(T0.timestamp())}\r\n"
        f"X-Wild-Signature: {sign(SECRET, str(int(T0.timestamp())), body)}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", hook.port), timeout=10) as client:
        client.sendall(head + body[:5])  # then nothing more
        assert client.recv(4096) == b""  # closed by the server, with no reply
    lines = hook.report.wait_for(1)
    assert len(lines) == 1 and lines[0].endswith(": no complete request within 0.5 s"), lines
    assert "Traceback" not in capfd.readouterr().err
    assert hook.alerts() == 0
    # The stalled request spent nothing: sent whole, it is accepted.
    assert hook.post(body, signed(body))[0] == 200


def test_a_full_server_drops_its_slowest_client_for_a_new_one(start: Start) -> None:
    """Over a cap, the connection sending its request the longest makes room: the newcomer is
    served, whatever address it comes from (on 127.0.0.1 every client shares one)."""
    hook = start(request_deadline=30.0, max_per_client=3, max_connections=5)
    held = open_clients(hook.port, 3)
    try:
        assert wait_until(lambda: hook.server.limits.open_now() == 3)
        assert hook.post(ALERT, signed())[0] == 200  # a 4th from 127.0.0.1
        assert held[0].recv(16) == b""  # the oldest slow one, dropped for it
        assert "webhook: refused 127.0.0.1: dropped: still sending its request when full" in (
            hook.report.wait_for(1)
        )
        held += open_clients(hook.port, 3, source=GOOD_CLIENT)  # 5 in all: the total cap
        other = ALERT.replace(b"OOM", b"OOM again")
        assert hook.post(other, signed(other), source="127.0.0.3")[0] == 200
        assert held[1].recv(16) == b""  # the oldest of all
    finally:
        for client in held:
            client.close()
    assert hook.alerts() == 2


def test_eight_slowloris_sockets_lock_out_no_good_request(start: Start) -> None:
    """The attack that locked the webhook (2 of 20 served): 8 slow sockets from 127.0.0.1
    with no token, then 20 good requests from 127.0.0.1, all served."""
    hook = start(request_deadline=30.0)  # the default caps: 8 per address, 32 in all
    attackers = open_clients(hook.port, 8)
    try:
        for attacker in attackers:
            attacker.send(SLOW_HEADERS[:10])
        assert wait_until(lambda: hook.server.limits.open_now() == 8)
        bodies = [ALERT.replace(b"OOM", f"OOM {n}".encode()) for n in range(20)]
        statuses = [hook.post(body, signed(body))[0] for body in bodies]
        assert statuses == [200] * 20
    finally:
        for attacker in attackers:
            attacker.close()
    assert hook.alerts() == 20


def test_a_flood_of_refused_clients_costs_a_few_lines(start: Start) -> None:
    hook = start()
    for _ in range(40):
        assert hook.post(ALERT, {"X-Wild-Signature": "sha256=00"})[0] == 401
    lines = hook.report.lines
    assert len(lines) == 10  # the burst; the rest are counted, and said with the next line
    assert all(": 401 " in line for line in lines)
