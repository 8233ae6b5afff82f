"""Whether one webhook request is authentic, fresh and new: a pure decision, no I/O, no clock.

A signature over the body alone (GitHub's `X-Hub-Signature-256`) stays valid forever, so a
copied request could be replayed at any time. wild's signature covers a timestamp too
(Stripe's and Slack's scheme): `X-Wild-Signature: sha256=HMAC(secret, "TIMESTAMP.BODY")` with
`X-Wild-Timestamp: TIMESTAMP` (unix seconds). A request outside the tolerance window is
refused, and inside it every signature is spent once, so a replay is refused too. The driver
persists the spent ids for the window, so a restart does not reopen it.

A bearer token signs nothing: whoever holds it can make new requests, so replaying one adds
nothing; delivery ids (`X-Wild-Delivery`) still make redeliveries of either kind idempotent.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Container, Mapping

from wild.record import record

TIMESTAMP_HEADER = "X-Wild-Timestamp"
SIGNATURE_HEADER = "X-Wild-Signature"
GITHUB_SIGNATURE_HEADER = "X-Hub-Signature-256"
# The first one present names the delivery; GitHub's and a generic request id are honoured too.
DELIVERY_HEADERS = ("X-Wild-Delivery", "X-GitHub-Delivery", "X-Request-Id")
TOLERANCE_S = 300
MAX_DELIVERY_ID = 128

_TIMESTAMP = re.compile(r"[0-9]{1,12}")

UNAUTHORIZED = f"missing or wrong Authorization bearer token or {SIGNATURE_HEADER}"
BODY_ONLY_SIGNATURE = (
    f"{GITHUB_SIGNATURE_HEADER} signs only the body, so a copy of the request could be "
    f'replayed; sign "TIMESTAMP.BODY" into {SIGNATURE_HEADER} and send {TIMESTAMP_HEADER} '
    "(see docs/webhook.md)"
)
NO_TIMESTAMP = (
    f"{SIGNATURE_HEADER} needs {TIMESTAMP_HEADER} (unix seconds, the one that was signed)"
)
REPLAYED = "this signature was already used (a replay); sign each request afresh"
BAD_DELIVERY = f"a delivery id must be 1 to {MAX_DELIVERY_ID} characters"


@record
class Credentials:
    """What the server accepts: a bearer token, an HMAC secret, or both."""

    token: bytes | None = None
    secret: bytes | None = None


@record
class Spent:
    """An id a request uses up, and until when (unix seconds) it must be remembered."""

    key: str
    until: float


@record
class Accept:
    """Authentic and new. `spend_now` before acting: a replay must never act, even when wild is
    killed mid-request; `spend_when_done` after: a delivery that failed may be delivered again."""

    spend_now: tuple[Spent, ...] = ()
    spend_when_done: tuple[Spent, ...] = ()


@record
class Duplicate:
    """Authentic, but this delivery id was already applied: acknowledge, do nothing."""

    delivery: str


@record
class Refuse:
    """Refused with an HTTP status and a reason the client is told."""

    status: int
    reason: str


Verdict = Accept | Duplicate | Refuse


def sign(secret: bytes, timestamp: str, body: bytes) -> str:
    """The `X-Wild-Signature` value for `body` sent at `timestamp` (unix seconds as text)."""
    digest = hmac.new(secret, timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


def verify(
    body: bytes,
    headers: Mapping[str, str],
    credentials: Credentials,
    *,
    now: float,
    seen: Container[str],
    tolerance: float = TOLERANCE_S,
) -> Verdict:
    """Decide one request. `headers` is keyed by lower-case name; `seen` holds spent ids."""
    signature_key: Spent | None = None
    if not _bearer_ok(headers, credentials.token):
        checked = _signature(body, headers, credentials.secret, now, tolerance)
        if isinstance(checked, Refuse):
            return checked
        if checked.key in seen:
            return Refuse(409, REPLAYED)
        signature_key = checked
    delivery = _delivery(headers)
    if isinstance(delivery, Refuse):
        return delivery
    if delivery is not None and delivery in seen:
        return Duplicate(delivery)
    return Accept(
        spend_now=() if signature_key is None else (signature_key,),
        spend_when_done=() if delivery is None else (Spent(delivery, now + tolerance),),
    )


def _header(headers: Mapping[str, str], name: str) -> str:
    return (headers.get(name.lower()) or "").strip()


def _bytes(text: str) -> bytes:
    # Header values arrive latin-1 decoded; bytes let compare_digest take any of them.
    return text.encode("utf-8", "surrogateescape")


def _bearer_ok(headers: Mapping[str, str], token: bytes | None) -> bool:
    if token is None:
        return False
    scheme, _, given = _header(headers, "Authorization").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(_bytes(given.strip()), token)


def _signature(
    body: bytes,
    headers: Mapping[str, str],
    secret: bytes | None,
    now: float,
    tolerance: float,
) -> Spent | Refuse:
    """The signature's spent id when it is right and fresh; else why not."""
    given = _header(headers, SIGNATURE_HEADER)
    if secret is None or not given:
        if secret is not None and _header(headers, GITHUB_SIGNATURE_HEADER):
            return Refuse(401, BODY_ONLY_SIGNATURE)
        return Refuse(401, UNAUTHORIZED)
    timestamp = _header(headers, TIMESTAMP_HEADER)
    if _TIMESTAMP.fullmatch(timestamp) is None:
        return Refuse(401, NO_TIMESTAMP)
    if not hmac.compare_digest(_bytes(given), sign(secret, timestamp, body).encode("ascii")):
        return Refuse(401, UNAUTHORIZED)
    # Checked only once the signature is right: strangers learn nothing about the clock.
    skew = now - int(timestamp)
    if abs(skew) > tolerance:
        return Refuse(
            401,
            f"{TIMESTAMP_HEADER} is {abs(skew):.0f} s {'old' if skew > 0 else 'ahead'}, "
            f"outside the {tolerance:.0f} s window; sign again with the current time",
        )
    # Valid until its timestamp leaves the window; remembered that long, no longer.
    return Spent("sig:" + given.removeprefix("sha256="), int(timestamp) + tolerance)


def _delivery(headers: Mapping[str, str]) -> str | Refuse | None:
    for name in DELIVERY_HEADERS:
        value = _header(headers, name)
        if value:
            if len(value) > MAX_DELIVERY_ID:
                return Refuse(400, BAD_DELIVERY)
            return f"{name.lower()}:{value}"
    return None
