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


def _plain_0(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(self: object) -> None:
        pass

    return __init__


def _plain_1(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(self: object, _rec_0_: object) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)

    return __init__


def _plain_2(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(self: object, _rec_0_: object, _rec_1_: object) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)

    return __init__


def _plain_3(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(self: object, _rec_0_: object, _rec_1_: object, _rec_2_: object) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)

    return __init__


def _plain_4(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object, _rec_0_: object, _rec_1_: object, _rec_2_: object, _rec_3_: object
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)

    return __init__


def _plain_5(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)

    return __init__


def _plain_6(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)

    return __init__


def _plain_7(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)

    return __init__


def _plain_8(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)

    return __init__


def _plain_9(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)

    return __init__


def _plain_10(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)

    return __init__


def _plain_11(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)

    return __init__


def _plain_12(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)

    return __init__


def _plain_13(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)

    return __init__


def _plain_14(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)

    return __init__


def _plain_15(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)

    return __init__


def _plain_16(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)

    return __init__


def _plain_17(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)

    return __init__


def _plain_18(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_17_", _rec_17_)

    return __init__


def _plain_19(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
        _rec_18_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_17_", _rec_17_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_18_", _rec_18_)

    return __init__


def _plain_20(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
        _rec_18_: object,
        _rec_19_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_17_", _rec_17_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_18_", _rec_18_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_19_", _rec_19_)

    return __init__


def _plain_21(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
        _rec_18_: object,
        _rec_19_: object,
        _rec_20_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_17_", _rec_17_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_18_", _rec_18_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_19_", _rec_19_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_20_", _rec_20_)

    return __init__


def _plain_22(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
        _rec_18_: object,
        _rec_19_: object,
        _rec_20_: object,
        _rec_21_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_17_", _rec_17_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_18_", _rec_18_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_19_", _rec_19_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_20_", _rec_20_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_21_", _rec_21_)

    return __init__


def _plain_23(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
        _rec_18_: object,
        _rec_19_: object,
        _rec_20_: object,
        _rec_21_: object,
        _rec_22_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_17_", _rec_17_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_18_", _rec_18_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_19_", _rec_19_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_20_", _rec_20_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_21_", _rec_21_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_22_", _rec_22_)

    return __init__


def _plain_24(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
        _rec_18_: object,
        _rec_19_: object,
        _rec_20_: object,
        _rec_21_: object,
        _rec_22_: object,
        _rec_23_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_17_", _rec_17_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_18_", _rec_18_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_19_", _rec_19_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_20_", _rec_20_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_21_", _rec_21_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_22_", _rec_22_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_23_", _rec_23_)

    return __init__


def _mutable_0(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(self: Any) -> None:
        pass

    return __init__


def _mutable_1(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(self: Any, _rec_0_: object) -> None:
        self._rec_0_ = _rec_0_

    return __init__


def _mutable_2(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(self: Any, _rec_0_: object, _rec_1_: object) -> None:
        self._rec_0_ = _rec_0_
        self._rec_1_ = _rec_1_

    return __init__


def _mutable_3(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(self: Any, _rec_0_: object, _rec_1_: object, _rec_2_: object) -> None:
        self._rec_0_ = _rec_0_
        self._rec_1_ = _rec_1_
        self._rec_2_ = _rec_2_

    return __init__


def _mutable_4(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: Any, _rec_0_: object, _rec_1_: object, _rec_2_: object, _rec_3_: object
    ) -> None:
        self._rec_0_ = _rec_0_
        self._rec_1_ = _rec_1_
        self._rec_2_ = _rec_2_
        self._rec_3_ = _rec_3_

    return __init__


def _mutable_5(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: Any,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
    ) -> None:
        self._rec_0_ = _rec_0_
        self._rec_1_ = _rec_1_
        self._rec_2_ = _rec_2_
        self._rec_3_ = _rec_3_
        self._rec_4_ = _rec_4_

    return __init__


def _mutable_6(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: Any,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
    ) -> None:
        self._rec_0_ = _rec_0_
        self._rec_1_ = _rec_1_
        self._rec_2_ = _rec_2_
        self._rec_3_ = _rec_3_
        self._rec_4_ = _rec_4_
        self._rec_5_ = _rec_5_

    return __init__


def _mutable_7(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: Any,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
    ) -> None:
        self._rec_0_ = _rec_0_
        self._rec_1_ = _rec_1_
        self._rec_2_ = _rec_2_
        self._rec_3_ = _rec_3_
        self._rec_4_ = _rec_4_
        self._rec_5_ = _rec_5_
        self._rec_6_ = _rec_6_

    return __init__


def _mutable_8(__dataclass_builtins_object__: Any) -> Callable[..., None]:
    def __init__(
        self: Any,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
    ) -> None:
        self._rec_0_ = _rec_0_
        self._rec_1_ = _rec_1_
        self._rec_2_ = _rec_2_
        self._rec_3_ = _rec_3_
        self._rec_4_ = _rec_4_
        self._rec_5_ = _rec_5_
        self._rec_6_ = _rec_6_
        self._rec_7_ = _rec_7_

    return __init__


def _shape_0(
    _HAS_DEFAULT_FACTORY: Any, __dataclass_builtins_object__: Any, _dflt__rec_17_: Any
) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_17_", _dflt__rec_17_() if _rec_17_ is _HAS_DEFAULT_FACTORY else _rec_17_
        )

    return __init__


def _shape_1(
    _HAS_DEFAULT_FACTORY: Any,
    __dataclass_builtins_object__: Any,
    _dflt__rec_1_: Any,
    _dflt__rec_2_: Any,
) -> Callable[..., None]:
    def __init__(
        self: Any,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
    ) -> None:
        self._rec_0_ = _rec_0_
        self._rec_1_ = _dflt__rec_1_() if _rec_1_ is _HAS_DEFAULT_FACTORY else _rec_1_
        self._rec_2_ = _dflt__rec_2_() if _rec_2_ is _HAS_DEFAULT_FACTORY else _rec_2_
        self._rec_3_ = _rec_3_
        self._rec_4_ = _rec_4_
        self._rec_5_ = _rec_5_
        self._rec_6_ = _rec_6_
        self._rec_7_ = _rec_7_
        self.__post_init__()

    return __init__


def _shape_2(
    _HAS_DEFAULT_FACTORY: Any,
    __dataclass_builtins_object__: Any,
    _dflt__rec_0_: Any,
    _dflt__rec_1_: Any,
) -> Callable[..., None]:
    def __init__(self: Any, _rec_0_: object, _rec_1_: object) -> None:
        self._rec_0_ = _dflt__rec_0_() if _rec_0_ is _HAS_DEFAULT_FACTORY else _rec_0_
        self._rec_1_ = _dflt__rec_1_() if _rec_1_ is _HAS_DEFAULT_FACTORY else _rec_1_

    return __init__


def _shape_3(
    _HAS_DEFAULT_FACTORY: Any, __dataclass_builtins_object__: Any, _dflt__rec_16_: Any
) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
        _rec_18_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_16_", _dflt__rec_16_() if _rec_16_ is _HAS_DEFAULT_FACTORY else _rec_16_
        )
        __dataclass_builtins_object__.__setattr__(self, "_rec_17_", _rec_17_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_18_", _rec_18_)

    return __init__


def _shape_4(
    _HAS_DEFAULT_FACTORY: Any,
    __dataclass_builtins_object__: Any,
    _dflt__rec_0_: Any,
    _dflt__rec_1_: Any,
    _dflt__rec_2_: Any,
    _dflt__rec_4_: Any,
) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_0_", _dflt__rec_0_() if _rec_0_ is _HAS_DEFAULT_FACTORY else _rec_0_
        )
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_1_", _dflt__rec_1_() if _rec_1_ is _HAS_DEFAULT_FACTORY else _rec_1_
        )
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_2_", _dflt__rec_2_() if _rec_2_ is _HAS_DEFAULT_FACTORY else _rec_2_
        )
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_4_", _dflt__rec_4_() if _rec_4_ is _HAS_DEFAULT_FACTORY else _rec_4_
        )

    return __init__


def _shape_5(
    _HAS_DEFAULT_FACTORY: Any,
    __dataclass_builtins_object__: Any,
    _dflt__rec_31_: Any,
    _dflt__rec_33_: Any,
    _dflt__rec_3_: Any,
    _dflt__rec_4_: Any,
) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
        _rec_16_: object,
        _rec_17_: object,
        _rec_18_: object,
        _rec_19_: object,
        _rec_20_: object,
        _rec_21_: object,
        _rec_22_: object,
        _rec_23_: object,
        _rec_24_: object,
        _rec_25_: object,
        _rec_26_: object,
        _rec_27_: object,
        _rec_28_: object,
        _rec_29_: object,
        _rec_30_: object,
        _rec_31_: object,
        _rec_32_: object,
        _rec_33_: object,
        _rec_34_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_3_", _dflt__rec_3_() if _rec_3_ is _HAS_DEFAULT_FACTORY else _rec_3_
        )
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_4_", _dflt__rec_4_() if _rec_4_ is _HAS_DEFAULT_FACTORY else _rec_4_
        )
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_12_", _rec_12_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_13_", _rec_13_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_16_", _rec_16_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_17_", _rec_17_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_18_", _rec_18_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_19_", _rec_19_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_20_", _rec_20_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_21_", _rec_21_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_22_", _rec_22_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_23_", _rec_23_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_24_", _rec_24_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_25_", _rec_25_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_26_", _rec_26_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_27_", _rec_27_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_28_", _rec_28_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_29_", _rec_29_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_30_", _rec_30_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_31_", _dflt__rec_31_() if _rec_31_ is _HAS_DEFAULT_FACTORY else _rec_31_
        )
        __dataclass_builtins_object__.__setattr__(self, "_rec_32_", _rec_32_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_33_", _dflt__rec_33_() if _rec_33_ is _HAS_DEFAULT_FACTORY else _rec_33_
        )
        __dataclass_builtins_object__.__setattr__(self, "_rec_34_", _rec_34_)

    return __init__


def _shape_6(
    _HAS_DEFAULT_FACTORY: Any, __dataclass_builtins_object__: Any, _dflt__rec_2_: Any
) -> Callable[..., None]:
    def __init__(self: object, _rec_0_: object, _rec_1_: object, _rec_2_: object) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_2_", _dflt__rec_2_() if _rec_2_ is _HAS_DEFAULT_FACTORY else _rec_2_
        )

    return __init__


def _shape_7(
    _HAS_DEFAULT_FACTORY: Any, __dataclass_builtins_object__: Any, _dflt__rec_4_: Any
) -> Callable[..., None]:
    def __init__(
        self: object,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_4_", _dflt__rec_4_() if _rec_4_ is _HAS_DEFAULT_FACTORY else _rec_4_
        )

    return __init__


def _shape_8(
    _HAS_DEFAULT_FACTORY: Any,
    __dataclass_builtins_object__: Any,
    _dflt__rec_12_: Any,
    _dflt__rec_13_: Any,
    _dflt__rec_3_: Any,
) -> Callable[..., None]:
    def __init__(
        self: Any,
        _rec_0_: object,
        _rec_1_: object,
        _rec_2_: object,
        _rec_3_: object,
        _rec_4_: object,
        _rec_5_: object,
        _rec_6_: object,
        _rec_7_: object,
        _rec_8_: object,
        _rec_9_: object,
        _rec_10_: object,
        _rec_11_: object,
        _rec_12_: object,
        _rec_13_: object,
        _rec_14_: object,
        _rec_15_: object,
    ) -> None:
        __dataclass_builtins_object__.__setattr__(self, "_rec_0_", _rec_0_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_3_", _dflt__rec_3_() if _rec_3_ is _HAS_DEFAULT_FACTORY else _rec_3_
        )
        __dataclass_builtins_object__.__setattr__(self, "_rec_4_", _rec_4_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_5_", _rec_5_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_6_", _rec_6_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_7_", _rec_7_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_8_", _rec_8_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_9_", _rec_9_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_10_", _rec_10_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_11_", _rec_11_)
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_12_", _dflt__rec_12_() if _rec_12_ is _HAS_DEFAULT_FACTORY else _rec_12_
        )
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_13_", _dflt__rec_13_() if _rec_13_ is _HAS_DEFAULT_FACTORY else _rec_13_
        )
        __dataclass_builtins_object__.__setattr__(self, "_rec_14_", _rec_14_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_15_", _rec_15_)
        self.__post_init__()

    return __init__


def _shape_9(
    _HAS_DEFAULT_FACTORY: Any, __dataclass_builtins_object__: Any, _dflt__rec_0_: Any
) -> Callable[..., None]:
    def __init__(
        self: object, _rec_0_: object, _rec_1_: object, _rec_2_: object, _rec_3_: object
    ) -> None:
        __dataclass_builtins_object__.__setattr__(
            self, "_rec_0_", _dflt__rec_0_() if _rec_0_ is _HAS_DEFAULT_FACTORY else _rec_0_
        )
        __dataclass_builtins_object__.__setattr__(self, "_rec_1_", _rec_1_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_2_", _rec_2_)
        __dataclass_builtins_object__.__setattr__(self, "_rec_3_", _rec_3_)

    return __init__


PLAIN: tuple[CodeType, ...] = tuple(
    next(const for const in made.__code__.co_consts if isinstance(const, CodeType))
    for made in (
        _plain_0,
        _plain_1,
        _plain_2,
        _plain_3,
        _plain_4,
        _plain_5,
        _plain_6,
        _plain_7,
        _plain_8,
        _plain_9,
        _plain_10,
        _plain_11,
        _plain_12,
        _plain_13,
        _plain_14,
        _plain_15,
        _plain_16,
        _plain_17,
        _plain_18,
        _plain_19,
        _plain_20,
        _plain_21,
        _plain_22,
        _plain_23,
        _plain_24,
    )
)


# The same for a mutable record (`@record(frozen=False)`): each field set as an attribute,
# `_init_text(..., frozen=False)`; 0 to 8 fields.
MUTABLE_PLAIN: tuple[CodeType, ...] = tuple(
    next(const for const in made.__code__.co_consts if isinstance(const, CodeType))
    for made in (
        _mutable_0,
        _mutable_1,
        _mutable_2,
        _mutable_3,
        _mutable_4,
        _mutable_5,
        _mutable_6,
        _mutable_7,
        _mutable_8,
    )
)


# Every other shape `wild.record` met before a loop's first agent started (a default
# factory, a `__post_init__`): `_init_text(*key)`, keyed as `wild.record._shape_code` looks
# it up.
SHAPES: dict[tuple[str, tuple[str, ...], bool, bool], CodeType] = {
    key: next(const for const in made.__code__.co_consts if isinstance(const, CodeType))
    for key, made in (
        (
            (
                "self",
                (
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "factory_init",
                ),
                False,
                True,
            ),
            _shape_0,
        ),
        (
            (
                "self",
                (
                    "plain",
                    "factory_init",
                    "factory_init",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                ),
                True,
                False,
            ),
            _shape_1,
        ),
        (("self", ("factory_init", "factory_init"), False, False), _shape_2),
        (
            (
                "self",
                (
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "factory_init",
                    "plain",
                    "plain",
                ),
                False,
                True,
            ),
            _shape_3,
        ),
        (
            (
                "self",
                ("factory_init", "factory_init", "factory_init", "plain", "factory_init"),
                False,
                True,
            ),
            _shape_4,
        ),
        (
            (
                "self",
                (
                    "plain",
                    "plain",
                    "plain",
                    "factory_init",
                    "factory_init",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "factory_init",
                    "plain",
                    "factory_init",
                    "plain",
                ),
                False,
                True,
            ),
            _shape_5,
        ),
        (("self", ("plain", "plain", "factory_init"), False, True), _shape_6),
        (("self", ("plain", "plain", "plain", "plain", "factory_init"), False, True), _shape_7),
        (
            (
                "self",
                (
                    "plain",
                    "plain",
                    "plain",
                    "factory_init",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "plain",
                    "factory_init",
                    "factory_init",
                    "plain",
                    "plain",
                ),
                True,
                True,
            ),
            _shape_8,
        ),
        (("self", ("factory_init", "plain", "plain", "plain"), False, True), _shape_9),
    )
}


def _methods_0() -> tuple[Callable[..., object], ...]:
    def __eq__(self: Any, other: Any) -> object:
        if other.__class__ is self.__class__:
            return (
                self._cmp_0_,
                self._cmp_1_,
                self._cmp_2_,
                self._cmp_3_,
                self._cmp_4_,
            ) == (
                other._cmp_0_,
                other._cmp_1_,
                other._cmp_2_,
                other._cmp_3_,
                other._cmp_4_,
            )
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(
            (
                self._hsh_0_,
                self._hsh_1_,
                self._hsh_2_,
                self._hsh_3_,
                self._hsh_4_,
            )
        )

    def __repr__(self: Any) -> str:
        return "%s(_shw_0_=%r, _shw_1_=%r, _shw_2_=%r, _shw_3_=%r, _shw_4_=%r)" % (
            self.__class__.__qualname__,
            self._shw_0_,
            self._shw_1_,
            self._shw_2_,
            self._shw_3_,
            self._shw_4_,
        )

    return (
        __eq__,
        __hash__,
        __repr__,
    )


def _methods_1() -> tuple[Callable[..., object], ...]:
    def __eq__(self: Any, other: Any) -> object:
        if other.__class__ is self.__class__:
            return (
                self._cmp_0_,
                self._cmp_1_,
                self._cmp_2_,
            ) == (
                other._cmp_0_,
                other._cmp_1_,
                other._cmp_2_,
            )
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(
            (
                self._hsh_0_,
                self._hsh_1_,
                self._hsh_2_,
            )
        )

    def __repr__(self: Any) -> str:
        return "%s(_shw_0_=%r, _shw_1_=%r, _shw_2_=%r)" % (
            self.__class__.__qualname__,
            self._shw_0_,
            self._shw_1_,
            self._shw_2_,
        )

    return (
        __eq__,
        __hash__,
        __repr__,
    )


def _methods_2() -> tuple[Callable[..., object], ...]:
    def __eq__(self: Any, other: Any) -> object:
        if other.__class__ is self.__class__:
            return (
                self._cmp_0_,
                self._cmp_1_,
                self._cmp_2_,
                self._cmp_3_,
            ) == (
                other._cmp_0_,
                other._cmp_1_,
                other._cmp_2_,
                other._cmp_3_,
            )
        return NotImplemented

    def __repr__(self: Any) -> str:
        return "%s(_shw_0_=%r, _shw_1_=%r, _shw_2_=%r, _shw_3_=%r)" % (
            self.__class__.__qualname__,
            self._shw_0_,
            self._shw_1_,
            self._shw_2_,
            self._shw_3_,
        )

    return (
        __eq__,
        __repr__,
    )


def _methods_3() -> tuple[Callable[..., object], ...]:
    def __eq__(self: Any, other: Any) -> object:
        if other.__class__ is self.__class__:
            return (
                self._cmp_0_,
                self._cmp_1_,
                self._cmp_2_,
                self._cmp_3_,
                self._cmp_4_,
                self._cmp_5_,
                self._cmp_6_,
                self._cmp_7_,
                self._cmp_8_,
                self._cmp_9_,
                self._cmp_10_,
                self._cmp_11_,
                self._cmp_12_,
                self._cmp_13_,
                self._cmp_14_,
                self._cmp_15_,
                self._cmp_16_,
                self._cmp_17_,
            ) == (
                other._cmp_0_,
                other._cmp_1_,
                other._cmp_2_,
                other._cmp_3_,
                other._cmp_4_,
                other._cmp_5_,
                other._cmp_6_,
                other._cmp_7_,
                other._cmp_8_,
                other._cmp_9_,
                other._cmp_10_,
                other._cmp_11_,
                other._cmp_12_,
                other._cmp_13_,
                other._cmp_14_,
                other._cmp_15_,
                other._cmp_16_,
                other._cmp_17_,
            )
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(
            (
                self._hsh_0_,
                self._hsh_1_,
                self._hsh_2_,
                self._hsh_3_,
                self._hsh_4_,
                self._hsh_5_,
                self._hsh_6_,
                self._hsh_7_,
                self._hsh_8_,
                self._hsh_9_,
                self._hsh_10_,
                self._hsh_11_,
                self._hsh_12_,
                self._hsh_13_,
                self._hsh_14_,
                self._hsh_15_,
                self._hsh_16_,
                self._hsh_17_,
            )
        )

    def __repr__(self: Any) -> str:
        return (
            "%s(_shw_0_=%r, _shw_1_=%r, _shw_2_=%r, _shw_3_=%r, _shw_4_=%r, _shw_5_=%r, _shw_6_=%r, _shw_7_=%r, _shw_8_=%r, _shw_9_=%r, _shw_10_=%r, _shw_11_=%r, _shw_12_=%r, _shw_13_=%r, _shw_14_=%r, _shw_15_=%r, _shw_16_=%r, _shw_17_=%r)"
            % (
                self.__class__.__qualname__,
                self._shw_0_,
                self._shw_1_,
                self._shw_2_,
                self._shw_3_,
                self._shw_4_,
                self._shw_5_,
                self._shw_6_,
                self._shw_7_,
                self._shw_8_,
                self._shw_9_,
                self._shw_10_,
                self._shw_11_,
                self._shw_12_,
                self._shw_13_,
                self._shw_14_,
                self._shw_15_,
                self._shw_16_,
                self._shw_17_,
            )
        )

    return (
        __eq__,
        __hash__,
        __repr__,
    )


def _methods_4() -> tuple[Callable[..., object], ...]:
    def __eq__(self: Any, other: Any) -> object:
        if other.__class__ is self.__class__:
            return (
                self._cmp_0_,
                self._cmp_1_,
                self._cmp_2_,
                self._cmp_3_,
            ) == (
                other._cmp_0_,
                other._cmp_1_,
                other._cmp_2_,
                other._cmp_3_,
            )
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(
            (
                self._hsh_0_,
                self._hsh_1_,
                self._hsh_2_,
                self._hsh_3_,
            )
        )

    def __repr__(self: Any) -> str:
        return "%s(_shw_0_=%r, _shw_1_=%r, _shw_2_=%r, _shw_3_=%r)" % (
            self.__class__.__qualname__,
            self._shw_0_,
            self._shw_1_,
            self._shw_2_,
            self._shw_3_,
        )

    return (
        __eq__,
        __hash__,
        __repr__,
    )


# The comparison, hash and repr methods first used before a loop's first agent starts:
# `wild.record._method_text(key)`'s, keyed as `wild.record._method_codes` looks them up.
METHODS: dict[tuple[tuple[str, ...], int, int, int], tuple[CodeType, ...]] = {
    key: tuple(method.__code__ for method in made())
    for key, made in [
        ((("__eq__", "__hash__", "__repr__"), 5, 5, 5), _methods_0),
        ((("__eq__", "__hash__", "__repr__"), 3, 3, 3), _methods_1),
        ((("__eq__", "__repr__"), 4, 4, 4), _methods_2),
        ((("__eq__", "__hash__", "__repr__"), 18, 18, 18), _methods_3),
        ((("__eq__", "__hash__", "__repr__"), 4, 4, 4), _methods_4),
    ]
}
