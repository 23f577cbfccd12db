"""astragal: roll the dice of your tabletop game by its rules, see why, and get the exact odds.

>>> import astragal
>>> r = astragal.roll("jc: d12 d8 vs 2d10", faces="7,2 / 3,4")
>>> r.outcome, r.result["margin"]
('success', 3)
>>> round(astragal.odds("jc: d12 vs d12").outcomes["tie"], 4)
0.0833
>>> astragal.roll("4d6kh3+2", faces="6,1,4,3").result["total"]
15
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._errors import (
    AstragalError,
    FacesError,
    InputError,
    LimitError,
    NotationError,
    OptionError,
)
from ._limits import DEFAULT_LIMITS, Limits
from ._records import Record
from ._rng import ScriptedSource, SeededSource, Source, SystemSource, make_source
from .dice import Die, Roll
from .notation import split_prefix
from .odds import Distribution
from .rulebook import Rule, rulebook
from .systems import Odds, get_system, resolve_options, system_names

__all__ = [
    "AstragalError",
    "Die",
    "Distribution",
    "FacesError",
    "InputError",
    "LimitError",
    "Limits",
    "NotationError",
    "Odds",
    "OptionError",
    "Parsed",
    "Roll",
    "Rule",
    "ScriptedSource",
    "SeededSource",
    "Source",
    "SystemSource",
    "odds",
    "parse",
    "roll",
    "rulebook",
    "system_names",
]

__version__ = "0.1.0"

DEFAULT_SYSTEM = "dice"  # text without a prefix is the general dice notation (4d6kh3+2)


class Parsed(Record):
    """What was asked: the system, the input text and the system's spec (prints canonically)."""

    system: str
    input: str
    spec: Any

    def __str__(self) -> str:
        return str(self.spec)


def _check_text(text: object, limits: Limits) -> str:
    if not isinstance(text, str):
        raise NotationError(f"the notation must be text, not {type(text).__name__}")
    limits.check_length(text)
    if not text.strip():
        raise NotationError("nothing to roll: the notation is empty", text, (0, 1))
    return text


_READ: dict[tuple[Any, ...], tuple[Any, Parsed, dict[str, Any], Limits]] = {}


def _parse(text: str, options: Mapping[str, Any] | None, limits: Limits,
           default_system: str | None) -> tuple[Any, Parsed, dict[str, Any]]:
    """The system, the request and its options; remembered for requests without options
    (parsed specs are immutable), so a repeated roll skips the reading."""
    if type(text) is not str or type(limits) is not Limits or not (
            default_system is None or type(default_system) is str):
        _check_arguments(text, limits, default_system)
    if options is None:  # keyed by the limits' identity: hashing a dataclass costs more
        hit = _READ.get((text, id(limits), default_system))
        if hit is not None and hit[3] is limits:
            return hit[0], hit[1], dict(hit[2])
    out = _read(text, options, limits, default_system)
    if options is None and type(text) is str:
        if len(_READ) > 2048:
            _READ.clear()
        _READ[text, id(limits), default_system] = out[0], out[1], dict(out[2]), limits
    return out


def _check_arguments(text: object, limits: object, default_system: object) -> None:
    """Refuse, by name, an argument of the wrong type (what a typed caller cannot pass)."""
    if not isinstance(text, str):
        raise NotationError(f"the notation must be text, not {type(text).__name__}")
    if not isinstance(limits, Limits):
        raise OptionError(f"limits must be astragal.Limits(...), not {type(limits).__name__}")
    if not (default_system is None or isinstance(default_system, str)):
        raise OptionError(f"default_system must be a system's name (text) or None, not "
                          f"{type(default_system).__name__}")


def _read(text: str, options: Mapping[str, Any] | None, limits: Limits,
          default_system: str | None) -> tuple[Any, Parsed, dict[str, Any]]:
    text = _check_text(text, limits)
    name, start, span = split_prefix(text)
    if name is None:  # no prefix: the room's system, else the general dice notation
        name = default_system or DEFAULT_SYSTEM
    system = get_system(name, text, span)
    opts = resolve_options(system, options)
    try:
        spec = system.parse(text, start, opts, limits)
    except NotationError as exc:
        first = text.split(maxsplit=1)[0].lower() if text.split() else ""
        if start == 0 and first in system_names_and_aliases():
            raise NotationError(f"{exc.message} (did you mean '{first}:' with a colon?)",
                                exc.text, exc.span) from None
        if start == 0 and system.name != DEFAULT_SYSTEM and _reads_as_dice(text, exc, limits):
            # a room's game took text that the general dice notation reads (4d6kh3 in a
            # Jadeclaw room): say how to roll it there
            raise NotationError(f"{exc.message} (to roll it in the general dice notation, "
                                "put 'dice:' before it)", exc.text, exc.span) from None
        raise
    return system, Parsed(system.name, text, spec), opts


def _reads_as_dice(text: str, exc: NotationError, limits: Limits) -> bool:
    """Whether ``text``, which a game could not read from its first word on (``exc``), is
    dice in the general notation as written: a die named (``7`` is a Level, ``3`` a die code,
    not a roll of a number) and read whole."""
    lead = len(text) - len(text.lstrip())
    if exc.span is None or exc.span[0] > lead or not re.search(r"\d*[dD](?:\d|%|[fF])", text):
        return False
    dice = get_system(DEFAULT_SYSTEM, text, (0, 0))
    try:
        dice.parse(text, 0, resolve_options(dice, None), limits)
    except InputError:
        return False
    return True


def system_names_and_aliases() -> set[str]:
    """Every prefix a system answers to."""
    return {n for name, aliases in system_names().items() for n in (name, *aliases)}


def parse(text: str, *, options: Mapping[str, Any] | None = None,
          limits: Limits = DEFAULT_LIMITS, default_system: str | None = None) -> Parsed:
    """Read notation into a ``Parsed`` request; ``str()`` of it is the canonical notation.

    >>> str(parse("jadeclaw: d12 & d6 +2b vs routine"))
    'jc: d12 d6 +2b vs routine'
    """
    return _parse(text, options, limits, default_system)[1]


def roll(text: str, *, seed: int | None = None,
         faces: str | Sequence[int] | Sequence[Sequence[int]] | None = None,
         source: Source | None = None, options: Mapping[str, Any] | None = None,
         limits: Limits = DEFAULT_LIMITS, default_system: str | None = None) -> Roll:
    """Roll by the game's rules: random (OS), seeded, or from scripted ``faces`` ("7,2 / 3,4").

    >>> roll("jc: d10 d4 vs 2d6", faces="7,2 / 3,4").outcome
    'success'
    """
    system, parsed, opts = _parse(text, options, limits, default_system)
    if source is not None and not isinstance(source, Source):
        raise OptionError(f"source must be an astragal Source (such as SeededSource(7)), not "
                          f"{type(source).__name__}")
    src = source if source is not None else make_source(seed, faces)
    result: Roll = system.roll(parsed.spec, src, opts, limits, text)
    src.finish()  # every system: typed-in faces left over are an error, not silently ignored
    return result


def odds(text: str, *, options: Mapping[str, Any] | None = None,
         limits: Limits = DEFAULT_LIMITS, default_system: str | None = None) -> Odds:
    """The exact odds of a roll: outcome categories and the distribution of its value.

    >>> round(odds("jc: d4 vs d4").outcomes["tie"], 4)
    0.25
    """
    system, parsed, opts = _parse(text, options, limits, default_system)
    result: Odds = system.odds(parsed.spec, opts, limits, text)
    return result
