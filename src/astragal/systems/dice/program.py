"""A die of the general notation as a program of the dice algebra (``astragal.dice.algebra``).

One die of a term with its re-rolls (rule N1) and explosions (N2) is a ``Chain``: it is rolled
again in place while its face matches ``r`` (``ro``: once), and goes on while a standing face
matches the explosion condition (``xo``: at most once). What each roll of the chain adds to the
term is ``w`` of its face (``!p``: of its face − 1 after the first): the face itself, its
success score (N6) or, with ``mi``/``ma``, the clamped value's (N3). A compounded die (``!!``)
is one chain whose faces add up first; ``w`` is then read on the total.

The odds read these programs with the algebra's exact interpreter (``laws.py``: a ``Pool`` of
a term's dice); both call the registered rules ``rerolls``, ``explodes`` and ``face_value`` on every face they read.
"""

from __future__ import annotations

from collections.abc import Callable

from ...dice.algebra import Chain, Reading, never
from .nodes import Dice
from .rules import explodes, face_value, rerolls

__all__ = ["die_chain", "roll_law"]

Weight = Callable[[int], int]


class _Rerolls(Reading):
    """N1 on the tray's raw face."""

    __slots__ = ()

    def __call__(self, raw: int) -> bool:
        d: Dice = self.settings[0]
        return rerolls(d, face_value(d, raw))


class _Explodes(Reading):
    """N2 on the tray's raw face (before ``!p`` takes one off)."""

    __slots__ = ()

    def __call__(self, position: int, raw: int) -> bool:
        d: Dice = self.settings[0]
        return explodes(d, face_value(d, raw))


class _Adds(Reading):
    """What one roll adds: ``w`` of its face (``!p``: of its face − 1 after the first)."""

    __slots__ = ()

    def __call__(self, position: int, raw: int) -> int:
        d, w, penetrates = self.settings
        v = face_value(d, raw) - (1 if penetrates and position else 0)
        return v if w is None else w(v)


_NOTES = {"compound": "compounded", "penetrate": "penetrating explosion (-1)"}  # the tray's


def die_chain(d: Dice, w: Weight | None = None) -> Chain:
    """One die of ``d`` with its re-rolls and explosions; each roll adds ``w(value)`` (``None``:
    the value). ``ra`` is read by the term (the pool's first matching die adds one die)."""
    exploding = d.explode is not None and d.explode != "add"
    compound = d.explode == "compound"
    return Chain(d.size, _Explodes(d) if exploding else never,
                 _Adds(d, None if compound else w, d.explode == "penetrate"),
                 _NOTES.get(d.explode or "", "explosion"), 1 if d.explode == "once" else None,
                 _Rerolls(d) if d.reroll else None, d.reroll_once)


def roll_law(d: Dice) -> dict[int, float]:
    """The value that stands on one roll of the die after its re-roll rule (N1)."""
    from ...odds.algebra import roll_once

    return roll_once(Chain(d.size, never, _Adds(d, None, False), "re-roll", None,
                           _Rerolls(d) if d.reroll else None, d.reroll_once))
