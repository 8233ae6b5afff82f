"""http_healthy.py: a GET answered 2xx within the timeout, against a server on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.check_scripts.conftest import Ran, Scripts

SCRIPT = "http_healthy.py"


class Handler(BaseHTTPRequestHandler):
    release: threading.Event  # set by the fixture: the slow path waits on it

    def do_GET(self) -> None:
        if self.path == "/slow":
            # Headers never come within the script's timeout; the fixture lets us go at the end.
            self.release.wait(30)
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/health")
            self.end_headers()
            return
        self.send_response({"/health": 200, "/empty": 204}.get(self.path, 503))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass


@pytest.fixture
def server() -> Iterator[str]:
    Handler.release = threading.Event()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        Handler.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_healthy_statuses(scripts: Scripts, server: str) -> None:
    assert scripts.run(SCRIPT, f"{server}/health") == Ran(0, f"HTTP 200 from {server}/health")
    assert scripts.run(SCRIPT, f"{server}/empty", "5") == Ran(0, f"HTTP 204 from {server}/empty")
    assert scripts.run(SCRIPT, f"{server}/moved") == Ran(0, f"HTTP 200 from {server}/moved")


def test_an_error_status_is_not_healthy(scripts: Scripts, server: str) -> None:
    assert scripts.run(SCRIPT, f"{server}/down") == Ran(1, f"HTTP 503 from {server}/down")


def test_no_answer_within_the_timeout(scripts: Scripts, server: str) -> None:
    assert scripts.run(SCRIPT, f"{server}/slow", "0.3") == Ran(
        1, f"no answer from {server}/slow within 0.3s"
    )


def test_nobody_listening(scripts: Scripts) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, now closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert scripts.run(SCRIPT, f"http://127.0.0.1:{port}/", "5") == Ran(
        1, f"no answer from http://127.0.0.1:{port}/: [Errno 111] Connection refused"
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ((), "usage: http_healthy.py URL [TIMEOUT_S]"),
        (
            ("file:///etc/passwd",),
            "http_healthy.py: URL must start with http:// or https://, not 'file:///etc/passwd'",
        ),
        *(
            (
                ("http://127.0.0.1/", bad),
                "http_healthy.py: TIMEOUT_S must be a number of seconds above 0 and at most "
                f"86400, not {bad!r}",
            )
            for bad in ("0", "soon", "nan", "1e300")
        ),
    ],
)
def test_usage_errors(scripts: Scripts, args: tuple[str, ...], line: str) -> None:
    assert scripts.run(SCRIPT, *args) == Ran(2, line)
