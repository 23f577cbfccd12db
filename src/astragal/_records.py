"""Immutable records that cost little to define.

astragal's records (parsed notation, the algebra's programs, limits, rolls) are NamedTuples with
equality and hashing within their own type: a tuple's ignore the type, so ``Num(3) == Neg(3)``
would hold. A NamedTuple costs about a quarter of a dataclass to define, and ``dataclasses``
imports ``inspect`` (with ``ast``, ``dis`` and ``tokenize``): a game's first call and the
command line's start-up pay for every class their imports define.

``typed(compared=k)`` compares only the first ``k`` fields: the fields after them (a term's
place in the text it was read from) say where a value came from, not what it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["remembered", "typed"]

T = TypeVar("T", bound=type)
V = TypeVar("V")


def remembered(memo: dict[int, tuple[Any, V]], obj: object, make: Callable[[], V],
               most: int = 4096) -> V:
    """``make()``, remembered per object by identity (for immutable objects that cost more to
    hash than to look up: a parsed term, a die's form); the memo is emptied past ``most``."""
    hit = memo.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    if len(memo) > most:
        memo.clear()
    value = make()
    memo[id(obj)] = (obj, value)
    return value


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


