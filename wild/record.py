"""`@record`: a frozen dataclass, defined for under half the cost.

Python 3.11's `@dataclass(frozen=True)` compiles each method it writes (`__init__`, `__repr__`,
`__eq__`, `__hash__`, `__setattr__`, `__delattr__`) with an `exec` of its own and formats the
class's signature with `inspect` for its docstring: ~0.7 ms a class, and wild defines ~140
record classes before its first agent starts. `record` writes the same methods in ONE `exec`
per class, shares one frozen `__setattr__`/`__delattr__` among all records and spells the
docstring's signature itself (150 four-field classes: ~46 against ~105 ms of CPU, 2026-11-28).
None of those methods is compiled with the class: `__init__` is made when the first
instance is made, and `__eq__`, `__hash__` and `__repr__` together (one exec) the first time
one of them runs (~31 ms for the 150 with `__init__` compiled at once): most classes are never
compared, hashed or printed before wild's first agent starts, and about half make no instance
there. An `__init__` is compiled once per shape (its fields' kinds, in order) and each class
of that shape takes the code with its own names put in: 66 classes make their first instance
before wild's first agent starts, in 19 shapes (~13 → ~5.6 ms, 2026-11-28). So are `__eq__`,
`__hash__` and `__repr__` (their shape: how many fields each compares, hashes and prints).
The shapes met before a loop's first agent starts are written out, compiled by Python's
bytecode cache (`wild.record_inits`): none is compiled on the launch.

What it makes is a real dataclass to everyone else: `__dataclass_fields__` holds real
`dataclasses.Field` objects, `__dataclass_params__` says frozen, so `dataclasses.replace`,
`fields`, `asdict`, `astuple`, `is_dataclass`, orjson, pickle, copy and `match` work as
they do on `@dataclass(frozen=True)`; the methods are the ones it would write, so an
instance costs the same to make, compare, hash and print. mypy sees a frozen dataclass
(`dataclass_transform`). tests/test_record.py holds it to `@dataclass(frozen=True)`.

`replace` is `dataclasses.replace`, made without `__init__` for a frozen record that is its
fields alone (`_copy_replace`: ~1 µs against ~11 µs for the loop's 35-field model); wild's
modules import it from here.

`@record(frozen=False)` is `@dataclass` the same way (a mutable class: its `__init__` sets each
field as an attribute, it has no `__hash__` when compared by value, as a dataclass has none).

Not supported (a TypeError at definition says so): `InitVar`, `KW_ONLY` and `kw_only` fields,
and a mutable class with a `__setattr__` of its own.
Standard library only, nothing of wild: every layer may import it.
"""

from __future__ import annotations

import abc
import functools
import re
import sys
import types
from _thread import get_ident
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")


class _InspectWhenUsed(types.ModuleType):
    """Stands for `inspect` in `dataclasses` alone: the real module is imported when one of
    its names is first read (dataclasses reads `inspect.signature` only to write the
    docstring of a class it makes itself; `record` writes its own). On Python 3.11
    `dataclasses` imports `inspect` at its top, and `inspect` `ast`, `dis` and `tokenize`:
    ~2-3 ms before wild's first agent starts that nothing there uses (issue 22 item 8).
    `importlib.util.LazyLoader` cannot do it: the import statement reads the module's
    `__spec__`, which loads it at once; this one's `__spec__` is None, as a new module's is."""

    def __getattr__(self, name: str) -> Any:
        import inspect  # noqa: PLC0415 — the real one: no longer stood for in sys.modules

        return getattr(inspect, name)


def _import_dataclasses() -> types.ModuleType:
    """`dataclasses`, importing `inspect` only when it is used (`_InspectWhenUsed`). Only the
    `dataclasses` module holds the stand-in: every other `import inspect` gets the real one."""
    if "dataclasses" in sys.modules or "inspect" in sys.modules:
        import dataclasses  # noqa: PLC0415

        return dataclasses
    stand_in = _InspectWhenUsed("inspect")
    sys.modules["inspect"] = stand_in
    try:
        import dataclasses  # noqa: PLC0415
    finally:
        if sys.modules.get("inspect") is stand_in:
            del sys.modules["inspect"]
    return dataclasses


if TYPE_CHECKING:
    import dataclasses
else:
    dataclasses = _import_dataclasses()

# The dataclasses module's own markers, so that `fields()`, `replace()` and orjson, which
# test a field's kind by identity, take our fields for theirs (Python 3.11's names).
_PRIVATE: dict[str, Any] = vars(dataclasses)
_FIELD = _PRIVATE["_FIELD"]
_FIELD_CLASSVAR = _PRIVATE["_FIELD_CLASSVAR"]
_HAS_DEFAULT_FACTORY = _PRIVATE["_HAS_DEFAULT_FACTORY"]
_DataclassParams = _PRIVATE["_DataclassParams"]
_MISSING: Any = dataclasses.MISSING
_Field = dataclasses.Field
_FrozenInstanceError = dataclasses.FrozenInstanceError

# `ClassVar[int]`, `typing.ClassVar[int]`: the module (optional) and the name an annotation
# string starts with (dataclasses' own rule for string annotations).
_LEADING_NAME = re.compile(r"^(?:\s*(\w+)\s*\.)?\s*(\w+)")

# The keys (instance id, thread) of the reprs running now: a record that holds itself
# prints as `...` there, as a dataclass's repr does.
_repr_running: set[tuple[int, int]] = set()


def _named(annotation: object, module_ns: dict[str, Any]) -> object:
    """What an annotation names at its start, for the markers dataclasses recognise
    (`ClassVar`, `InitVar`, `KW_ONLY`): a string is looked up as dataclasses does, by its
    leading name in the class's module (`ClassVar[int]`, `typing.ClassVar[int]`), without
    evaluating it."""
    if not isinstance(annotation, str):
        return getattr(annotation, "__origin__", annotation)
    match = _LEADING_NAME.match(annotation)
    if match is None:
        return None
    module_name, name = match.groups()
    if module_name is None:
        found = module_ns.get(name)
    else:
        module = module_ns.get(module_name)
        if module is not sys.modules.get("typing") and module is not dataclasses:
            return None
        found = vars(module).get(name)
    return getattr(found, "__origin__", found)


def _own_field(cls: type, name: str, annotation: object, module_ns: dict[str, Any]) -> Any:
    """The Field for one annotation of the class's own body (dataclasses' `_get_field`)."""
    default = getattr(cls, name, _MISSING)
    if isinstance(default, types.MemberDescriptorType):
        default = _MISSING  # a slot of a base record: no default
    field: Any = default if isinstance(default, _Field) else dataclasses.field(default=default)
    field.name = name
    field.type = annotation
    named = _named(annotation, module_ns)
    if named is ClassVar:
        field._field_type = _FIELD_CLASSVAR
        if field.default_factory is not _MISSING:
            raise TypeError(f"field {name} cannot have a default factory")
        if field.kw_only is not _MISSING:
            raise TypeError(f"field {name} is a ClassVar but specifies kw_only")
        return field
    if (
        named is dataclasses.KW_ONLY
        or named is dataclasses.InitVar
        or isinstance(named, dataclasses.InitVar)
    ):
        raise TypeError(f"record field {name!r}: InitVar and KW_ONLY need @dataclass")
    field._field_type = _FIELD
    if field.kw_only is _MISSING:
        field.kw_only = False
    elif field.kw_only:
        raise TypeError(f"record field {name!r}: kw_only fields need @dataclass")
    if field.default.__class__.__hash__ is None:
        raise ValueError(
            f"mutable default {type(field.default)} for field {name} is not allowed: "
            "use default_factory"
        )
    return field


def _frozen_setattr(self: Any, name: str, value: object) -> None:
    cls = type(self)
    if "__dataclass_fields__" in cls.__dict__ or name in cls.__dataclass_fields__:
        raise _FrozenInstanceError(f"cannot assign to field {name!r}")
    # A plain subclass of a record may set attributes of its own, as with a dataclass.
    owner: type = _owner(cls, "__setattr__")
    super(owner, self).__setattr__(name, value)  # type: ignore[arg-type]  # a method's super


def _frozen_delattr(self: Any, name: str) -> None:
    cls = type(self)
    if "__dataclass_fields__" in cls.__dict__ or name in cls.__dataclass_fields__:
        raise _FrozenInstanceError(f"cannot delete field {name!r}")
    owner: type = _owner(cls, "__delattr__")
    super(owner, self).__delattr__(name)  # type: ignore[arg-type]  # a method's super


def _owner(cls: type, method: str) -> type:
    """The record class in `cls`'s MRO whose frozen `method` an instance of `cls` reached."""
    shared = _frozen_setattr if method == "__setattr__" else _frozen_delattr
    return next(base for base in cls.__mro__ if base.__dict__.get(method) is shared)


def _slots_getstate(self: object) -> list[object]:
    return [getattr(self, field.name) for field in dataclasses.fields(self)]  # type: ignore[arg-type]


def _slots_setstate(self: object, state: list[object]) -> None:
    for field, value in zip(dataclasses.fields(self), state, strict=False):  # type: ignore[arg-type]
        object.__setattr__(self, field.name, value)


def _tuple(owner: str, names: list[str]) -> str:
    """`(self.a,self.b,)`: the tuple a dataclass's `__eq__` and `__hash__` build."""
    if not names:
        return "()"
    return "(" + ",".join(f"{owner}.{name}" for name in names) + ",)"


def _annotation_text(annotation: object) -> str:
    """`inspect`'s spelling of an annotation in a signature."""
    if isinstance(annotation, type):
        if annotation.__module__ == "builtins":
            return annotation.__qualname__
        return f"{annotation.__module__}.{annotation.__qualname__}"
    return repr(annotation).replace("typing.", "")


# How a field's value gets into `__init__`: a parameter (`plain`, `default`, `factory_init`),
# or not (`factory`, `slot_default`: a value the body makes).
_PARAMETER_KINDS = ("plain", "default", "factory_init")
# What `__init__` is made from: the instance's name, each field with its kind, whether it
# calls `__post_init__`, and whether the class is frozen (a field is then set through
# `object.__setattr__`, else as an attribute).
_InitPlan = tuple[str, list[tuple[str, str]], bool, bool]


def _init_plan(
    cls: type, fields: dict[str, Any], real: list[Any], slots: bool, closure: dict[str, Any]
) -> tuple[str, list[tuple[str, str]], Callable[[], str]]:
    """The name `__init__` calls its instance, each field it sets with how (`_init_of`)
    (the names the method closes over added to `closure`), and what writes the class's
    signature as `inspect` would print it, for a docstring (`_signature_text`)."""
    init_fields = [field for field in real if field.init]
    seen_default = False
    for field in init_fields:
        if not (field.default is _MISSING and field.default_factory is _MISSING):
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {field.name!r} follows default argument")
    self_name = "__dataclass_self__" if "self" in fields else "self"
    plan: list[tuple[str, str]] = []
    for field in real:
        name = field.name
        closure[f"_type_{name}"] = field.type
        default_name = f"_dflt_{name}"
        if field.default_factory is not _MISSING:
            closure[default_name] = field.default_factory
            plan.append((name, "factory_init" if field.init else "factory"))
        elif field.init:
            if field.default is not _MISSING:
                closure[default_name] = field.default
            plan.append((name, "plain" if field.default is _MISSING else "default"))
        elif slots and field.default is not _MISSING:
            closure[default_name] = field.default
            plan.append((name, "slot_default"))
        # else: the class attribute holds its default
    return self_name, plan, lambda: _signature_text(init_fields)


def _signature_text(init_fields: list[Any]) -> str:
    """The class's signature as `inspect` would print it, for a docstring: written only for a
    class without one of its own."""
    signature = []
    for field in init_fields:
        text = f"{field.name}: {_annotation_text(field.type)}"
        if field.default_factory is not _MISSING:
            text += " = <factory>"
        elif field.default is not _MISSING:
            text += f" = {field.default!r}"
        signature.append(text)
    return "(" + ", ".join(signature) + ")"


def _init_text(self_name: str, kinds: tuple[str, ...], post_init: bool, frozen: bool = True) -> str:
    """The `def` of a record's `__init__` (dataclasses' own, for a frozen class) for fields
    of these kinds, named `_rec_<n>_`, in a function whose arguments are the names it closes
    over. Its defaults and annotations are not in it: `_init_of` gives them to the function,
    as `exec` of dataclasses' text would (a default is a value, not code)."""
    params = [self_name]
    body = []
    closure = {"__dataclass_builtins_object__"}
    for n, kind in enumerate(kinds):
        name, default_name = f"_rec_{n}_", f"_dflt__rec_{n}_"
        if kind in _PARAMETER_KINDS:
            params.append(name)
        if kind == "factory_init":
            closure |= {default_name, "_HAS_DEFAULT_FACTORY"}
            value = f"{default_name}() if {name} is _HAS_DEFAULT_FACTORY else {name}"
        elif kind == "factory":
            closure.add(default_name)
            value = f"{default_name}()"
        elif kind == "slot_default":
            closure.add(default_name)
            value = default_name
        else:  # plain, default: the argument
            value = name
        setter = "__dataclass_builtins_object__.__setattr__"
        if frozen:
            body.append(f"  {setter}({self_name},{name!r},{value})")
        else:
            body.append(f"  {self_name}.{name}={value}")
    if post_init:
        body.append(f"  {self_name}.__post_init__()")
    return (
        f"def __create_fn__({','.join(sorted(closure))}):\n"
        f" def __init__({','.join(params)}):\n"
        + ("\n".join(body) if body else "  pass")
        + "\n return __init__"
    )


# The compiled `__init__` of each shape met in this process (the instance's name, each
# field's kind, a default and no default alike, `__post_init__` or not). Records of one
# shape differ only in their fields' names, defaults and annotations: their `__init__` is
# this code with the names put in (`_init_of`), no compile of its own (~0.2 ms a class).
_INIT_CODES: dict[tuple[str, tuple[str, ...], bool, bool], types.CodeType] = {}


def _shape_code(
    self_name: str, kinds: tuple[str, ...], post_init: bool, frozen: bool = True
) -> types.CodeType:
    key = (self_name, kinds, post_init, frozen)
    code = _INIT_CODES.get(key)
    if code is None and self_name == "self":
        # Every field an argument, and the other shapes met before a loop's first agent:
        # written out in wild.record_inits, compiled by Python's bytecode cache once, not
        # here in every process (~0.25 ms a shape).
        from wild import record_inits  # noqa: PLC0415  (with the first such record)

        if not post_init and set(kinds) <= {"plain"}:
            written = record_inits.PLAIN if frozen else record_inits.MUTABLE_PLAIN
            if len(kinds) < len(written):
                code = _INIT_CODES[key] = written[len(kinds)]
        elif key in record_inits.SHAPES:
            code = _INIT_CODES[key] = record_inits.SHAPES[key]
    if code is None:
        code = _INIT_CODES[key] = _compiled_codes(_init_text(*key))[0]
    return code


def _compiled_codes(text: str) -> tuple[types.CodeType, ...]:
    """The code of the functions `text`'s `__create_fn__` defines, from one exec."""
    namespace: dict[str, Any] = {}
    exec(text, {}, namespace)  # noqa: S102 — the source is ours, as in dataclasses
    return tuple(
        const
        for const in namespace["__create_fn__"].__code__.co_consts
        if isinstance(const, types.CodeType)
    )


def _init_of(
    self_name: str,
    plan: list[tuple[str, str]],
    post_init: bool,
    closure: dict[str, Any],
    module_ns: dict[str, Any],
    *,
    frozen: bool,
) -> Callable[..., None]:
    """The class's `__init__`, as dataclasses writes it (its parameters, defaults,
    annotations and body), from its shape's code with the field names put in (a frozen
    class's are constants, a mutable one's attribute names)."""
    kinds = tuple("plain" if kind == "default" else kind for _name, kind in plan)
    template = _shape_code(self_name, kinds, post_init, frozen)
    names = {f"_rec_{n}_": name for n, (name, _kind) in enumerate(plan)}
    names.update({f"_dflt__rec_{n}_": f"_dflt_{name}" for n, (name, _kind) in enumerate(plan)})
    code = template.replace(
        co_varnames=tuple(names.get(name, name) for name in template.co_varnames),
        co_freevars=tuple(names.get(name, name) for name in template.co_freevars),
        co_names=tuple(names.get(name, name) for name in template.co_names),
        co_consts=tuple(
            names.get(value, value) if isinstance(value, str) else value
            for value in template.co_consts
        ),
    )
    cells = tuple(types.CellType(closure[name]) for name in code.co_freevars)
    parameters = [(name, kind) for name, kind in plan if kind in _PARAMETER_KINDS]
    defaults = tuple(
        _HAS_DEFAULT_FACTORY if kind == "factory_init" else closure[f"_dflt_{name}"]
        for name, kind in parameters
        if kind != "plain"
    )
    function = types.FunctionType(code, module_ns, "__init__", defaults or None, cells)
    function.__annotations__ = {name: closure[f"_type_{name}"] for name, _kind in parameters}
    function.__annotations__["return"] = None
    return function


def _recursion_guarded(repr_fn: Callable[[Any], str]) -> Callable[[Any], str]:
    """`repr_fn` printing `...` for a record met again while it prints (dataclasses' own
    wrapper: a record that holds itself)."""

    def __repr__(self: object) -> str:
        key = id(self), get_ident()
        if key in _repr_running:
            return "..."
        _repr_running.add(key)
        try:
            return repr_fn(self)
        finally:
            _repr_running.discard(key)

    return __repr__


def _methods(
    cls: type, fields: dict[str, Any], eq: bool, slots: bool, explicit_hash: bool, *, frozen: bool
) -> tuple[_InitPlan | None, list[str], dict[str, Any], Callable[[], str]]:
    """The plan of `__init__` if the class lacks one (`_init_of`), the names of the other
    methods it lacks (`_method_sources` writes them when one is first used), the names they
    close over, and what writes the class's signature for a docstring."""
    own = cls.__dict__
    real = [field for field in fields.values() if field._field_type is _FIELD]
    closure: dict[str, Any] = {
        "__dataclass_builtins_object__": object,
        "_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
        "MISSING": _MISSING,
        "_return_type": None,
    }
    self_name, plan, signature = _init_plan(cls, fields, real, slots, closure)
    post_init = hasattr(cls, "__post_init__")
    init = None if "__init__" in own else (self_name, plan, post_init, frozen)
    names = []
    if eq:
        if "__eq__" not in own:
            names.append("__eq__")
        if not explicit_hash:
            names.append("__hash__")
    if "__repr__" not in own:
        names.append("__repr__")
    return init, names, closure, signature


def _method_sources(
    names: list[str], compared: list[str], hashed: list[str], shown: list[str]
) -> dict[str, str]:
    """The source of each method in `names` (of `__eq__`, `__hash__`, `__repr__`) of a record
    whose fields `compared`, `hashed` and `shown` are compared, hashed and printed: the
    methods dataclasses would write, so an instance costs what it costs under a dataclass
    (the repr formats with `%`, which compiles faster than an f-string and prints the same).
    Written when one of them is first used: most records are never compared, hashed or
    printed before wild's first agent starts."""
    sources: dict[str, str] = {}
    if "__eq__" in names:
        sources["__eq__"] = (
            " def __eq__(self,other):\n"
            "  if other.__class__ is self.__class__:\n"
            f"   return {_tuple('self', compared)}=={_tuple('other', compared)}\n"
            "  return NotImplemented"
        )
    if "__hash__" in names:
        sources["__hash__"] = f" def __hash__(self):\n  return hash({_tuple('self', hashed)})"
    if "__repr__" in names:
        sources["__repr__"] = (
            f' def __repr__(self):\n  return "{_repr_format(shown)}" % '
            f"(self.__class__.__qualname__{''.join(f', self.{name}' for name in shown)})"
        )
    return sources


def _repr_format(shown: list[str]) -> str:
    """The `%` format of a record's repr that prints the fields `shown`."""
    return "%s(" + ", ".join(f"{name}=%r" for name in shown) + ")"


# The code of the comparison, hash and repr methods of each shape met in this process (the
# methods, and how many fields each compares, hashes and prints), compiled with the fields
# named `_cmp_<n>_`, `_hsh_<n>_` and `_shw_<n>_`: a class's are this code with its names
# put in (`_methods_of`), as its `__init__` is its shape's.
_MethodShape = tuple[tuple[str, ...], int, int, int]
_METHOD_CODES: dict[_MethodShape, tuple[types.CodeType, ...]] = {}


def _placeholders(prefix: str, count: int) -> list[str]:
    return [f"_{prefix}_{n}_" for n in range(count)]


def _method_text(key: _MethodShape) -> str:
    """The `def` that returns the methods of shape `key`, their fields named by position."""
    names, compared, hashed, shown = key
    sources = _method_sources(
        list(names),
        _placeholders("cmp", compared),
        _placeholders("hsh", hashed),
        _placeholders("shw", shown),
    )
    return "def __create_fn__():\n" + "\n".join(sources.values()) + "\n return 0"


def _method_codes(key: _MethodShape) -> tuple[types.CodeType, ...]:
    codes = _METHOD_CODES.get(key)
    if codes is None:
        from wild import record_inits  # noqa: PLC0415  (with the first such record)

        codes = record_inits.METHODS.get(key)
    if codes is None:
        codes = _compiled_codes(_method_text(key))
    _METHOD_CODES[key] = codes
    return codes


def _methods_of(
    fields: dict[str, Any], names: list[str], module_ns: dict[str, Any]
) -> dict[str, Any]:
    """The methods `names` of a record with these fields (their names resolve in the class's
    module, as a dataclass's do): its shape's code with the field names put in."""
    real = [field for field in fields.values() if field._field_type is _FIELD]
    compared = [field.name for field in real if field.compare]
    hashed = [field.name for field in real if (field.compare if field.hash is None else field.hash)]
    shown = [field.name for field in real if field.repr]
    key = (tuple(names), len(compared), len(hashed), len(shown))
    # The names, and the repr's text: its format, or the pieces Python 3.11 compiles a `%`
    # of `%s`/`%r` into (`(_shw_0_=`, `, _shw_1_=`, …, `)`: formatted as an f-string is).
    renamed: dict[str, str] = {_repr_format(_placeholders("shw", len(shown))): _repr_format(shown)}
    for n, name in enumerate(shown):
        lead = "(" if n == 0 else ", "
        renamed[f"{lead}_shw_{n}_="] = f"{lead}{name}="
    for prefix, real_names in (("cmp", compared), ("hsh", hashed), ("shw", shown)):
        renamed.update(zip(_placeholders(prefix, len(real_names)), real_names, strict=True))
    made: dict[str, Any] = {}
    for template in _method_codes(key):
        code = template.replace(
            co_names=tuple(renamed.get(name, name) for name in template.co_names),
            co_consts=tuple(
                renamed.get(value, value) if isinstance(value, str) else value
                for value in template.co_consts
            ),
        )
        made[code.co_name] = types.FunctionType(code, module_ns, code.co_name)
    if "__repr__" in made:
        made["__repr__"] = _recursion_guarded(made["__repr__"])
    return made


def _collect_fields(cls: Any, module_ns: dict[str, Any], frozen: bool) -> dict[str, Any]:
    """The class's fields, its bases' first in MRO order (dataclasses' rules and errors)."""
    own = cls.__dict__
    fields: dict[str, Any] = {}
    has_dataclass_bases = any_frozen_base = False
    for base in cls.__mro__[-1:0:-1]:
        base_fields = getattr(base, "__dataclass_fields__", None)
        if base_fields is not None:
            has_dataclass_bases = True
            fields.update((field.name, field) for field in base_fields.values())
            if base.__dataclass_params__.frozen:
                any_frozen_base = True
    annotations: dict[str, Any] = own.get("__annotations__", {})
    for name, annotation in annotations.items():
        field = _own_field(cls, name, annotation, module_ns)
        fields[name] = field
        if isinstance(getattr(cls, name, None), _Field):
            if field.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, field.default)
    for name, value in own.items():
        if isinstance(value, _Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    if has_dataclass_bases and any_frozen_base and not frozen:
        raise TypeError("cannot inherit non-frozen dataclass from a frozen one")
    if has_dataclass_bases and not any_frozen_base and frozen:
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    return fields


def _build(cls: Any, eq: bool, slots: bool, frozen: bool = True) -> Any:
    """dataclasses' `_process_class` for `frozen=True` or `False` (and `eq`, `slots`), one
    exec."""
    module = sys.modules.get(cls.__module__)
    module_ns: dict[str, Any] = vars(module) if module is not None else {}
    own = cls.__dict__
    if not frozen and cls.__setattr__ is not object.__setattr__:
        # Its `__init__` would set each field through that `__setattr__`; a record's sets it.
        raise TypeError(f"record {cls.__name__}: a mutable class with __setattr__ needs @dataclass")
    cls.__dataclass_params__ = _DataclassParams(True, True, eq, False, False, frozen)
    fields = _collect_fields(cls, module_ns, frozen)
    cls.__dataclass_fields__ = fields
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    # A mutable record gets no `__hash__` of its own: compared by value, it is unhashable,
    # as a dataclass is (unless its class says otherwise).
    init, later, closure, signature = _methods(
        cls, fields, eq, slots, explicit_hash or not frozen, frozen=frozen
    )
    if not frozen and eq and not explicit_hash:
        cls.__hash__ = None
    # A compile is most of a record's cost, and about half the record classes imported before
    # the first agent starts make no instance before it (issue 22 item 8): `__init__` is
    # made when the first instance is made (`_LazyInit`; compiled once per shape, not per
    # class: `_init_of`), and `__eq__`, `__hash__` and `__repr__` (together, one exec) the
    # first time one of them runs. Until then each is a stand-in that makes the method, puts
    # it on the class and runs it, so that every later call costs what a dataclass's own
    # method costs.
    owner: list[Any] = [cls]  # the class the methods go on (a slotted record is remade below)
    if init is not None:
        cls.__init__ = _LazyInit(owner, init, closure, module_ns)
    for method_name in later:
        setattr(cls, method_name, _compiling_stub(owner, method_name, later, module_ns))
    frozen_methods = (("__setattr__", _frozen_setattr), ("__delattr__", _frozen_delattr))
    for method_name, shared in frozen_methods if frozen else ():
        if method_name in own:
            raise TypeError(f"Cannot overwrite attribute {method_name} in class {cls.__name__}")
        setattr(cls, method_name, shared)
    if not cls.__doc__:
        cls.__doc__ = cls.__name__ + (signature() if init is not None else _signature(cls))
    if "__match_args__" not in own:
        real = fields.values()
        match_args = tuple(f.name for f in real if f._field_type is _FIELD and f.init)
        cls.__match_args__ = match_args  # type: ignore[misc]  # mypy: set by dataclasses only
    if slots:
        cls = _with_slots(cls, fields)
        owner[0] = cls
    abc.update_abstractmethods(cls)
    if frozen and not slots and init is not None:
        _CANDIDATES[cls] = fields  # judged at its first `replace` (`_plain_fields`)
    return cls


# The frozen records `replace` may make by copying the instance's attributes, with their
# fields; each is judged at its first `replace`, not as it is defined: the judgment looks at
# every attribute of the class (~0.8 ms for the ~120 records a loop's start defines, most of
# which it never replaces).
_CANDIDATES: dict[type, dict[str, Any]] = {}
# The records judged: their fields' names when `replace` copies them, else empty.
_PLAIN: dict[type, frozenset[str]] = {}


def _plain_fields(cls: type) -> frozenset[str]:
    """The fields' names of a record `replace` makes by copying, judged once; empty when it
    is not one (`_copied_plainly`)."""
    names = _PLAIN.get(cls)
    if names is None:
        fields = _CANDIDATES.get(cls)
        plain = fields is not None and _copied_plainly(cls, fields)
        kept = fields.items() if fields is not None and plain else ()
        names = _PLAIN[cls] = frozenset(name for name, f in kept if f._field_type is _FIELD)
    return names


def _copied_plainly(cls: Any, fields: dict[str, Any]) -> bool:
    """Whether an instance of `cls` is its fields' values alone, set by its own `__init__`:
    every field an `__init__` argument, no `__post_init__` (which may check or derive), no
    `__new__` of its own, no slots anywhere in its bases (a field there is not in the
    instance's `__dict__`), no `functools.cached_property` (what it keeps in the `__dict__`
    was derived from the old fields). Its frozen `__setattr__` keeps any other attribute off
    it."""
    return (
        not hasattr(cls, "__post_init__")
        and cls.__new__ is object.__new__
        and not any("__slots__" in vars(base) for base in cls.__mro__)
        and not any(
            isinstance(value, functools.cached_property)
            for base in cls.__mro__
            for value in vars(base).values()
        )
        and all(f.init for f in fields.values() if f._field_type is _FIELD)
    )


def _copy_replace(obj: _T, /, **changes: Any) -> _T:
    """`dataclasses.replace(obj, **changes)`, made without `__init__` for a frozen record that
    is its fields alone (`_copied_plainly`): its attributes copied, `changes` put in (~1 µs
    against ~11 µs for the loop's 35-field model, which a loop iteration replaces ~40 times:
    issue 22 item 8). Anything else, a name that is not a field included, goes to
    `dataclasses.replace`, which says what is wrong as it always does."""
    names = _plain_fields(type(obj))
    if not names or not names.issuperset(changes):
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    made: _T = object.__new__(type(obj))
    attributes = made.__dict__
    attributes.update(obj.__dict__)
    attributes.update(changes)
    return made


if TYPE_CHECKING:  # mypy checks each call's names and types as it does dataclasses.replace's
    from dataclasses import replace as replace  # noqa: PLC0414 (re-exported: mypy --strict)
else:
    replace = _copy_replace


def _compiling_stub(
    owner: list[Any], name: str, names: list[str], module_ns: dict[str, Any]
) -> Callable[..., Any]:
    """The stand-in for the method `name` of `owner[0]`: its first call makes every method
    in `names` (`_methods_of`: its shape's code, one exec the first time in a process unless
    written out), sets them on the class and runs the real `name`."""

    def stub(self: Any, *args: Any) -> Any:
        cls = owner[0]
        if cls.__dict__.get(name) is stub:  # not compiled yet (by another stub, another thread)
            for method_name, function in _methods_of(
                cls.__dataclass_fields__, names, module_ns
            ).items():
                function.__qualname__ = f"{cls.__qualname__}.{method_name}"
                setattr(cls, method_name, function)
        real: Callable[..., Any] = cls.__dict__[name]
        return real(self, *args)

    stub.__name__ = name
    stub.__qualname__ = f"{owner[0].__qualname__}.{name}"
    return stub


class _LazyInit:
    """A record's `__init__` until its first instance is made: that call makes it (`_init_of`:
    its shape's code, compiled once per process), puts it on the class and runs it. Before
    that, `inspect.signature(cls)` and `typing.get_type_hints(cls.__init__)` (hypothesis'
    `builds` reads both) see the real function through `__wrapped__` and `__annotations__`,
    which make it too."""

    __slots__ = ("_closure", "_function", "_module_ns", "_owner", "_plan")

    def __init__(
        self,
        owner: list[Any],
        plan: _InitPlan,
        closure: dict[str, Any],
        module_ns: dict[str, Any],
    ) -> None:
        self._owner, self._plan, self._closure, self._module_ns = (
            owner,
            plan,
            closure,
            module_ns,
        )
        self._function: Callable[..., None] | None = None

    def compiled(self) -> Callable[..., None]:
        function = self._function
        if function is None:
            cls = self._owner[0]
            self_name, plan, post_init, frozen = self._plan
            function = _init_of(
                self_name, plan, post_init, self._closure, self._module_ns, frozen=frozen
            )
            function.__qualname__ = f"{cls.__qualname__}.__init__"
            self._function = function
            if cls.__dict__.get("__init__") is self:  # not replaced by another thread
                cls.__init__ = function
        return function

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return types.MethodType(self.compiled(), instance)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.compiled()(*args, **kwargs)

    @property
    def __wrapped__(self) -> Callable[..., None]:
        return self.compiled()

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return self.compiled().__annotations__


def _signature(cls: type) -> str:
    """The signature of a record with an `__init__` of its own, as dataclasses finds it."""
    import inspect  # noqa: PLC0415 — only a record with its own __init__ and no docstring

    try:
        return str(inspect.signature(cls)).replace(" -> None", "")
    except (TypeError, ValueError):
        return ""


def _with_slots(cls: Any, fields: dict[str, Any]) -> Any:
    """The class again with `__slots__` for its fields (dataclasses' `_add_slots`)."""
    own = dict(cls.__dict__)
    if "__slots__" in own:
        raise TypeError(f"{cls.__name__} already specifies __slots__")
    names = tuple(f.name for f in fields.values() if f._field_type is _FIELD)
    inherited: set[str] = set()
    for base in cls.__mro__[1:-1]:
        slots = base.__dict__.get("__slots__")
        if slots is not None:
            inherited.update([slots] if isinstance(slots, str) else slots)
    own["__slots__"] = tuple(name for name in names if name not in inherited)
    for name in names:
        own.pop(name, None)
    own.pop("__dict__", None)
    own.pop("__weakref__", None)
    qualname = cls.__qualname__
    cls = type(cls)(cls.__name__, cls.__bases__, own)
    cls.__qualname__ = qualname
    if "__getstate__" not in own:
        cls.__getstate__ = _slots_getstate
    if "__setstate__" not in own:
        cls.__setstate__ = _slots_setstate
    return cls


@overload
def record(cls: type[_T], /) -> type[_T]: ...


@overload
def record(
    *, eq: bool = True, slots: bool = False, frozen: bool = True
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(
    cls: type[_T] | None = None, /, *, eq: bool = True, slots: bool = False, frozen: bool = True
) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """`@record` is `@dataclass(frozen=True)`; `@record(eq=False)` and `@record(slots=True)`
    are `@dataclass(frozen=True, eq=False)` and `@dataclass(frozen=True, slots=True)`;
    `@record(frozen=False)` is `@dataclass` (a mutable class, ~0.5 ms less to define)."""

    def wrap(cls: type[_T]) -> type[_T]:
        built: type[_T] = _build(cls, eq, slots, frozen)
        return built

    return wrap if cls is None else wrap(cls)
