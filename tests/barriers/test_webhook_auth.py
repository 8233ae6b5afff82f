"""The webhook's verification decision, as a pure function: examples and properties."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.barriers.webhook_auth import (
    BAD_DELIVERY,
    BODY_ONLY_SIGNATURE,
    NO_TIMESTAMP,
    REPLAYED,
    UNAUTHORIZED,
    Accept,
    Credentials,
    Duplicate,
    Refuse,
    Spent,
    Verdict,
    sign,
    verify,
)

SECRET = b"shh"
TOKEN = b"tok"
NOW = 1_770_544_800  # 2026-02-08T10:00:00Z
BODY = b'{"severity": "info"}'
BOTH = Credentials(token=TOKEN, secret=SECRET)
SIGNING = Credentials(secret=SECRET)


def headers_for(
    body: bytes = BODY, at: int = NOW, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """Signed headers, keyed by lower-case name as the server passes them."""
    timestamp = str(at)
    return {
        "x-wild-timestamp": timestamp,
        "x-wild-signature": sign(SECRET, timestamp, body),
        **{name.lower(): value for name, value in (extra or {}).items()},
    }


def decide(
    headers: dict[str, str],
    *,
    body: bytes = BODY,
    seen: frozenset[str] = frozenset(),
    credentials: Credentials = SIGNING,
    now: float = NOW,
) -> Verdict:
    return verify(body, headers, credentials, now=now, seen=seen)


def test_sign_is_hmac_sha256_of_timestamp_dot_body() -> None:
    expected = hmac.new(SECRET, b"1770544800." + BODY, hashlib.sha256).hexdigest()
    assert sign(SECRET, "1770544800", BODY) == "sha256=" + expected


def test_a_fresh_signature_is_accepted_and_spent_until_its_window_closes() -> None:
    headers = headers_for()
    signature = headers["x-wild-signature"].removeprefix("sha256=")
    assert decide(headers) == Accept(spend_now=(Spent("sig:" + signature, NOW + 300),))


def test_a_spent_signature_is_a_replay() -> None:
    headers = headers_for()
    verdict = decide(headers)
    assert isinstance(verdict, Accept)
    spent = frozenset(s.key for s in verdict.spend_now)
    assert decide(headers, seen=spent) == Refuse(409, REPLAYED)


def test_a_delivery_id_is_spent_once_the_request_is_done() -> None:
    verdict = decide(headers_for(extra={"X-Wild-Delivery": "job-42"}))
    assert isinstance(verdict, Accept)
    assert verdict.spend_when_done == (Spent("x-wild-delivery:job-42", NOW + 300),)
    again = headers_for(at=NOW + 1, extra={"X-Wild-Delivery": "job-42"})
    assert decide(again, seen=frozenset({"x-wild-delivery:job-42"})) == Duplicate(
        "x-wild-delivery:job-42"
    )


def test_the_first_delivery_header_present_names_the_delivery() -> None:
    verdict = decide(headers_for(extra={"X-Request-Id": "r", "X-GitHub-Delivery": "g"}))
    assert isinstance(verdict, Accept)
    assert [s.key for s in verdict.spend_when_done] == ["x-github-delivery:g"]


def test_a_long_delivery_id_is_refused() -> None:
    assert decide(headers_for(extra={"X-Wild-Delivery": "d" * 129})) == Refuse(400, BAD_DELIVERY)
    assert isinstance(decide(headers_for(extra={"X-Wild-Delivery": "d" * 128})), Accept)


def test_bearer_requests_spend_only_their_delivery_id() -> None:
    bearer = {"authorization": "Bearer tok"}
    assert decide(bearer, credentials=BOTH) == Accept()
    assert decide({"authorization": "bearer  tok "}, credentials=BOTH) == Accept()
    assert decide({"authorization": "Bearer tok"}, credentials=SIGNING) == Refuse(401, UNAUTHORIZED)
    assert decide({**bearer, "x-wild-delivery": "d"}, credentials=BOTH, seen=frozenset()) == Accept(
        spend_when_done=(Spent("x-wild-delivery:d", NOW + 300),)
    )


@pytest.mark.parametrize(
    ("skew", "accepted"), [(-301, False), (-300, True), (0, True), (300, True), (301, False)]
)
def test_the_window_is_300_seconds_either_way(skew: int, accepted: bool) -> None:
    verdict = decide(headers_for(at=NOW + skew))
    assert isinstance(verdict, Accept) is accepted


def test_a_stale_request_says_how_stale() -> None:
    assert decide(headers_for(at=NOW - 3600)) == Refuse(
        401,
        "X-Wild-Timestamp is 3600 s old, outside the 300 s window; "
        "sign again with the current time",
    )


def test_a_stale_request_with_a_wrong_signature_learns_nothing_about_the_clock() -> None:
    forged = headers_for(at=NOW - 3600) | {"x-wild-signature": "sha256=" + "0" * 64}
    assert decide(forged) == Refuse(401, UNAUTHORIZED)


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({}, UNAUTHORIZED),
        ({"x-hub-signature-256": sign(SECRET, "1", BODY)}, BODY_ONLY_SIGNATURE),
        ({"x-wild-signature": sign(SECRET, str(NOW), BODY)}, NO_TIMESTAMP),
        (headers_for() | {"x-wild-timestamp": "1770544800.0"}, NO_TIMESTAMP),
        (headers_for() | {"x-wild-timestamp": "-1770544800"}, NO_TIMESTAMP),
        (headers_for() | {"x-wild-timestamp": "9" * 13}, NO_TIMESTAMP),
        (headers_for() | {"x-wild-signature": sign(b"other", str(NOW), BODY)}, UNAUTHORIZED),
        (headers_for(body=b"{}"), UNAUTHORIZED),
    ],
)
def test_refusals(headers: dict[str, str], reason: str) -> None:
    assert decide(headers) == Refuse(401, reason)


def test_nothing_is_accepted_by_a_server_without_that_credential() -> None:
    assert decide(headers_for(), credentials=Credentials(token=TOKEN)) == Refuse(401, UNAUTHORIZED)


# -- properties -------------------------------------------------------------------------

bodies = st.binary(max_size=256)
skews = st.integers(min_value=-300, max_value=300)


@given(body=bodies, skew=skews, delivery=st.none() | st.text("abc-_.0123", min_size=1, max_size=9))
def test_any_fresh_signed_request_is_accepted_once(
    body: bytes, skew: int, delivery: str | None
) -> None:
    extra = {} if delivery is None else {"X-Wild-Delivery": delivery}
    headers = headers_for(body, NOW + skew, extra=extra)
    first = decide(headers, body=body)
    assert isinstance(first, Accept)
    seen = frozenset(s.key for s in (*first.spend_now, *first.spend_when_done))
    assert all(s.until >= NOW for s in (*first.spend_now, *first.spend_when_done))
    assert decide(headers, body=body, seen=seen) == Refuse(409, REPLAYED)
    # Re-sent later with a new delivery id: still the same spent signature.
    assert decide(headers | {"x-wild-delivery": "other"}, body=body, seen=seen) == Refuse(
        409, REPLAYED
    )


@given(body=bodies, skew=st.integers().filter(lambda s: abs(s) > 300))
def test_any_request_outside_the_window_is_refused(body: bytes, skew: int) -> None:
    at = NOW + skew
    if at < 0 or len(str(at)) > 12:
        return  # not a timestamp at all: refused as such (see test_refusals)
    verdict = decide(headers_for(body, at), body=body)
    assert isinstance(verdict, Refuse) and verdict.status == 401


@given(body=bodies, flip=st.integers(min_value=0))
def test_any_changed_byte_of_the_body_is_refused(body: bytes, flip: int) -> None:
    headers = headers_for(body)
    tampered = bytearray(body + b"x")
    tampered[flip % len(tampered)] ^= 0x01
    assert decide(headers, body=bytes(tampered)) == Refuse(401, UNAUTHORIZED)


@given(
    body=bodies,
    headers=st.dictionaries(
        st.sampled_from(
            [
                "authorization",
                "x-wild-timestamp",
                "x-wild-signature",
                "x-hub-signature-256",
                "x-wild-delivery",
                "x-request-id",
            ]
        ),
        st.text(max_size=80),
    ),
)
def test_garbage_headers_never_crash_and_are_never_accepted(
    body: bytes, headers: dict[str, str]
) -> None:
    verdict = decide(headers, body=body, credentials=BOTH)
    assert isinstance(verdict, Refuse)
    assert verdict.status in (400, 401)
