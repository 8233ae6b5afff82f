"""The dashboard's access rules, decided without a socket."""

from __future__ import annotations

import pytest

from wild.serve.access import HEADER, Access, new_token

RULES = Access("s3cret-token", 8765)
HOST = {"Host": "127.0.0.1:8765"}
COOKIE = {**HOST, "Cookie": "other=1; wild_token_8765=s3cret-token"}


def test_tokens_are_fresh_and_long() -> None:
    assert new_token() != new_token()
    assert len(new_token()) >= 40


@pytest.mark.parametrize(
    "host", [None, "evil.example:8765", "127.0.0.1:9999", "127.0.0.1", "localhost.evil:8765"]
)
def test_only_our_loopback_host_and_port_pass(host: str | None) -> None:
    headers = {"Cookie": COOKIE["Cookie"]} | ({"Host": host} if host else {})
    verdict = RULES.judge("GET", "/", headers)
    assert (verdict.status, verdict.reason.split(" (")[0]) == (403, "foreign Host refused")


def test_localhost_is_our_host_too() -> None:
    assert RULES.judge("GET", "/", {**COOKIE, "Host": "localhost:8765"}).allowed


@pytest.mark.parametrize(
    "headers",
    [
        HOST,
        {**HOST, "Cookie": "wild_token_8765=wrong"},
        {**HOST, "Cookie": "wild_token_1=s3cret-token"},
        {**HOST, HEADER: "wrong"},
        {**HOST, "Cookie": "\x00garbage;;=="},
    ],
)
def test_without_the_token_everything_is_refused(headers: dict[str, str]) -> None:
    for method in ("GET", "POST"):
        assert RULES.judge(method, "/api/view", headers).status == 403


def test_the_token_in_the_url_is_taken_once_for_the_cookie() -> None:
    verdict = RULES.judge("GET", "/?token=s3cret-token", HOST)
    assert verdict.allowed and verdict.from_query
    assert not RULES.judge("GET", "/?token=s3cret-token", COOKIE).from_query
    assert RULES.judge("POST", "/api/action?token=s3cret-token", HOST).status == 403
    cookie = RULES.set_cookie()
    assert cookie.startswith("wild_token_8765=s3cret-token;")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://127.0.0.1:8765", True),
        ("http://localhost:8765", True),
        ("http://evil.example", False),
        ("null", False),
        ("http://127.0.0.1:9999", False),
        ("https://127.0.0.1:8765", False),
    ],
)
def test_a_post_must_come_from_our_origin(origin: str, allowed: bool) -> None:
    assert RULES.judge("POST", "/api/action", {**COOKIE, "Origin": origin}).allowed is allowed


def test_a_post_without_origin_needs_the_header_token() -> None:
    assert RULES.judge("POST", "/api/action", COOKIE).status == 403
    assert RULES.judge("POST", "/api/action", {**HOST, HEADER: "s3cret-token"}).allowed
