"""sha256 hex digests, without loading OpenSSL to hash a few small things.

`hashlib` loads OpenSSL's `_hashlib` (~2.4 ms of CPU here): the loop hashed ~14 small things
before its first agent's start (the approval store's file name, its own writes, a run tag), and
the load was the cost, not the hashing (issue 22 item 8). CPython's own sha256 (`_sha256` in
3.11, `_sha2` from 3.12) loads in ~0.25 ms and gives the same digest, but is ~5× slower on
large inputs (600 KB: 2.1 against 0.4 ms). So: OpenSSL's once it is loaded anyway, or for
anything larger than `SMALL` (loading it then pays for itself); CPython's for a small input
before that; `hashlib` wherever CPython's module is missing (a build without it).

Standard library only, nothing of wild: every layer may import it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Protocol

# Above this many bytes OpenSSL's sha256 is worth loading (~10 µs a KiB saved against ~2.4 ms
# once: it pays for itself on the first input of ~240 KiB, on a few of 64 KiB).
SMALL = 64 * 1024


Buffer = bytes | bytearray


class Sha256(Protocol):
    """What wild uses of a sha256 object (hashlib's or CPython's own)."""

    def hexdigest(self) -> str: ...


def _openssl() -> Callable[[Buffer], Sha256]:
    import hashlib  # noqa: PLC0415  (OpenSSL: loaded when it pays, see the module's docstring)

    return hashlib.sha256


def load_openssl() -> None:
    """Load OpenSSL's sha256 now, for every later input (the loop does, once its first agent
    runs: the files it hashes at each iteration can be tens of KB, ~5x faster hashed there)."""
    _openssl()


def _builtin() -> Callable[[Buffer], Sha256] | None:
    """CPython's own sha256 constructor, or None where this build has none."""
    for name in ("_sha2", "_sha256"):  # 3.12+, 3.11
        try:
            module = __import__(name)
        except ImportError:
            continue
        constructor: Callable[[Buffer], Sha256] | None = getattr(module, "sha256", None)
        if constructor is not None:
            return constructor
    return None


@functools.cache  # chosen once
def _small() -> Callable[[Buffer], Sha256]:
    """The constructor for small inputs before OpenSSL is loaded."""
    return _builtin() or _openssl()


def _constructor(size: int) -> Callable[[Buffer], Sha256]:
    if size > SMALL or "_hashlib" in sys.modules:
        return _openssl()
    return _small()


def sha256_hex(data: bytes | bytearray) -> str:
    """The sha256 hex digest of `data` (the same whichever implementation computes it)."""
    return _constructor(len(data))(data).hexdigest()
