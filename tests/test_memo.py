"""What is remembered by an object's identity is the object's own, and the cache stays bounded."""

from __future__ import annotations

from astragal._memo import by_identity


def test_remembers_per_object_and_starts_again_past_its_limit() -> None:
    cache: dict[int, tuple[object, list[int]]] = {}
    made: list[int] = []

    def make(n: int) -> list[int]:
        made.append(n)
        return [n]

    a, b = [1, 2], [1, 2]  # equal, but two objects: each is worked out once
    first = by_identity(cache, id(a), a, lambda: make(1), limit=3)
    assert by_identity(cache, id(a), a, lambda: make(2), limit=3) is first
    by_identity(cache, id(b), b, lambda: make(3), limit=3)
    assert made == [1, 3]
    # an entry whose key is reused by another object (a recycled id) is not returned for it
    other = [3, 4]
    assert by_identity(cache, id(a), other, lambda: make(4), limit=3) == [4]
    for k in range(10):
        by_identity(cache, 1000 + k, other, lambda: [0], limit=3)
    assert len(cache) <= 4
