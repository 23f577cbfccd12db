"""Dice as they landed: the ``Die`` and ``Roll`` records, and the ``Tray`` that fills them.

A ``Roll`` keeps every face in the order it was rolled; a die that was re-rolled keeps all its
faces (the last one stands); a die removed before rolling is kept with no faces and a note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._limits import DEFAULT_LIMITS, Limits
from .._records import Record, typed
from .._rng import Source

if TYPE_CHECKING:
    from .steps import Step

__all__ = ["ADDED", "JOINS", "STEP_SIZES", "TONES", "Die", "Roll", "Tray", "TrayHands",
           "step_up"]

STEP_SIZES = (4, 6, 8, 10, 12)

JOINS = {
    "rerolled": "each later face replaced the one before it; the last stands",
    "compounded": "the faces add up into the one die's value",
    "exploded": "each later face was rolled by an explosion and adds to the die's value",
    "penetrated": "each later face was rolled by a penetrating explosion and adds, less 1",
}
ADDED = {
    "exploded": "an explosion of the die before it added this die",
    "penetrated": "a penetrating explosion added this die (it counts one less)",
    "check": "rolled to check another die (it adds nothing)",
    "wild": "the Wild Die's explosion added this die",
    "bonus": "a rule added this die to the pool",
}
TONES = {"good": "helps the roller", "bad": "hurts the roller", "crit": "a critical",
         "fumble": "a fumble"}


def step_up(size: int, steps: int = 1) -> int:
    """A step die ``steps`` sizes larger (each step is +2 faces), capped at d12."""
    return min(12, size + 2 * steps)


class Die(Record):
    """One die: its size, every face it showed (the last stands), its group and what happened."""

    size: int
    faces: tuple[int, ...]
    group: str = ""
    note: str = ""
    kept: bool = True
    crit: bool = False  # the natural face is in the critical range (a d20's 20 by default)
    fumble: bool = False  # the natural face is in the fumble range (a d20's 1 by default)
    repeat: int = 0  # which roll of a repeated roll (`6x 4d6kh3`) it belongs to, from 1; else 0
    # The die's facts, decided by the rules that rolled it, so that no client reads note words:
    joined: str = ""  # how its later faces relate to the first (see ``JOINS``); "" for one face
    added: str = ""  # why it is an extra die (see ``ADDED``), "" for a die of the pool as asked
    scored: int | None = None  # what it counts in the result, where that is not its face
    label: str = ""  # the face's name where it is not its number ("Eye", "+", "blank")
    tone: str = ""  # how the face reads for the roller (see ``TONES``), "" for plain

    @property
    def face(self) -> int:
        """The face that stands (0 for a die that was never rolled)."""
        return self.faces[-1] if self.faces else 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"size": self.size, "face": self.face, "group": self.group}
        if len(self.faces) > 1:
            out["faces"] = list(self.faces)
        if self.note:
            out["note"] = self.note
        if not self.kept:
            out["kept"] = False
        if self.crit:
            out["crit"] = True
        if self.fumble:
            out["fumble"] = True
        if self.repeat:
            out["repeat"] = self.repeat
        for name in ("joined", "added", "label", "tone"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.scored is not None:
            out["scored"] = self.scored
        return out


@typed(compared=-2)
class Roll(Record):
    """What happened and what it means: the dice in rolling order, the verdict, the transcript.

    ``outcome`` is the verdict's category in the game's words (``"success"``, ``"botch"``...);
    ``result`` holds the verdict's values (Score, hits, margin...). ``steps`` are what the roller
    did, as typed records (``astragal.dice.steps``), for the games that record them; for those,
    ``transcript`` is the steps put into words by ``astragal.render``.
    """

    system: str
    input: str
    outcome: str
    result: dict[str, Any]
    dice: tuple[Die, ...]
    transcript: tuple[str, ...]
    spec: Any = None  # the parsed request (not compared)
    steps: tuple[Step, ...] = ()  # what the roller did (not compared: the transcript words it)

    def __repr__(self) -> str:
        return (f"Roll(system={self.system!r}, input={self.input!r}, outcome={self.outcome!r}, "
                f"result={self.result!r}, dice={self.dice!r}, transcript={self.transcript!r})")

    def to_json(self, with_steps: bool = True) -> dict[str, Any]:
        """The stable JSON form (see README: JSON output); ``steps`` only for a roll that has
        them (a field added after 0.1.0), and not ``with_steps=False`` (the web table's log:
        the steps follow from the faces, and older versions' verify-log compare every field)."""
        out = {
            "system": self.system,
            "input": self.input,
            "outcome": self.outcome,
            "result": self.result,
            "dice": [d.to_json() for d in self.dice],
            "transcript": list(self.transcript),
        }
        if self.steps and with_steps:
            from .steps import to_json

            out["steps"] = [to_json(s) for s in self.steps]
        return out

    def __str__(self) -> str:
        return "\n".join(self.transcript)

    def _repr_html_(self) -> str:
        from ..render import roll_html

        return roll_html(self)


class TrayHands:
    """The dice algebra's ``Hands`` on a ``Tray``: each new die is rolled into ``group`` from
    ``stream`` (with ``note``), a re-roll rolls the same die again (its new face stands) or, with
    ``each_face_a_die``, a new die of the group (an explosion chain shown die by die). ``ids``
    lists the dice rolled, ``last`` the last die a re-roll made."""

    def __init__(self, tray: Tray, group: str, stream: int = 0, note: str = "",
                 each_face_a_die: bool = False) -> None:
        self.tray, self.group, self.stream, self.note = tray, group, stream, note
        self.each_face_a_die = each_face_a_die
        self.ids: list[int] = []
        self.last = -1

    def new(self, size: int) -> int:
        die = self.tray.roll(size, self.group, self.stream, self.note)
        self.ids.append(die)
        return die

    def again(self, die: int, note: str) -> int:
        if self.each_face_a_die:
            self.last = self.tray.roll(self.tray.size(die), self.group, self.stream, note)
            return self.tray.face(self.last)
        self.last = die
        return self.tray.reroll(die, self.stream, note)

    def face(self, die: int) -> int:
        return self.tray.face(die)


class Tray:
    """A mutable helper used while rolling; ``freeze`` turns it into ``Die`` records."""

    def __init__(self, source: Source, limits: Limits = DEFAULT_LIMITS) -> None:
        self.source = source
        self.limits = limits
        self._dice: list[list[Any]] = []
        self.repeat = 0  # the roll of a repeated roll being rolled (0: not repeated)

    def roll(self, size: int, group: str, stream: int = 0, note: str = "") -> int:
        """Roll a new die; returns its index in the tray."""
        if len(self._dice) >= self.limits.max_dice * 4:
            self.limits.check_dice(len(self._dice) + 1)
        face = self.source.face(size, stream)
        self._dice.append([size, [face], group, note, True, False, False, self.repeat, None])
        return len(self._dice) - 1

    def reroll(self, index: int, stream: int = 0, note: str = "") -> int:
        """Roll an existing die again; its new face stands. Returns the new face."""
        die = self._dice[index]
        face = self.source.face(die[0], stream)
        die[1].append(face)
        if note:
            die[3] = note
        return face

    def __len__(self) -> int:
        """How many dice are on the tray so far."""
        return len(self._dice)

    def removed(self, size: int, group: str, note: str) -> None:
        """Record a die taken out before rolling."""
        self._dice.append([size, [], group, note, False, False, False, self.repeat, None])

    def face(self, index: int) -> int:
        return int(self._dice[index][1][-1])

    def size(self, index: int) -> int:
        """The size of a die on the tray."""
        return int(self._dice[index][0])

    def drop(self, index: int, note: str = "") -> None:
        self._dice[index][4] = False
        if note:
            self._dice[index][3] = note

    def mark(self, index: int, crit: bool = False, fumble: bool = False) -> None:
        """Mark a die's natural face as a critical or a fumble (it changes no value)."""
        self._dice[index][5] = crit
        self._dice[index][6] = fumble

    def facts(self, index: int, joined: str = "", added: str = "", scored: int | None = None,
              label: str = "", tone: str = "") -> None:
        """Record what the rules decided about a die (``Die.joined`` and the rest); facts not
        given keep what was recorded before."""
        if joined and joined not in JOINS or added and added not in ADDED or (
                tone and tone not in TONES):
            raise ValueError(f"unknown die fact: joined={joined!r} added={added!r} tone={tone!r}")
        had = self._dice[index][8] or ("", "", None, "", "")
        self._dice[index][8] = (joined or had[0], added or had[1],
                                had[2] if scored is None else scored, label or had[3],
                                tone or had[4])

    def freeze(self) -> tuple[Die, ...]:
        return tuple(Die(s, tuple(f), g, n, k, c, u, r, *(x or ("", "", None, "", "")))
                     for s, f, g, n, k, c, u, r, x in self._dice)
