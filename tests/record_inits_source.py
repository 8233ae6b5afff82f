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

from wild.record import _init_text, _method_text

FILE = Path(__file__).resolve().parents[1] / "wild" / "record_inits.py"
FIELDS = {True: 24, False: 8}  # the most fields written out: frozen records, mutable ones
# The other shapes (a default factory, a `__post_init__`) whose `__init__` wild made before a
# loop's first agent starts (each field's kind, `__post_init__` or not, frozen or not; issue
# 22: ~0.25 ms of compile each, in every process). Found by counting `_shape_code`'s compiles
# at the first agent's `Popen` in `wild goal` (planning and a task alike: the same ten); the
# module named is where the first class of the shape made there is defined.
_P, _F = "plain", "factory_init"
SHAPES: tuple[tuple[tuple[str, ...], bool, bool], ...] = (
    ((_P,) * 17 + (_F,), False, True),  # wild.parsers.state.LoopState
    ((_P, _F, _F) + (_P,) * 5, True, False),  # wild.store.runs_log: the runs log's reader
    ((_F, _F), False, False),  # wild.parsers.runs: the runs and sweeps read
    ((_P,) * 16 + (_F, _P, _P), False, True),  # wild.workspace_view.Workspace
    ((_F, _F, _F, _P, _F), False, True),  # wild.loop.bookkeeping
    ((_P,) * 3 + (_F, _F) + (_P,) * 26 + (_F, _P, _F, _P), False, True),  # wild.loop.model
    ((_P, _P, _F), False, True),  # wild.loop.model: an effect's record
    ((_P,) * 4 + (_F,), False, True),  # wild.selection.items
    ((_P,) * 3 + (_F,) + (_P,) * 8 + (_F, _F, _P, _P), True, True),  # wild.agents.runner: a request
    ((_F, _P, _P, _P), False, True),  # wild.loop.changes
)
# The comparison, hash and repr methods (`wild.record._methods_of`'s shapes: the methods, and
# how many fields each compares, hashes and prints) first used before a loop's first agent
# starts (planning and a task alike), compiled there in every process before (~0.25 ms each).
EQ_HASH_REPR = ("__eq__", "__hash__", "__repr__")
METHOD_SHAPES: tuple[tuple[tuple[str, ...], int, int, int], ...] = (
    (EQ_HASH_REPR, 5, 5, 5),  # wild.parsers.totals.Totals
    (EQ_HASH_REPR, 3, 3, 3),  # wild.policy.checks_trust
    (("__eq__", "__repr__"), 4, 4, 4),  # wild.barriers.approvals
    (EQ_HASH_REPR, 18, 18, 18),  # wild.parsers.state.LoopState
    (EQ_HASH_REPR, 4, 4, 4),  # wild.parsers.state.CurrentWork
)

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
every mutable record whose fields are all arguments, 0 to 8 of them (`MUTABLE_PLAIN`); and
the other shapes (a default factory, a `__post_init__`) made before a loop's first agent
starts (`SHAPES`, keyed as `_shape_code` looks them up): ten more, so that no `__init__` is
compiled on the launch (14.1M of its ~394M instructions to the agent's spawn, callgrind).
`METHODS`: the comparison, hash and repr methods first used there, the same way
(`wild.record._method_text`, each field named by its place: `_cmp_<i>_`, `_hsh_<i>_`,
`_shw_<i>_`).
Generated from `_init_text` by `python -m tests.record_inits_source`: change that, then run it.
"""

# ruff: noqa: PLR0917  (a record's `__init__` takes each field as an argument, as dataclasses')
# ruff: noqa: UP031, E501  (a repr formats with `%`, as `wild.record` writes it: one constant)

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
_SHAPES = """# Every other shape `wild.record` met before a loop's first agent started (a default
# factory, a `__post_init__`): `_init_text(*key)`, keyed as `wild.record._shape_code` looks
# it up.
SHAPES: dict[tuple[str, tuple[str, ...], bool, bool], CodeType] = {{
    key: next(const for const in made.__code__.co_consts if isinstance(const, CodeType))
    for key, made in ({shapes},)
}}
"""

_METHODS = """# The comparison, hash and repr methods first used before a loop's first agent starts:
# `wild.record._method_text(key)`'s, keyed as `wild.record._method_codes` looks them up.
METHODS: dict[tuple[tuple[str, ...], int, int, int], tuple[CodeType, ...]] = {{
    key: tuple(method.__code__ for method in made())
    for key, made in [{methods}]
}}
"""


def _function(name: str, kinds: tuple[str, ...], post_init: bool, frozen: bool) -> str:
    """One shape's maker: the `__create_fn__` `_init_text` writes, typed and named."""
    text = _init_text("self", kinds, post_init, frozen)
    closure = text[text.index("(") + 1 : text.index(")")].split(",")
    params = ["self: object" if frozen and not post_init else "self: Any"]
    params += [f"{param}: object" for param in _parameters(text)]
    body = [line.strip() for line in text.splitlines()[2:-1]]
    return (
        f"def {name}({', '.join(f'{n}: Any' for n in closure)}) -> Callable[..., None]:\n"
        f"    def __init__({', '.join(params)}) -> None:\n"
        + "\n".join(f"        {line}" for line in body)
        + "\n\n    return __init__\n"
    )


_SIGNATURES = {
    " def __eq__(self,other):": "def __eq__(self: Any, other: Any) -> object:",
    " def __hash__(self):": "def __hash__(self: Any) -> int:",
    " def __repr__(self):": "def __repr__(self: Any) -> str:",
}


def _methods_function(name: str, key: tuple[tuple[str, ...], int, int, int]) -> str:
    """One methods shape's maker: the `__create_fn__` `_method_text` writes, typed and named
    (its lines nest by one space a level; here by four)."""
    lines = _method_text(key).splitlines()[1:-1]
    body = []
    for line in lines:
        depth = len(line) - len(line.lstrip(" "))
        body.append("    " * depth + _SIGNATURES.get(line, line.strip()))
    made = ", ".join(method for method in key[0])
    return (
        f"def {name}() -> tuple[Callable[..., object], ...]:\n"
        + "\n".join(body)
        + f"\n\n    return ({made},)\n"
    )


def _parameters(text: str) -> list[str]:
    """The field parameters of the `__init__` in `_init_text`'s text (after the instance)."""
    inner = text.splitlines()[1]
    return inner[inner.index("(") + 1 : inner.index(")")].split(",")[1:]


def source() -> str:
    """The module's text before formatting."""
    parts = [HEADER]
    for frozen, prefix in ((True, "_plain"), (False, "_mutable")):
        parts += [
            _function(f"{prefix}_{n}", ("plain",) * n, False, frozen)
            for n in range(FIELDS[frozen] + 1)
        ]
    parts += [_function(f"_shape_{n}", *shape) for n, shape in enumerate(SHAPES)]
    for frozen, name, prefix in ((True, "PLAIN", "_plain"), (False, "MUTABLE_PLAIN", "_mutable")):
        functions = ", ".join(f"{prefix}_{n}" for n in range(FIELDS[frozen] + 1))
        parts.append(_TUPLE.format(comment=_COMMENTS[frozen], name=name, functions=functions))
    shapes = ", ".join(
        f'(("self", {kinds!r}, {post_init}, {frozen}), _shape_{n})'
        for n, (kinds, post_init, frozen) in enumerate(SHAPES)
    )
    parts.append(_SHAPES.format(shapes=shapes))
    parts += [_methods_function(f"_methods_{n}", key) for n, key in enumerate(METHOD_SHAPES)]
    methods = ", ".join(f"({key!r}, _methods_{n})" for n, key in enumerate(METHOD_SHAPES))
    parts.append(_METHODS.format(methods=methods))
    return "\n\n".join(parts)


def formatted() -> str:
    """The module's text as ruff formats it (the project's formatter and settings)."""
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", f"--stdin-filename={FILE}", "-"],
        input=source(), capture_output=True, text=True, check=True, cwd=FILE.parents[1],
    ).stdout  # fmt: skip


if __name__ == "__main__":
    FILE.write_text(formatted(), encoding="utf-8")
