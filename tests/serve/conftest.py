"""A dashboard on 127.0.0.1 over a sample project, and a small HTTP client for it."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.serve.browser import chrome, require_browser
from tests.serve.sample import make_project
from wild.clock import SystemClock
from wild.paths import WildPaths
from wild.serve.server import Dashboard


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)


@dataclass
class Client:
    board: Dashboard
    paths: WildPaths

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.board.port}"

    @property
    def cookie(self) -> str:
        return f"{self.board.access.cookie_name}={self.board.access.token}"

    def request(
        self, method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b""
    ) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.board.port, timeout=10)
        try:
            sent = {"Host": f"127.0.0.1:{self.board.port}", **(headers or {})}
            conn.request(method, target, body=body or None, headers=sent)
            answer = conn.getresponse()
            return Reply(answer.status, dict(answer.getheaders()), answer.read())
        finally:
            conn.close()

    def get(self, target: str, **headers: str) -> Reply:
        return self.request("GET", target, {"Cookie": self.cookie, **headers})

    def act(self, body: dict[str, Any], **headers: str) -> Reply:
        sent = {
            "Cookie": self.cookie,
            "Origin": self.origin,
            "Content-Type": "application/json",
            **headers,
        }
        return self.request("POST", "/api/action", sent, orjson.dumps(body))


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Client]:
    paths = make_project(tmp_path)
    with Dashboard(paths, SystemClock(), port=0) as dashboard:
        yield Client(dashboard, paths)


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    """One real Chromium for a module's browser tests (tests/serve/browser.py)."""
    require_browser()
    browser = chrome()
    try:
        yield browser
    finally:
        browser.quit()
