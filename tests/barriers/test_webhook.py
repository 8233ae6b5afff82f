"""The loopback webhook: auth (bearer, timestamped HMAC), Host/Origin checks, size cap, effects.

Replays, stale signatures, slow clients and connection caps:
tests/reliability/test_webhook_attacks.py.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import socket
from collections.abc import Iterator
from dataclasses import dataclass

import orjson
import pytest

from tests.barriers.conftest import T0, FakeClock
from wild.barriers.webhook import WebhookServer
from wild.barriers.webhook_auth import BODY_ONLY_SIGNATURE, UNAUTHORIZED, sign
from wild.errors import WildError
from wild.paths import WildPaths

TOKEN = "s3cret-token"
# GitHub's documented test vector (docs: "Validating webhook deliveries").
SECRET = b"It's a Secret to Everybody"
PAYLOAD = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
NOW = str(int(T0.timestamp()))
SIGNATURE = sign(SECRET, NOW, PAYLOAD)
SIGNED = {"X-Wild-Timestamp": NOW, "X-Wild-Signature": SIGNATURE}

BARRIERS = (
    "# Wild Loop Barriers\n"
    "\n"
    "## [WAITING] hook\n"
    "- Type: webhook\n"
    "- Blocks: task-003\n"
    "\n"
    "## [WAITING] cmd\n"
    "- Type: command-check\n"
    "- Check: true\n"
)


@dataclass
class Served:
    paths: WildPaths
    port: int
    wakes: list[str]

    def post(
        self, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, object]]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request("POST", path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, orjson.loads(response.read())
        finally:
            connection.close()

    def bearer(self, path: str, body: bytes = b"", **extra: str) -> tuple[int, dict[str, object]]:
        return self.post(path, body, {"Authorization": f"Bearer {TOKEN}", **extra})


@pytest.fixture
def served(paths: WildPaths, clock: FakeClock) -> Iterator[Served]:
    paths.barriers.write_text(BARRIERS)
    wakes: list[str] = []
    server = WebhookServer(paths, token=TOKEN, secret=SECRET, wake=wakes.append, clock=clock)
    port = server.start()
    try:
        yield Served(paths, port, wakes)
    finally:
        server.stop()


SATISFIED = BARRIERS.replace(
    "## [WAITING] hook\n- Type: webhook\n- Blocks: task-003\n",
    "## [SATISFIED] hook\n- Type: webhook\n- Blocks: task-003\n- Satisfied: 2026-02-08T10:00:00Z\n",
)


def test_github_test_vector_is_what_we_compute() -> None:
    assert "sha256=" + hmac.new(SECRET, PAYLOAD, hashlib.sha256).hexdigest() == GITHUB_SIGNATURE


def test_the_signature_covers_timestamp_dot_body() -> None:
    expected = hmac.new(SECRET, NOW.encode() + b"." + PAYLOAD, hashlib.sha256).hexdigest()
    assert "sha256=" + expected == SIGNATURE


def test_right_bearer_satisfies_the_barrier(served: Served) -> None:
    status, reply = served.bearer("/barriers/hook/satisfy")
    assert (status, reply) == (200, {"ok": True, "barrier": "hook", "changed": True})
    assert served.paths.barriers.read_text() == SATISFIED
    assert served.wakes == ["hook"]


def test_satisfying_twice_changes_nothing_more(served: Served) -> None:
    served.bearer("/barriers/hook/satisfy")
    status, reply = served.bearer("/barriers/hook/satisfy")
    assert (status, reply) == (200, {"ok": True, "barrier": "hook", "changed": False})
    assert served.paths.barriers.read_text() == SATISFIED
    assert served.wakes == ["hook"]


def test_right_signature_of_timestamp_and_body_is_accepted(served: Served) -> None:
    status, _ = served.post("/barriers/hook/satisfy", PAYLOAD, SIGNED)
    assert status == 200
    assert served.paths.barriers.read_text() == SATISFIED


def test_a_github_body_only_signature_is_refused_as_replayable(served: Served) -> None:
    status, reply = served.post(
        "/barriers/hook/satisfy", PAYLOAD, {"X-Hub-Signature-256": GITHUB_SIGNATURE}
    )
    assert (status, reply) == (401, {"error": BODY_ONLY_SIGNATURE})
    assert BODY_ONLY_SIGNATURE == (
        "X-Hub-Signature-256 signs only the body, so a copy of the request could be replayed; "
        'sign "TIMESTAMP.BODY" into X-Wild-Signature and send X-Wild-Timestamp '
        "(see docs/webhook.md)"
    )
    assert served.paths.barriers.read_text() == BARRIERS


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token"},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": f"Basic {TOKEN}"},
        {**SIGNED, "X-Wild-Signature": SIGNATURE[:-1] + ("0" if SIGNATURE[-1] != "0" else "1")},
        {**SIGNED, "X-Wild-Signature": SIGNATURE.removeprefix("sha256=")},
        {**SIGNED, "X-Wild-Signature": sign(b"other", NOW, PAYLOAD)},
        {**SIGNED, "X-Wild-Timestamp": str(int(NOW) - 1)},
    ],
)
def test_wrong_auth_is_401_and_changes_nothing(served: Served, headers: dict[str, str]) -> None:
    status, reply = served.post("/barriers/hook/satisfy", PAYLOAD, headers)
    assert (status, reply) == (401, {"error": UNAUTHORIZED})
    assert UNAUTHORIZED == "missing or wrong Authorization bearer token or X-Wild-Signature"
    assert served.paths.barriers.read_text() == BARRIERS
    assert served.wakes == []


def test_hmac_of_another_body_is_401(served: Served) -> None:
    status, _ = served.post("/barriers/hook/satisfy", b"Hello, World?", SIGNED)
    assert status == 401


def test_requests_with_an_origin_header_are_refused(served: Served) -> None:
    status, reply = served.bearer("/barriers/hook/satisfy", Origin="http://evil.example")
    assert (status, reply) == (
        403,
        {"error": "requests with an Origin header (from a browser) are refused"},
    )
    assert served.paths.barriers.read_text() == BARRIERS


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "[::1]:{port}"]
)
def test_a_foreign_host_is_refused(served: Served, host: str) -> None:
    status, reply = served.bearer("/barriers/hook/satisfy", Host=host.format(port=served.port))
    assert (status, reply) == (403, {"error": "Host must be 127.0.0.1:PORT or localhost:PORT"})
    assert served.paths.barriers.read_text() == BARRIERS


def test_localhost_host_is_accepted(served: Served) -> None:
    status, _ = served.bearer("/barriers/hook/satisfy", Host=f"localhost:{served.port}")
    assert status == 200


def test_oversize_body_is_413_before_it_is_sent(served: Served) -> None:
    # Only the headers go out: the server must answer without waiting for 1 MB of body.
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(
            b"POST /alerts HTTP/1.1\r\n"
            + f"Host: 127.0.0.1:{served.port}\r\n".encode()
            + f"Authorization: Bearer {TOKEN}\r\n".encode()
            + b"Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n"
        )
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].split(b" ")[:2] == [b"HTTP/1.0", b"413"]
    assert orjson.loads(body) == {"error": "body of 1048576 bytes is over the 65536-byte limit"}
    assert not served.paths.alerts.exists()


def test_unknown_barrier_is_404(served: Served) -> None:
    status, reply = served.bearer("/barriers/nope/satisfy")
    assert (status, reply) == (404, {"error": "no barrier 'nope' in barriers.md"})


def test_non_webhook_barrier_is_409(served: Served) -> None:
    status, reply = served.bearer("/barriers/cmd/satisfy")
    assert (status, reply) == (
        409,
        {"error": "barrier cmd is command-check, not webhook; only its own check can satisfy it"},
    )
    assert served.paths.barriers.read_text() == BARRIERS


def test_unknown_endpoint_is_404(served: Served) -> None:
    status, reply = served.bearer("/run?cmd=rm")
    assert (status, reply) == (
        404,
        {"error": "unknown endpoint; use POST /barriers/<id>/satisfy or POST /alerts"},
    )


def test_only_post_is_served(served: Served) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    try:
        connection.request("GET", "/alerts", headers={"Authorization": f"Bearer {TOKEN}"})
        response = connection.getresponse()
        assert (response.status, orjson.loads(response.read())) == (
            405,
            {"error": "only POST is served"},
        )
    finally:
        connection.close()


ALERT = {
    "severity": "critical",
    "source": "slurm",
    "type": "job-failed",
    "description": "Job 12345 ran out of memory",
    "context": {"jobId": "12345"},
    "choices": ["retry", "skip"],
    "status": "resolved",
    "id": "forged-id",
    "command": "rm -rf /",
}


def test_alert_post_appends_a_pending_alert_with_known_fields_only(served: Served) -> None:
    status, reply = served.bearer("/alerts", orjson.dumps(ALERT))
    lines = served.paths.alerts.read_bytes().splitlines()
    assert len(lines) == 1
    record = orjson.loads(lines[0])
    assert (status, reply) == (200, {"ok": True, "alert": record["id"]})
    assert record["id"].startswith("alert-20260208-100000-")
    del record["id"]
    assert record == {
        "timestamp": "2026-02-08T10:00:00Z",
        "severity": "critical",
        "source": "slurm",
        "type": "job-failed",
        "description": "Job 12345 ran out of memory",
        "status": "pending",
        "context": {"jobId": "12345"},
        "choices": ["retry", "skip"],
    }
    assert served.wakes == [reply["alert"]]


def test_alert_source_defaults_to_webhook(served: Served) -> None:
    body = orjson.dumps({"severity": "info", "type": "note", "description": "hi"})
    assert served.bearer("/alerts", body)[0] == 200
    assert orjson.loads(served.paths.alerts.read_bytes())["source"] == "webhook"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"{not json", None),
        (b"[1, 2]", "body must be a JSON object"),
        (
            b'{"type": "t", "description": "d"}',
            "alert field 'severity' must be critical, warning or info",
        ),
        (
            b'{"severity": "loud", "type": "t", "description": "d"}',
            "alert field 'severity' must be critical, warning or info",
        ),
        (
            b'{"severity": "info", "description": "d"}',
            "alert field 'type' must be a non-empty string",
        ),
        (
            b'{"severity": "info", "type": "t", "description": 5}',
            "alert field 'description' must be a non-empty string",
        ),
        (
            b'{"severity": "info", "type": "t", "description": "d", "context": []}',
            "alert field 'context' must be a JSON object",
        ),
        (
            b'{"severity": "info", "type": "t", "description": "d", "choices": [1]}',
            "alert field 'choices' must be a list of strings",
        ),
    ],
)
def test_invalid_alerts_are_400_and_append_nothing(
    served: Served, body: bytes, error: str | None
) -> None:
    status, reply = served.bearer("/alerts", body)
    assert status == 400
    if error is not None:
        assert reply == {"error": error}
    else:
        assert str(reply["error"]).startswith("body is not JSON (")
    assert not served.paths.alerts.exists()


def test_a_redelivery_is_acknowledged_but_not_applied_twice(served: Served) -> None:
    body = orjson.dumps({"severity": "info", "type": "note", "description": "hi"})
    first = served.bearer("/alerts", body, **{"X-GitHub-Delivery": "d-1"})
    again = served.bearer("/alerts", body, **{"X-GitHub-Delivery": "d-1"})
    other = served.bearer("/alerts", body, **{"X-Request-Id": "d-1"})
    ours = served.bearer("/alerts", body, **{"X-Wild-Delivery": "d-1"})
    ours_again = served.bearer("/alerts", body, **{"X-Wild-Delivery": "d-1"})
    assert first[0] == 200
    assert again == (200, {"ok": True, "duplicate": True})
    assert other[0] == 200
    assert ours[0] == 200
    assert ours_again == (200, {"ok": True, "duplicate": True})
    assert len(served.paths.alerts.read_bytes().splitlines()) == 3


def test_requests_leave_stderr_quiet(served: Served, capfd: pytest.CaptureFixture[str]) -> None:
    served.bearer("/barriers/hook/satisfy")
    served.post("/barriers/hook/satisfy", b"", {"Authorization": "Bearer bad"})
    assert capfd.readouterr().err == ""


def test_server_binds_loopback_only(paths: WildPaths) -> None:
    server = WebhookServer(paths, token=TOKEN, secret=None, wake=lambda _: None)
    port = server.start()
    try:
        assert server.address == ("127.0.0.1", port)
    finally:
        server.stop()


def test_a_server_without_any_auth_is_refused(paths: WildPaths) -> None:
    with pytest.raises(WildError) as caught:
        WebhookServer(paths, token=None, secret=None, wake=lambda _: None)
    assert str(caught.value) == (
        "the webhook needs a bearer token or an HMAC secret; configure one, then start it"
    )


def test_a_failed_write_is_a_500_and_one_line_not_a_traceback(
    paths: WildPaths, clock: FakeClock, capfd: pytest.CaptureFixture[str]
) -> None:
    paths.alerts.mkdir()  # appending to it fails, as a full disk would
    lines: list[str] = []
    server = WebhookServer(
        paths, token=TOKEN, secret=None, wake=lambda _: None, report=lines.append
    )
    port = server.start()
    try:
        status, reply = Served(paths, port, []).bearer("/alerts", orjson.dumps(ALERT))
    finally:
        server.stop()
    assert status == 500
    assert str(reply["error"]).startswith("wild could not record this request: ")
    assert "alerts.jsonl" in str(reply["error"])
    assert len(lines) == 1 and ": 500 wild could not record this request: " in lines[0]
    assert "Traceback" not in capfd.readouterr().err
