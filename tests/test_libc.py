"""wild.libc: prctl and renameat2 through `_ctypes`, without the `ctypes` package (~1.1 ms
more before the first agent's start, issue 22 item 8), as `ctypes` would call them."""

from __future__ import annotations

import ctypes
import errno
import subprocess
import sys
from pathlib import Path

from wild import libc

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_PR_GET_CHILD_SUBREAPER = 37


def test_a_missing_function_is_none() -> None:
    assert libc.function("wild_no_such_function") is None
    assert libc.function("prctl") is not None


def test_renameat2_swaps_two_names_and_says_why_it_could_not(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("A")
    b.write_text("B")
    renameat2 = libc.function("renameat2")
    assert renameat2 is not None
    assert renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) == 0
    assert (a.read_text(), b.read_text()) == ("B", "A")
    gone = tmp_path / "gone"
    assert renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(gone), _RENAME_EXCHANGE) == -1
    assert libc.errno() == errno.ENOENT
    assert a.read_text() == "B"


# In a fresh process: prctl read and set as ctypes reads and sets it, `ctypes` not loaded.
PROBE = """
import sys
from wild import libc
prctl = libc.function("prctl")
before = libc.int_out(prctl, 37, 0, 0, 0)
took = prctl(36, 1, 0, 0, 0)
print(before, took, libc.int_out(prctl, 37, 0, 0, 0), "ctypes" in sys.modules)
"""


def test_prctl_is_called_as_ctypes_calls_it_without_loading_ctypes() -> None:
    found = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert found.split() == ["0", "0", "1", "False"]
    flag = ctypes.c_int(0)
    own = ctypes.CDLL(None).prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    prctl = libc.function("prctl")
    assert prctl is not None
    assert (own, flag.value) == (0, libc.int_out(prctl, _PR_GET_CHILD_SUBREAPER, 0, 0, 0))
