"""Immutable records that cost little to define.

astragal's records (parsed notation, the algebra's programs, limits, rolls, a roll's steps) are
tuples with a name per field, written as ``typing.NamedTuple`` classes are (fields annotated,
defaults given) but made by ``Record``'s metaclass: about a tenth of a NamedTuple's cost to
define (which compiles a ``__new__`` from source for every class) and a hundredth of a
dataclass's (whose module imports ``inspect``, with ``ast``, ``dis`` and ``tokenize``). A game's
first call and the command line's start-up pay for every class their imports define. Type
checkers read a ``Record`` as a NamedTuple; at run time it has the same fields, ``_fields``,
``_make``, ``_replace``, ``_asdict``, ``__match_args__``, defaults, repr and pickling.

Records are equal, and hash alike, only within their own type: a tuple's equality ignores the
type, so ``Num(3) == Neg(3)`` would hold. ``typed(compared=k)`` compares only the first ``k``
fields: the fields after them (a term's place in the text it was read from) say where a value
came from, not what it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import TYPE_CHECKING, Any, TypeVar

__all__ = ["Record", "typed"]


def _getter(index: int, doc: str) -> Any:
    """The field accessor of ``collections.namedtuple`` (in C), or a property like it."""
    try:
        from _collections import _tuplegetter  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover (other Pythons)
        return property(itemgetter(index), doc=doc)
    return _tuplegetter(index, doc)

T = TypeVar("T", bound=type)


def _same(self: tuple[Any, ...], other: object) -> bool:
    return type(other) is type(self) and tuple.__eq__(self, other)


def _other(self: tuple[Any, ...], other: object) -> bool:
    return not _same(self, other)


def _hash(self: tuple[Any, ...]) -> int:
    return hash((type(self).__name__, tuple(self)))


def typed(cls: T | None = None, *, compared: int | None = None) -> Any:
    """Equality and hashing within the record's own type, over its first ``compared`` fields
    (all of them by default). Use as ``@typed`` or ``@typed(compared=k)``."""

    def apply(klass: T) -> T:
        if compared is None:
            klass.__eq__ = _same  # type: ignore[assignment]
            klass.__ne__ = _other  # type: ignore[assignment]
            klass.__hash__ = _hash  # type: ignore[assignment]
            return klass
        k = compared

        def same(self: tuple[Any, ...], other: object) -> bool:
            return type(other) is type(self) and self[:k] == other[:k]

        def other_(self: tuple[Any, ...], other: object) -> bool:
            return not same(self, other)

        def hash_(self: tuple[Any, ...]) -> int:
            return hash((type(self).__name__, self[:k]))

        klass.__eq__ = same  # type: ignore[assignment]
        klass.__ne__ = other_  # type: ignore[assignment]
        klass.__hash__ = hash_  # type: ignore[assignment]
        return klass

    if cls is not None:
        return apply(cls)
    return apply




class _Fields(type):
    """Makes a class written as a NamedTuple (fields annotated, defaults given) a tuple with an
    accessor per field. A subclass that declares no fields keeps its base's (and may give its
    own ``__new__`` or ``_make``, as ``Limits`` does to check its values)."""

    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> _Fields:
        ns.setdefault("__slots__", ())
        fields = tuple(ns.get("__annotations__", ()))
        if fields:
            defaults = {f: ns.pop(f) for f in fields if f in ns}
            for i, f in enumerate(fields):
                ns[f] = _getter(i, f"field {i}: {f}")
            ns.update(_fields=fields, _field_defaults=defaults, __match_args__=fields)
            if "__new__" not in ns:
                ns["__new__"] = _maker(name, fields, defaults)
        return super().__new__(mcs, name, bases, ns)

    @property
    def __signature__(cls) -> Any:
        """The fields as parameters, for ``help()``, editors and Hypothesis's ``builds`` (made
        when asked for: ``inspect`` is not imported otherwise)."""
        import inspect

        fields: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
        defaults: dict[str, Any] = getattr(cls, "_field_defaults", {})
        hints = getattr(cls, "__annotations__", {})
        return inspect.Signature([
            inspect.Parameter(f, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              default=defaults.get(f, inspect.Parameter.empty),
                              annotation=hints.get(f, inspect.Parameter.empty))
            for f in fields])


def _maker(name: str, fields: tuple[str, ...], defaults: dict[str, Any]) -> Any:
    n, make = len(fields), tuple.__new__
    tails = [tuple(defaults[f] for f in fields[i:]) if set(fields[i:]) <= set(defaults) else None
             for i in range(n + 1)]  # the defaults after the first i values given, if all are

    def new(cls: type, *args: Any, **kw: Any) -> Any:
        if kw or len(args) != n:
            tail = None if kw or len(args) > n else tails[len(args)]
            args = args + tail if tail is not None else _filled(name, fields, defaults, args, kw)
        return make(cls, args)

    return new


def _filled(name: str, fields: tuple[str, ...], defaults: dict[str, Any],
            args: tuple[Any, ...], kw: dict[str, Any]) -> tuple[Any, ...]:
    if len(args) > len(fields):
        raise TypeError(f"{name}() takes {len(fields)} arguments, not {len(args)}")
    out = list(args)
    for f in fields[len(args):]:
        if f in kw:
            out.append(kw.pop(f))
        elif f in defaults:
            out.append(defaults[f])
        else:
            raise TypeError(f"{name}() is missing the argument {f!r}")
    if kw:
        twice = set(kw) & set(fields)
        raise TypeError(f"{name}() got two values for {', '.join(map(repr, twice))}" if twice
                        else f"{name}() has no field {', '.join(map(repr, kw))}")
    return tuple(out)


if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    class Record(tuple, metaclass=_Fields):
        """The base of astragal's records (see the module's docstring)."""

        __slots__ = ()
        _fields: tuple[str, ...] = ()
        __eq__ = _same
        __ne__ = _other
        __hash__ = _hash

        @classmethod
        def _make(cls, iterable: Iterable[Any]) -> Any:
            values = tuple(iterable)
            if len(values) != len(cls._fields):
                raise TypeError(f"{cls.__name__} takes {len(cls._fields)} values, "
                                f"not {len(values)}")
            return tuple.__new__(cls, values)

        def _replace(self, **changes: Any) -> Any:
            values = self._make([changes.pop(f, v) for f, v in zip(self._fields, self)])
            if changes:
                raise TypeError(f"{type(self).__name__} has no field "
                                f"{', '.join(map(repr, changes))}")
            return values

        def _asdict(self) -> dict[str, Any]:
            return dict(zip(self._fields, self))

        def __repr__(self) -> str:
            fields = ", ".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
            return f"{type(self).__name__}({fields})"

        def __getnewargs__(self) -> tuple[Any, ...]:
            return tuple(self)
