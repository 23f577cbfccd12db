"""Jadeclaw step dice (seed 000; RULES.md §1, rules J1–J52).

Reading order: data (sizes, ladder, Quality bands, options) → preparing a pool (J41/J42 steps 1–5)
→ the rules as pure functions of faces (Score, Favored, contest, damage pairs) → the notation →
rolling → exact odds → GM tables. Rolling and odds call the same rule functions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from .._errors import InputError, LimitError, NotationError, OptionError
from .._limits import Limits
from .._rng import Source
from ..dice import STEP_SIZES, Roll, Tray
from ..notation import Token, Tokens, tokenize
from ..odds import Distribution, pairing
from . import Odds

# --------------------------------------------------------------------------------------------
# Data

SIZES = STEP_SIZES  # J1: d4, d6, d8, d10, d12 only
TOP = 12

DIFFICULTIES: dict[str, tuple[int, ...]] = {  # J47: the Difficulty Dice ladder
    "trivial": (4,),
    "simple": (4, 4),
    "routine": (6, 6),
    "intermediate": (8, 8),
    "difficult": (10, 10),
    "for experts only": (12, 12),
    "for heroes only": (12, 12, 12),
    "for legends only": (12, 12, 12, 12),
}
DIFFICULTY_TITLES = {k: k.title().replace("Only", "Only") for k in DIFFICULTIES}
_DIFFICULTY_ALIASES = {"experts": "for experts only", "heroes": "for heroes only",
                       "legends": "for legends only"}

QUALITIES = ("basic", "expert", "heroic", "legendary", "mythic")  # J8, worst → best

CONTEST_OUTCOMES = ("botch", "overwhelming_failure", "failure", "tie", "success",
                    "overwhelming_success")
SINGLE_OUTCOMES = ("botch", "no_botch")
OVERWHELM = 5  # J6

DEFAULTS: dict[str, Any] = {
    "penalty_rolls": "p_plus_one",             # J-A2 | "literal_text"
    "double_botch": "tie",                     # J10, J-A8 | "both_botch"
    "botch_overrides_overwhelm": True,         # J-A7
    "quality_bands": "1-5",                    # J-A6 | "0-4"
    "quality_vs_no_quality": "no_tie_break",   # J-A6 | "skilled_side_wins"
    "limit_before_bonus": True,                # J-A9
    "bonus_distribution": "per_die_carry_down",  # §1.3 reading A | "pooled_largest_first"
    "favored_auto": True,                      # J-A11
    "favored_on_soak": True,                   # J-A11
    "favored_each_penalty_roll": True,         # J40
    "empty_pool": "cannot_roll",               # J-X3 | "auto_botch"
    "soak_botch_with_no_damage_dice": False,   # J-A12
    "auto_success_dominance": "pairwise",      # J-A16 | "count_and_max"
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "penalty_rolls": ("p_plus_one", "literal_text"),
    "double_botch": ("tie", "both_botch"),
    "quality_bands": ("1-5", "0-4"),
    "quality_vs_no_quality": ("no_tie_break", "skilled_side_wins"),
    "bonus_distribution": ("per_die_carry_down", "pooled_largest_first"),
    "empty_pool": ("cannot_roll", "auto_botch"),
    "auto_success_dominance": ("pairwise", "count_and_max"),
}


def check_options(options: Mapping[str, Any]) -> None:
    """Refuse a switch value that is not one of its choices."""
    for key, choices in _CHOICES.items():
        if options.get(key, DEFAULTS[key]) not in choices:
            raise OptionError(f"option {key} takes one of {', '.join(choices)}, "
                              f"not '{options[key]}'")


def level_dice(level: int) -> tuple[int, ...]:
    """J18: Level L is floor(L/5) d12s plus a d(2·(L mod 5)+2) when L mod 5 > 0."""
    dice = (TOP,) * (level // 5)
    if level % 5:
        dice += (2 * (level % 5) + 2,)
    return dice


def quality_of_level(level: int, bands: str = "1-5") -> str | None:
    """J8 / J-A6: the Quality band of a Skill Level (None for Level 0 under the 1–5 bands)."""
    if bands == "0-4":
        return QUALITIES[min(level // 5, 4)]
    if level <= 0:
        return None
    return QUALITIES[min((level - 1) // 5, 4)]


def dice_text(sizes: Sequence[int]) -> str:
    """``2d12 & d4`` (largest first), ``no dice`` for an empty pool."""
    if not sizes:
        return "no dice"
    counts: dict[int, int] = {}
    for s in sorted(sizes, reverse=True):
        counts[s] = counts.get(s, 0) + 1
    return " & ".join(f"{n if n > 1 else ''}d{s}" for s, n in counts.items())


# --------------------------------------------------------------------------------------------
# Preparing a pool: Include, Remove, Limit, Bonuses (J13–J17, J36–J38, J41/J42 steps 1–5)


def apply_bonuses(sizes: Sequence[int], bonuses: int,
                  distribution: str = "per_die_carry_down") -> tuple[int, ...]:
    """J13–J17: each Bonus is one size increase per die (zero dice count as one), all at once.

    Reading A (default): each die gets its increases, a d12 passes them down to the next smaller
    die, and leftovers start new d4s. Reading E pools them and spends them on the largest die first.
    Dice keep their positions; new dice are appended.
    """
    if bonuses <= 0:
        return tuple(sizes)
    dice = list(sizes)
    increases = bonuses * max(1, len(dice))  # J16, J17
    order = sorted(range(len(dice)), key=lambda i: -dice[i])
    if distribution == "per_die_carry_down":
        carry = 0
        for i in order:
            budget = bonuses + carry  # J14: a d12's increase carries to the next smaller die
            steps = min(budget, (TOP - dice[i]) // 2)
            dice[i] += 2 * steps
            carry = budget - steps
        leftover = carry + (bonuses if not sizes else 0)
    else:
        leftover = increases
        for i in order:
            steps = min(leftover, (TOP - dice[i]) // 2)
            dice[i] += 2 * steps
            leftover -= steps
    while leftover > 0:  # J15: a new d4 costs one increase, then grows with the rest
        steps = min(leftover - 1, (TOP - 4) // 2)
        dice.append(4 + 2 * steps)
        leftover -= 1 + steps
    return tuple(dice)


def apply_limit(sizes: Sequence[int], limit: int | None) -> tuple[int, ...]:
    """J38: every die larger than the Limit becomes the Limit."""
    return tuple(sizes) if limit is None else tuple(min(s, limit) for s in sizes)


def remove_die(sizes: Sequence[int], what: str) -> tuple[int, ...] | None:
    """J37: take one die out before rolling (``biggest``, ``smallest`` or a size such as ``d8``).

    None if there is no such die.
    """
    dice = list(sizes)
    if not dice:
        return None
    if what == "biggest":
        target = max(dice)
    elif what == "smallest":
        target = min(dice)
    else:
        target = int(what[1:])
        if target not in dice:
            return None
    # J-A14: among equal dice any one may go; take the last so earlier faces keep their places
    idx = len(dice) - 1 - dice[::-1].index(target)
    del dice[idx]
    return tuple(dice)


def damage_penalty(sizes: Sequence[int], penalties: int) -> tuple[int, ...]:
    """J30: each net Damage Penalty removes the smallest die before rolling."""
    dice = list(sizes)
    for _ in range(max(0, penalties)):
        if not dice:
            break
        del dice[len(dice) - 1 - dice[::-1].index(min(dice))]
    return tuple(dice)


def may_declare_success(actor: Sequence[int], difficulty: Sequence[int],
                        dominance: str = "pairwise", penalties: int = 0) -> bool:
    """J48: at least as many dice as the Difficulty, each at least as large (J-A16).

    Only "as long as things are nice and quiet (no rush jobs, no improvised materials)": a
    Penalty ("lack of time, poor preparation", J20) means the task is not calm, so it is rolled.
    """
    if penalties:
        return False
    a, d = sorted(actor, reverse=True), sorted(difficulty, reverse=True)
    if len(a) < len(d) or not d:
        return False
    if dominance == "count_and_max":
        return a[0] >= d[0]
    return all(x >= y for x, y in zip(a, d))


# --------------------------------------------------------------------------------------------
# The rules as pure functions of faces


def score(faces: Sequence[int]) -> int:
    """J4: the Score is the highest face showing."""
    return max(faces)


def favored_index(sizes: Sequence[int], faces: Sequence[int]) -> int | None:
    """J39, J-A15: which die a Favored roll re-rolls: of the dice showing 1, the largest size."""
    best: int | None = None
    for i, (s, f) in enumerate(zip(sizes, faces)):
        if f == 1 and (best is None or s > sizes[best]):
            best = i
    return best


def net(bonuses: int, penalties: int) -> tuple[int, int]:
    """J12: Bonuses and Penalties cancel one for one."""
    return max(0, bonuses - penalties), max(0, penalties - bonuses)


def roll_count(penalties: int, rule: str = "p_plus_one") -> int:
    """J21, J-A2: with p net Penalties the pool is rolled p+1 times."""
    if rule == "literal_text" and penalties >= 4:
        return penalties
    return penalties + 1


def contest_outcome(a: int, b: int, qa: str | None = None, qb: str | None = None,
                    options: Mapping[str, Any] = DEFAULTS) -> str:
    """J5–J10, J-A7, J-A8: the actor's outcome for Scores ``a`` vs ``b``."""
    if a == 1 and b == 1 and options["double_botch"] == "tie":
        return "tie"
    margin = a - b
    if a == 1 and (options["botch_overrides_overwhelm"] or margin > -OVERWHELM):
        return "botch"
    if margin >= OVERWHELM:
        return "overwhelming_success"
    if margin <= -OVERWHELM:
        return "overwhelming_failure"
    if margin > 0:
        return "success"
    if margin < 0:
        return "failure"
    return _tie_break(qa, qb, options)


def _tie_break(qa: str | None, qb: str | None, options: Mapping[str, Any]) -> str:
    """J7: on equal Scores a strictly better Quality wins; no Quality on a side (J-A6) → Tie."""
    if qa is None or qb is None:
        if options["quality_vs_no_quality"] == "skilled_side_wins" and (qa or qb):
            return "success" if qa else "failure"
        return "tie"
    ra, rb = QUALITIES.index(qa), QUALITIES.index(qb)
    return "success" if ra > rb else "failure" if ra < rb else "tie"


NORMAL, SLAYING, ENERVATED = "normal", "slaying", "enervated"


def damage_kind(slaying: bool, enervated: bool) -> str:
    """J33: Slaying and Enervated on the same damage cancel."""
    if slaying and not enervated:
        return SLAYING
    if enervated and not slaying:
        return ENERVATED
    return NORMAL


def pair_hits(d: int, s: int, kind: str = NORMAL) -> int:
    """J24, J27, J31, J32: hits of one damage face against its soak face (or imaginary 1)."""
    if d == 1 or d <= s:
        return 0
    if kind == SLAYING:
        return 2
    if kind == ENERVATED:
        return 1 if d - s >= OVERWHELM else 0
    return 2 if d - s >= OVERWHELM else 1


def damage_pairs(damage: Sequence[int], soak: Sequence[int],
                 kind: str = NORMAL) -> list[tuple[int, int | None, int]]:
    """J23–J27: sort both high→low, pair by rank; surplus damage meets an imaginary 1 (None)."""
    d = sorted(damage, reverse=True)
    s = sorted(soak, reverse=True)
    pairs: list[tuple[int, int | None, int]] = []
    for i, face in enumerate(d):
        if i < len(s):
            pairs.append((face, s[i], pair_hits(face, s[i], kind)))
        else:
            pairs.append((face, None, pair_hits(face, 1, kind)))  # J26: the imaginary 1
    return pairs  # J25: surplus soak dice are ignored


def soak_botched(damage: Sequence[int], soak: Sequence[int],
                 options: Mapping[str, Any] = DEFAULTS) -> bool:
    """J28, J-A12: every soak die shows 1 (a soak of zero dice is no Botch)."""
    if not soak or not all(f == 1 for f in soak):
        return False
    return bool(damage) or bool(options["soak_botch_with_no_damage_dice"])


def resolve_tested(hits: int) -> bool:
    """J35: "A Damage Roll that scores a Wound becomes a Simple Roll to be defeated in a Resolve
    Test": the test follows an injury, so a roll without a hit has none."""
    return hits > 0


def damage_hits(damage: Sequence[int], soak: Sequence[int], kind: str = NORMAL,
                options: Mapping[str, Any] = DEFAULTS) -> int:
    """J23–J34: the hits of a Damage Roll from its faces."""
    hits = sum(h for _, _, h in damage_pairs(damage, soak, kind))
    return hits + (1 if soak_botched(damage, soak, options) else 0)


# --------------------------------------------------------------------------------------------
# The notation


@dataclass(frozen=True, slots=True)
class Pool:
    """One side's pool as written: terms (``2d12``, ``L7``, ``routine``) and its modifiers."""

    terms: tuple[str, ...] = ()
    include: tuple[int, ...] = ()
    remove: tuple[str, ...] = ()
    limit: int | None = None
    bonuses: int = 0
    penalties: int = 0
    favored: bool = False
    quality: str | None = None

    @property
    def base(self) -> tuple[int, ...]:
        """The dice the terms name, before any modifier."""
        out: list[int] = []
        for t in self.terms:
            if t[0] == "L":
                out.extend(level_dice(int(t[1:])))
            elif t in DIFFICULTIES:
                out.extend(DIFFICULTIES[t])
            else:
                n, s = t.split("d")
                out.extend([int(s)] * (int(n) if n else 1))
        return tuple(out)

    @property
    def difficulty(self) -> str | None:
        return self.terms[0] if len(self.terms) == 1 and self.terms[0] in DIFFICULTIES else None

    def __str__(self) -> str:
        parts = [t.replace(" ", "-") for t in self.terms]
        parts += [f"+d{s}" for s in self.include]
        parts += [f"remove {r}" for r in self.remove]
        if self.limit is not None:
            parts.append(f"limit d{self.limit}")
        if self.bonuses:
            parts.append(f"+{self.bonuses}b")
        if self.penalties:
            parts.append(f"-{self.penalties}p")
        if self.favored:
            parts.append("fav")
        if self.quality:
            parts.append(f"q={self.quality}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Simple:
    """A Simple Roll, alone or against an opposing pool or Difficulty (J4–J22, J41, J47–J52)."""

    actor: Pool
    opposition: Pool | None = None
    calm: bool = False
    options: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        text = f"jc: {self.actor}"
        if self.opposition is not None:
            text += f" vs {self.opposition}"
        if self.calm:
            text += " calm"
        return text + "".join(f" {k}={_opt_text(v)}" for k, v in self.options)


@dataclass(frozen=True, slots=True)
class Damage:
    """A Damage Roll against Soak dice (J23–J34, J42), optionally followed by a Resolve test (J35)."""

    damage: Pool
    soak: Pool
    slaying: bool = False
    enervated: bool = False
    resolve: Pool | None = None
    options: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        kinds = (" slaying" if self.slaying else "") + (" enervated" if self.enervated else "")
        text = f"jc: dmg {self.damage}{kinds}"
        if self.soak.terms or self.soak.include:
            text += f" vs soak {self.soak}"
        if self.resolve is not None:
            text += f" resolve {self.resolve}"
        return text + "".join(f" {k}={_opt_text(v)}" for k, v in self.options)


Spec = Simple | Damage


def _opt_text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


_DIE = re.compile(r"(\d*)d(\d+)$")
_LEVEL = re.compile(r"l(\d+)$")
_BONUS = re.compile(r"([+-]?)(\d*)(b|bonus|bonuses|p|penalty|penalties)$")
_INCLUDE = re.compile(r"\+(\d*)d(\d+)$")
_LIMIT = re.compile(r"limit[=:]?d?(\d+)$")

_STOP = {"vs", "soak", "resolve", "calm", "slaying", "enervated"}


def _die_size(tok: Token, size_text: str, toks: Tokens) -> int:
    size = int(size_text) if len(size_text) < 4 else 0
    if size not in SIZES:
        raise toks.error(f"d{size_text} is not a Jadeclaw die: sizes are d4, d6, d8, d10, d12", tok)
    return size


def _count(tok: Token, text: str, toks: Tokens, limits: Limits) -> int:
    if not text:
        return 1
    if len(text) > 6:
        raise toks.error(f"{text} dice is more than the limit of {limits.max_dice}", tok)
    n = int(text)
    if n == 0:
        raise toks.error("a count of 0 dice: leave the term out instead", tok)
    if n > limits.max_dice:
        from .._errors import LimitError

        raise LimitError(f"{n} dice is more than the limit of {limits.max_dice} dice per roll",
                         toks.text, (tok.start, tok.end))
    return n


def _read_difficulty(toks: Tokens) -> str | None:
    """A Difficulty by name (J47): one word, a hyphenated or quoted phrase, or ``for X only``."""
    tok = toks.peek()
    if tok is None:
        return None
    word = tok.lower.strip("'\"").replace("-", " ").replace("_", " ")
    if word in DIFFICULTIES:
        toks.next()
        return word
    if word in _DIFFICULTY_ALIASES:
        toks.next()
        return _DIFFICULTY_ALIASES[word]
    if word.startswith("'") or tok.text[0] in "'\"":
        # a quoted multi-word name: 'for experts only'
        words = [tok.lower.strip("'\"")]
        j = 1
        while (t := toks.peek(j)) is not None and j < 4:
            words.append(t.lower.strip("'\""))
            j += 1
            if t.text[-1] in "'\"":
                break
        name = " ".join(words)
        if name in DIFFICULTIES:
            toks.i += j
            return name
    if word == "for":
        t1, t2 = toks.peek(1), toks.peek(2)
        if t1 is not None and t2 is not None:
            name = f"for {t1.lower} {t2.lower}"
            if name in DIFFICULTIES:
                toks.i += 3
                return name
    return None


def _read_pool(toks: Tokens, limits: Limits, side: str, allow_difficulty: bool) -> Pool:
    terms: list[str] = []
    include: list[int] = []
    remove: list[str] = []
    limit: int | None = None
    bonuses = penalties = 0
    favored = False
    quality: str | None = None
    start_tok = toks.peek()
    while (tok := toks.peek()) is not None:
        w = tok.lower
        if w in _STOP or ("=" in w and not w.startswith("q=")) or (w.startswith("q=") and ":" in w):
            break
        if w == "&" or w == ",":
            toks.next()
            continue
        if allow_difficulty and not terms and (name := _read_difficulty(toks)) is not None:
            terms.append(name)
            after = toks.peek()
            if after is not None and after.lower not in _STOP and (
                    "=" not in after.lower or after.lower.startswith("q=")):
                if after.lower.startswith("q="):
                    raise toks.error("Difficulty Dice have no Quality (J-A6)", after)
                dice = " ".join(f"d{s}" for s in DIFFICULTIES[name])
                raise toks.error(f"'{after.text}' after the Difficulty '{name}' would change the "
                                 "GM's Difficulty Dice (J47): write your pool's modifiers before "
                                 f"'vs', or write the Difficulty as dice ('vs {dice} ...')",
                                 after)
            continue
        toks.next()
        if m := _DIE.match(w):
            n = _count(tok, m.group(1), toks, limits)
            terms.append(f"{n if n > 1 else ''}d{_die_size(tok, m.group(2), toks)}")
        elif m := _LEVEL.match(w):
            level = int(m.group(1)) if len(m.group(1)) < 5 else 10**6
            if level > 5 * limits.max_dice:
                raise toks.error(f"Level {m.group(1)} is beyond the dice limit", tok)
            terms.append(f"L{level}")
        elif m := _INCLUDE.match(w):
            n = _count(tok, m.group(1), toks, limits)
            include.extend([_die_size(tok, m.group(2), toks)] * n)
        elif w in ("include", "+"):
            t2 = toks.next()
            m2 = _DIE.match(t2.lower)
            if not m2:
                raise toks.error(f"include what? expected a die such as d8, not '{t2.text}'", t2)
            n = _count(t2, m2.group(1), toks, limits)
            include.extend([_die_size(t2, m2.group(2), toks)] * n)
        elif w == "remove" or w.startswith("-d"):
            if w == "remove":
                t2 = toks.next()
                what = t2.lower
                what = {"largest": "biggest", "big": "biggest", "small": "smallest"}.get(what, what)
            else:
                t2, what = tok, w[1:]
            if what not in ("biggest", "smallest"):
                m2 = _DIE.match(what)
                if not m2 or m2.group(1):
                    raise toks.error("remove what? write 'remove biggest', 'remove smallest' "
                                     "or 'remove d8'", t2)
                what = f"d{_die_size(t2, m2.group(2), toks)}"
            remove.append(what)
        elif m := _LIMIT.match(w):
            limit = _die_size(tok, m.group(1), toks)
        elif w == "limit":
            t2 = toks.next()
            m2 = _DIE.match(t2.lower)
            if not m2 or m2.group(1):
                raise toks.error(f"limit to what? expected a die such as d8, not '{t2.text}'", t2)
            limit = _die_size(t2, m2.group(2), toks)
        elif (m := _BONUS.match(w)) and (m.group(1) or m.group(2)):
            n = int(m.group(2) or 1) if len(m.group(2)) < 5 else 10**6
            if n > limits.max_dice:
                raise toks.error(f"{n} is more Bonuses or Penalties than the engine allows", tok)
            if m.group(3).startswith("b"):
                if m.group(1) == "-":
                    raise toks.error("a Bonus is written +Nb; a Penalty is -Np", tok)
                bonuses += n
            else:
                if m.group(1) == "+":
                    raise toks.error(f"a Penalty is written -{n}p (a Bonus is +{n}b)", tok)
                penalties += n
        elif w in ("fav", "favored", "favoured"):
            favored = True
        elif w.startswith("q="):
            quality = _quality(w[2:], tok, toks)
        else:
            raise toks.error(_unknown(tok.text, side), tok)
    if not terms and not include:
        where = start_tok or toks.peek()
        msg = f"the {side} pool is empty: expected dice such as 'd12 d8', a Level such as 'L7'"
        if allow_difficulty:
            msg += " or a Difficulty such as 'routine'"
        if where is None:
            raise toks.error_at_end(msg)
        raise toks.error(msg, where)
    return Pool(tuple(terms), tuple(include), tuple(remove), limit, bonuses, penalties, favored,
                quality)


def _quality(text: str, tok: Token, toks: Tokens) -> str:
    if text.isdigit() and len(text) < 4:
        return str(int(text))  # a Skill Level: its band is read with quality_bands (J-A6)
    if text in QUALITIES:
        return text
    raise toks.error(f"'{text}' is not a Quality: use basic, expert, heroic, legendary, mythic "
                     "or a Skill Level", tok)


def _unknown(word: str, side: str) -> str:
    return (f"'{word}' is not part of a Jadeclaw {side} pool: expected dice (d12, 2d8), a Level "
            "(L7), +Nb, -Np, fav, limit dS, +dS, remove biggest, q=Quality")


_READ: dict[tuple[Any, ...], Spec] = {}


def parse(text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Spec:
    """Read Jadeclaw notation (after the ``jc:`` prefix). Specs are immutable, so a read is
    remembered per (text, start, options, limits): a repeated roll does not parse again.

    >>> print(parse("jc: d12 & d6 +2b vs routine", 3, {}, Limits()))
    jc: d12 d6 +2b vs routine
    """
    try:
        key: tuple[Any, ...] | None = (text, start, tuple(sorted(options.items())), limits)
        hit = _READ.get(key)  # type: ignore[arg-type]
    except TypeError:  # an unhashable option value: read afresh (it is refused there)
        key, hit = None, None
    if hit is not None:
        return hit
    spec = _parse(text, start, options, limits)
    if key is not None:
        if len(_READ) > 2048:
            _READ.clear()
        _READ[key] = spec
    return spec


def _parse(text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Spec:
    toks = tokenize(text, start)
    if toks.at_end():
        raise toks.error_at_end("nothing to roll: expected dice such as 'd12 d8 vs 2d10'")
    opts: dict[str, Any] = {}
    is_damage = toks.accept("dmg", "damage") is not None
    if is_damage:
        damage = _read_pool(toks, limits, "damage", False)
        slaying = enervated = False
        while (t := toks.accept("slaying", "enervated")) is not None:
            if t.lower == "slaying":
                slaying = True
            else:
                enervated = True
            if (t2 := toks.peek()) is not None and t2.lower not in _STOP and "=" not in t2.lower:
                raise toks.error("write slaying/enervated after the damage dice", t2)
        if toks.accept("vs") is not None:
            toks.accept("soak")
            soak = _read_pool(toks, limits, "soak", False)
        else:  # no Soak dice: every damage die meets an imaginary 1 (J26)
            soak = Pool()
        resolve = None
        if toks.accept("resolve") is not None:
            resolve = _read_pool(toks, limits, "resolve", False)
        _read_options(toks, opts, None)
        spec: Spec = Damage(damage, soak, slaying, enervated, resolve, tuple(sorted(opts.items())))
    else:
        actor = _read_pool(toks, limits, "actor", False)
        opposition = None
        calm = False
        qa = qb = None
        if toks.accept("vs") is not None:
            opposition = _read_pool(toks, limits, "opposing", True)
        if toks.accept("calm") is not None:
            calm = True
        qa, qb = _read_options(toks, opts, opposition)
        if qa is not None:
            if actor.quality is not None:
                raise NotationError("the actor's Quality is given twice", text, (start, len(text)))
            actor = replace(actor, quality=qa)
        if qb is not None and opposition is not None:
            opposition = replace(opposition, quality=qb)
        if calm and (opposition is None or opposition.difficulty is None):
            tok = toks.items[-1]
            raise NotationError("'calm' (J48: skip the roll) needs a Difficulty on the vs side, "
                                "such as 'vs routine'", text, (tok.start, tok.end))
        spec = Simple(actor, opposition, calm, tuple(sorted(opts.items())))
    merged = {**DEFAULTS, **options, **opts}
    check_options(merged)
    _check_sizes(spec, limits, text)
    for pool in (spec.actor, spec.opposition) if isinstance(spec, Simple) else (spec.resolve,):
        q = pool.quality if pool is not None else None
        if q is not None and q.isdigit() and quality_in_force(q, merged["quality_bands"]) is None:
            at = text.find(f"q={q}")
            raise NotationError(f"Skill Level {q} has no Quality under quality_bands="
                                f"{merged['quality_bands']} (J-A6); with quality_bands=0-4 it "
                                "is Basic", text, (at, at + 2 + len(q)) if at >= 0 else None)
    return spec


def _read_options(toks: Tokens, opts: dict[str, Any],
                  opposition: Pool | None) -> tuple[str | None, str | None]:
    qa = qb = None
    while (tok := toks.peek()) is not None:
        w = tok.lower
        if w.startswith("q=") and ":" in w:
            toks.next()
            a, _, b = w[2:].partition(":")
            qa = _quality(a, tok, toks)
            qb = _quality(b, tok, toks)
            if opposition is None:
                raise toks.error("q=A:B needs an opposing pool ('vs ...')", tok)
            if opposition.difficulty is not None:
                raise toks.error("Difficulty Dice have no Quality (J-A6)", tok)
            continue
        if "=" in w:
            toks.next()
            key, _, value = w.partition("=")
            key = key.replace("-", "_")
            if key not in DEFAULTS:
                raise toks.error(f"'{key}' is not a Jadeclaw option; options are "
                                 f"{', '.join(sorted(DEFAULTS))}", tok)
            default = DEFAULTS[key]
            if isinstance(default, bool):
                if value not in ("true", "false", "on", "off", "yes", "no"):
                    raise toks.error(f"option {key} takes true or false, not '{value}'", tok)
                opts[key] = value in ("true", "on", "yes")
            else:
                if value not in _CHOICES[key]:
                    raise toks.error(f"option {key} takes one of {', '.join(_CHOICES[key])}", tok)
                opts[key] = value
            continue
        if w == "vs":
            raise toks.error("only one 'vs' is allowed", tok)
        raise toks.error(f"'{tok.text}' is not understood here", tok)
    return qa, qb


def _check_sizes(spec: Spec, limits: Limits, text: str) -> None:
    pools = [spec.actor, spec.opposition] if isinstance(spec, Simple) else [
        spec.damage, spec.soak, spec.resolve]
    for pool in pools:
        if pool is None:
            continue
        n = len(pool.base) + len(pool.include) + pool.bonuses
        limits.check_dice(n, text, (0, len(text)))
        if isinstance(spec, Simple) and pool.penalties + 1 > limits.max_rolls:
            from .._errors import LimitError

            raise LimitError(f"{pool.penalties} Penalties means {pool.penalties + 1} rolls; "
                             f"the limit is {limits.max_rolls}", text, (0, len(text)))


# --------------------------------------------------------------------------------------------
# Preparing a pool (shared by rolling and odds)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A pool after J41/J42 steps 1–5: the dice to roll, what each step did, net modifiers."""

    sizes: tuple[int, ...]
    steps: tuple[str, ...]
    penalties: int  # net Simple-roll Penalties (re-rolls); 0 for damage pools
    favored: bool
    quality: str | None
    base: tuple[int, ...] = ()


def prepare(pool: Pool, options: Mapping[str, Any], damage: bool) -> Prepared:
    """J41 (Simple) / J42 (Damage) steps 1–5 in order."""
    sizes = pool.base
    steps: list[str] = []
    if pool.include:  # 1. Include (J36)
        sizes = sizes + pool.include
        steps.append(f"Include {dice_text(pool.include)} → {dice_text(sizes)}")
    for what in pool.remove:  # 2. Remove (J37)
        after = remove_die(sizes, what)
        if after is None:
            raise InputError(f"cannot remove {what}: the pool ({dice_text(sizes)}) has no such die")
        steps.append(f"Remove {what} → {dice_text(after)}")
        sizes = after
    if pool.limit is not None:  # 3. Limit (J38)
        after = apply_limit(sizes, pool.limit)
        steps.append(f"Limit d{pool.limit} → {dice_text(after)}")
        sizes = after
    b, p = net(pool.bonuses, pool.penalties)  # J12
    if pool.bonuses and pool.penalties:
        steps.append(f"{_n(pool.bonuses, 'Bonus', 'Bonuses')} and "
                     f"{_n(pool.penalties, 'Penalty', 'Penalties')} cancel → net "
                     + (f"+{_n(b, 'Bonus', 'Bonuses')}" if b else
                        f"-{_n(p, 'Penalty', 'Penalties')}" if p else "none"))
    if b:  # 4. Bonuses (J13–J17)
        after = apply_bonuses(sizes, b, options["bonus_distribution"])
        n = max(1, len(sizes))
        steps.append(f"+{b} Bonus: {b} × {n} {'dice' if n > 1 else 'die'} = {b * n} size increases "
                     f"→ {dice_text(after)}")
        sizes = after
        if pool.limit is not None and not options["limit_before_bonus"]:
            sizes = apply_limit(sizes, pool.limit)
            steps.append(f"Limit d{pool.limit} again (house rule) → {dice_text(sizes)}")
    if damage and p:  # 5. Damage Penalty: remove the smallest die per Penalty (J30)
        after = damage_penalty(sizes, p)
        steps.append(f"-{p} Penalty: remove the smallest die{' each' if p > 1 else ''} → "
                     f"{dice_text(after)}")
        sizes, p = after, 0
    return Prepared(sizes, tuple(steps), p, pool.favored,
                    quality_in_force(pool.quality, options["quality_bands"]), pool.base)


def _n(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def quality_in_force(quality: str | None, bands: str) -> str | None:
    """J8, J-A6: a Quality by name, or a Skill Level (``q=7``) read with the bands in force."""
    if quality is not None and quality.isdigit():
        return quality_of_level(int(quality), bands)
    return quality


# --------------------------------------------------------------------------------------------
# Rolling


def _roll_once(tray: Tray, prep: Prepared, group: str, stream: int, favored: bool,
               options: Mapping[str, Any], lines: list[str]) -> tuple[int, list[int]]:
    idx = [tray.roll(s, group, stream) for s in prep.sizes]  # J41 step 5
    faces = [tray.face(i) for i in idx]
    shown = ", ".join(f"d{s}→{f}" for s, f in zip(prep.sizes, faces))
    lines.append(f"  {group}: {shown}")
    if favored:  # step 6: the Favored re-roll of one 1 (J39, J-A15)
        j = favored_index(prep.sizes, faces)
        if j is not None and options["favored_auto"]:
            new = tray.reroll(idx[j], stream, "Favored re-roll")
            lines.append(f"  Favored: re-roll the 1 on the d{prep.sizes[j]} → {new}")
            faces[j] = new
        elif j is not None:
            lines.append(f"  Favored: the player may re-roll the 1 on the d{prep.sizes[j]}")
    return score(faces), faces


def _roll_simple_side(tray: Tray, prep: Prepared, name: str, stream: int,
                      options: Mapping[str, Any], lines: list[str]) -> tuple[int, list[int]]:
    rolls = roll_count(prep.penalties, options["penalty_rolls"])
    if prep.steps:
        lines.append(f"{name}: {dice_text(prep.base)}")
        for step in prep.steps:
            lines.append(f"  {step}")
    lines.append(f"{name} rolls {dice_text(prep.sizes)}"
                 + (f", {rolls} times ({_n(prep.penalties, 'Penalty', 'Penalties')}: keep the "
                    "worst Score, J21)"
                    if rolls > 1 else ""))
    results: list[tuple[int, list[int]]] = []
    spans: list[tuple[int, int]] = []  # each roll's dice in the tray
    for r in range(rolls):
        favored = prep.favored and (r == 0 or options["favored_each_penalty_roll"])
        group = name.lower() if rolls == 1 else f"{name.lower()} roll {r + 1}"
        start = len(tray.freeze())
        sc, faces = _roll_once(tray, prep, group, stream, favored, options, lines)
        spans.append((start, len(tray.freeze())))
        results.append((sc, faces))
        if rolls > 1:
            lines.append(f"    Score {sc}")
    # J21, J-A10: the worst Score stands, with the faces of the roll that produced it
    worst = min(range(rolls), key=lambda i: results[i][0])
    for r, (start, end) in enumerate(spans):  # the other rolls' dice are discarded
        if r != worst:
            for i in range(start, end):
                tray.drop(i, "discarded: the worst Score stands (J21)")
    sc, faces = results[worst]
    lines.append(f"  Score {sc}" + (f" (worst of {[r[0] for r in results]})" if rolls > 1 else "")
                 + (" — Botch!" if sc == 1 else ""))
    return sc, faces


def _empty(prep: Prepared, side: str, options: Mapping[str, Any]) -> bool:
    if prep.sizes:
        return False
    if options["empty_pool"] == "cannot_roll":
        raise InputError(f"the {side} pool has no dice left to roll (J-X3); the house rule "
                         "empty_pool=auto_botch counts it as a Botch instead")
    return True


def roll(spec: Spec, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a Jadeclaw spec with faces from ``source``; the verdict comes from the rule functions."""
    tray = Tray(source, limits)
    lines: list[str] = []
    if isinstance(spec, Damage):
        return _roll_damage(spec, tray, options, text, lines)
    actor = prepare(spec.actor, options, damage=False)
    lines.append(f"Jadeclaw Simple Roll: {str(spec)[4:]}")
    opp = prepare(spec.opposition, options, damage=False) if spec.opposition else None
    if spec.calm and opp is not None and may_declare_success(
            actor.sizes, opp.sizes, options["auto_success_dominance"], spec.actor.penalties):
        lines.append(f"J48: {dice_text(actor.sizes)} matches {dice_text(opp.sizes)} die for die "
                     "and the task is calm: Success without rolling")
        return Roll("jadeclaw", text, "success",
                    {"auto_success": True, "actor_score": None, "opposition_score": None},
                    tray.freeze(), tuple(lines), spec)
    if spec.calm and spec.actor.penalties:
        lines.append("J48 does not apply: a Penalty (lack of time, poor preparation) means the "
                     "task is not calm: roll")
    elif spec.calm:
        lines.append("J48 does not apply (the pool does not match the Difficulty die for die): "
                     "roll")
    a_empty = _empty(actor, "actor", options)
    a, _ = (1, []) if a_empty else _roll_simple_side(tray, actor, "Actor", 0, options, lines)
    if a_empty:
        lines.append("Actor has no dice: a Botch (house rule empty_pool=auto_botch)")
    result: dict[str, Any] = {"actor_score": a, "botch": a == 1}
    if opp is None:
        source.finish()
        outcome = "botch" if a == 1 else "no_botch"
        lines.append("Botch!" if a == 1 else f"Score {a}")
        return Roll("jadeclaw", text, outcome, result, tray.freeze(), tuple(lines), spec)
    name = "Difficulty" if spec.opposition and spec.opposition.difficulty else "Opposition"
    if name == "Difficulty" and spec.opposition is not None:
        title = DIFFICULTY_TITLES[spec.opposition.difficulty or ""]
        lines.append(f"The GM rolls the Difficulty Dice for {title} (J47, J52)")
    o_empty = _empty(opp, "opposing", options)
    b, _ = (1, []) if o_empty else _roll_simple_side(tray, opp, name, 1, options, lines)
    source.finish()
    outcome = contest_outcome(a, b, actor.quality, opp.quality, options)
    margin = a - b
    result.update({"opposition_score": b, "margin": margin,
                   "overwhelming": abs(margin) >= OVERWHELM,
                   "both_botch": a == 1 and b == 1})
    verdict = _verdict_line(a, b, actor.quality, opp.quality, outcome)
    lines.append(verdict)
    return Roll("jadeclaw", text, outcome, result, tray.freeze(), tuple(lines), spec)


def _verdict_line(a: int, b: int, qa: str | None, qb: str | None, outcome: str) -> str:
    words = {"botch": "Botch", "overwhelming_failure": "Overwhelming Failure",
             "failure": "Failure", "tie": "Tie", "success": "Success",
             "overwhelming_success": "Overwhelming Success"}[outcome]
    line = f"{a} vs {b}: margin {a - b:+d} → {words}"
    if a == b == 1:
        line += " (double Botch)"
    elif a == b and outcome != "tie":
        line += f" (Quality {qa} beats {qb})" if outcome == "success" else \
            f" (Quality {qb} beats {qa})"
    return line


def _roll_damage(spec: Damage, tray: Tray, options: Mapping[str, Any], text: str,
                 lines: list[str]) -> Roll:
    kind = damage_kind(spec.slaying, spec.enervated)
    dmg = prepare(spec.damage, options, damage=True)
    soak = prepare(spec.soak, options, damage=True)
    lines.append(f"Jadeclaw Damage Roll: {str(spec)[4:]}")
    if spec.slaying and spec.enervated:
        lines.append("Slaying and Enervated cancel: normal damage (J33)")
    faces: dict[str, list[int]] = {}
    for name, prep, stream, fav_ok in (("Damage", dmg, 0, True),
                                       ("Soak", soak, 1, options["favored_on_soak"])):
        lines.append(f"{name} dice: {dice_text(prep.base)}")
        for step in prep.steps:
            lines.append(f"  {step}")
        if prep.steps and prep.sizes:
            lines.append(f"  rolls {dice_text(prep.sizes)}")
        if not prep.sizes:
            faces[name] = []
            lines.append(f"  no {name.lower()} dice to roll")
            continue
        _, f = _roll_once(tray, prep, name.lower(), stream, prep.favored and fav_ok, options,
                          lines)
        faces[name] = f
    result: dict[str, Any]
    if not faces["Damage"]:
        botch = soak_botched([], faces["Soak"], options)
        hits = 1 if botch else 0
        lines.append("No damage dice: no pairs (J-A12)" + (
            "; the Soak Botch still gives +1 hit (soak_botch_with_no_damage_dice=true, J28)"
            if botch else ""))
        result = {"hits": hits, "pairs": [], "soak_botch": botch}
    else:
        pairs = damage_pairs(faces["Damage"], faces["Soak"], kind)
        for d, s, h in pairs:
            vs = "an imaginary 1" if s is None else str(s)
            why = "a 1 never hits" if d == 1 else ""
            lines.append(f"  {d} vs {vs}: {h} hit{'s' if h != 1 else ''}"
                         + (f" ({why})" if why else ""))
        botch = soak_botched(faces["Damage"], faces["Soak"], options)
        if botch:
            lines.append("  Soak Botch (every soak die shows 1): +1 hit (J28)")
        hits = damage_hits(faces["Damage"], faces["Soak"], kind, options)
        result = {"hits": hits, "pairs": [[d, s, h] for d, s, h in pairs],  # s None: imaginary 1
                  "soak_botch": botch}
    outcome = "nothing" if hits == 0 else "hit"
    lines.append(f"{hits} hit{'s' if hits != 1 else ''}" if hits else "No hits: nothing")
    if spec.resolve is not None and not resolve_tested(hits):
        lines.append("No Wound, so no Resolve test (J35: a Damage Roll that scores a Wound "
                     "becomes a Simple Roll in a Resolve Test)")
        result["resolve"] = {"tested": False}
    elif spec.resolve is not None:
        res = prepare(spec.resolve, options, damage=False)
        lines.append("Resolve test against the damage faces (J35):")
        if not faces["Damage"]:
            raise InputError("a Resolve test needs damage faces, but no damage dice were rolled")
        b = score(faces["Damage"])
        a, _ = _roll_simple_side(tray, res, "Resolve", 2, options, lines)
        r_out = contest_outcome(a, b, res.quality, None, options)
        lines.append(_verdict_line(a, b, res.quality, None, r_out))
        result["resolve"] = {"tested": True, "score": a, "damage_score": b, "outcome": r_out}
    tray.source.finish()
    return Roll("jadeclaw", text, outcome, result, tray.freeze(), tuple(lines), spec)


# --------------------------------------------------------------------------------------------
# Exact odds


def score_cdf(sizes: Sequence[int], favored: bool = False) -> list[float]:
    """P(Score ≤ k) for k = 0..12 of one roll (J4, with the J39 Favored re-roll).

    With Favored, condition on the first die (largest size first) that shows 1: the dice before
    it show 2..k, it is re-rolled fresh, the dice after it show anything up to k.
    """
    dice = sorted(sizes, reverse=True)
    cdf = [0.0] * (TOP + 1)
    for k in range(1, TOP + 1):
        upto = [min(k, s) / s for s in dice]
        if not favored:
            cdf[k] = math.prod(upto)
            continue
        above1 = [max(0, min(k, s) - 1) / s for s in dice]
        total = math.prod(above1)
        prefix = 1.0
        for j, s in enumerate(dice):
            total += prefix * (1 / s) * upto[j] * math.prod(upto[j + 1:])
            prefix *= above1[j]
        cdf[k] = total
    return cdf


def final_score_pmf(prep: Prepared, options: Mapping[str, Any]) -> list[float]:
    """P(final Score = k), k = 0..12: the worst of p+1 rolls (J21, J40)."""
    if not prep.sizes:
        if options["empty_pool"] == "cannot_roll":
            raise InputError("a pool has no dice left to roll (J-X3)")
        return [0.0, 1.0] + [0.0] * (TOP - 1)
    rolls = roll_count(prep.penalties, options["penalty_rolls"])
    fav = score_cdf(prep.sizes, prep.favored and options["favored_auto"])
    # J40: the repeat rolls are Favored too unless the house rule gives only the first one
    repeat = fav if options["favored_each_penalty_roll"] or not prep.favored or rolls == 1 \
        else score_cdf(prep.sizes, False)
    survive = [(1 - fav[k]) * (1 - repeat[k]) ** (rolls - 1) for k in range(TOP + 1)]
    cdf = [1 - s for s in survive]
    return [0.0] + [max(0.0, cdf[k] - cdf[k - 1]) for k in range(1, TOP + 1)]


def contest_distribution(pa: Sequence[float], pb: Sequence[float], qa: str | None,
                         qb: str | None, options: Mapping[str, Any]) -> dict[str, float]:
    """Outcome probabilities of a contest from the two Score distributions (independent sides)."""
    out = dict.fromkeys(CONTEST_OUTCOMES, 0.0)
    for a in range(1, TOP + 1):
        if pa[a] == 0:
            continue
        for b in range(1, TOP + 1):
            if pb[b]:
                out[contest_outcome(a, b, qa, qb, options)] += pa[a] * pb[b]
    return out


def odds(spec: Spec, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    """The exact odds of a Jadeclaw spec."""
    if isinstance(spec, Damage):
        return _damage_odds(spec, options, limits, text)
    actor = prepare(spec.actor, options, damage=False)
    notes: list[str] = [f"actor: {dice_text(actor.sizes)}"
                        + (f", {actor.penalties + 1} rolls keep the worst" if actor.penalties
                           else "")]
    pa = final_score_pmf(actor, options)
    score_dist = Distribution.from_mapping({k: pa[k] for k in range(1, TOP + 1) if pa[k]})
    if spec.opposition is None:
        outcomes = {"botch": pa[1], "no_botch": 1 - pa[1]}
        return Odds("jadeclaw", text, Distribution.from_mapping(outcomes, order=SINGLE_OUTCOMES),
                    score_dist, "Score", tuple(notes))
    opp = prepare(spec.opposition, options, damage=False)
    notes.append(f"opposition: {dice_text(opp.sizes)}"
                 + (f", {opp.penalties + 1} rolls keep the worst" if opp.penalties else ""))
    if spec.calm and may_declare_success(actor.sizes, opp.sizes,
                                         options["auto_success_dominance"],
                                         spec.actor.penalties):
        notes.append("J48: calm task and the pool matches the Difficulty: Success without rolling")
        out = dict.fromkeys(CONTEST_OUTCOMES, 0.0)
        out["success"] = 1.0
        return Odds("jadeclaw", text, Distribution.from_mapping(out, order=CONTEST_OUTCOMES),
                    Distribution.from_mapping({}), "margin", tuple(notes))
    pb = final_score_pmf(opp, options)
    out = contest_distribution(pa, pb, actor.quality, opp.quality, options)
    margins: dict[int, float] = {}
    for a in range(1, TOP + 1):
        for b in range(1, TOP + 1):
            if pa[a] and pb[b]:
                margins[a - b] = margins.get(a - b, 0.0) + pa[a] * pb[b]
    return Odds("jadeclaw", text, Distribution.from_mapping(out, order=CONTEST_OUTCOMES),
                Distribution.from_mapping(margins), "margin", tuple(notes),
                {"actor_score": score_dist.to_json(),
                 "opposition_score": Distribution.from_mapping(
                     {k: pb[k] for k in range(1, TOP + 1) if pb[k]}).to_json()})


def _damage_odds(spec: Damage, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    kind = damage_kind(spec.slaying, spec.enervated)
    dmg = prepare(spec.damage, options, damage=True)
    soak = prepare(spec.soak, options, damage=True)
    fav_soak = soak.favored and options["favored_on_soak"] and options["favored_auto"]
    fav_dmg = dmg.favored and options["favored_auto"]
    if dmg.sizes:
        hits = damage_hits_distribution(dmg.sizes, soak.sizes, kind, fav_dmg, fav_soak, options,
                                        limits, text)
    else:  # J-A12: no pairs; a Soak Botch (every soak die a 1, i.e. Score 1) may still hit
        botch = score_cdf(soak.sizes, fav_soak)[1] if soak_botched(
            [], [1] * len(soak.sizes), options) else 0.0
        hits = [1.0 - botch, botch] if botch else [1.0]
    dist = Distribution.from_mapping({h: p for h, p in enumerate(hits) if p > 0})
    notes = [f"damage: {dice_text(dmg.sizes)}", f"soak: {dice_text(soak.sizes)}"]
    outcomes: dict[str, float] = {"nothing": hits[0], "hit": 1 - hits[0]}
    order: tuple[str, ...] = ("nothing", "hit")
    extra: dict[str, Any] = {}
    if spec.resolve is not None:
        tested = math.fsum(p for h, p in enumerate(hits) if resolve_tested(h))
        extra["resolve_tested"] = tested
        res = prepare(spec.resolve, options, damage=False)
        if tested > 0:
            pr = final_score_pmf(res, options)
            pd = _damage_score_given_a_hit(dmg.sizes, soak.sizes, kind, fav_dmg, fav_soak,
                                           options, hits[0], limits, text)
            r_out = contest_distribution(pr, pd, res.quality, None, options)
            extra["resolve_outcomes"] = Distribution.from_mapping(
                r_out, order=CONTEST_OUTCOMES).to_json()
        notes.append(f"resolve: {dice_text(res.sizes)} against the damage dice's Score, only "
                     f"after a hit ({tested:.4%} of rolls, J35); resolve_outcomes are given a hit")
    return Odds("jadeclaw", text, Distribution.from_mapping(outcomes, order=order), dist, "hits",
                tuple(notes), extra)


def _damage_score_given_a_hit(damage: Sequence[int], soak: Sequence[int], kind: str,
                              fav_dmg: bool, fav_soak: bool, options: Mapping[str, Any],
                              nothing: float, limits: Limits, text: str) -> list[float]:
    """P(damage Score = b | at least one hit), b = 0..12 (J35: the Resolve test's opposition).

    P(no hit, every damage face ≤ b) is the damage pool with each die cut to its faces ≤ b
    (uniform on 1..min(b, size)) times the chance of that cut; differences over b give
    P(no hit, Score = b), which is taken out of P(Score = b).
    """
    if fav_dmg:
        raise LimitError("the odds of a Resolve test after a Favored Damage Roll are not computed "
                         "(the Favored re-roll ties the damage Score to the hits); roll it, or "
                         "ask the odds without 'resolve'", text, (0, len(text)) if text else None)
    cdf = score_cdf(damage, False)
    quiet = [0.0] * (TOP + 1)  # P(no hit, every damage face ≤ b)
    for b in range(1, TOP + 1):
        cut = [min(b, d) for d in damage]
        share = math.prod(c / d for c, d in zip(cut, damage))
        quiet[b] = share * damage_hits_distribution(cut, soak, kind, False, fav_soak, options,
                                                    limits, text)[0]
    hit = 1.0 - nothing
    return [0.0] + [max(0.0, (cdf[b] - cdf[b - 1]) - (quiet[b] - quiet[b - 1])) / hit
                    for b in range(1, TOP + 1)]


def _hit_steps(kind: str) -> list[int]:
    """h[k] = hits of a damage face k above its soak face (k = 0..12); the rule, tabulated."""
    return [pair_hits(2 + k, 2, kind) for k in range(TOP)]  # J24–J32 depend on d − s only


def _favored_mixture(sizes: Sequence[int]) -> list[tuple[float, list[tuple[int, int]]]]:
    """The Favored pool as a mixture of independent dice: (weight, [(size, lowest face)]).

    Component j: the first j dice (largest first) show no 1, die j showed 1 and was re-rolled
    fresh, the rest are plain. The last component: no die shows 1.
    """
    dice = sorted(sizes, reverse=True)
    comps: list[tuple[float, list[tuple[int, int]]]] = []
    prefix = 1.0
    for j, s in enumerate(dice):
        comps.append((prefix / s, [(x, 2) for x in dice[:j]] + [(x, 1) for x in dice[j:]]))
        prefix *= (s - 1) / s
    comps.append((prefix, [(x, 2) for x in dice]))
    return comps


def damage_hits_distribution(damage: Sequence[int], soak: Sequence[int], kind: str = NORMAL,
                             damage_favored: bool = False, soak_favored: bool = False,
                             options: Mapping[str, Any] = DEFAULTS,
                             limits: Limits | None = None, text: str = "",
                             method: str = "auto") -> list[float]:
    """P(hits = h) for h = 0..max of a Damage Roll (J23–J34), computed exactly.

    The sorted-pool evaluator of ``astragal.odds.pairing`` steps through the faces from 12 down
    to 1 (J23 pairing by rank, J25/J26 surplus dice, J28 Soak Botch, J39 Favored); ``pair_hits``
    gives it the hits of a pair as steps of ``d − s``. ``method="enumerate"`` pairs every sorted
    face vector of each side instead (``_damage_enumerate``, small pools: a cross-check).
    """
    if not damage:
        return [1.0]
    if method == "enumerate":
        d_comps = _favored_mixture(damage) if damage_favored else [(1.0, [(s, 1) for s in damage])]
        s_comps = _favored_mixture(soak) if soak_favored else [(1.0, [(s, 1) for s in soak])]
        if limits is not None:
            cells = _sorted_count(damage) * _sorted_count(soak)
            grid = math.prod(damage) + math.prod(soak)
            limits.check_work(cells + grid * (len(d_comps) + len(s_comps)), "this Damage Roll",
                              text)
        return _damage_enumerate(d_comps, s_comps, kind)
    attack = pairing.Pool(tuple(damage), damage_favored)
    defence = pairing.Pool(tuple(soak), soak_favored)
    steps = _pair_steps(kind)
    if limits is not None:
        damage_work(damage, soak, kind, damage_favored, soak_favored, limits, text)
    kernel = method if method in ("exact", "numpy") else "auto"
    return pairing.distribution(attack, defence, steps, 1, kernel)


def _pair_steps(kind: str) -> tuple[tuple[int, int], ...]:
    """``pair_hits`` as steps of the face difference: (t, extra hits once d − s ≥ t)."""
    h = _hit_steps(kind)
    return tuple((t, h[t] - h[t - 1]) for t in range(1, TOP) if h[t] != h[t - 1])


def damage_work(damage: Sequence[int], soak: Sequence[int], kind: str = NORMAL,
                damage_favored: bool = False, soak_favored: bool = False,
                limits: Limits | None = None, text: str = "") -> pairing.Work:
    """The work of a Damage Roll's exact odds, estimated before any of it is done; past the
    limits (steps, bytes) a LimitError."""
    work = pairing.estimate(pairing.Pool(tuple(damage), damage_favored),
                            pairing.Pool(tuple(soak), soak_favored), _pair_steps(kind), 1)
    if limits is not None:
        limits.check_work(work.steps, "this Damage Roll", text)
        limits.check_memory(work.peak_bytes, "this Damage Roll", text)
    return work


def _sorted_count(sizes: Sequence[int]) -> int:
    """How many sorted face vectors a pool can show (multisets per size group)."""
    counts: dict[int, int] = {}
    for s in sizes:
        counts[s] = counts.get(s, 0) + 1
    return math.prod(math.comb(s + n - 1, n) for s, n in counts.items())


def _side_law(comps: list[tuple[float, list[tuple[int, int]]]],
              width: int) -> tuple[Any, Any, Any, int]:
    """Each sorted face vector of a side (high→low, cut or padded with 1s to ``width``), whether
    all its real dice show 1, and its weight: integers over a common denominator (returned), so
    the sums below are exact in float64."""
    import numpy as np

    sizes = [size for size, _ in comps[0][1]]
    lcm = math.lcm(*sizes) if sizes else 1
    denominator = math.prod(sizes) * lcm
    keys_all, weights_all, rows_all, ones_all = [], [], [], []
    for weight, dice in comps:
        if not dice:
            rows = np.ones((1, width), dtype=np.int64)
            ones = np.zeros(1, dtype=np.int64)
            row_weight = 1
        else:
            ranges = [np.arange(lo, size + 1) for size, lo in dice]
            grid = np.stack(np.meshgrid(*ranges, indexing="ij"), axis=-1).reshape(-1, len(dice))
            rows = -np.sort(-grid, axis=1)
            ones = (rows == 1).all(axis=1).astype(np.int64)
            if len(dice) < width:  # J26: imaginary 1s face the surplus damage dice
                rows = np.hstack([rows, np.ones((len(rows), width - len(dice)), dtype=np.int64)])
            rows = rows[:, :width]  # J25: surplus soak dice are ignored
            row_weight = round(weight * denominator / len(rows))  # an integer: see _favored_mixture
        keys_all.append((rows @ (13 ** np.arange(width, dtype=np.int64))) * 2 + ones)
        weights_all.append(np.full(len(rows), float(row_weight if dice else denominator)))
        rows_all.append(rows)
        ones_all.append(ones)
    keys = np.concatenate(keys_all)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return (np.concatenate(rows_all)[first], np.concatenate(ones_all)[first],
            np.bincount(inverse, weights=np.concatenate(weights_all)), denominator)


@lru_cache(maxsize=8)
def _hits_table(kind: str) -> Any:
    """``pair_hits`` tabulated: table[d, s] for faces 0..12."""
    import numpy as np

    return np.array([[pair_hits(d, s, kind) for s in range(TOP + 1)] for d in range(TOP + 1)])


def _damage_enumerate(d_comps: list[tuple[float, list[tuple[int, int]]]],
                      s_comps: list[tuple[float, list[tuple[int, int]]]], kind: str) -> list[float]:
    """Exact hits by pairing every sorted damage vector with every sorted soak vector."""
    import numpy as np

    width = len(d_comps[0][1])
    d_rows, _, d_w, d_den = _side_law(d_comps, width)
    s_rows, s_ones, s_w, s_den = _side_law(s_comps, width)
    table = _hits_table(kind)
    hits = np.repeat(s_ones[None, :], len(d_rows), axis=0)  # J28: a Soak Botch adds one hit
    for k in range(width):  # each rank's pair (J23), summed column by column
        hits += table[d_rows[:, k][:, None], s_rows[:, k][None, :]]
    out = np.bincount(hits.ravel(), weights=(d_w[:, None] * s_w[None, :]).ravel())
    result = [float(x) / (d_den * s_den) for x in out]
    while len(result) > 1 and result[-1] == 0.0:
        result.pop()
    return result


# --------------------------------------------------------------------------------------------
# GM tables


def levels_table(max_level: int = 20, max_bonus: int = 6,
                 distribution: str = "per_die_carry_down") -> list[list[str]]:
    """J20: the Summary of Levels and Bonuses, computed (rows: Level; columns: +0..+6)."""
    rows = [["Level", "Dice"] + [f"+{b}" for b in range(1, max_bonus + 1)]]
    for level in range(max_level + 1):
        base = level_dice(level)
        rows.append(["none" if level == 0 else str(level), dice_text(base) if base else "zero"]
                    + [dice_text(apply_bonuses(base, b, distribution))
                       for b in range(1, max_bonus + 1)])
    return rows


def contest_table(options: Mapping[str, Any] = DEFAULTS, penalties: int = 0,
                  max_level: int = 20) -> list[list[str]]:
    """P(Success or better) of each Level (rows) against each Difficulty (columns)."""
    rows = [["Level (P Success or better)"] + [DIFFICULTY_TITLES[d] for d in DIFFICULTIES]]
    for level in range(1, max_level + 1):
        prep = Prepared(level_dice(level), (), penalties, False, None)
        pa = final_score_pmf(prep, options)
        row = [f"L{level} {dice_text(level_dice(level))}"]
        for dice in DIFFICULTIES.values():
            pb = final_score_pmf(Prepared(dice, (), 0, False, None), options)
            out = contest_distribution(pa, pb, None, None, options)
            row.append(f"{100 * (out['success'] + out['overwhelming_success']):.1f}%")
        rows.append(row)
    return rows


def level_vs_level(options: Mapping[str, Any] = DEFAULTS, penalties: int = 0,
                   max_level: int = 20) -> list[list[dict[str, float]]]:
    """Contest outcome probabilities of every Level against every Level (1..max_level)."""
    pmfs = [final_score_pmf(Prepared(level_dice(lv), (), penalties, False, None), options)
            for lv in range(1, max_level + 1)]
    plain = [final_score_pmf(Prepared(level_dice(lv), (), 0, False, None), options)
             for lv in range(1, max_level + 1)]
    return [[contest_distribution(pa, pb, None, None, options) for pb in plain] for pa in pmfs]


# --------------------------------------------------------------------------------------------
# The system object


@dataclass(frozen=True)
class _Jadeclaw:
    name: str = "jadeclaw"
    aliases: tuple[str, ...] = ("jc",)
    title: str = "Jadeclaw"
    defaults: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULTS))

    def parse(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Spec:
        return parse(text, start, options, limits)

    def effective_options(self, spec: Spec, options: Mapping[str, Any]) -> dict[str, Any]:
        return {**DEFAULTS, **options, **dict(spec.options)}

    def roll(self, spec: Spec, source: Source, options: Mapping[str, Any], limits: Limits,
             text: str) -> Roll:
        return roll(spec, source, self.effective_options(spec, options), limits, text)

    def odds(self, spec: Spec, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
        return odds(spec, self.effective_options(spec, options), limits, text)


SYSTEM = _Jadeclaw()


def _table_levels(options: Mapping[str, Any]) -> list[list[str]]:
    merged = {**DEFAULTS, **options}
    check_options(merged)
    return levels_table(distribution=merged["bonus_distribution"])


def _table_contest(options: Mapping[str, Any]) -> list[list[str]]:
    merged = {**DEFAULTS, **options}
    penalties = int(merged.pop("penalties", 0))
    check_options(merged)
    return contest_table(merged, penalties)


def damage_table(options: Mapping[str, Any] = DEFAULTS, max_level: int = 20) -> list[list[str]]:
    """Mean hits of Damage dice of each Level (rows) against Soak dice of each Level (columns)."""
    kind = NORMAL
    rows = [["Damage \\ Soak"] + [f"L{lv}" for lv in range(max_level + 1)]]
    for dl in range(1, max_level + 1):
        row = [f"L{dl} {dice_text(level_dice(dl))}"]
        for sl in range(max_level + 1):
            dist = damage_hits_distribution(level_dice(dl), level_dice(sl), kind, options=options)
            row.append(f"{sum(h * p for h, p in enumerate(dist)):.2f}")
        rows.append(row)
    return rows


def _table_damage(options: Mapping[str, Any]) -> list[list[str]]:
    merged = {**DEFAULTS, **options}
    check_options(merged)
    return damage_table(merged)


TABLES = {"levels": _table_levels, "contest": _table_contest, "damage": _table_damage}
