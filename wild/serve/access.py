"""Who may use the dashboard: the token, the Host allow-list and the same-origin check (pure).

A server on loopback is still reachable from every web page the user opens, so (as Jupyter
does) every request needs the token printed at start; the page keeps it in an HttpOnly,
SameSite=Strict cookie. A foreign `Host` is refused (DNS rebinding: a hostile name resolved to
127.0.0.1). A state-changing request must also come from the page's own origin (CSRF):
its `Origin` must be ours, or, for a client without one (curl, tests), the token must come in
the `X-Wild-Token` header, which a cross-site form cannot set.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qs, urlsplit

from wild.record import record

HEADER = "X-Wild-Token"
LOOPBACK_NAMES = ("127.0.0.1", "localhost")


def new_token() -> str:
    """A fresh random token for one server run (256 bits)."""
    return secrets.token_urlsafe(32)


@record
class Verdict:
    """`status` 0: allowed; else the HTTP status and the reason to show."""

    status: int = 0
    reason: str = ""
    from_query: bool = False  # the token came in the URL: set the cookie and drop it from the URL

    @property
    def allowed(self) -> bool:
        return self.status == 0


@record
class Access:
    """The rules for one server: its token and the port it listens on."""

    token: str
    port: int

    @property
    def cookie_name(self) -> str:
        # One name per port, so two dashboards on one machine keep their own tokens.
        return f"wild_token_{self.port}"

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset(f"{name}:{self.port}" for name in LOOPBACK_NAMES)

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    def set_cookie(self) -> str:
        return f"{self.cookie_name}={self.token}; Path=/; HttpOnly; SameSite=Strict"

    def _matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def _cookie(self, header: str | None) -> str | None:
        if not header:
            return None
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(header)
        except CookieError:
            return None
        morsel = jar.get(self.cookie_name)
        return morsel.value if morsel is not None else None

    def judge(self, method: str, target: str, headers: Mapping[str, str]) -> Verdict:
        """Whether this request may proceed; `headers` keys are matched case-insensitively."""
        lower = {k.lower(): v for k, v in headers.items()}
        if lower.get("host") not in self.hosts:
            return Verdict(403, "foreign Host refused (open the URL wild printed)")
        query = parse_qs(urlsplit(target).query).get("token", [None])[0]
        by_header = self._matches(lower.get(HEADER.lower()))
        by_cookie = self._matches(self._cookie(lower.get("cookie")))
        by_query = method == "GET" and self._matches(query)
        if not (by_header or by_cookie or by_query):
            return Verdict(403, "no valid token: open the URL with ?token= that wild printed")
        if method not in ("GET", "HEAD"):
            origin = lower.get("origin")
            if origin is not None and origin not in self.origins:
                return Verdict(403, "cross-origin request refused")
            if origin is None and not by_header:
                return Verdict(403, f"a request without Origin needs the {HEADER} header")
        return Verdict(from_query=by_query and not (by_cookie or by_header))
