"""wild.digest: the same sha256 whichever implementation computes it, and OpenSSL's
(`hashlib`, ~2.4 ms to load) not loaded to hash small inputs (issue 22 item 8)."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from wild import digest


@given(st.binary(max_size=4096) | st.integers(0, 3).map(lambda n: bytes(digest.SMALL - 1 + n)))
def test_the_digest_is_hashlibs(data: bytes) -> None:
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert digest.sha256_hex(bytearray(data)) == hashlib.sha256(data).hexdigest()


@given(st.binary(max_size=2048))
def test_cpythons_own_sha256_is_hashlibs(data: bytes) -> None:
    own = digest._builtin()
    assert own is not None  # every CPython build wild supports has it
    assert own(data).hexdigest() == hashlib.sha256(data).hexdigest()


# A fresh interpreter: small inputs hashed, OpenSSL still not loaded; a large one loads it.
PROBE = """
import sys
from wild.digest import SMALL, sha256_hex
sha256_hex(b"x" * 100); sha256_hex(bytearray(b"y" * SMALL))
print("_hashlib" in sys.modules, end=" ")
sha256_hex(b"z" * (SMALL + 1))
print("_hashlib" in sys.modules)
"""


def test_small_inputs_are_hashed_without_loading_openssl() -> None:
    found = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert found.split() == ["False", "True"]
