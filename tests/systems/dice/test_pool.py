"""What the roller remembers of a term's faces stays bounded, however many terms a server rolls."""

from __future__ import annotations

import pytest

import astragal
from astragal.systems.dice import pool


def test_remembered_readings_are_bounded_in_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "_MOST_IN_ALL", 40)
    pool.forget()
    seen = []
    for k in range(2, 12):  # ten terms, each with far more face patterns than are kept
        for seed in range(30):
            r = astragal.roll(f"{k}d100mi2kh1 >= 50", seed=seed)
            seen.append(str(r))
            held = sum(one.kept for _, one in pool._ONE_FACE.values())
            assert held <= 40
    assert pool._ONE_FACE  # these terms took the remembering path
    # and the rolls are what they are without the memory (the same seeds, nothing remembered)
    pool.forget()
    monkeypatch.setattr(pool, "_MOST_IN_ALL", 0)
    again = [str(astragal.roll(f"{k}d100mi2kh1 >= 50", seed=seed))
             for k in range(2, 12) for seed in range(30)]
    assert again == seen
