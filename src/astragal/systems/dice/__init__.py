"""The general dice notation: ``4d6kh3+2``, ``10d10>=8f1``, ``d6!``, ``{d12,d8}kh1``, ``6x 4d6kh3``.

The common core of Roll20, Foundry and the chat bots on one engine: every expression rolls with a
full transcript (every face through the ``Tray``) and has exact odds. Modules: ``nodes`` (the
parsed tree, canonical printing), ``grammar`` (the parser, with spans and limits; ``atoms`` and
``terms`` read its atoms and dice terms), ``rules`` (the rules as pure functions), ``roller``
(rolling), ``exact`` (the exact odds; imports numpy, so it loads only when odds are asked for). The notation is documented in ``docs/notation.md``.

>>> import astragal
>>> astragal.roll("dice: 4d6kh3+2", faces="6,4,1,3").result["total"]
15
>>> round(astragal.odds("dice: 2d20kh1+5 >= 15").outcomes["success"], 4)
0.7975
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._limits import DEFAULT_LIMITS, Limits
from ..._rng import Source
from ...dice import Roll
from .. import Game, Odds
from .grammar import parse as _parse
from .nodes import Expression, Rolls
from .rules import DEFAULTS, SWITCHES

__all__ = ["DEFAULTS", "SWITCHES", "SYSTEM", "Expression", "Rolls", "odds", "parse", "roll"]


_READ: dict[tuple[str, int, Any, Any, Any, int], tuple[Expression | Rolls, Limits]] = {}


def parse(text: str, start: int = 0, options: Mapping[str, Any] | None = None,
          limits: Limits = DEFAULT_LIMITS) -> Expression | Rolls:
    """Read general dice notation from ``text[start:]`` (specs are immutable, so reads are cached).

    >>> print(parse("4d6kh3 + 2"))
    dice: 4d6kh3+2
    """
    opts = options or DEFAULTS
    try:  # keyed by the limits' identity (held beside the read): hashing a record costs more
        key = (text, start, opts.get("dialect", "astragal"), opts.get("reroll", "dialect"),
               opts.get("greater_than", "dialect"), id(limits))
        hit = _READ.get(key)
    except TypeError:  # an unhashable option value: it is refused below
        key, hit = None, None
    if hit is not None and hit[1] is limits:
        return hit[0]
    expr = _parse(text, start, {**DEFAULTS, **opts}, limits)  # which checks the options
    if key is not None:
        if len(_READ) > 2048:
            _READ.clear()
        _READ[key] = expr, limits
    return expr


def roll(spec: Expression | Rolls, source: Source, options: Mapping[str, Any] | None = None,
         limits: Limits = DEFAULT_LIMITS, text: str = "") -> Roll:
    """Roll a parsed expression with faces from ``source``."""
    global _plain, _roller
    if _plain is None:
        from .fast import plain_roll as _plain
    result: Roll | None = _plain(spec, source, limits, text or str(spec))
    if result is None:  # not a plain shape: the general roller, imported on its first roll
        if _roller is None:
            from .roller import general as _roller
        result = _roller(spec, source, limits, text or str(spec))
    return result


_plain: Any = None  # the plain shapes' roller (fast.py), imported on the first roll
_roller: Any = None


def odds(spec: Expression | Rolls, options: Mapping[str, Any] | None = None,
         limits: Limits = DEFAULT_LIMITS, text: str = "") -> Odds:
    """The exact odds of a parsed expression (explosion tails cut below 1e-15, and said so)."""
    global _exact
    if _exact is None:  # imported on the first odds (it imports numpy when a law needs it)
        from .exact import odds as _exact
    result: Odds = _exact(spec, limits, text or str(spec))
    return result


_exact: Any = None


SYSTEM = Game("dice", "General dice notation", parse, roll, odds, SWITCHES,
              examples=("d20+5", "2d20kh1+5", "4d6kh3", "d20+5 >= 15", "10d10>=8", "8d6r<3",
                        "4dF", "6x 4d6kh3"))
