"""What is remembered by an object's identity is the object's own, and the cache stays bounded."""

from __future__ import annotations

import pytest

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


def test_again_runs_only_when_the_value_is_remembered() -> None:
    cache: dict[tuple[int, int], tuple[object, str]] = {}
    read: list[str] = []
    owner = object()
    for part in (1, 2, 1, 1):  # a setting the value depends on is part of the key
        by_identity(cache, (id(owner), part), owner, lambda p=part: f"law {p}",
                    again=read.append)
    assert read == ["law 1", "law 1"]


def test_a_remembered_law_still_counts_the_work_of_reading_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the odds of a request asked again read its law from memory: that reading is counted
    # against the work limit (one step a value) beside writing its rows
    import astragal
    from astragal.systems.dice import exact, pmf

    budgets: list[pmf.Budget] = []

    class Counted(pmf.Budget):
        def __init__(self, *args: object) -> None:
            super().__init__(*args)  # type: ignore[arg-type]
            budgets.append(self)

    monkeypatch.setattr(exact, "Budget", Counted)
    exact.forget()
    text = "dice: 3d6+1"
    values = len(astragal.odds(text).distribution.items_)
    astragal.odds(text)
    first, again = budgets
    assert again.used == (pmf.ROW + 1) * values < first.used
