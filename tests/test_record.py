"""`@record` (wild/record.py) is `@dataclass(frozen=True)` to everyone who uses the class, made
with one compile: the same class shapes, built both ways, behave the same; and no frozen
dataclass is left in wild/ to pay the old price."""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
import functools
import inspect
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild import record as record_module
from wild.record import record

ROOT = Path(__file__).resolve().parent.parent

# What a generated class's string annotations name (ClassVar must be found in this module,
# as the project's modules import it).
__all__ = ["ClassVar"]

_NAMES = ["a", "b", "c", "d", "self", "other"]
_PARAMS: list[dict[str, bool]] = [{}, {"eq": False}, {"slots": True}]
# `@record(frozen=False)`: a mutable class, held to `@dataclass` the same way.
_MUTABLE_PARAMS: list[dict[str, bool]] = [{"frozen": False}, {"frozen": False, "eq": False}]
_CLASS_FACTS = 8  # what `_behaviour` tells of a class before it makes an instance


def is_record(cls: type) -> bool:
    """Whether `cls` was made by `record` (it has the records' shared frozen `__setattr__`,
    or, mutable, a stand-in for its `__init__` or one made by `record`)."""
    if cls.__dict__.get("__setattr__") is record_module._frozen_setattr:
        return True
    init = cls.__dict__.get("__init__")
    return isinstance(init, record_module._LazyInit) or (
        init is not None and "__create_fn__" not in init.__code__.co_qualname
    )


def _fresh_tuple() -> tuple[int, ...]:
    return (1, 2)


@st.composite
def _field_specs(draw: st.DrawFn) -> tuple[str, str, Any]:
    """(name, annotation, class attribute or a marker that there is none)."""
    name = draw(st.sampled_from(_NAMES))
    if draw(st.integers(0, 9)) == 0:
        return name, "ClassVar[int]", draw(st.integers(0, 3))
    kind = draw(st.sampled_from(["plain", "default", "factory", "field", "mutable"]))
    if kind == "plain":
        return name, "int", _NONE
    if kind == "default":
        return name, "int", draw(st.one_of(st.integers(-3, 3), st.none(), st.just("s")))
    if kind == "mutable":
        return name, "list[int]", []
    flags: dict[str, Any] = {
        "compare": draw(st.booleans()),
        "repr": draw(st.booleans()),
        "hash": draw(st.sampled_from([None, True, False])),
        "init": draw(st.booleans()),
    }
    if kind == "factory":
        factories: list[Callable[[], object]] = [list, dict, _fresh_tuple]
        factory = draw(st.sampled_from(factories))
        return name, "object", field(default_factory=factory, **flags)
    if draw(st.booleans()):
        flags["init"] = True  # a field without a default must be given
        return name, "int", field(**flags)
    return name, "int", field(default=draw(st.integers(-3, 3)), **flags)


_NONE = object()


def _namespace(specs: list[tuple[str, str, Any]]) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__module__": __name__, "__annotations__": {}}
    for name, annotation, value in specs:
        namespace["__annotations__"][name] = annotation
        if value is _NONE:
            namespace.pop(name, None)
        else:
            namespace[name] = copy.copy(value)  # each class gets Field objects of its own
    return namespace


def _decorator(kind: str, params: dict[str, bool]) -> Callable[[type], type]:
    if kind == "dataclass":
        return dataclass(**{"frozen": True, **params})
    return record(**params) if params else record


def _build(
    kind: str,
    params: dict[str, bool],
    base_specs: list[tuple[str, str, Any]] | None,
    specs: list[tuple[str, str, Any]],
) -> type | str:
    """The class built by `kind`, or the error that defining it raised."""
    decorate = _decorator(kind, params)
    try:
        bases: tuple[type, ...] = ()
        if base_specs is not None:
            bases = (decorate(type("Base", (), _namespace(base_specs))),)
        return decorate(type("Shape", bases, _namespace(specs)))
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}"


def _field_facts(cls: type) -> list[tuple[Any, ...]]:
    return [
        (
            f.name,
            f.type,
            f.default,
            f.default_factory,
            f.init,
            f.repr,
            f.hash,
            f.compare,
            dict(f.metadata),
            f.kw_only,
            f._field_type,
        )
        for f in cls.__dataclass_fields__.values()  # type: ignore[attr-defined]
    ]


def _outcome(action: Callable[[], Any]) -> Any:
    """What `action` returns, or the error it raises (by type and message)."""
    try:
        return action()
    except Exception as error:
        return f"{type(error).__name__}: {error}"


@contextmanager
def _importable(cls: type) -> Iterator[None]:
    """Pickle finds a class by its module and name: make this one findable for a while."""
    globals()["Shape"] = cls
    try:
        yield
    finally:
        del globals()["Shape"]


def _behaviour(cls: type, values: list[int], other_values: list[int]) -> list[Any]:
    """Everything the tests compare about one class and its instances."""
    init = [f for f in dataclasses.fields(cls) if f.init]
    given_values = {f.name: value for f, value in zip(init, values, strict=False)}
    facts: list[Any] = [
        _field_facts(cls),
        repr(cls.__dataclass_params__),  # type: ignore[attr-defined]
        cls.__match_args__,  # type: ignore[attr-defined]
        cls.__doc__,
        dataclasses.is_dataclass(cls),
        cls.__hash__ is None,
        _outcome(lambda: repr(cls(*values))),
        _outcome(lambda: repr(cls(**given_values))),
    ]
    assert len(facts) == _CLASS_FACTS
    if len(values) < len(init):
        return facts  # an instance needs every field without a default
    values = values[: len(init)]
    one = cls(*values)
    same = cls(*values)
    other = cls(*other_values[: len(init)])
    changed = {f.name: value + 1 for f, value in zip(init, values, strict=False)}
    field_names = [f.name for f in dataclasses.fields(cls)]
    with _importable(cls):
        unpickled = pickle.loads(pickle.dumps(one))  # noqa: S301  (our own bytes)
    facts += [
        repr(one),
        one == same,
        one == other,
        one != other,
        one == 1,
        _outcome(lambda: hash(one) == hash(same)),
        _outcome(lambda: hash(one)) if cls.__dataclass_params__.eq else "identity",  # type: ignore[attr-defined]
        field_names,
        _outcome(lambda: dataclasses.asdict(one)),
        _outcome(lambda: dataclasses.astuple(one)),
        _outcome(lambda: orjson.dumps(one)),
        _outcome(lambda: repr(dataclasses.replace(one, **changed))),
        # wild's own `replace` (made without `__init__` for a plain frozen record): the same.
        _outcome(lambda: repr(record_module.replace(one, **changed))),
        _outcome(lambda: record_module.replace(one, **changed) == one),
        _outcome(lambda: type(record_module.replace(one, **changed)) is cls),
        _outcome(lambda: repr(record_module.replace(one, **dict(list(changed.items())[:1])))),
        _outcome(lambda: repr(record_module.replace(one, unknown=1))),
        repr(unpickled),
        _outcome(lambda: unpickled == one),
        repr(copy.copy(one)),
        repr(copy.deepcopy(one)),
        [_outcome(functools.partial(setattr, one, name, 0)) for name in field_names],
        [_outcome(functools.partial(delattr, one, name)) for name in field_names],
        _outcome(lambda: setattr(one, "unknown", 0)),
        _outcome(lambda: repr(one)),  # a mutable one lost its fields above
    ]
    return facts


@given(
    params=st.sampled_from(_PARAMS + _MUTABLE_PARAMS),
    base_specs=st.one_of(st.none(), st.lists(_field_specs(), max_size=4)),
    specs=st.lists(_field_specs(), max_size=5),
    values=st.lists(st.integers(-5, 5), max_size=9),
    other_values=st.lists(st.integers(-5, 5), min_size=9, max_size=9),
)
def test_a_record_behaves_as_a_frozen_dataclass_of_the_same_shape(
    params: dict[str, bool],
    base_specs: list[tuple[str, str, Any]] | None,
    specs: list[tuple[str, str, Any]],
    values: list[int],
    other_values: list[int],
) -> None:
    expected = _build("dataclass", params, base_specs, specs)
    built = _build("record", params, base_specs, specs)
    if isinstance(expected, str) or isinstance(built, str):
        assert built == expected
        return
    assert is_record(built)
    assert not is_record(expected)
    expected_facts = _behaviour(expected, values, other_values)
    built_facts = _behaviour(built, values, other_values)
    if params.get("slots") and params.get("frozen", True) and len(built_facts) > _CLASS_FACTS:
        # A frozen dataclass with slots refuses an attribute of no field with a TypeError
        # (its __setattr__ names the class it replaced); a record with FrozenInstanceError.
        assert built_facts[-2].startswith("FrozenInstanceError")
        expected_facts[-2] = built_facts[-2]
    for built_fact, expected_fact in zip(built_facts, expected_facts, strict=True):
        assert built_fact == expected_fact


@record
class _Base:
    a: int
    items: list[int] = field(default_factory=list, compare=False)


@dataclass(frozen=True)
class _DataclassBase:
    a: int


@record
class _OnDataclass(_DataclassBase):
    b: str = "x"


@record(slots=True)
class _Slotted(_Base):
    c: tuple[int, ...] = ()
    seen: ClassVar[int] = 0


@record
class _Checked:
    n: int

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n must not be negative")


@record
class _OwnMethods:
    n: int

    def __repr__(self) -> str:
        return f"<{self.n}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _OwnMethods) and other.n % 2 == self.n % 2

    def __hash__(self) -> int:
        return self.n % 2


@record
class _OnSlots(_Slotted):
    d: str = ""


class _Plain(_Base):
    """A plain subclass may keep attributes of its own, as under a frozen dataclass."""


def test_inherited_fields_come_in_mro_order_and_class_variables_are_not_fields() -> None:
    assert [f.name for f in dataclasses.fields(_Slotted)] == ["a", "items", "c"]
    assert [f.name for f in dataclasses.fields(_OnDataclass)] == ["a", "b"]
    slotted = _Slotted(1, [2], (3,))
    assert vars(_Slotted)["__slots__"] == ("a", "items", "c")  # _Base has no slots to inherit
    assert repr(slotted) == "_Slotted(a=1, items=[2], c=(3,))"
    assert pickle.loads(pickle.dumps(slotted)) == slotted  # noqa: S301  (our own bytes)
    assert copy.deepcopy(slotted) == slotted
    assert dataclasses.replace(_OnDataclass(1), b="y") == _OnDataclass(1, "y")
    match slotted:
        case _Slotted(a, items, c):
            assert (a, items, c) == (1, [2], (3,))
        case _:
            pytest.fail("a record matches its class pattern by position")


def test_post_init_runs_and_methods_of_the_class_are_kept() -> None:
    with pytest.raises(ValueError, match="negative"):
        _Checked(-1)
    assert _Checked(1).n == 1
    assert repr(_OwnMethods(3)) == "<3>"
    assert _OwnMethods(1) == _OwnMethods(3)
    assert hash(_OwnMethods(3)) == 1


def test_a_plain_subclass_may_set_its_own_attributes_but_no_field() -> None:
    plain = _Plain(1)
    plain.note = "kept"  # type: ignore[attr-defined]
    assert plain.note == "kept"  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plain.a = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Base(1).note = "x"  # type: ignore[attr-defined]


def test_unsupported_field_kinds_are_refused_at_definition() -> None:
    with pytest.raises(TypeError, match="kw_only"):
        record(type("K", (), {"__annotations__": {"k": "int"}, "k": field(kw_only=True)}))
    with pytest.raises(TypeError, match="InitVar"):
        record(type("I", (), {"__annotations__": {"i": dataclasses.InitVar[int]}}))


@contextmanager
def _counting_compiles() -> Iterator[list[str]]:
    """Each exec, eval or compile made while inside (a method written from source is one)."""
    calls: list[str] = []
    originals = {name: getattr(builtins, name) for name in ("exec", "eval", "compile")}

    def counted(name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return originals[name](*args, **kwargs)

        return call

    for name in originals:
        setattr(builtins, name, counted(name))
    try:
        yield calls
    finally:
        for name, original in originals.items():
            setattr(builtins, name, original)


@pytest.fixture
def no_shape_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a fresh process: no record's `__init__` shape compiled yet (`_init_of`), nor
    any shape of its comparison, hash and repr (`_methods_of`)."""
    monkeypatch.setattr(record_module, "_INIT_CODES", {}, raising=False)
    monkeypatch.setattr(record_module, "_METHOD_CODES", {})


@pytest.mark.parametrize("params", _PARAMS + _MUTABLE_PARAMS)
@pytest.mark.usefixtures("no_shape_compiled", "compiled_shapes_only")
def test_a_record_class_is_one_compile_where_a_frozen_dataclass_is_several(
    params: dict[str, bool],
) -> None:
    specs = [("a", "int", _NONE), ("b", "int", 1), ("c", "object", field(default_factory=list))]
    with _counting_compiles() as by_record:
        made = _build("record", params, None, specs)
        assert isinstance(made, type)
        repr(made(1))  # every method it writes, used
    with _counting_compiles() as by_dataclass:
        _build("dataclass", params, None, specs)
    assert by_record == ["exec", "exec"]  # __init__; then __eq__, __hash__ and __repr__
    assert len(by_dataclass) >= (4 if params.get("frozen", True) else len(by_record))


@contextmanager
def _exec_sources() -> Iterator[list[str]]:
    """The source text of each exec made while inside."""
    sources: list[str] = []
    original = builtins.exec

    def recording(source: Any, *args: Any) -> Any:
        sources.append(source if isinstance(source, str) else repr(source))
        return original(source, *args)

    setattr(builtins, "exec", recording)  # noqa: B010  (mypy: a narrower signature)
    try:
        yield sources
    finally:
        setattr(builtins, "exec", original)  # noqa: B010


@pytest.fixture
def compiled_shapes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `__init__` shape compiled, none taken written out (wild.record_inits): the way
    a shape with a default factory or a `__post_init__` is made."""
    import wild.record_inits

    monkeypatch.setattr(wild.record_inits, "PLAIN", ())
    monkeypatch.setattr(wild.record_inits, "MUTABLE_PLAIN", ())
    monkeypatch.setattr(wild.record_inits, "SHAPES", {})
    monkeypatch.setattr(wild.record_inits, "METHODS", {})


@pytest.mark.parametrize("params", _PARAMS)
@pytest.mark.usefixtures("no_shape_compiled", "compiled_shapes_only")
def test_a_record_compiles_its_comparison_hash_and_repr_only_when_one_is_first_used(
    params: dict[str, bool],
) -> None:
    # Issue 22 item 8: most record classes are never compared, hashed or printed before the
    # first agent starts, and about half make no instance before it: defining one compiles
    # nothing, its first instance its __init__.
    specs = [("a", "int", _NONE), ("b", "int", 1)]
    with _exec_sources() as at_definition:
        cls = _build("record", params, None, specs)
    assert isinstance(cls, type)
    assert at_definition == []
    with _exec_sources() as at_first_instance:
        one = cls(1)
    assert len(at_first_instance) == 1
    assert "def __init__" in at_first_instance[0]
    assert "__eq__" not in at_first_instance[0] and "__repr__" not in at_first_instance[0]
    init = cls.__dict__["__init__"]  # on the class now: no stand-in on later instances
    assert init.__qualname__ == "Shape.__init__" and init.__code__.co_name == "__init__"
    same, other = cls(1), cls(2)
    with _exec_sources() as at_first_use:
        shown = repr(one)
        equal = one == same
        unequal = one == other
        hashes = hash(one) == hash(same)
    assert len(at_first_use) == 1  # the three methods, one exec
    assert shown == "Shape(a=1, b=1)"
    eq = params.get("eq", True)
    assert (equal, unequal, hashes) == ((True, False, True) if eq else (False, False, False))
    compiled = {"__repr__"} | ({"__eq__", "__hash__"} if eq else set())
    for name in compiled:  # the class now holds the compiled methods: no stub on later calls
        method = cls.__dict__[name]
        assert method.__qualname__ == f"Shape.{name}"
        assert "stub" not in method.__code__.co_qualname
    with _exec_sources() as later:
        assert repr(same) == "Shape(a=1, b=1)"
        assert one == same if eq else one != same
    assert later == []


@pytest.mark.usefixtures("no_shape_compiled", "compiled_shapes_only")
def test_records_of_one_shape_compile_their_init_once() -> None:
    # Issue 22 item 8: ~66 record classes make their first instance before the first agent
    # starts, ~0.2 ms of compile each. Classes whose `__init__` has the same shape (the same
    # kinds of fields, in order) share one compile; each gets the code with its own names.
    with _exec_sources() as compiled:
        first = _build("record", {}, None, [("a", "int", _NONE), ("b", "int", 1)])
        second = _build("record", {}, None, [("x", "str", _NONE), ("y", "str", "q")])
        assert isinstance(first, type) and isinstance(second, type)
        one, two = first(1), second("p")
    assert len(compiled) == 1
    assert (one.a, one.b, two.x, two.y) == (1, 1, "p", "q")
    assert second(y="r", x="s") == second("s", "r")
    assert str(inspect.signature(second)) == "(x: 'str', y: 'str' = 'q') -> None"
    assert vars(second)["__init__"].__annotations__ == {"x": "str", "y": "str", "return": None}
    with pytest.raises(
        TypeError, match=r"Shape.__init__\(\) missing 1 required positional argument: 'x'"
    ):
        second()
    with pytest.raises(TypeError, match="unexpected keyword argument 'a'"):
        second(a=1)
    with _exec_sources() as another_shape:
        third = _build(
            "record", {}, None, [("a", "int", _NONE), ("c", "object", field(default_factory=list))]
        )
        assert isinstance(third, type)
        made = third(1)
    assert len(another_shape) == 1  # a default factory: another shape, its own compile
    assert made.c == [] and made.c is not third(1).c


@pytest.mark.parametrize("params", _PARAMS)
def test_a_records_signature_and_init_annotations_are_known_before_its_first_instance(
    params: dict[str, bool],
) -> None:
    """What `inspect.signature` and the annotations of `__init__` say (hypothesis' `builds`
    reads them) is the same before the first instance compiled `__init__` as after."""
    specs = [("a", "int", _NONE), ("b", "int", 1), ("c", "object", field(default_factory=list))]
    cls = _build("record", params, None, specs)
    assert isinstance(cls, type)
    before = (str(inspect.signature(cls)), dict(vars(cls)["__init__"].__annotations__))
    cls(1)
    after = (str(inspect.signature(cls)), dict(vars(cls)["__init__"].__annotations__))
    assert before == after
    assert list(inspect.signature(cls).parameters) == ["a", "b", "c"]


def _frozen_dataclass_decorators(path: Path) -> Iterator[int]:
    """The lines of `@dataclass(frozen=True…)` / `@dataclasses.dataclass(frozen=True…)`."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            name = ast.unparse(decorator.func)
            frozen = any(
                keyword.arg == "frozen"
                and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False)
                for keyword in decorator.keywords
            )
            if name in {"dataclass", "dataclasses.dataclass"} and frozen:
                yield decorator.lineno


def test_every_frozen_record_class_in_wild_is_a_record() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "wild").rglob("*.py"))
        for line in _frozen_dataclass_decorators(path)
    ]
    assert found == [], "define these with `@record` (wild/record.py), not a frozen dataclass"


def test_the_decorator_check_sees_a_frozen_dataclass(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "import dataclasses\n@dataclasses.dataclass(frozen=True, slots=True)\nclass A:\n"
        "    a: int\n@dataclass\nclass B:\n    b: int\n",
        encoding="utf-8",
    )
    assert list(_frozen_dataclass_decorators(source)) == [2]


def test_the_written_out_inits_are_what_record_would_compile() -> None:
    """wild.record_inits holds, compiled by Python's bytecode cache, the `__init__` of every
    record whose fields are all arguments (~0.25 ms a shape in each process before): each is
    the code `_init_text` compiles to, instruction for instruction, name for name."""
    from wild.record_inits import MUTABLE_PLAIN, PLAIN, SHAPES

    assert (len(PLAIN), len(MUTABLE_PLAIN)) == (25, 9)
    shapes = [(("self", ("plain",) * n, False, True), code) for n, code in enumerate(PLAIN)]
    shapes += [
        (("self", ("plain",) * n, False, False), code) for n, code in enumerate(MUTABLE_PLAIN)
    ]
    shapes += list(SHAPES.items())  # a default factory, a `__post_init__`
    for key, written in shapes:
        namespace: dict[str, Any] = {}
        text = record_module._init_text(*key)
        exec(text, {}, namespace)  # noqa: S102
        compiled = next(
            const
            for const in namespace["__create_fn__"].__code__.co_consts
            if isinstance(const, type(written))
        )
        for attribute in (
            "co_code", "co_consts", "co_names", "co_varnames", "co_freevars", "co_cellvars",
            "co_argcount", "co_kwonlyargcount", "co_posonlyargcount", "co_nlocals", "co_flags",
            "co_stacksize", "co_name",
        ):  # fmt: skip
            assert getattr(written, attribute) == getattr(compiled, attribute), (key, attribute)


def test_the_written_out_methods_are_what_record_would_compile() -> None:
    """wild.record_inits.METHODS holds the comparison, hash and repr methods first used
    before a loop's first agent starts: each the code `_method_text` compiles to."""
    from wild.record_inits import METHODS

    assert METHODS
    for key, written in METHODS.items():
        namespace: dict[str, Any] = {}
        exec(record_module._method_text(key), {}, namespace)  # noqa: S102
        compiled = tuple(
            const
            for const in namespace["__create_fn__"].__code__.co_consts
            if isinstance(const, type(written[0]))
        )
        assert len(written) == len(compiled) == len(key[0])
        for one, other in zip(written, compiled, strict=True):
            for attribute in (
                "co_code", "co_consts", "co_names", "co_varnames", "co_freevars",
                "co_cellvars", "co_argcount", "co_nlocals", "co_flags", "co_stacksize",
                "co_name",
            ):  # fmt: skip
                assert getattr(one, attribute) == getattr(other, attribute), (key, attribute)


@pytest.mark.usefixtures("no_shape_compiled", "compiled_shapes_only")
def test_records_of_one_method_shape_compile_their_comparison_hash_and_repr_once() -> None:
    # Issue 22: a record's `__eq__`, `__hash__` and `__repr__` are its shape's code (how many
    # fields each compares, hashes and prints) with its own names put in.
    first = _build("record", {}, None, [("a", "int", _NONE), ("b", "str", "q")])
    second = _build("record", {}, None, [("x", "str", _NONE), ("y", "int", 2)])
    assert isinstance(first, type) and isinstance(second, type)
    one, two = first(1), second("p")
    with _exec_sources() as compiled:
        shown = repr(one), repr(two)
        assert one == first(1) and one != first(2) and two == second("p", 2)
        assert hash(one) == hash((1, "q")) and hash(two) == hash(("p", 2))
    assert len(compiled) == 1
    assert shown == ("Shape(a=1, b='q')", "Shape(x='p', y=2)")


@pytest.mark.usefixtures("no_shape_compiled")
def test_a_record_of_a_method_shape_used_before_the_first_agent_compiles_nothing() -> None:
    # Issue 22: the comparison, hash and repr shapes a loop uses before its first agent
    # starts are written out (wild.record_inits.METHODS): a record of three fields is one.
    made = _build("record", {}, None, [("a", "int", _NONE), ("b", "int", 1), ("c", "int", 2)])
    assert isinstance(made, type)
    one = made(1)
    with _counting_compiles() as calls:
        assert one == made(1) and hash(one) == hash((1, 1, 2))
        assert repr(one) == "Shape(a=1, b=1, c=2)"
    assert calls == []


def test_the_written_out_inits_are_their_generators_output() -> None:
    """wild/record_inits.py is derived, not edited: it is what tests/record_inits_source.py
    writes (`python -m tests.record_inits_source` rewrites it after a change there)."""
    from tests import record_inits_source

    assert record_inits_source.FILE.read_text(encoding="utf-8") == record_inits_source.formatted()


@pytest.mark.usefixtures("no_shape_compiled")
def test_a_record_whose_fields_are_all_arguments_compiles_nothing() -> None:
    specs = [("a", "int", _NONE), ("b", "int", 1)]
    with _counting_compiles() as calls:
        made = _build("record", {}, None, specs)
        assert isinstance(made, type)
        made(1)
    assert calls == []


@pytest.mark.usefixtures("no_shape_compiled")
def test_a_record_of_a_shape_made_before_the_first_agent_compiles_nothing() -> None:
    # Issue 22: the shapes with a default factory or a `__post_init__` that a loop makes
    # before its first agent starts are written out too (wild.record_inits.SHAPES), as the
    # all-argument ones are: a mutable record of two fields with default factories is one.
    specs: list[tuple[str, str, Any]] = [
        ("a", "list", field(default_factory=list)),
        ("b", "dict", field(default_factory=dict)),
    ]
    with _counting_compiles() as calls:
        made = _build("record", {"frozen": False}, None, specs)
        assert isinstance(made, type)
        one = made()
    assert calls == []
    assert (one.a, one.b) == ([], {}) and one.a is not made().a
    assert made([1]).a == [1]


def test_a_mutable_records_init_sets_its_fields_as_a_dataclasss_does() -> None:
    """`@record(frozen=False)` (the mutable classes defined before the first agent's start,
    ~0.5 ms each as `@dataclass`) sets each field as an attribute, as `@dataclass` does:
    an instance costs the same to make."""

    @record(frozen=False)
    class Mutable:
        a: int
        b: list[int] = field(default_factory=list)

    @dataclass
    class Plain:
        a: int
        b: list[int] = field(default_factory=list)

    one = Mutable(1)
    one.a = 2
    assert one == Mutable(2)
    assert vars(Mutable)["__hash__"] is None  # compared by value: unhashable, as a dataclass
    made, expected = vars(Mutable)["__init__"].__code__, vars(Plain)["__init__"].__code__
    assert made.co_names == expected.co_names == ("a", "b")


_DATACLASSES_WITHOUT_INSPECT = """
import sys
import wild.record
import dataclasses
print("inspect" in sys.modules, type(dataclasses.inspect).__name__)

@dataclasses.dataclass
class Point:
    x: int
    y: str = "a"

print(Point.__doc__, "inspect" in sys.modules)
import inspect
print(type(inspect).__name__, inspect.signature(Point), inspect is sys.modules["inspect"])
"""


def test_dataclasses_imports_inspect_only_when_it_is_used() -> None:
    # wild.record imports dataclasses with a stand-in for `inspect` (issue 22: ~4.5 ms of CPU
    # before the first agent starts): loaded only when dataclasses writes a docstring, the
    # real module for everyone else.
    done = subprocess.run(
        [sys.executable, "-c", _DATACLASSES_WITHOUT_INSPECT],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout.splitlines() == [
        "False _InspectWhenUsed",
        "Point(x: int, y: str = 'a') True",
        "module (x: int, y: str = 'a') -> None True",
    ]


def test_with_inspect_imported_first_dataclasses_holds_the_real_one() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import inspect, wild.record, dataclasses; "
         "print(dataclasses.inspect is inspect)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout == "True\n"


def test_replace_makes_a_plain_frozen_record_without_its_init_and_any_other_through_it() -> None:
    """`wild.record.replace` copies a frozen record that is its fields alone (~1 µs against
    dataclasses.replace's ~11 µs for the loop's 35-field model, ~40 times an iteration);
    a `__post_init__` still runs and checks, and a slotted record or a plain subclass (which
    may hold attributes of its own) are made as dataclasses.replace makes them. Each record
    is judged at its first `replace`, not as it is defined."""
    from wild.loop.model import LoopModel
    from wild.parsers.state import LoopState

    plain = record_module._plain_fields
    assert plain(LoopModel) >= {"options", "state"} and "iteration" in plain(LoopState)
    base = _Base(1, [2])
    assert record_module.replace(base, a=5) == _Base(5, [2])
    assert record_module.replace(base, a=5).items is base.items  # as dataclasses.replace
    assert not plain(_Checked)
    with pytest.raises(ValueError, match="negative"):
        record_module.replace(_Checked(1), n=-1)
    slotted = _Slotted(1, [2], (3,))
    assert record_module.replace(slotted, c=(4,)) == _Slotted(1, [2], (4,))
    on_slots = _OnSlots(1, [2], (3,), "d")  # its base's fields live in slots, not __dict__
    assert not plain(_OnSlots)
    assert record_module.replace(on_slots, d="e") == _OnSlots(1, [2], (3,), "e")
    subclassed = _Plain(1)
    subclassed.note = "kept"  # type: ignore[attr-defined]
    made = record_module.replace(subclassed, a=2)
    assert type(made) is _Plain and made.a == 2 and not hasattr(made, "note")
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        record_module.replace(base, z=1)  # type: ignore[call-arg]


@record
class _Derived:
    root: str

    @functools.cached_property
    def child(self) -> str:
        return self.root + "/child"


def test_replace_makes_a_record_with_a_cached_property_anew_keeping_nothing_derived() -> None:
    """A record whose `functools.cached_property` keeps a value derived from its fields in
    its `__dict__` (`wild.paths.WildPaths`' paths) is made anew by `replace`, not copied: a
    copy would carry the old field's value under the new one."""
    old = _Derived("a")
    assert old.child == "a/child"  # kept in old's __dict__ from here on
    assert not record_module._plain_fields(_Derived)
    assert record_module.replace(old, root="b").child == "b/child"


def test_the_paths_under_wild_are_made_once_per_instance() -> None:
    from wild.paths import WildPaths

    paths = WildPaths(Path("/p/.wild"))
    assert paths.tasks is paths.tasks and paths.tasks == Path("/p/.wild/tasks.md")
    assert paths.run_dir("r1") == Path("/p/.wild/runs/r1")
    other = record_module.replace(paths, root=Path("/q/.wild"))
    assert other.tasks == Path("/q/.wild/tasks.md") and paths.state == Path("/p/.wild/state.json")
