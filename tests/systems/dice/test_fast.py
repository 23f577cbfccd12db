"""The plan that rolls plain expressions (systems/dice/fast.py) writes exactly the Roll of the
general roller: the same transcript, records, result and errors, for random expressions and
faces."""

from __future__ import annotations

import random
from typing import Any

import pytest

import astragal
from astragal.systems.dice import fast


def _general(text: str, faces: list[int] | None, **kw: Any) -> Any:
    """The roll through the general roller (no plan)."""
    saved = fast.plan
    fast.forget()
    fast.plan = lambda *a: None  # type: ignore[assignment]
    try:
        return _outcome(text, faces, **kw)
    finally:
        fast.plan = saved  # type: ignore[assignment]
        fast.forget()


def _outcome(text: str, faces: list[int] | None, **kw: Any) -> Any:
    try:
        r = astragal.roll(text, faces=faces, **kw)
    except astragal.InputError as exc:
        return type(exc).__name__, exc.message, exc.span
    return r.to_json(), r.dice, r.transcript, r.outcome, str(r)


def _expressions(count: int, seed: int) -> list[tuple[str, list[int]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        terms, faces = [], []
        for i in range(rng.randint(1, 3)):
            op = "" if i == 0 else rng.choice(["+", "-", " + ", " - "])
            if i and rng.random() < 0.4:
                terms.append(f"{op}{rng.randint(0, 20)}")
                continue
            n, s = rng.randint(1, 5), rng.choice([2, 4, 6, 8, 10, 12, 20, 100])
            keep = rng.choice(["", "", f"kh{rng.randint(1, n)}", f"kl{rng.randint(1, n)}",
                               f"dh{rng.randint(0, n)}", f"dl{rng.randint(0, n)}"])
            terms.append(f"{op}{n if n > 1 or rng.random() < .5 else ''}d{s}{keep}")
            faces += [rng.choice([1, s, rng.randint(1, s)]) for _ in range(n)]
        out.append(("".join(terms), faces))
    return out


@pytest.mark.parametrize("text,faces", _expressions(300, seed=18))
def test_the_plan_rolls_what_the_general_roller_rolls(text: str, faces: list[int]) -> None:
    assert _outcome(text, faces) == _general(text, faces)


def test_wrong_faces_and_limits_are_the_same_errors() -> None:
    for text, faces in [("1d20+5", [21]), ("4d6kh3", [1, 2, 3]), ("2d6", [1, 2, 3])]:
        assert _outcome(text, faces) == _general(text, faces)
    tight = astragal.Limits(max_dice=3)
    assert _outcome("4d6kh3", [1, 2, 3, 4], limits=tight) == \
        _general("4d6kh3", [1, 2, 3, 4], limits=tight)


def test_random_rolls_are_fair_and_fresh() -> None:
    """OS faces through the plan: every face shows, and each roll is its own object."""
    rolls = [astragal.roll("1d6+1") for _ in range(600)]
    assert {r.result["total"] for r in rolls} == set(range(2, 8))
    assert rolls[0].result is not rolls[1].result
