"""Jadeclaw notation: ``jc: d12 & d8 +1b fav vs routine``, ``jc: dmg 2d12 slaying vs soak d8``.

A side is written as dice (``2d12 & d4``), Levels (``L7``) or, on the vs side, a Difficulty by
name (J47), then its modifiers: ``+Nb`` Bonuses, ``-Np`` Penalties, ``fav``, ``limit dS``, ``+dS``
(Include), ``remove biggest``, ``q=Quality``. A spec is immutable and remembered per text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..._digits import digits
from ..._errors import LimitError, NotationError, OptionError, cut
from ..._limits import Limits
from ..._records import Record
from ...notation import Token, Tokens, did_you_mean, tokenize
from . import rules as R
from .rules import DIFFICULTIES, QUALITIES, SIZES, SWITCHES, quality_in_force

__all__ = ["Damage", "Pool", "Simple", "Spec", "parse", "quality_in_force"]

_SWITCH = {s.name: s for s in SWITCHES}
# J47's "For Heroes Only" is often said without its "for", or its "only" (J-A18)
_DIFFICULTY_ALIASES = {alias: f"for {who} only" for who in ("experts", "heroes", "legends")
                       for alias in (who, f"{who} only")}


class Pool(Record):
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
                out.extend(R.level_dice(int(t[1:])))
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


class Simple(Record):
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


class Damage(Record):
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


_DIE = re.compile(r"(\d*)d(\d+)$", re.ASCII)
_LEVEL = re.compile(r"l(\d+)$", re.ASCII)
_BONUS = re.compile(r"([+-]?)(\d*)(b|bonus|bonuses|p|penalty|penalties)$", re.ASCII)
_INCLUDE = re.compile(r"\+(\d*)d(\d+)$", re.ASCII)
_SPACED_COUNT = re.compile(r"[+-]?\d+", re.ASCII)
_BONUS_WORD = re.compile(r"bonus|bonuses|penalty|penalties", re.ASCII)
_COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_LIMIT = re.compile(r"limit[=:]?d?(\d+)$", re.ASCII)

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
        raise LimitError(f"{n} dice is more than the limit of {limits.max_dice} dice per roll",
                         toks.text, (tok.start, tok.end))
    return n


def _read_difficulty(toks: Tokens) -> str | None:
    """A Difficulty by name (J47): the longest name that up to three words spell, spaced,
    hyphenated or quoted (``for heroes only``, ``'for heroes only'``, ``for-heroes-only``), with
    or without its ``for`` (``heroes only``) and its ``only`` (``heroes``)."""
    words: list[str] = []
    reads: list[tuple[int, int]] = []  # (words read so far, tokens they took)
    for j in range(3):
        tok = toks.peek(j)
        if tok is None or (j and tok.lower in _STOP):
            break
        parts = tok.lower.strip("'\"").replace("-", " ").replace("_", " ").split()
        if not parts:
            break
        words += parts
        reads.append((len(words), j + 1))
        if len(words) >= 3:
            break
    for count, used in reversed(reads):
        name = " ".join(words[:count])
        name = _DIFFICULTY_ALIASES.get(name, name)
        if name in DIFFICULTIES:
            toks.i += used
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
                if name.startswith("for ") and did_you_mean(after.lower, ("only",)):
                    typed = toks.text[tok.start:after.end]  # vs heroes olny
                    raise NotationError(f"'{typed}' is not a Difficulty: did you mean "
                                        f"'{name}'?", toks.text, (tok.start, after.end))
                dice = " ".join(f"d{s}" for s in DIFFICULTIES[name])
                raise toks.error(f"'{after.text}' after the Difficulty '{name}' would change the "
                                 "GM's Difficulty Dice (J47): write your pool's modifiers before "
                                 f"'vs', or write the Difficulty as dice ('vs {dice} ...')",
                                 after)
            continue
        toks.next()
        if (nxt := toks.peek()) is not None and _BONUS_WORD.fullmatch(nxt.lower) and (
                _SPACED_COUNT.fullmatch(w) or w in _COUNT_WORDS):
            # the text's own words: "one Bonus", "two Bonuses" (+1 bonus is +1b, J-A18)
            toks.next()
            w = str(_COUNT_WORDS.get(w, w)) + nxt.lower
            tok = Token(toks.text[tok.start:nxt.end], tok.start, nxt.end)
        elif w in ("bonus", "penalty"):  # "You may receive a Bonus": one (J-A18)
            w = "1" + w
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
            typed = m.group(2) or "1"
            n = int(typed) if len(typed) < 5 else 10**6  # no int() of a thousand digits
            if n > limits.max_dice:
                what = "Bonuses" if m.group(3).startswith("b") else "Penalties"
                raise LimitError(f"{cut(typed)} {what} is more than the limit of "
                                 f"{limits.max_dice}",
                                 toks.text, (tok.start, tok.end))
            if m.group(3).startswith("b"):
                if m.group(1) == "-":
                    raise toks.error(f"a Bonus is written +{n}b (a Penalty is -{n}p)", tok)
                bonuses += n
            else:
                if m.group(1) == "+":
                    raise toks.error(f"a Penalty is written -{n}p (a Bonus is +{n}b)", tok)
                penalties += n
        elif w in ("fav", "favored", "favoured"):
            if favored:  # one re-roll a roll (J39): a second 'fav' is a slip, not more Favor
                raise toks.error(f"the {side} pool is already Favored (one re-roll a roll, "
                                 "J39)", tok)
            favored = True
        elif w.startswith("q="):
            if quality is not None:
                raise toks.error(f"the {side} pool's Quality is given twice", tok)
            quality = _quality(w[2:], tok, toks)
        else:
            names = [*DIFFICULTIES, *_DIFFICULTY_ALIASES] if allow_difficulty else []
            raise toks.unknown(tok, f"part of a Jadeclaw {side} pool", [*_WORDS, *names],
                               _expected(allow_difficulty))
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
    if digits(text) and len(text) < 4:
        return str(int(text))  # a Skill Level: its band is read with quality_bands (J-A6)
    if text in QUALITIES:
        return text
    raise toks.error(f"'{text}' is not a Quality: use basic, expert, heroic, legendary, mythic "
                     "or a Skill Level", tok)


_WORDS = ("fav", "favored", "limit", "include", "remove", "biggest", "smallest", *_STOP)


def _expected(difficulty: bool) -> str:
    """What a pool is written with (and the Difficulties by name, on the vs side)."""
    return ("expected dice (d12, 2d8), a Level (L7), +Nb, -Np, fav, limit dS, +dS, remove "
            "biggest, q=Quality" + (", or a Difficulty: " + ", ".join(
                n.replace(" ", "-") for n in DIFFICULTIES) if difficulty else ""))


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
        versus = toks.accept("vs") is not None
        if versus:
            toks.accept("soak")
            soak = _read_pool(toks, limits, "soak", False)
        else:  # no Soak dice: every damage die meets an imaginary 1 (J26)
            soak = Pool()
        resolve = None
        if toks.accept("resolve") is not None:
            resolve = _read_pool(toks, limits, "resolve", False)
        _read_options(toks, opts, None, versus)
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
        qa, qb = _read_options(toks, opts, opposition, opposition is not None)
        if qa is not None:
            if actor.quality is not None:
                raise NotationError("the actor's Quality is given twice", text, (start, len(text)))
            actor = actor._replace(quality=qa)
        if qb is not None and opposition is not None:
            opposition = opposition._replace(quality=qb)
        # J48 measures the pool against the Difficulty's dice, by name or written as dice (the
        # text's own example: "d10 & d8 vs 2d8")
        if calm and opposition is None:
            tok = toks.items[-1]
            raise NotationError("'calm' (J48: skip the roll) needs a Difficulty on the vs side, "
                                "such as 'vs routine' or 'vs 2d8'", text, (tok.start, tok.end))
        spec = Simple(actor, opposition, calm, tuple(sorted(opts.items())))
    merged = {**R.DEFAULTS, **options, **opts}
    _check_sizes(spec, limits, text)
    for pool in (spec.actor, spec.opposition) if isinstance(spec, Simple) else (spec.resolve,):
        q = pool.quality if pool is not None else None
        if q is not None and digits(q) and quality_in_force(q, merged["quality_bands"]) is None:
            at = text.find(f"q={q}")
            raise NotationError(f"Skill Level {q} has no Quality under quality_bands="
                                f"{merged['quality_bands']} (J-A6); with quality_bands=0-4 it "
                                "is Basic", text, (at, at + 2 + len(q)) if at >= 0 else None)
    return spec


def _read_options(toks: Tokens, opts: dict[str, Any], opposition: Pool | None,
                  versus: bool) -> tuple[str | None, str | None]:
    """The switches and the Qualities at the end (``versus``: a 'vs' side was read)."""
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
            if key not in _SWITCH:
                raise toks.error(f"'{key}' is not a Jadeclaw option; options are "
                                 f"{', '.join(sorted(_SWITCH))}", tok)
            try:
                opts[key] = _SWITCH[key].read(value)
            except OptionError as exc:
                raise toks.error(str(exc), tok) from None
            continue
        if w == "vs":
            raise toks.error("only one 'vs' is allowed" if versus else
                             "options (name=value) go at the end, after the 'vs' side", tok)
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
            raise LimitError(f"{pool.penalties} Penalties means {pool.penalties + 1} rolls; "
                             f"the limit is {limits.max_rolls}", text, (0, len(text)))


