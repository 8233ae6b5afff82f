"""The two libc calls wild makes that the standard library does not wrap: prctl(2) (the loop's
child subreaper, `wild.agents.orphans`) and renameat2(2) (a swap of two names,
`wild.store.files`).

Called through `_ctypes`, ctypes' C core, with the three small classes `ctypes` itself would
make for them: the `ctypes` package (its ~60 classes and its platform module) costs ~1.1 ms
more to import, and the loop needs the subreaper before its first agent exists (issue 22
item 8). The run wrapper does the same for its prctl (`wild.runs.wrapper._prctl`: it imports
nothing of wild). Linux (glibc or musl); elsewhere, or in a build without `_ctypes`, each
function here is None and its caller does without (as with `ctypes`).

Standard library only, nothing of wild: every layer may import it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

CFunction = Callable[..., int]


@functools.cache  # made once per process: every later call is the C function's own
def _made() -> tuple[Any, Any] | None:
    """The C int type and the function type ctypes' `CDLL(None, use_errno=True)` makes, with
    libc's handle; None where there is none."""
    try:
        import _ctypes  # noqa: PLC0415  (only where a libc call is made)

        class Int(_ctypes._SimpleCData):  # type: ignore[type-arg]  # what ctypes.c_int is
            _type_ = "i"

        class Function(_ctypes.CFuncPtr):  # what ctypes.CDLL(..., use_errno=True)'s are
            _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
            _restype_ = Int

        class Libc:  # what ctypes.CDLL(None) is, to CFuncPtr
            _handle = _ctypes.dlopen(None, 0)  # type: ignore[arg-type]

    except (ImportError, OSError, AttributeError, TypeError):
        return None
    return Int, (Function, Libc)


def function(name: str) -> CFunction | None:
    """libc's function `name` (its arguments Python ints or bytes, its result an int), or
    None where libc or the function is not there."""
    made = _made()
    if made is None:
        return None
    function_type, libc = made[1]
    try:
        found: CFunction = function_type((name, libc))
    except AttributeError:  # no such symbol (an older libc)
        return None
    return found


def int_out(call: CFunction, first: int, *rest: int) -> int | None:
    """`call(first, &n, *rest)` with `n` a C int the call writes its answer to (prctl's GET
    requests): `n`, or None when the call failed."""
    made = _made()
    if made is None:
        return None
    import _ctypes  # noqa: PLC0415  (loaded by `_made` already)

    value = made[0](0)
    if call(first, _ctypes.byref(value), *rest) != 0:
        return None
    return int(value.value)


def errno() -> int:
    """The errno the last call through this module left (ctypes' `get_errno`)."""
    import _ctypes  # noqa: PLC0415  (loaded by any call through this module)

    return int(_ctypes.get_errno())
