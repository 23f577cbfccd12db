"""Chronicles of Darkness d10 dice pools (seed 001; RULES.md §2, rules C1–C14).

Reading order: data and switches → the rules as pure functions of faces (successes, re-rolls,
the chance die, rote actions, verdicts, contests) → rolling one side (a single procedure used by
the dice tray and by typed-in faces) → the notation → rolling → exact odds → the GM table.

The exact odds rest on one observation. Under the N-again rule a die's first face, and every
re-roll after it, is a failure (faces 1–7), a success that stops (8 up to N−1) or a success that
rolls again (N–10). So a die's successes have the generating function (a + b·z) / (1 − r·z); a
rote action keeps that shape (a failed first face is rolled once more). A pool of n dice is the
n-th power: a Binomial(n, b/(a+b)) count of final successes plus a NegativeBinomial(n, r) count
of re-rolled successes, whose convolution is computed term by term; only the negative binomial
has an infinite tail, and it is cut where the lost probability is far below 1e-15.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol

from .._errors import FacesError, LimitError, NotationError, OptionError
from .._limits import DEFAULT_LIMITS, Limits
from .._rng import Source
from ..dice import Die, Roll, Tray
from ..odds import Distribution
from . import Odds

__all__ = [
    "SYSTEM",
    "TABLES",
    "Action",
    "Prepared",
    "Rules",
    "Side",
    "SideLaw",
    "SideRoll",
    "Term",
    "contest",
    "die_law",
    "extended_result",
    "is_success",
    "odds",
    "parse",
    "pool_pmf",
    "pools_table",
    "prepare",
    "race",
    "read_faces",
    "rerolls",
    "roll",
    "roll_pool",
    "rote_rerolls",
    "rules_from",
    "run_successes",
    "side_law",
    "verdict",
]

# --------------------------------------------------------------------------------------------
# Data

FACES = 10                 # C1: ten-sided dice
SUCCESS_AT = 8             # C2, C13, C-A6: 8, 9 and 10 are successes
CHANCE_SUCCESS = 10        # C-X1: a chance die succeeds only on a 10
EXCEPTIONAL_AT = 5         # C4, C-X4 (switch exceptional_at)
WILLPOWER_DICE = 3         # C-X6: one Willpower point adds three dice
AGAIN_RULES: dict[str, int | None] = {"10": 10, "9": 9, "8": 8, "none": None}  # C5, C6
TAIL_BUDGET = 1e-15        # the most probability a cut tail may lose, over the whole answer
_DIE_EPS = 1e-18           # where one pool's re-roll tail is cut (well inside the budget)
MAX_TARGET_PER_DIE = 10    # a target beyond 10 × the dice limit is refused as absurd

SINGLE_OUTCOMES = ("dramatic_failure", "failure", "success", "exceptional_success")
CONTEST_OUTCOMES = ("win", "lose", "tie")
EXTENDED_OUTCOMES = ("success", "failure")
VERDICT_WORDS = {"dramatic_failure": "Dramatic Failure", "failure": "Failure",
                 "success": "Success", "exceptional_success": "Exceptional Success"}

DEFAULTS: dict[str, Any] = {
    "pool_below_one": "chance_die",            # C-A3, C-X1 | "auto_fail"
    "again_threshold": "10",                   # C5, C6: 10 | 9 | 8 | none (a side may say N-again)
    "rote": False,                             # C-X3 (a side may say rote)
    "exceptional_at": EXCEPTIONAL_AT,          # C4, C13
    "contested_tie": "continue_next_turn",     # C-A4, C-X7 | "defender" | "reroll" | "tie"
    "contest_uses_resistance": True,           # C-A5: 'resist' terms count in contests
    "dramatic_failure_on_chance_one": True,    # C-X1
    "chance_reroll": "as_chance_die",          # C-X1 (our reading) | "as_normal_die"
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "pool_below_one": ("chance_die", "auto_fail"),
    "again_threshold": tuple(AGAIN_RULES),
    "contested_tie": ("continue_next_turn", "defender", "reroll", "tie"),
    "chance_reroll": ("as_chance_die", "as_normal_die"),
}
_TRUE = ("true", "on", "yes", "1")
_FALSE = ("false", "off", "no", "0")


def again_key(value: object) -> str:
    """An again rule (``10``, ``"9-again"``, ``"none"``, ``None``) as a key of AGAIN_RULES."""
    if value is None:
        return "none"
    text = str(value).strip().lower()
    if text.endswith("again"):
        text = text.removesuffix("again").rstrip("-_ ")
    if text in ("no", "none", "off"):
        return "none"
    if text not in AGAIN_RULES:
        raise OptionError(f"the again rule is 10, 9, 8 or none, not '{value}'")
    return text


@dataclass(frozen=True, slots=True)
class Rules:
    """The house-rule switches in force for one request (RULES.md §6), checked and normalised."""

    pool_below_one: str = "chance_die"
    again: str = "10"
    rote: bool = False
    exceptional_at: int = EXCEPTIONAL_AT
    contested_tie: str = "continue_next_turn"
    contest_uses_resistance: bool = True
    dramatic_failure_on_chance_one: bool = True
    chance_reroll: str = "as_chance_die"


def _bool_option(key: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
        return value.lower() in _TRUE
    raise OptionError(f"option {key} takes true or false, not '{value}'")


def rules_from(options: Mapping[str, Any]) -> Rules:
    """The switches from an options mapping (defaults fill the gaps); bad values are errors."""
    merged = {**DEFAULTS, **{k.replace("-", "_"): v for k, v in options.items()}}
    unknown = sorted(set(merged) - set(DEFAULTS))
    if unknown:
        raise OptionError(f"'{unknown[0]}' is not a Chronicles of Darkness option; options are "
                          f"{', '.join(sorted(DEFAULTS))}")
    for key, choices in _CHOICES.items():
        if key == "again_threshold":
            merged[key] = again_key(merged[key])
        elif str(merged[key]).lower() not in choices:
            raise OptionError(f"option {key} takes one of {', '.join(choices)}, "
                              f"not '{merged[key]}'")
        else:
            merged[key] = str(merged[key]).lower()
    try:
        exceptional = int(merged["exceptional_at"])
    except (TypeError, ValueError):
        raise OptionError("option exceptional_at takes a whole number of successes, not "
                          f"'{merged['exceptional_at']}'") from None
    if not 1 <= exceptional <= 10_000:
        raise OptionError(f"option exceptional_at takes 1 to 10000 successes, not {exceptional}")
    return Rules(merged["pool_below_one"], merged["again_threshold"],
                 _bool_option("rote", merged["rote"]), exceptional, merged["contested_tie"],
                 _bool_option("contest_uses_resistance", merged["contest_uses_resistance"]),
                 _bool_option("dramatic_failure_on_chance_one",
                              merged["dramatic_failure_on_chance_one"]),
                 merged["chance_reroll"])


# --------------------------------------------------------------------------------------------
# The rules as pure functions of faces


def is_success(face: int, chance: bool = False) -> bool:
    """C2: a face of 8+ is a success; C-X1: on a chance die only a 10 is."""
    return face == CHANCE_SUCCESS if chance else face >= SUCCESS_AT


def rerolls(face: int, again: int | None, chance: bool = False) -> bool:
    """C5, C6: under N-again a face of N or more is rolled again; C-X1: a chance die's 10 is."""
    if again is None:
        return False
    return face == CHANCE_SUCCESS if chance else face >= again


def rote_rerolls(first: int, chance: bool = False, dramatic_on_one: bool = True) -> bool:
    """C-X3: a rote action re-rolls once a die whose first face failed, not a dramatic failure."""
    if chance:
        return first != CHANCE_SUCCESS and not (first == 1 and dramatic_on_one)
    return not is_success(first)


def _read_as_chance(position: int, chance: bool, chance_reroll: str) -> bool:
    """C-X1: a chance die's first face is read as a chance die; its re-rolls per the switch."""
    return chance and (position == 0 or chance_reroll == "as_chance_die")


def run_successes(run: Sequence[int], chance: bool = False,
                  chance_reroll: str = "as_chance_die") -> int:
    """C5, C7: the successes of one face and the re-rolls it set off (``10 → 10 → 8`` is 3)."""
    return sum(is_success(f, _read_as_chance(j, chance, chance_reroll)) for j, f in enumerate(run))


def verdict(successes: int, dramatic_failure: bool = False,
            exceptional_at: int = EXCEPTIONAL_AT) -> str:
    """C3, C4, C-X1: the outcome of one roll in the game's words (a snake_case key)."""
    if dramatic_failure:
        return "dramatic_failure"
    if successes <= 0:
        return "failure"
    return "exceptional_success" if successes >= exceptional_at else "success"


def contest(actor: int, opposition: int) -> str:
    """C10: in a single-roll contest more successes wins (the actor's ``win``/``lose``/``tie``)."""
    return "win" if actor > opposition else "lose" if actor < opposition else "tie"


def extended_result(actor_total: int, opposition_total: int | None, target: int) -> str | None:
    """C11, C-A4: after a roll of an extended action or contest, who has reached the target.

    None while nobody has. When both sides reach it on the same roll, the larger total wins and
    equal totals are a ``tie`` for the contested_tie switch to settle.
    """
    if opposition_total is None:
        return "success" if actor_total >= target else None
    a, b = actor_total >= target, opposition_total >= target
    if not (a or b):
        return None
    if a and b:
        return contest(actor_total, opposition_total)
    return "win" if a else "lose"


# --------------------------------------------------------------------------------------------
# Rolling one side: one procedure for the dice tray and for typed-in faces


class Hands(Protocol):
    """Where a side's faces come from: new dice, and re-rolls of a die already on the table."""

    def new(self) -> int: ...

    def again(self, die: int, note: str) -> int: ...

    def face(self, die: int) -> int: ...


@dataclass(frozen=True, slots=True)
class SideRoll:
    """One side's dice as they landed: for each die its runs (a face and the re-rolls it set off).

    A die has one run, or two under a rote action (the failed first run, then the re-roll's).
    """

    dice: tuple[tuple[tuple[int, ...], ...], ...]
    chance: bool
    successes: int
    dramatic_failure: bool

    def standing(self) -> tuple[tuple[int, ...], ...]:
        """The run that stands for each die (the rote re-roll replaces a failed first face)."""
        return tuple(runs[-1] for runs in self.dice)


def _run(hands: Hands, die: int, first: int, again: int | None, chance: bool, rules: Rules,
         limits: Limits) -> tuple[int, ...]:
    faces = [first]
    while rerolls(faces[-1], again, _read_as_chance(len(faces) - 1, chance, rules.chance_reroll)):
        if len(faces) > limits.max_explosions:
            raise LimitError(f"a die was rolled again more than {limits.max_explosions} times "
                             "(the limit of re-rolls per die)")
        label = "chance die" if chance else f"{again}-again"
        faces.append(hands.again(die, f"{label} re-roll"))
    return tuple(faces)


def roll_pool(hands: Hands, dice: int, chance: bool, again: int | None, rote: bool,
              rules: Rules, limits: Limits) -> SideRoll:
    """Roll a side's pool by the rules: C5–C7, C-X1, C-X3, in the C7a order.

    C7a: the pool's first faces left to right, then each die's re-rolls as they happen, die by
    die (its N-again run, then a rote re-roll and that re-roll's run).
    """
    ids = [hands.new() for _ in range(dice)]
    out: list[tuple[tuple[int, ...], ...]] = []
    for i in ids:
        first = hands.face(i)
        runs = [_run(hands, i, first, again, chance, rules, limits)]
        if rote and rote_rerolls(first, chance, rules.dramatic_failure_on_chance_one):
            runs.append(_run(hands, i, hands.again(i, "rote re-roll"), again, chance, rules,
                             limits))
        out.append(tuple(runs))
    standing = [runs[-1] for runs in out]
    successes = sum(run_successes(r, chance, rules.chance_reroll) for r in standing)
    # C-X1: a 1 on the chance die that stands is a dramatic failure
    dramatic = (chance and rules.dramatic_failure_on_chance_one and bool(standing)
                and standing[0][0] == 1)
    return SideRoll(tuple(out), chance, successes, dramatic)


class _TrayHands:
    def __init__(self, tray: Tray, group: str, stream: int) -> None:
        self.tray, self.group, self.stream = tray, group, stream

    def new(self) -> int:
        return self.tray.roll(FACES, self.group, self.stream)

    def again(self, die: int, note: str) -> int:
        return self.tray.reroll(die, self.stream, note)

    def face(self, die: int) -> int:
        return self.tray.face(die)


class FaceList:
    """Typed-in faces for one side, handed out in rolling order (C7a)."""

    def __init__(self, faces: Sequence[int]) -> None:
        self.faces = list(faces)
        self.used = 0
        self.shown: list[int] = []

    def _next(self) -> int:
        if self.used >= len(self.faces):
            raise FacesError(f"more faces are needed: only {len(self.faces)} were given")
        face = self.faces[self.used]
        if not 1 <= face <= FACES:
            raise FacesError(f"face {face} cannot show on a d10")
        self.used += 1
        return face

    def new(self) -> int:
        self.shown.append(self._next())
        return len(self.shown) - 1

    def again(self, die: int, note: str) -> int:
        self.shown[die] = self._next()
        return self.shown[die]

    def face(self, die: int) -> int:
        return self.shown[die]


def read_faces(faces: Sequence[int], dice: int, again: int | None = 10, rote: bool = False,
               chance: bool = False, rules: Rules | None = None,
               limits: Limits = DEFAULT_LIMITS) -> SideRoll:
    """The rules applied to faces typed in rolling order (C7a); every face must be used.

    >>> read_faces([10, 10, 8], 1).successes
    3
    """
    hands = FaceList(faces)
    result = roll_pool(hands, dice, chance, again, rote, rules or Rules(), limits)
    if hands.used != len(hands.faces):
        raise FacesError(f"{len(hands.faces)} faces were given but only {hands.used} were rolled")
    return result


# --------------------------------------------------------------------------------------------
# The notation


@dataclass(frozen=True, slots=True)
class Term:
    """One number of a pool: a trait's rating or a plain modifier, added or subtracted (C1, C8)."""

    value: int
    name: str = ""
    sign: int = 1
    resist: bool = False  # C8, C-A5: a resisting trait, written 'resist Composure 2'

    def body(self) -> str:
        """``Wits 3`` or ``3``."""
        return f"{self.name} {self.value}" if self.name else str(self.value)


@dataclass(frozen=True, slots=True)
class Side:
    """One side's pool as written: its terms and the permutations it rolls with."""

    terms: tuple[Term, ...] = ()
    again: str | None = None     # None: the again_threshold switch decides (10-again by default)
    rote: bool = False
    willpower: bool = False
    chance: bool = False         # written 'chance': a chance die whatever the switches say

    def __str__(self) -> str:
        parts: list[str] = ["chance"] if self.chance else []
        for i, t in enumerate(self.terms):
            if t.resist:
                parts.append(f"resist {t.body()}")
            elif i == 0 and not parts:
                parts.append(("-" if t.sign < 0 else "") + t.body())
            else:
                parts.append(f"{'-' if t.sign < 0 else '+'} {t.body()}")
        if self.again is not None:
            parts.append("no-again" if self.again == "none" else f"{self.again}-again")
        if self.rote:
            parts.append("rote")
        if self.willpower:
            parts.append("willpower")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Action:
    """An instant, contested or extended action (C3, C9–C11): a pool, maybe a rival and a target."""

    actor: Side
    opposition: Side | None = None
    target: int | None = None        # C11: an extended action or contest to this many successes
    max_rolls: int | None = None     # an extended action's limit of rolls ('rolls N')
    options: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        text = f"cofd: {self.actor}"
        if self.target is not None:
            text += f" target {self.target}"
        if self.max_rolls is not None:
            text += f" rolls {self.max_rolls}"
        if self.opposition is not None:
            text += f" vs {self.opposition}"
        return text + "".join(f" {k}={_opt_text(v)}" for k, v in self.options)


def _opt_text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


_LEX = re.compile(r"""\s*(?:
      (?P<dice>\d*d\d+)(?![\w-])
    | (?P<again>(?:\d+|no)-?again)(?![\w-])
    | (?P<option>[A-Za-z_][\w-]*=[^\s]*)
    | (?P<number>\d+)
    | (?P<op>[+\-\u2212\u2013])
    | (?P<word>[A-Za-z][A-Za-z_'\u2019]*(?:-[A-Za-z][A-Za-z_'\u2019]*)*)
    | (?P<other>\S)
    )""", re.VERBOSE)

_KEYWORDS = {"vs": "vs", "versus": "vs", "v": "vs", "target": "target", "rolls": "rolls",
             "rote": "rote", "willpower": "willpower", "wp": "willpower", "chance": "chance",
             "resist": "resist", "resisted": "resist"}
_MAX_DIGITS = 6


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str
    text: str
    start: int
    end: int

    @property
    def key(self) -> str:
        return _KEYWORDS.get(self.text.lower(), "") if self.kind == "word" else ""


def _lex(text: str, start: int) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = start
    while pos < len(text):
        m = _LEX.match(text, pos)
        if m is None or m.end() == pos:
            break
        kind = m.lastgroup or "other"
        toks.append(_Tok(kind, m.group(kind), m.start(kind), m.end(kind)))
        pos = m.end()
    return toks


class _Reader:
    def __init__(self, text: str, toks: list[_Tok], limits: Limits) -> None:
        self.text, self.toks, self.i, self.limits = text, toks, 0, limits

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def error(self, message: str, tok: _Tok) -> NotationError:
        return NotationError(message, self.text, (tok.start, tok.end))

    def at_end(self, message: str) -> NotationError:
        n = len(self.text.rstrip())
        return NotationError(message, self.text, (n, n + 1))

    def number(self, what: str) -> tuple[int, _Tok]:
        tok = self.peek()
        if tok is None:
            raise self.at_end(f"{what}: expected a number here")
        if tok.kind != "number":
            raise self.error(f"{what}: expected a number, not '{tok.text}'", tok)
        self.i += 1
        if len(tok.text) > _MAX_DIGITS:
            raise LimitError(f"{tok.text} is beyond any dice pool (the limit is "
                             f"{self.limits.max_dice} dice)", self.text, (tok.start, tok.end))
        return int(tok.text), tok


_SIDE_HINT = ("expected a number, a trait with its rating such as 'Wits 3', + or -, "
              "or one of 9-again, 8-again, no-again, rote, willpower, chance, resist, vs, target")


def _read_term(r: _Reader, sign: int, resist: bool, lead: _Tok) -> Term:
    words: list[str] = []
    while (tok := r.peek()) is not None and tok.kind == "word" and not tok.key:
        words.append(tok.text)
        r.i += 1
    if words and ((tok := r.peek()) is None or tok.kind != "number"):
        bad = r.toks[r.i - 1]
        raise r.error(f"'{' '.join(words)}' needs a rating after it (such as "
                      f"'{words[0].capitalize()} 3'): {_SIDE_HINT}", bad)
    what = "after 'resist'" if resist else f"after '{lead.text}'" if lead.kind == "op" else "a term"
    value, _ = r.number(what)
    name = " ".join(w[:1].upper() + w[1:].lower() for w in words)
    return Term(value, name, sign, resist)


def _read_side(r: _Reader, who: str, base: Side | None = None) -> tuple[Side, _Tok | None]:
    """One side's pool; with ``base``, only more permutations for a pool already read."""
    terms: list[Term] = list(base.terms) if base else []
    again = base.again if base else None
    rote, willpower, chance = (base.rote, base.willpower, base.chance) if base else (False,) * 3
    first = r.peek()
    while (tok := r.peek()) is not None:
        if tok.key in ("vs", "target", "rolls") or tok.kind == "option":
            break
        if base is not None and not (tok.kind == "again" or tok.key in ("rote", "willpower")):
            raise r.error(f"'{tok.text}' is not understood here: a pool's numbers come before "
                          "'target N' and 'vs'", tok)
        if tok.kind == "again":
            r.i += 1
            n = tok.text.lower().removesuffix("again").rstrip("-")
            if n not in AGAIN_RULES and n != "no":
                raise r.error(f"{tok.text} is not an again rule: use 10-again, 9-again, 8-again "
                              "or no-again (C5, C6)", tok)
            if again is not None:
                raise r.error(f"the {who} pool's again rule is given twice", tok)
            again = "none" if n == "no" else n
        elif tok.key == "rote":
            r.i += 1
            if rote:
                raise r.error("'rote' is given twice", tok)
            rote = True
        elif tok.key == "willpower":
            r.i += 1
            if willpower:
                raise r.error("Willpower can be spent once per roll (C-X6)", tok)
            willpower = True
        elif tok.key == "chance":
            r.i += 1
            if chance:
                raise r.error("'chance' is given twice", tok)
            chance = True
        elif tok.key == "resist":
            r.i += 1
            if (nxt := r.peek()) is not None and nxt.text.lower() == "by":
                r.i += 1
            terms.append(_read_term(r, -1, True, tok))
        elif tok.kind == "op":
            r.i += 1
            if (nxt := r.peek()) is not None and nxt.key == "resist":
                raise r.error("write 'resist Composure 2' without a sign", nxt)
            terms.append(_read_term(r, -1 if tok.text != "+" else 1, False, tok))
        elif tok.kind in ("number", "word") and not tok.key:
            if any(not t.resist for t in terms):
                raise r.error(f"'{tok.text}': put + or - between the numbers of a pool", tok)
            terms.append(_read_term(r, 1, False, tok))
        elif tok.kind == "dice":
            raise r.error(f"'{tok.text}': a Chronicles of Darkness pool is a number of d10s; "
                          "write 'cofd: 5', not '5d10'", tok)
        else:
            raise r.error(f"'{tok.text}' is not understood in the {who} pool: {_SIDE_HINT}", tok)
    if chance and (terms or willpower):
        where = first if first is not None else r.toks[-1]
        raise r.error("a chance die is rolled alone: leave out the other dice and Willpower",
                      where)
    if not terms and not chance:
        msg = (f"the {who} pool is empty: expected dice such as '5', 'Wits 3 + Composure 2' or "
               "'chance'")
        tok = r.peek()
        raise r.error(msg, tok) if tok is not None else r.at_end(msg)
    return Side(tuple(terms), again, rote, willpower, chance), first


def _read_option(r: _Reader, tok: _Tok, opts: dict[str, Any]) -> None:
    key, _, value = tok.text.partition("=")
    key = key.lower().replace("-", "_")
    if key not in DEFAULTS:
        raise r.error(f"'{key}' is not a Chronicles of Darkness option; options are "
                      f"{', '.join(sorted(DEFAULTS))}", tok)
    if key in opts:
        raise r.error(f"the option {key} is given twice", tok)
    try:
        rules_from({key: value})
    except OptionError as exc:
        raise r.error(exc.message, tok) from None
    if isinstance(DEFAULTS[key], bool):
        opts[key] = value.lower() in _TRUE
    elif key == "exceptional_at":
        opts[key] = int(value)
    elif key == "again_threshold":
        opts[key] = again_key(value)
    else:
        opts[key] = value.lower()


def parse(text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Action:
    """Read Chronicles of Darkness notation (after the ``cofd:`` prefix).

    >>> print(parse("cofd: manipulation 3+subterfuge 2 -2 9-again", 5, {}, Limits()))
    cofd: Manipulation 3 + Subterfuge 2 - 2 9-again
    """
    r = _Reader(text, _lex(text, start), limits)
    if r.peek() is None:
        raise r.at_end("nothing to roll: expected a pool such as 'cofd: 5' or 'cofd: 3 + 2 vs 4'")
    opts: dict[str, Any] = {}
    actor, actor_tok = _read_side(r, "actor")
    opposition: Side | None = None
    opp_tok: _Tok | None = None
    target = max_rolls = None
    target_tok = rolls_tok = None
    while (tok := r.peek()) is not None:
        if tok.key == "vs":
            r.i += 1
            if opposition is not None:
                raise r.error("only one 'vs' is allowed", tok)
            opposition, opp_tok = _read_side(r, "opposing")
        elif tok.key in ("target", "rolls"):
            r.i += 1
            n, ntok = r.number(f"'{tok.text}'")
            if n < 1:
                raise r.error(f"'{tok.text}' needs at least 1", ntok)
            if tok.key == "target":
                if target is not None:
                    raise r.error("the target is given twice", tok)
                target, target_tok = n, ntok
            else:
                if max_rolls is not None:
                    raise r.error("the number of rolls is given twice", tok)
                max_rolls, rolls_tok = n, ntok
        elif tok.kind == "option":
            r.i += 1
            _read_option(r, tok, opts)
        elif tok.kind == "again" or tok.key in ("rote", "willpower"):
            # a permutation written after 'target N' still belongs to the side being read
            if opposition is not None:
                opposition, _ = _read_side(r, "opposing", opposition)
            else:
                actor, _ = _read_side(r, "actor", actor)
        else:
            raise r.error(f"'{tok.text}' is not understood here: a pool's numbers come before "
                          "'target N' and 'vs'", tok)
    if target is not None and target > MAX_TARGET_PER_DIE * limits.max_dice:
        assert target_tok is not None
        raise LimitError(f"a target of {target} successes is beyond the limit of "
                         f"{MAX_TARGET_PER_DIE * limits.max_dice}", text,
                         (target_tok.start, target_tok.end))
    if max_rolls is not None:
        assert rolls_tok is not None
        if target is None:
            raise r.error("'rolls N' limits an extended action: give a 'target' too", rolls_tok)
        if opposition is not None:
            raise r.error("'rolls N' limits an extended action; an extended contest runs until "
                          "someone reaches the target", rolls_tok)
        if max_rolls > limits.max_rolls:
            raise LimitError(f"{max_rolls} rolls is more than the limit of {limits.max_rolls}",
                             text, (rolls_tok.start, rolls_tok.end))
    spec = Action(actor, opposition, target, max_rolls, tuple(sorted(opts.items())))
    rules = rules_from({**options, **opts})
    for side, tok in ((actor, actor_tok), (opposition, opp_tok)):
        if side is not None:
            prep = prepare(side, rules, contested=opposition is not None)
            span = (tok.start, tok.end) if tok is not None else (start, len(text))
            limits.check_dice(prep.dice, text, span)
    return spec


# --------------------------------------------------------------------------------------------
# Preparing a pool (shared by rolling and odds)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A side's pool after C1, C8, C12, C-X1, C-X6: what is rolled and with which rules."""

    pool: int                 # the sum as written (may be 0 or less)
    dice: int                 # dice rolled: the pool, 1 for a chance die, 0 for an automatic fail
    chance: bool
    again: int | None
    again_key: str
    rote: bool
    working: str              # 'Manipulation 3 + Subterfuge 2 - Composure 2 = 3'


def prepare(side: Side, rules: Rules, contested: bool = False) -> Prepared:
    """C1, C8, C12: add the terms (and Willpower's dice, C-X6); below 1 → a chance die (C-X1)."""
    key = side.again if side.again is not None else rules.again
    again = AGAIN_RULES[key]
    rote = side.rote or rules.rote
    if side.chance:
        return Prepared(0, 1, True, again, key, rote, "a chance die")
    # C-A5: in a contest the resisting traits count only if the switch says so
    used = [t for t in side.terms
            if not (t.resist and contested and not rules.contest_uses_resistance)]
    pool = sum(t.sign * t.value for t in used) + (WILLPOWER_DICE if side.willpower else 0)
    shown: list[str] = []
    for t in used:
        if t.resist:
            shown.append(f"- {t.body()} (resists)")
        else:
            shown.append(("- " if t.sign < 0 else "+ " if shown else "") + t.body())
    if side.willpower:
        shown.append(f"+ {WILLPOWER_DICE} (Willpower)")
    working = " ".join(shown) if shown else "0"
    if len(used) > 1 or side.willpower or (used and used[0].sign < 0):
        working += f" = {pool}"
    if pool >= 1:
        return Prepared(pool, pool, False, again, key, rote, working)
    if rules.pool_below_one == "chance_die":
        return Prepared(pool, 1, True, again, key, rote, working)
    return Prepared(pool, 0, False, again, key, rote, working)


# --------------------------------------------------------------------------------------------
# Rolling


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 'es' if word.endswith('s') else 's'}"


def _describe(side: SideRoll, prep: Prepared, rules: Rules) -> list[str]:
    lines: list[str] = []
    for k, runs in enumerate(side.dice, 1):
        label = "chance die" if side.chance else f"die {k}"
        parts = []
        for j, run in enumerate(runs):
            chain = " → ".join(str(f) for f in run)
            parts.append(chain if j == 0 else f"rote re-roll: {chain}")
        got = run_successes(runs[-1], side.chance, rules.chance_reroll)
        mark = _plural(got, "success") if got else "no success"
        if side.dramatic_failure:
            mark = "a 1 on the chance die: dramatic failure"
        lines.append(f"  {label}: {', '.join(parts)} ({mark})")
    return lines


def _side_header(prep: Prepared, name: str) -> str:
    rules_text = "no-again" if prep.again is None else f"{prep.again}-again"
    extra = ", rote action" if prep.rote else ""
    if prep.chance and prep.working == "a chance die":
        return f"{name}: a chance die ({rules_text}{extra})"
    if prep.chance:
        return (f"{name}: {prep.working}: below 1, so a chance die — only a 10 succeeds "
                f"(C-X1; {rules_text}{extra})")
    if prep.dice == 0:
        return f"{name}: {prep.working}: below 1, no roll (pool_below_one=auto_fail)"
    dice = f"{prep.dice} {'die' if prep.dice == 1 else 'dice'}"
    if prep.working != str(prep.pool):
        dice = f"{prep.working} → {dice}"
    return f"{name}: {dice} ({rules_text}{extra})"


def _side_json(side: SideRoll, prep: Prepared, rules: Rules) -> dict[str, Any]:
    return {"pool": prep.pool, "dice": prep.dice, "chance_die": prep.chance,
            "again": prep.again_key, "rote": prep.rote, "successes": side.successes,
            "exceptional": side.successes >= rules.exceptional_at,
            "dramatic_failure": side.dramatic_failure,
            "outcome": verdict(side.successes, side.dramatic_failure, rules.exceptional_at),
            "runs": [[list(run) for run in runs] for runs in side.dice]}


def _roll_side(tray: Tray, prep: Prepared, group: str, stream: int, rules: Rules,
               limits: Limits) -> SideRoll:
    return roll_pool(_TrayHands(tray, group, stream), prep.dice, prep.chance, prep.again,
                     prep.rote, rules, limits)


def _verdict_line(side: SideRoll, rules: Rules) -> str:
    v = verdict(side.successes, side.dramatic_failure, rules.exceptional_at)
    return f"{_plural(side.successes, 'success')}: {VERDICT_WORDS[v]}"


def effective_rules(spec: Action, options: Mapping[str, Any]) -> Rules:
    """The switches for a spec: defaults, then the caller's options, then the notation's."""
    return rules_from({**options, **dict(spec.options)})


def roll(spec: Action, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a spec with faces from ``source``; the verdict comes from the rule functions.

    >>> from astragal import ScriptedSource
    >>> roll(parse("cofd: 1", 5, {}, Limits()), ScriptedSource([[10, 10, 8]]), {}, Limits(),
    ...      "cofd: 1").result["successes"]
    3
    """
    rules = effective_rules(spec, options)
    contested = spec.opposition is not None
    actor = prepare(spec.actor, rules, contested)
    opp = prepare(spec.opposition, rules, True) if spec.opposition is not None else None
    if spec.target is not None:
        return _roll_extended(spec, actor, opp, source, rules, limits, text)
    lines = [f"Chronicles of Darkness: {str(spec)[6:]}"]
    tray = Tray(source, limits)
    if opp is None:
        lines.append(_side_header(actor, "Pool"))
        side = _roll_side(tray, actor, "pool", 0, rules, limits)
        source.finish()
        lines += _describe(side, actor, rules)
        lines.append(_verdict_line(side, rules))
        outcome = verdict(side.successes, side.dramatic_failure, rules.exceptional_at)
        return Roll("cofd", text, outcome, _side_json(side, actor, rules), tray.freeze(),
                    tuple(lines), spec)
    earlier: list[list[int]] = []
    dice: list[Die] = []
    while True:
        lines.append(_side_header(actor, "Actor"))
        a = _roll_side(tray, actor, "actor", 0, rules, limits)
        lines += _describe(a, actor, rules)
        lines.append(f"  {_verdict_line(a, rules)}")
        lines.append(_side_header(opp, "Opposition"))
        b = _roll_side(tray, opp, "opposition", 1, rules, limits)
        lines += _describe(b, opp, rules)
        lines.append(f"  {_verdict_line(b, rules)}")
        outcome = contest(a.successes, b.successes)
        if outcome != "tie" or rules.contested_tie != "reroll":
            break
        earlier.append([a.successes, b.successes])
        lines.append(f"{a.successes} vs {b.successes}: a tie — both roll again "
                     "(contested_tie=reroll)")
        if len(earlier) >= limits.max_rolls:
            raise LimitError(f"the contest is still tied after {len(earlier)} rolls (the limit "
                             "of rolls per request)", text, (0, len(text)))
        dice.extend(tray.freeze())
        tray = Tray(source, limits)
    source.finish()
    dice.extend(tray.freeze())
    outcome, line = _settle(a.successes, b.successes, outcome, rules)
    lines.append(line)
    result = {"actor": _side_json(a, actor, rules), "opposition": _side_json(b, opp, rules),
              "margin": a.successes - b.successes,
              "winner": {"win": "actor", "lose": "opposition"}.get(outcome),
              "tie_rule": rules.contested_tie, "rolls": len(earlier) + 1}
    if earlier:
        result["tied_rolls"] = earlier
    return Roll("cofd", text, outcome, result, tuple(dice), tuple(lines), spec)


def _settle(a: int, b: int, outcome: str, rules: Rules) -> tuple[str, str]:
    """C10, C-A4, C-X7: the contest's outcome after the tie switch, and its line."""
    head = f"{a} vs {b}: "
    if outcome == "win":
        return outcome, head + "the actor has more successes and wins (C10)"
    if outcome == "lose":
        return outcome, head + "the opposition has more successes and wins (C10)"
    if rules.contested_tie == "defender":
        return "lose", head + "a tie goes to the defender (contested_tie=defender)"
    if rules.contested_tie == "continue_next_turn":
        return "tie", head + "no winner this turn; the contest continues next turn " \
                             "(contested_tie=continue_next_turn)"
    return "tie", head + "a tie (contested_tie=tie)"


def _roll_extended(spec: Action, actor: Prepared, opp: Prepared | None, source: Source,
                   rules: Rules, limits: Limits, text: str) -> Roll:
    target = spec.target or 0
    kind = "Extended contest" if opp is not None else "Extended action"
    lines = [f"Chronicles of Darkness: {str(spec)[6:]}",
             f"{kind}: accumulate successes to {target} (C11)"]
    lines.append("  " + _side_header(actor, "Actor" if opp else "Pool"))
    if opp is not None:
        lines.append("  " + _side_header(opp, "Opposition"))
    cap = spec.max_rolls or limits.max_rolls
    totals = [0, 0]
    per_roll: list[list[int]] = [[], []]
    dice: list[Die] = []
    outcome: str | None = None
    tie_break = False
    n = 0
    while outcome is None:
        if n >= cap:
            if spec.max_rolls is not None:
                outcome = "failure"
                lines.append(f"{target} successes not reached in {cap} rolls: Failure")
                break
            raise LimitError(f"nobody has reached {target} successes after {n} rolls (the limit "
                             "of rolls per request)", text, (0, len(text)))
        n += 1
        tray = Tray(source, limits)
        sides = [(actor, "actor", 0)] + ([(opp, "opposition", 1)] if opp is not None else [])
        parts = []
        for j, (prep, name, stream) in enumerate(sides):
            side = _roll_side(tray, prep, f"{name} roll {n}", stream, rules, limits)
            totals[j] += side.successes
            per_roll[j].append(side.successes)
            faces = "; ".join(", rote ".join(" → ".join(str(f) for f in run) for run in runs)
                              for runs in side.dice) or "no dice"
            df = ", dramatic failure" if side.dramatic_failure else ""
            parts.append(f"{name} {faces} = {side.successes}{df} (total {totals[j]})")
        dice.extend(tray.freeze())
        lines.append(f"Roll {n}: " + "; ".join(parts))
        if opp is None:
            outcome = extended_result(totals[0], None, target)
            if outcome is not None:
                lines.append(f"{target} successes reached after {_plural(n, 'roll')}: Success")
            continue
        if tie_break:
            outcome = contest(totals[0], totals[1])
            if outcome == "tie":
                lines.append("  still level: another roll")
                outcome = None
            continue
        outcome = extended_result(totals[0], totals[1], target)
        if outcome == "tie":
            if rules.contested_tie in ("reroll", "continue_next_turn"):
                lines.append(f"  both reach {target} with {totals[0]}: the contest goes on "
                             f"until one side leads (contested_tie={rules.contested_tie})")
                tie_break, outcome = True, None
            elif rules.contested_tie == "defender":
                outcome = "lose"
                lines.append(f"  both reach {target} with {totals[0]}: the defender wins "
                             "(contested_tie=defender)")
    source.finish()
    if opp is not None and outcome is not None:
        who = {"win": "The actor", "lose": "The opposition"}.get(outcome)
        if who is not None:
            lines.append(f"{who} reaches {target} first, after {_plural(n, 'roll')}: "
                         f"{'the actor wins' if outcome == 'win' else 'the opposition wins'}")
        else:
            lines.append(f"Both reach {target} with {totals[0]} after {_plural(n, 'roll')}: "
                         "a tie (contested_tie=tie)")
    result: dict[str, Any] = {"target": target, "rolls": n, "actor_successes": per_roll[0],
                              "actor_total": totals[0]}
    if opp is not None:
        result.update({"opposition_successes": per_roll[1], "opposition_total": totals[1],
                       "winner": {"win": "actor", "lose": "opposition"}.get(outcome or "")})
    return Roll("cofd", text, outcome or "failure", result, tuple(dice), tuple(lines), spec)


# --------------------------------------------------------------------------------------------
# Exact odds


def die_law(again: int | None, rote: bool = False) -> tuple[Fraction, Fraction, Fraction]:
    """(a, b, r): one die's successes have the generating function (a + b·z) / (1 − r·z).

    Each face is a failure (C2: 1–7, a), a success that stops (8 to N−1, b) or a success that is
    rolled again (C5, C6: N–10, r), so a die with k successes is k−1 or k re-rolls then a stop.
    C-X3: a rote die is f·G + (G − f) = (1 + f)·G − f, which keeps the shape.
    """
    fail = Fraction(SUCCESS_AT - 1, FACES)
    again_p = Fraction(0 if again is None else FACES + 1 - again, FACES)
    stop = Fraction(FACES - SUCCESS_AT + 1, FACES) - again_p
    if not rote:
        return fail, stop, again_p
    return fail * fail, stop * (1 + fail) + fail * again_p, again_p


def _unimodal(size: int | None, log_at: Callable[[int], float], ratio: Callable[[int], float],
              mode: int, eps: float) -> tuple[list[float], float]:
    """Terms p[0..] of a unimodal law from its log-probability at the mode and p[k+1]/p[k].

    Walking out from the mode never underflows where it matters. With ``size`` None the law has
    an infinite tail, cut where what is left falls below ``eps``; returns (terms, lost mass).
    """
    at_mode = math.exp(log_at(mode))
    below: list[float] = []
    p, k = at_mode, mode
    while k > 0 and p > 0.0:
        p = p / ratio(k - 1)
        k -= 1
        below.append(p)
    terms = [0.0] * k + below[::-1] + [at_mode]
    p, k = at_mode, mode
    while size is None or k < size:
        rho = ratio(k)
        p *= rho
        k += 1
        if size is None and rho < 1 and p * rho / (1 - rho) < eps and p < eps:
            return terms, _tail_sum(p, ratio, k)
        terms.append(p)
    return terms, 0.0


def _tail_sum(first: float, ratio: Callable[[int], float], k: int) -> float:
    """The mass lost past a cut: the first dropped term and the rest, to six digits."""
    tail = [first]
    while tail[-1] > 1e-7 * first and tail[-1] > 1e-300:
        tail.append(tail[-1] * ratio(k))
        k += 1
    return math.fsum(tail)


def _binomial(n: int, p: float) -> list[float]:
    if p <= 0.0 or n == 0:
        return [1.0] + [0.0] * n
    if p >= 1.0:
        return [0.0] * n + [1.0]
    q = 1.0 - p
    if n * -math.log(q) < 600:  # q**n is a normal float: walk up from 0, most accurate
        out = [q**n]
        for k in range(n):
            out.append(out[-1] * (n - k) / (k + 1) * p / q)
        return out
    mode = min(n, int((n + 1) * p))
    terms, _ = _unimodal(
        n, lambda k: (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                      + k * math.log(p) + (n - k) * math.log(q)),
        lambda k: (n - k) / (k + 1) * p / q, mode, 0.0)
    return terms


def _negative_binomial(n: int, r: float, eps: float) -> tuple[list[float], float]:
    """P(j re-rolls) for n dice that each re-roll with probability r: C(n+j−1, j)(1−r)^n r^j."""
    if r <= 0.0 or n == 0:
        return [1.0], 0.0
    ratio: Callable[[int], float] = lambda j: (n + j) / (j + 1) * r
    if n * -math.log1p(-r) < 600:
        out = [(1.0 - r) ** n]
        j = 0
        while True:
            rho = ratio(j)
            nxt = out[-1] * rho
            j += 1
            if rho < 1 and nxt * rho / (1 - rho) < eps and nxt < eps:
                return out, _tail_sum(nxt, ratio, j)
            out.append(nxt)
    mode = int((n - 1) * r / (1 - r))
    return _unimodal(None, lambda j: (math.lgamma(n + j) - math.lgamma(j + 1) - math.lgamma(n)
                                      + n * math.log1p(-r) + j * math.log(r)),
                     ratio, mode, eps)


def _convolve(a: Sequence[float], b: Sequence[float]) -> list[float]:
    if len(a) * len(b) > 256:
        import numpy as np

        out_np: list[float] = np.convolve(np.asarray(a), np.asarray(b)).tolist()
        return out_np
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def pool_pmf(dice: int, again: int | None, rote: bool = False,
             eps: float = _DIE_EPS) -> tuple[tuple[float, ...], float]:
    """P(successes = k) for a pool of ``dice`` d10s, and the probability lost where it was cut.

    The pool's generating function ((a + b·z) / (1 − r·z))^n splits into a binomial count of
    dice whose last face was a stopping success and a negative binomial count of re-rolls.

    >>> pmf, lost = pool_pmf(1, 10)
    >>> round(pmf[0], 12), round(pmf[1], 12), round(pmf[2], 12), lost < 1e-15
    (0.7, 0.27, 0.027, True)
    """
    if dice <= 0:
        return (1.0,), 0.0
    a, b, r = die_law(again, rote)
    p = float(b / (a + b))
    nb, lost = _negative_binomial(dice, float(r), eps)
    pmf = _convolve(_binomial(dice, p), nb)
    while len(pmf) > 1 and pmf[-1] == 0.0:
        pmf.pop()
    return tuple(pmf), lost


def chance_pmf(again: int | None, rote: bool, rules: Rules,
               eps: float = _DIE_EPS) -> tuple[tuple[float, ...], float, float]:
    """C-X1, C-X3: P(successes = k) of a chance die, P(dramatic failure), and the lost tail.

    A 10 succeeds and (unless no-again) is rolled again; the re-rolls count as a chance die
    (10s only) or as an ordinary die, by the chance_reroll switch. A rote action re-rolls a
    failed chance die once, but not a dramatic failure.
    """
    tenth = 1.0 / FACES
    if again is None:
        extra: tuple[float, ...] = (1.0,)
        lost = 0.0
    elif rules.chance_reroll == "as_chance_die":
        geo = _negative_binomial(1, tenth, eps)
        extra, lost = tuple(geo[0]), geo[1]
    else:
        extra, lost = pool_pmf(1, again, False, eps)
    once = [1.0 - tenth] + [tenth * e for e in extra]  # first face 1–9, or a 10 and its re-rolls
    df_on = rules.dramatic_failure_on_chance_one
    dramatic = tenth if df_on else 0.0
    if not rote:
        return tuple(once), dramatic, tenth * lost
    stays = tenth if df_on else 0.0                    # a dramatic failure is not re-rolled
    again_p = 1.0 - tenth - stays                      # faces 2–9 (and 1 when it is no DF)
    pmf = [again_p * x for x in once]
    pmf[0] += stays
    for k, e in enumerate(extra):
        pmf[k + 1] += tenth * e
    return tuple(pmf), dramatic + again_p * dramatic, (again_p + 1) * tenth * lost


@dataclass(frozen=True, slots=True)
class SideLaw:
    """The exact law of one side's roll: P(successes = k), P(dramatic failure), lost tail mass."""

    pmf: tuple[float, ...]
    dramatic: float
    truncated: float

    def cdf_below(self) -> list[float]:
        """c[k] = P(successes < k) for k = 0..len(pmf)."""
        out = [0.0]
        for p in self.pmf:
            out.append(out[-1] + p)
        return out


@lru_cache(maxsize=1024)
def _side_law(dice: int, chance: bool, again: int | None, rote: bool, rules: Rules,
              eps: float) -> SideLaw:
    if chance:
        pmf, dramatic, lost = chance_pmf(again, rote, rules, eps)
        return SideLaw(pmf, dramatic, lost)
    pmf, lost = pool_pmf(dice, again, rote, eps)
    return SideLaw(pmf, 0.0, lost)


def side_law(prep: Prepared, rules: Rules, eps: float = _DIE_EPS) -> SideLaw:
    """The exact law of a prepared side (cached: tables and contests reuse pools)."""
    return _side_law(prep.dice, prep.chance, prep.again, prep.rote, rules, eps)


def _trim(pmf: Sequence[float], budget: float) -> tuple[list[float], float]:
    """Drop the far tail while what is dropped stays within ``budget``; returns (terms, dropped)."""
    out = list(pmf)
    dropped = 0.0
    while len(out) > 1 and dropped + out[-1] <= budget:
        dropped += out.pop()
    return out, dropped


def _check_work(prep: Prepared, limits: Limits, text: str) -> None:
    # the pmf costs about dice × (dice + re-roll tail) steps
    limits.check_work(prep.dice * (2 * prep.dice + 64), "this pool", text)


def odds(spec: Action, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    """The exact odds of an action: outcomes, and successes, margin or rolls by their law.

    >>> o = odds(parse("cofd: 1", 5, {}, Limits()), {}, Limits(), "cofd: 1")
    >>> round(1 - o.outcomes["failure"], 12)  # one die succeeds on 8, 9 or 10
    0.3
    """
    rules = effective_rules(spec, options)
    contested = spec.opposition is not None
    actor = prepare(spec.actor, rules, contested)
    opp = prepare(spec.opposition, rules, True) if spec.opposition is not None else None
    for prep in (actor, opp):
        if prep is not None:
            _check_work(prep, limits, text)
    if spec.target is not None:
        return _extended_odds(spec, actor, opp, rules, limits, text)
    law_a = side_law(actor, rules)
    notes = [_side_header(actor, "pool" if opp is None else "actor")]
    if opp is None:
        outcomes = _single_outcomes(law_a, rules)
        pmf, dropped = _trim(law_a.pmf, TAIL_BUDGET / 2 - law_a.truncated)
        dist = Distribution.from_mapping({k: p for k, p in enumerate(pmf) if p > 0},
                                         law_a.truncated + dropped)
        if actor.chance:
            notes.append("C-X1: only a 10 succeeds" + (", a 1 is a dramatic failure"
                                                       if rules.dramatic_failure_on_chance_one
                                                       else ""))
        return Odds("cofd", text, Distribution.from_mapping(outcomes, order=SINGLE_OUTCOMES),
                    dist, "successes", tuple(notes))
    law_b = side_law(opp, rules)
    notes.append(_side_header(opp, "opposition"))
    win, lose, tie = contest_chances(law_a, law_b)
    margin = _margin(law_a, law_b)
    extra: dict[str, Any] = {
        "actor_outcomes": Distribution.from_mapping(_single_outcomes(law_a, rules),
                                                    order=SINGLE_OUTCOMES).to_json(),
        "opposition_outcomes": Distribution.from_mapping(_single_outcomes(law_b, rules),
                                                         order=SINGLE_OUTCOMES).to_json()}
    lost = law_a.truncated + law_b.truncated
    if rules.contested_tie == "defender":
        lose, tie = lose + tie, 0.0
        notes.append("a tie goes to the defender (contested_tie=defender)")
    elif rules.contested_tie == "reroll":
        if win + lose <= 0.0:
            raise OptionError("neither side can score a success, so a re-rolled tie would never "
                              "end (contested_tie=reroll)", text, (0, len(text)))
        rolls, cut = _geometric_rolls(tie)
        extra["rolls"] = Distribution.from_mapping(rolls, cut).to_json()
        notes.append(f"a tie is rolled again until one side wins (contested_tie=reroll); "
                     f"{tie:.4%} of first rolls tie")
        margin = {m: p / (1.0 - tie) for m, p in margin.items() if m != 0}
        win, lose, tie = win / (win + lose), lose / (win + lose), 0.0
        lost += cut
    elif rules.contested_tie == "continue_next_turn":
        notes.append("tie: no winner this turn, the contest continues next turn "
                     "(contested_tie=continue_next_turn)")
    outcomes = {"win": win, "lose": lose, "tie": tie}
    return Odds("cofd", text, Distribution.from_mapping(outcomes, order=CONTEST_OUTCOMES),
                Distribution.from_mapping({m: p for m, p in margin.items() if p > 0}, lost),
                "margin", tuple(notes), extra)


def _single_outcomes(law: SideLaw, rules: Rules) -> dict[str, float]:
    e = rules.exceptional_at
    failure = law.pmf[0] - law.dramatic
    success = math.fsum(law.pmf[1:e])
    # the cut tail lies among the exceptional successes, so this category takes the remainder
    exceptional = max(0.0, 1.0 - law.dramatic - failure - success)
    return {"dramatic_failure": law.dramatic, "failure": failure, "success": success,
            "exceptional_success": exceptional}


def contest_chances(a: SideLaw, b: SideLaw) -> tuple[float, float, float]:
    """C10: P(actor has more successes), P(fewer), P(equal) for independent sides."""
    below_a, below_b = a.cdf_below(), b.cdf_below()
    win = math.fsum(p * below_b[min(k, len(b.pmf))] for k, p in enumerate(a.pmf))
    lose = math.fsum(p * below_a[min(k, len(a.pmf))] for k, p in enumerate(b.pmf))
    tie = math.fsum(p * b.pmf[k] for k, p in enumerate(a.pmf) if k < len(b.pmf))
    return win, lose, tie


def _margin(a: SideLaw, b: SideLaw) -> dict[int, float]:
    conv = _convolve(a.pmf, b.pmf[::-1])
    shift = len(b.pmf) - 1
    return {i - shift: p for i, p in enumerate(conv)}


def _geometric_rolls(tie: float) -> tuple[dict[int, float], float]:
    """Rolls until a contest is not tied: P(R = j) = tie^(j−1)·(1 − tie), cut below 1e-16."""
    out: dict[int, float] = {}
    p, j = 1.0, 1
    while p >= 1e-16 and j <= 100_000:
        out[j] = p * (1.0 - tie)
        p *= tie
        j += 1
    return out, p


@dataclass(frozen=True, slots=True)
class Race:
    """An extended contest's law: P(decided at roll r) by who wins, and the lost mass."""

    win: tuple[float, ...]
    lose: tuple[float, ...]
    tie: tuple[float, ...]
    truncated: float


def race(law_a: SideLaw, law_b: SideLaw | None, target: int, tie_rule: str,
         max_rolls: int | None = None, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Race:
    """C11, C-A4: exact law of an extended action or contest, by a DP over accumulated totals.

    Each side's successes so far (below the target) is a vector; one roll convolves it with the
    side's per-roll law, and what crosses the target is this roll's arrivals, by total. The sides
    are independent, so the race at roll r is the two sides' arrivals and survivals combined;
    equal totals at the target go to the tie switch (the 'continue'/'reroll' rules keep rolling,
    one more single-roll contest at a time). Rolls stop once what is still undecided is below
    1e-16; that mass is reported as truncated.
    """
    import numpy as np

    pa = np.asarray(law_a.pmf)
    pb = np.asarray(law_b.pmf) if law_b is not None else None
    if len(pa) == 1 and (pb is None or len(pb) == 1):
        raise OptionError("no side can ever score a success, so the target is never reached",
                          text, (0, len(text)) if text else None)
    ga = np.zeros(target)
    ga[0] = 1.0
    gb = ga.copy()
    w1 = l1 = t1 = 0.0
    if law_b is not None:
        w1, l1, t1 = contest_chances(law_a, law_b)
    # the DP costs target × (per-roll support) per roll; a race ends when the faster side
    # arrives, so its mean successes per roll sets the number of rolls (about three times it)
    means = [math.fsum(k * p for k, p in enumerate(law.pmf))
             for law in (law_a, law_b) if law is not None and len(law.pmf) > 1]
    rolls_guess = 3 * math.ceil(target / max(means)) + 10
    if max_rolls is not None:
        rolls_guess = min(rolls_guess, max_rolls)
    per_roll = target * (len(pa) + (len(pb) if pb is not None else 0)) + 64
    limits.check_work(rolls_guess * per_roll, "this extended action", text)
    win: list[float] = []
    lose: list[float] = []
    tie: list[float] = []
    pending = 0.0
    work = 0
    lost_per_roll = law_a.truncated + (law_b.truncated if law_b is not None else 0.0)
    r = 0
    while True:
        r += 1
        work += per_roll
        if work > limits.max_odds_work:  # the guess above was too kind: stop all the same
            limits.check_work(work, "this extended action", text)
        ca = np.convolve(ga, pa)
        ga, ha = ca[:target], ca[target:]
        if pb is None:
            win.append(float(ha.sum()))
            lose.append(0.0)
            tie.append(0.0)
            alive = float(ga.sum())
            if (max_rolls is not None and r >= max_rolls) or alive < 1e-16:
                return Race(tuple(win), tuple(lose), tuple(tie),
                            (0.0 if max_rolls is not None else alive) + r * lost_per_roll)
            continue
        cb = np.convolve(gb, pb)
        gb, hb = cb[:target], cb[target:]
        alive_a, alive_b = float(ga.sum()), float(gb.sum())
        n = max(len(ha), len(hb))
        ha_, hb_ = np.pad(ha, (0, n - len(ha))), np.pad(hb, (0, n - len(hb)))
        below_b = np.concatenate(([0.0], np.cumsum(hb_)[:-1]))
        below_a = np.concatenate(([0.0], np.cumsum(ha_)[:-1]))
        w = float(ha_.sum()) * alive_b + float(np.dot(ha_, below_b)) + pending * w1
        lo = float(hb_.sum()) * alive_a + float(np.dot(hb_, below_a)) + pending * l1
        eq = float(np.dot(ha_, hb_))
        pending *= t1
        t = 0.0
        if tie_rule == "tie":
            t = eq
        elif tie_rule == "defender":
            lo += eq
        else:
            pending += eq
        win.append(w)
        lose.append(lo)
        tie.append(t)
        undecided = alive_a * alive_b + pending
        if undecided < 1e-16:
            return Race(tuple(win), tuple(lose), tuple(tie), undecided + r * lost_per_roll)


def _extended_odds(spec: Action, actor: Prepared, opp: Prepared | None, rules: Rules,
                   limits: Limits, text: str) -> Odds:
    target = spec.target or 0
    # each roll's cut tail adds up over the rolls, so the per-roll laws are cut far deeper
    law_a = side_law(actor, rules, 1e-22)
    law_b = side_law(opp, rules, 1e-22) if opp is not None else None
    notes = [f"extended {'contest' if opp else 'action'} to {target} successes (C11)",
             _side_header(actor, "actor" if opp else "pool")]
    if opp is None and len(law_a.pmf) == 1 and spec.max_rolls is not None:
        res = Race((0.0,) * spec.max_rolls, (0.0,) * spec.max_rolls, (0.0,) * spec.max_rolls,
                   0.0)
    else:
        res = race(law_a, law_b, target, rules.contested_tie, spec.max_rolls, limits, text)
    by_roll = {r + 1: w + lo + t for r, (w, lo, t) in enumerate(zip(res.win, res.lose, res.tie))}
    if opp is None and spec.max_rolls is not None:
        # the action stops at the target or after its last allowed roll, failed
        by_roll[spec.max_rolls] = by_roll.get(spec.max_rolls, 0.0) + max(
            0.0, 1.0 - math.fsum(res.win))
    dist = Distribution.from_mapping({k: p for k, p in by_roll.items() if p > 0}, res.truncated)
    if opp is None:
        success = math.fsum(res.win)
        outcomes = {"success": success, "failure": 0.0 if spec.max_rolls is None
                    else max(0.0, 1.0 - success)}
        if spec.max_rolls is not None:
            notes.append(f"at most {spec.max_rolls} rolls: the action stops at the target or "
                         "after the last roll")
        return Odds("cofd", text, Distribution.from_mapping(outcomes, order=EXTENDED_OUTCOMES),
                    dist, "rolls", tuple(notes))
    assert opp is not None
    notes.append(_side_header(opp, "opposition"))
    notes.append({"tie": "both reaching the target with equal totals is a tie",
                  "defender": "both reaching the target with equal totals: the defender wins",
                  "reroll": "both reaching the target with equal totals: roll on until one "
                            "leads",
                  "continue_next_turn": "both reaching the target with equal totals: the "
                                        "contest continues until one leads"}
                 [rules.contested_tie] + " (C-A4)")
    outcomes = {"win": math.fsum(res.win), "lose": math.fsum(res.lose),
                "tie": math.fsum(res.tie)}
    extra = {"win_by_roll": {str(r + 1): p for r, p in enumerate(res.win) if p >= 1e-12},
             "lose_by_roll": {str(r + 1): p for r, p in enumerate(res.lose) if p >= 1e-12}}
    return Odds("cofd", text, Distribution.from_mapping(outcomes, order=CONTEST_OUTCOMES),
                dist, "rolls", tuple(notes), extra)


# --------------------------------------------------------------------------------------------
# GM table


def pools_table(options: Mapping[str, Any] | None = None, max_pool: int = 20) -> list[list[str]]:
    """Pool 1–20 (and a chance die) by again rule: P(≥1 success), P(exceptional), mean successes."""
    rules = rules_from(options or {})
    e = rules.exceptional_at
    header = ["Pool"]
    for key in AGAIN_RULES:
        name = "no-again" if key == "none" else f"{key}-again"
        header += [f"{name} ≥1", f"{name} {e}+", f"{name} mean"]
    rows = [header]
    for pool in range(max_pool + 1):
        row = ["chance" if pool == 0 else str(pool)]
        for key in AGAIN_RULES:
            prep = prepare(Side((Term(pool),), key), rules)
            law = side_law(prep, rules)
            out = _single_outcomes(law, rules)
            mean = math.fsum(k * p for k, p in enumerate(law.pmf))
            row += [f"{100 * (out['success'] + out['exceptional_success']):.1f}%",
                    f"{100 * out['exceptional_success']:.1f}%", f"{mean:.2f}"]
        rows.append(row)
    return rows


# --------------------------------------------------------------------------------------------
# The system object


@dataclass(frozen=True)
class _ChroniclesOfDarkness:
    name: str = "cofd"
    aliases: tuple[str, ...] = ()
    title: str = "Chronicles of Darkness"
    defaults: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULTS))

    def parse(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Action:
        return parse(text, start, options, limits)

    def roll(self, spec: Action, source: Source, options: Mapping[str, Any], limits: Limits,
             text: str) -> Roll:
        return roll(spec, source, options, limits, text)

    def odds(self, spec: Action, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
        return odds(spec, options, limits, text)


SYSTEM = _ChroniclesOfDarkness()


def _table_pools(options: Mapping[str, Any]) -> list[list[str]]:
    return pools_table(options)


TABLES = {"pools": _table_pools}

