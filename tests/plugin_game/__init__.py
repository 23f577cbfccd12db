"""A small example game in its own package, found through the ``astragal.systems`` entry points.

``coin: 3`` flips three coins and counts heads; ``coin: 3 vs 2`` compares heads. It is built the
way every game is: a rule registered under an ID, declared switches, and a program of the dice
algebra that the roller samples and the odds compute exactly. A third-party game ships the same
files and one line in its pyproject: ``[project.entry-points."astragal.systems"] coin =
"coin_game:SYSTEM"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from astragal import Limits, NotationError, Roll, Source
from astragal.dice import Tray
from astragal.dice.algebra import Chain, Pool
from astragal.dice.sampler import sample
from astragal.odds import Distribution, Odds
from astragal.odds import algebra as exact
from astragal.rulebook import rule
from astragal.switches import Switch
from astragal.systems import Game

SWITCHES = (Switch("heads_on", 2, "K1", "the face of a d2 that is heads", low=1, high=2),)


@dataclass(frozen=True)
class Flip:
    coins: int
    rival: int | None = None

    def __str__(self) -> str:
        return f"coin: {self.coins}" + (f" vs {self.rival}" if self.rival is not None else "")


@rule("coin", "K1", "a coin that lands heads scores one")
def heads(face: int, heads_on: int) -> int:
    return int(face == heads_on)


@dataclass(frozen=True)
class _Score:
    heads_on: int

    def __call__(self, position: int, face: int) -> int:
        return heads(face, self.heads_on)


def _never(position: int, face: int) -> bool:
    return False


def parse(text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Flip:
    words = text[start:].split()
    try:
        coins = int(words[0])
        rival = int(words[2]) if len(words) == 3 and words[1] == "vs" else None
        if len(words) not in (1, 3) or (len(words) == 3 and rival is None):
            raise ValueError
    except (ValueError, IndexError):
        raise NotationError("write 'coin: N' or 'coin: N vs M'", text, (start, len(text))) from None
    limits.check_dice(coins + (rival or 0), text)
    return Flip(coins, rival)


def _program(n: int, options: Mapping[str, Any]) -> Pool:
    return Pool(n, Chain(2, _never, _Score(options["heads_on"])))


def roll(spec: Flip, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    tray = Tray(source, limits)

    class Hands:
        def __init__(self, group: str, stream: int) -> None:
            self.group, self.stream = group, stream

        def new(self, size: int) -> int:
            return tray.roll(2, self.group, self.stream)

        def again(self, die: int, note: str) -> int:
            return tray.reroll(die, self.stream, note)

        def face(self, die: int) -> int:
            return tray.face(die)

    mine = sample(_program(spec.coins, options), Hands("actor", 0), limits).value
    if spec.rival is None:
        return Roll("coin", text, f"{mine} heads", {"heads": mine}, tray.freeze(),
                    (f"{mine} heads",), spec)
    theirs = sample(_program(spec.rival, options), Hands("rival", 1), limits).value
    outcome = "win" if mine > theirs else "lose" if mine < theirs else "tie"
    return Roll("coin", text, outcome, {"heads": mine, "rival": theirs}, tray.freeze(),
                (f"{mine} heads vs {theirs}: {outcome}",), spec)


def odds(spec: Flip, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    law = exact.law(_program(spec.coins, options), limits=limits, text=text)
    dist = Distribution.from_mapping(dict(enumerate(law.pmf)))
    return Odds("coin", text, Distribution.from_mapping({"flipped": 1.0}), dist, "heads")


SYSTEM = Game("coin", "Coin flips", parse, roll, odds, SWITCHES, aliases=("coins",))
