"""d6 + skill notation: ``ds: atk d6+6 vs def d6+3 dmg d6+2``, ``ds: d6+4 vs 6 calm``.

A roll is ``[kind] d6[+N...]``, then ``vs #`` or ``vs`` an opposed roll, ``dmg N`` or a rolled
``dmg d6+N`` after an ATK, ``calm`` / ``stressful`` (S6) and ``key=value`` switches.
"""

from __future__ import annotations

import re
from typing import Any

from ..._errors import OptionError
from ..._records import Record
from ...notation import Token, Tokens, tokenize
from .rules import KIND_TITLES, KIND_WORDS, SWITCHES

__all__ = ["Check", "Side", "Spec", "parse"]

_MAX_DIGITS = 6
_SWITCHES = {s.name: s for s in SWITCHES}


class Side(Record):
    """One roll as written: its kind and the modifiers added to the d6 (``skill d6+6-2``)."""

    kind: str = "skill"
    modifiers: tuple[int, ...] = ()

    @property
    def bonus(self) -> int:
        """S1: the Trait or Skill and every modifier, before the d6."""
        return sum(self.modifiers)

    def __str__(self) -> str:
        mods = "".join(f"{m:+d}" for m in self.modifiers)
        return ("" if self.kind == "skill" else f"{self.kind} ") + f"d6{mods}"


class Check(Record):
    """A d6 + skill request: a roll, alone, against # or an opposed roll, with optional DMG."""

    actor: Side
    difficulty: int | None = None
    opposition: Side | None = None
    dmg: int | Side | None = None
    situation: str | None = None  # "calm" | "stressful" (S6); None = the switch's default
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def values(self) -> dict[str, Any]:
        """The roll's fields by name, as the game's functions take them; switches given in the
        notation stand over the table's."""
        return {**dict(self.options), "spec": self}

    @property
    def is_attack(self) -> bool:
        """An ATK roll (S4): against a DEF roll or a fixed DEF."""
        return self.actor.kind == "atk"

    @property
    def may_skip_roll(self) -> bool:
        """S6 can apply: a fixed # and not a combat roll (ATK and DEF are always stressful)."""
        return self.difficulty is not None and self.actor.kind not in ("atk", "def")

    def __str__(self) -> str:
        text = f"ds: {self.actor}"
        if self.difficulty is not None:
            text += f" vs {self.difficulty}"
        elif self.opposition is not None:
            text += f" vs {self.opposition}"
        if self.dmg is not None:
            text += f" dmg {self.dmg if isinstance(self.dmg, int) else str(self.dmg)[4:]}"
        if self.situation is not None:
            text += f" {self.situation}"
        return text + "".join(f" {k}={_opt_text(v)}" for k, v in self.options)


Spec = Check


def _opt_text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


_D6 = re.compile(r"([0-9]*)d([0-9]+)((?:[+-][0-9]+)*)$")
_MOD = re.compile(r"[+-][0-9]+")
_NUMBER = re.compile(r"#?([+-]?[0-9]+)#?$")
_DIGITS = re.compile(r"[0-9]+")


def _number(tok: Token, digits: str, toks: Tokens) -> int:
    if len(digits.lstrip("+-")) > _MAX_DIGITS:
        raise toks.error(f"{digits} is too large a number (at most {_MAX_DIGITS} digits)", tok)
    return int(digits)


def _read_side(toks: Tokens, where: str, kind: str | None, default_kind: str) -> Side:
    """``[kind] d6[+N...] [+N] [-N]``."""
    tok = toks.peek()
    if tok is None:
        raise toks.error_at_end(f"the {where} roll is missing: expected the d6, such as 'd6+3'")
    if kind is None and tok.lower in KIND_WORDS and not _D6.match(tok.lower):
        kind = KIND_WORDS[tok.lower]
        toks.next()
        tok = toks.peek()
        if tok is None:
            raise toks.error_at_end(f"the {where} roll is missing: expected the d6, such as "
                                    "'d6+3'")
    m = _D6.match(tok.lower)
    if not m:
        raise toks.error(f"'{tok.text}' is not a d6 + skill roll: expected the d6 and its "
                         "modifiers, such as 'd6+3'", tok)
    toks.next()
    if m.group(1) not in ("", "1"):
        raise toks.error("this game rolls one d6 (S1): write d6+N, not "
                         f"{m.group(1)}d{m.group(2)}", tok)
    if m.group(2) != "6":
        raise toks.error(f"d{m.group(2)[:6]} is not this game's die: it rolls one d6 (S1)", tok)
    mods = [_number(tok, d, toks) for d in _MOD.findall(m.group(3))]
    while (t := toks.peek()) is not None:
        if _MOD.fullmatch(t.text):
            toks.next()
            mods.append(_number(t, t.text, toks))
        elif t.text in ("+", "-") and (n := toks.peek(1)) is not None and _DIGITS.fullmatch(
                n.text):
            toks.next()
            toks.next()
            mods.append(_number(n, t.text + n.text, toks))
        else:
            break
    return Side(kind or default_kind, tuple(mods))


def parse(text: str, start: int) -> Check:
    """Read d6 + skill notation (after the ``ds:`` prefix).

    >>> print(parse("ds: atk d6+6 vs d6+3 dmg 4", 3))
    ds: atk d6+6 vs def d6+3 dmg 4
    """
    toks = tokenize(text, start)
    if toks.at_end():
        raise toks.error_at_end("nothing to roll: expected a roll such as 'd6+3 vs 5'")
    actor = _read_side(toks, "actor's", None, "skill")
    difficulty: int | None = None
    opposition: Side | None = None
    dmg: int | Side | None = None
    situation: str | None = None
    opts: dict[str, Any] = {}
    vs_tok = dmg_tok = sit_tok = None
    while (tok := toks.next() if not toks.at_end() else None) is not None:
        w = tok.lower
        if w == "vs":
            if vs_tok is not None:
                raise toks.error("only one 'vs' is allowed", tok)
            vs_tok = tok
            t = toks.peek()
            if t is None:
                raise toks.error_at_end("vs what? expected a Difficulty such as 'vs 5' or an "
                                        "opposed roll such as 'vs d6+2'")
            if t.text == "#" and (n := toks.peek(1)) is not None and _NUMBER.match(n.text):
                toks.next()
                t = n
            if (m := _NUMBER.match(t.text)) and not _D6.match(t.lower):
                toks.next()
                difficulty = _number(t, m.group(1), toks)
            else:
                opposition = _read_side(toks, "opposing", None,
                                        "def" if actor.kind == "atk" else "skill")
                _check_opposition(actor, opposition, t, toks)
        elif w in ("dmg", "damage"):
            if dmg_tok is not None:
                raise toks.error("the weapon's DMG is given twice", tok)
            dmg_tok = tok
            t = toks.peek()
            if t is None:
                raise toks.error_at_end("dmg what? expected the weapon's base DMG, such as "
                                        "'dmg 4' or a rolled DMG such as 'dmg d6+2'")
            if _DIGITS.fullmatch(t.text):
                toks.next()
                dmg = _number(t, t.text, toks)
            else:
                dmg = _read_side(toks, "DMG", "dmg", "dmg")
        elif w in ("calm", "stressful", "combat"):
            if sit_tok is not None:
                raise toks.error("say 'calm' or 'stressful' once", tok)
            sit_tok = tok
            situation = "calm" if w == "calm" else "stressful"
        elif "=" in w:
            _read_option(tok, toks, opts)
        elif w in KIND_WORDS or _D6.match(w):
            raise toks.error(f"'{tok.text}' is out of place: a d6 + skill roll is 'd6+N', "
                             "'d6+N vs #' or 'd6+N vs d6+M'", tok)
        else:
            raise toks.unknown(tok, "understood here", ("vs", "dmg", "calm", "stressful"),
                               "expected vs, dmg N, calm, stressful or key=value")
    spec = Check(actor, difficulty, opposition, dmg, situation, tuple(sorted(opts.items())))
    _check_spec(spec, toks, vs_tok, dmg_tok, sit_tok)
    return spec


def _check_opposition(actor: Side, opposition: Side, tok: Token, toks: Tokens) -> None:
    if actor.kind == "atk":
        if opposition.kind != "def":
            raise toks.error("an ATK is opposed by the target's DEF roll (S4): write "
                             "'atk d6+N vs def d6+M'", tok)
    elif opposition.kind not in ("skill", "trait"):
        what = KIND_TITLES[opposition.kind]
        if opposition.kind == "def":
            raise toks.error("a DEF roll opposes an ATK (S4): write 'atk d6+N vs def d6+M'", tok)
        raise toks.error(f"a {what} roll cannot oppose this roll: opposed rolls are Skill or "
                         "Trait rolls (S3), or ATK against DEF (S4)", tok)
    if actor.kind in ("def", "dmg", "loot"):
        raise toks.error(f"a {KIND_TITLES[actor.kind]} roll is not opposed: write the ATK first "
                         "('atk d6+N vs def d6+M') or roll it against a Difficulty", tok)


def _check_spec(spec: Check, toks: Tokens, vs_tok: Token | None,
                dmg_tok: Token | None, sit_tok: Token | None) -> None:
    if spec.actor.kind == "dmg" and vs_tok is not None:
        raise toks.error("a DMG roll is not made against anything: write 'dmg d6+N' alone",
                         vs_tok)
    if dmg_tok is not None:
        if not spec.is_attack:
            raise toks.error("a weapon's DMG goes with an ATK roll (S5): write "
                             "'atk d6+N vs def d6+M dmg D'", dmg_tok)
        if vs_tok is None:
            raise toks.error("DMG needs the ATK's margin over a DEF: write "
                             "'atk d6+N vs def d6+M dmg D'", dmg_tok)
    if sit_tok is not None and spec.situation == "calm":
        if spec.difficulty is None:
            raise toks.error("'calm' (S6: automatic Success) needs a Difficulty: write "
                             "'d6+N vs # calm'", sit_tok)
        if spec.actor.kind in ("atk", "def"):
            raise toks.error("ATK and DEF rolls are combat, which is always stressful (S6)",
                             sit_tok)
    if sit_tok is not None and spec.difficulty is None:
        raise toks.error("'stressful' matters only against a Difficulty (S6)", sit_tok)


def _read_option(tok: Token, toks: Tokens, opts: dict[str, Any]) -> None:
    key, _, value = tok.lower.partition("=")
    key = key.replace("-", "_")
    switch = _SWITCHES.get(key)
    if switch is None:
        raise toks.error(f"'{key}' is not a d6 + skill option; options are "
                         f"{', '.join(sorted(_SWITCHES))}", tok)
    if key in opts:
        raise toks.error(f"option {key} is given twice", tok)
    if (n := toks.peek()) is not None and n.text == ",":
        raise toks.error("join the kinds with '+' in the notation, e.g. explode_on=skill+trait", n)
    try:
        opts[key] = switch.read(value)
    except OptionError as exc:
        raise toks.error(exc.message, tok) from None
