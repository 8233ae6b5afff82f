"""Writes `wild/record_inits.py`, the `__init__`s of records written out (issue 22 item 8),
from the text `wild.record._init_text` compiles: the file is derived, this is where it is
derived from. `python -m tests.record_inits_source` rewrites it (then formatted by ruff, as
the project's style check wants); `tests/test_record.py` fails while the file and this
disagree, and while the file's code and `_init_text`'s disagree.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FILE = Path(__file__).resolve().parents[1] / "wild" / "record_inits.py"
FIELDS = {True: 24, False: 8}  # the most fields written out: frozen records, mutable ones

HEADER = '''\
"""The `__init__` of every record whose fields are all arguments (with or without a default:
the same code, the defaults are the function's), for 0 to 24 fields, written out: Python's
bytecode cache keeps them compiled, where `wild.record` compiled each shape afresh in every
process (~0.25 ms a shape; 15 of the 19 shapes made before the loop's first agent starts are
these, issue 22 item 8). `wild.record._shape_code` takes the inner `__init__`'s code of
`PLAIN[n]` and puts each class's names in, as it does with a shape it compiled.

Each is what `wild.record._init_text("self", ("plain",) * n, False)` compiles to
(tests/test_record.py::test_the_written_out_inits_are_what_record_would_compile): the
parameters `_rec_<i>_`, each set through `object.__setattr__` (the class is frozen); and of
every mutable record whose fields are all arguments, 0 to 8 of them (`MUTABLE_PLAIN`).
Generated from `_init_text` by `python -m tests.record_inits_source`: change that, then run it.
"""

# ruff: noqa: PLR0917  (a record's `__init__` takes each field as an argument, as dataclasses')

from __future__ import annotations

from collections.abc import Callable
from types import CodeType
from typing import Any
'''

_TUPLE = """{comment}{name}: tuple[CodeType, ...] = tuple(
    next(const for const in made.__code__.co_consts if isinstance(const, CodeType))
    for made in ({functions},)
)
"""
_COMMENTS = {
    True: "",
    False: (
        "# The same for a mutable record (`@record(frozen=False)`): each field set as an "
        "attribute,\n# `_init_text(..., frozen=False)`; 0 to 8 fields.\n"
    ),
}


def _function(fields: int, frozen: bool) -> str:
    """One shape's maker: the `__create_fn__` `_init_text` writes, typed and named."""
    prefix = "_plain" if frozen else "_mutable"
    params = ["self: object" if frozen else "self: Any"]
    params += [f"_rec_{n}_: object" for n in range(fields)]
    if frozen:
        body = [
            f'        __dataclass_builtins_object__.__setattr__(self, "_rec_{n}_", _rec_{n}_)'
            for n in range(fields)
        ]
    else:
        body = [f"        self._rec_{n}_ = _rec_{n}_" for n in range(fields)]
    return (
        f"def {prefix}_{fields}(__dataclass_builtins_object__: Any) -> Callable[..., None]:\n"
        f"    def __init__({', '.join(params)}) -> None:\n"
        + ("\n".join(body) if body else "        pass")
        + "\n\n    return __init__\n"
    )


def source() -> str:
    """The module's text before formatting."""
    parts = [HEADER]
    for frozen in (True, False):
        parts += [_function(n, frozen) for n in range(FIELDS[frozen] + 1)]
    for frozen, name, prefix in ((True, "PLAIN", "_plain"), (False, "MUTABLE_PLAIN", "_mutable")):
        functions = ", ".join(f"{prefix}_{n}" for n in range(FIELDS[frozen] + 1))
        parts.append(_TUPLE.format(comment=_COMMENTS[frozen], name=name, functions=functions))
    return "\n\n".join(parts)


def formatted() -> str:
    """The module's text as ruff formats it (the project's formatter and settings)."""
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", f"--stdin-filename={FILE}", "-"],
        input=source(), capture_output=True, text=True, check=True, cwd=FILE.parents[1],
    ).stdout  # fmt: skip


if __name__ == "__main__":
    FILE.write_text(formatted(), encoding="utf-8")
