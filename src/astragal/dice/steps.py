"""A roll's steps: what the roller did, in order, as small typed records shared by every game.

The roller of a game records its steps (``Roll.steps``) and says nothing in words; ``render/``
puts the steps into the text transcript (``Roll.transcript``), HTML and JSON. A step names dice by
their index in ``Roll.dice``, faces in the order they were rolled, and the rule (its ID in
RULES.md) that decided what the step says; a game's own facts (its pool's working, the switches
in play) ride in ``facts``, plain values only, so that every step has a JSON form (``to_json``).

- ``Begin``: the request as the game reads it (its canonical notation) and what kind of roll it is;
- ``Side``: a side about to roll: its name, the dice it rolls and the facts of its pool;
- ``Adjust``: a side's pool changed before it is rolled (a modifier, a floor of dice, pips made
  into dice) and the rule that changed it;
- ``Rolled``: a side's dice as they landed: each die's runs (its first face and the faces the
  ``again`` rule rolled after it; a second run when the ``reroll`` rule rolled it once more), what
  each die counts, its mark (``dramatic_failure``, ``wild_die``...) and the dice that were
  dropped (count nothing);
- ``Count``: a number read from dice or totals (successes, a running total) and its rule;
- ``Verdict``: an outcome, whose it is (a side, or ``""`` for the whole roll), the values it read
  and the rule (and switch setting) that decided it;
- ``Tie``: a tie, and what the rule (and switch) that settles ties made of it;
- ``Round``: roll ``n`` of a roll made several times (an extended action, a re-rolled tie);
- ``Lookup``: a table read: which table, the row and column read, the values it was read by and
  what its entry says;
- ``Pair``: a die of one side met a die of the other by rank (or a stand-in face when the other
  side had no die left), and what the pair scored;
- ``Check``: a rule read on the request or on the roll so far that decides whether (or how) the
  roll goes on (a task that needs no roll; a follow-up test that is not made);
- ``Changed``: dice whose value a rule changed after they landed (raised to a floor, cut to a
  cap), from what to what;
- ``Worked``: a number worked out from others (a sum, an expression with each part's value in
  place) and what it came to;
- ``Items``: a side whose pool is values that are not dice (a group's items), which of them
  count and what they come to.

They are ``Record``s (``astragal._records``): cheap to define, which a game's first roll pays for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._memo import by_identity
from .._records import Record

__all__ = [
    "Adjust",
    "Begin",
    "Changed",
    "Check",
    "Count",
    "Items",
    "Lookup",
    "Pair",
    "Rolled",
    "Round",
    "Side",
    "Step",
    "Tie",
    "Verdict",
    "Worked",
    "facts_of",
    "to_json",
]

Facts = tuple[tuple[str, Any], ...]


class Begin(Record):
    """The request as the game reads it (``text``, canonical) and its kind (``"extended"``)."""

    text: str
    kind: str = ""
    facts: Facts = ()


class Side(Record):
    """A side about to roll (``"pool"``, ``"actor"``, ``"opposition"``): how many dice, and the
    facts of its pool in the game's terms (its working, the re-roll rule, a chance die...)."""

    side: str
    dice: int
    facts: Facts = ()


class Adjust(Record):
    """A side's pool changed before it is rolled, by the rule ``rule``: ``what`` changed
    (``"modifier"``, ``"floor"``, ``"carry"``...) and the facts it changed by."""

    side: str
    what: str
    rule: str
    facts: Facts = ()


class Rolled(Record):
    """A side's dice as they landed. ``dice`` are indices into ``Roll.dice``; for each die,
    ``runs`` holds its faces in order (the first run: its first face and the faces the rule
    ``again`` rolled after it; a later run: the die rolled once more by the rule ``reroll``),
    ``values`` what it counts by the rule ``read`` and ``marks`` its mark (``""``: none; ``()``
    when no die has one); ``dropped`` the dice (indices into ``Roll.dice``) that count nothing,
    by the rule ``drop``."""

    side: str
    dice: tuple[int, ...]
    runs: tuple[tuple[tuple[int, ...], ...], ...]
    values: tuple[int, ...]
    marks: tuple[str, ...] = ()
    read: str = ""
    again: str = ""
    reroll: str = ""
    dropped: tuple[int, ...] = ()
    drop: str = ""


class Count(Record):
    """A number read (``what``: ``"successes"``, ``"total"``...) for a side, and its rule."""

    side: str
    what: str
    value: int
    rule: str


class Verdict(Record):
    """An outcome for ``side`` (``""``: the whole roll), the values the rule ``rule`` read, and
    the switch setting that decided it when one did (``"contested_tie=defender"``)."""

    side: str
    outcome: str
    values: tuple[int, ...]
    rule: str
    setting: str = ""


class Tie(Record):
    """A tie at ``values``; ``goes`` is what the rule (and switch) make of it: ``"again"`` (roll
    on), ``"lose"`` (the defender wins), ``"tie"`` (it stands)."""

    values: tuple[int, ...]
    goes: str
    rule: str
    setting: str = ""


class Round(Record):
    """Roll ``n`` (from 1) of a roll made several times."""

    n: int



def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def to_json(step: Step) -> dict[str, Any]:
    """A step as JSON: ``{"step": "rolled", "side": "pool", ...}``; ``facts`` become an object,
    empty fields are left out."""
    out: dict[str, Any] = {"step": type(step).__name__.lower()}
    fields: tuple[str, ...] = step._fields
    values: tuple[Any, ...] = tuple(step)
    for name, value in zip(fields, values):
        if name == "facts":
            if value:
                out["facts"] = {k: _plain(v) for k, v in value}
        elif value != "" and value != ():
            out[name] = _plain(value)
    return out


class Lookup(Record):
    """A table read by the rule ``rule``: ``table`` names it, ``row`` and ``column`` are the cell
    read in the game's terms (``""`` for a table read along one of them only), ``values`` the
    numbers it was read by (a highest face and how many dice show it, a total) and ``facts``
    what the entry says (``()``: the table has no entry there)."""

    table: str
    row: str
    column: str
    values: tuple[int, ...]
    rule: str
    facts: Facts = ()


class Pair(Record):
    """Two sides' dice met by rank (the highest with the highest...): die ``die`` of ``side``
    showing ``face`` met die ``other`` of ``against`` showing ``other_face`` (indices into
    ``Roll.dice``; ``other`` is -1 when ``against`` had no die left and the rule ``filler`` gave
    the stand-in face), and the pair scored ``value`` by the rule ``rule``."""

    side: str
    die: int
    face: int
    against: str
    other: int
    other_face: int
    value: int
    rule: str
    filler: str = ""


class Check(Record):
    """The rule ``rule`` read before (or between) the rolls, and whether it ``holds``: a task that
    succeeds without a roll, a follow-up test that a roll calls for or not; ``facts`` are what it
    read."""

    rule: str
    holds: bool
    facts: Facts = ()


class Changed(Record):
    """Dice of ``side`` whose value the rule ``rule`` changed after they landed (raised to a
    floor, cut to a cap): ``dice`` (indices into ``Roll.dice``) counted ``before`` and count
    ``after``; the ``Rolled`` step before it holds the values after."""

    side: str
    dice: tuple[int, ...]
    before: tuple[int, ...]
    after: tuple[int, ...]
    rule: str


class Worked(Record):
    """A number worked out for ``side`` (``""``: the whole roll): ``what`` it is (``"total"``,
    ``"item 2"``...), its ``working`` (the parts it was worked out from, each by its value, as
    written: ``7 + 3``, ``max(4, 2) * 2``), its ``value`` and the rule that worked it out
    (``""``: adding up)."""

    side: str
    what: str
    working: str
    value: float
    rule: str = ""


class Items(Record):
    """A side whose pool is values that are not dice (a group's items, each worked out in the
    steps before it): ``values`` in order, what they come to (``value``) by the rule ``rule``
    (``""``: adding up), each one's mark (``"success"``...; ``()`` when none has one) and the
    positions (from 0) of the values ``dropped`` by the rule ``drop`` (their dice count nothing)."""

    side: str
    values: tuple[float, ...]
    value: float
    rule: str = ""
    marks: tuple[str, ...] = ()
    dropped: tuple[int, ...] = ()
    drop: str = ""


Step = (Begin | Side | Adjust | Rolled | Count | Verdict | Tie | Round | Lookup | Pair | Check
        | Changed | Worked | Items)


_FACTS: dict[Any, tuple[Any, Mapping[str, Any]]] = {}


def facts_of(facts: tuple[tuple[str, Any], ...]) -> Mapping[str, Any]:
    """A step's facts as a mapping, remembered per facts (a roller that plans a request once
    gives the same ``Side`` step, its facts the same tuple, at every roll)."""
    return by_identity(_FACTS, id(facts), facts, lambda: dict(facts), 4096)
