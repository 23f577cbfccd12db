"""What is worked out once per immutable object, remembered by the object's identity.

Parsed requests, dice terms and step facts are immutable and often the very same object at every
roll (the parse is cached), so looking them up by ``id`` costs one dict lookup where hashing
them would walk their fields. The entry keeps the object alive, so its ``id`` is not reused
while the entry stands; a cache past its ``limit`` starts again empty.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

__all__ = ["by_identity"]

K = TypeVar("K", bound=Hashable)
O = TypeVar("O")
T = TypeVar("T")


def by_identity(cache: dict[K, tuple[O, T]], key: K, owner: O,
                make: Callable[[], T], limit: int = 1024,
                again: Callable[[T], object] | None = None) -> T:
    """What ``make()`` gave for ``owner`` under ``key`` (a key built from ``id(owner)``, and
    from any setting the value also depends on); ``again(value)`` runs when it is remembered
    (a caller that counts the work of reading it)."""
    hit = cache.get(key)
    if hit is not None and hit[0] is owner:
        if again is not None:
            again(hit[1])
        return hit[1]
    if len(cache) > limit:
        cache.clear()
    made = make()
    cache[key] = (owner, made)
    return made
