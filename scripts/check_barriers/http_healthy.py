#!/usr/bin/env python3
"""Barrier check: an HTTP endpoint answers a GET with a 2xx status within a timeout.

usage: http_healthy.py URL [TIMEOUT_S]

URL is http:// or https://; redirects are followed. TIMEOUT_S (default 10, at most a day)
bounds the whole wait for the status line, however slowly a server drips it. Exit 0 on a 2xx
status, 1 on any other status, no answer or a timeout, 2 on a usage error; one line of output
says why.
"""

from __future__ import annotations

import math
import sys
import threading
import urllib.error
import urllib.request

USAGE = "usage: http_healthy.py URL [TIMEOUT_S]"
DEFAULT_TIMEOUT_S = 10.0
MAX_TIMEOUT_S = 86400.0  # a day; far longer overflows the waits below


def no_answer_within(url: str, timeout_s: float) -> str:
    return f"no answer from {url} within {timeout_s:g}s"


def fetch_status(url: str, timeout_s: float, answer: list[tuple[int, str]]) -> None:
    """Append (exit code, why) for one GET of `url`; runs in a thread the caller may abandon."""
    try:
        # The scheme is checked before: only http and https get here.
        with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, TimeoutError):  # the same words as the caller's own deadline
            answer.append((1, no_answer_within(url, timeout_s)))
        else:
            answer.append((1, f"no answer from {url}: {reason}"))
        return
    answer.append((0 if 200 <= status < 300 else 1, f"HTTP {status} from {url}"))


def judge(argv: list[str]) -> tuple[int, str]:
    if argv[:1] in (["-h"], ["--help"]):
        return 0, USAGE
    if len(argv) not in (1, 2):
        return 2, USAGE
    url = argv[0]
    if not url.lower().startswith(("http://", "https://")):
        return 2, f"http_healthy.py: URL must start with http:// or https://, not {url!r}"
    timeout_text = argv[1] if len(argv) == 2 else str(DEFAULT_TIMEOUT_S)
    try:
        timeout_s = float(timeout_text)
    except ValueError:
        timeout_s = math.nan
    if not 0 < timeout_s <= MAX_TIMEOUT_S:  # NaN fails too
        return 2, (
            f"http_healthy.py: TIMEOUT_S must be a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT_S:g}, not {timeout_text!r}"
        )
    answer: list[tuple[int, str]] = []
    # A daemon thread bounds the whole request: urllib's timeout is per socket operation only.
    worker = threading.Thread(target=fetch_status, args=(url, timeout_s, answer), daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not answer:
        return 1, no_answer_within(url, timeout_s)
    return answer[0]


if __name__ == "__main__":
    code, line = judge(sys.argv[1:])
    print(line, file=sys.stderr if code == 2 else sys.stdout)
    sys.exit(code)
