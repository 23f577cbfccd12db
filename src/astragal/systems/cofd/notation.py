"""Chronicles of Darkness notation: ``cofd: Wits 3 + Composure 2 - 1 9-again rote vs 4``.

A pool is numbers and named ratings joined by + and -, ``resist X n`` terms, the permutations
(``9-again``, ``8-again``, ``no-again``, ``rote``, ``willpower``) and ``chance``; then
``target N`` (an extended action, ``rolls N`` to cap it), ``vs`` and the opposing pool, and
``key=value`` switches. Errors point at the word that was not understood.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..._errors import LimitError, NotationError, OptionError, cut
from ..._limits import Limits
from ..._records import Record
from ...notation import did_you_mean, unknown
from .rules import AGAIN_RULES, DEFAULTS, SWITCHES

__all__ = ["MAX_TARGET_PER_DIE", "Action", "Side", "Term", "parse"]

MAX_TARGET_PER_DIE = 10    # a target beyond 10 × the dice limit is refused as absurd
_SWITCH = {s.name: s for s in SWITCHES}


class Term(Record):
    """One number of a pool: a trait's rating or a plain modifier, added or subtracted (C1, C8)."""

    value: int
    name: str = ""
    sign: int = 1
    resist: bool = False  # C8, C-A5: a resisting trait, written 'resist Composure 2'

    def body(self) -> str:
        """``Wits 3`` or ``3``."""
        return f"{self.name} {self.value}" if self.name else str(self.value)


class Side(Record):
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


class Action(Record):
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
    | (?P<again>(?:\d+|no)(?:-|\s+)?again)(?![\w-])
    | (?P<option>[A-Za-z_][\w-]*=[^\s]*)
    | (?P<number>\d+)
    | (?P<op>[+\-\u2212\u2013])
    | (?P<word>[A-Za-z][A-Za-z_'\u2019]*(?:-[A-Za-z][A-Za-z_'\u2019]*)*)
    | (?P<other>\S)
    )""", re.VERBOSE | re.ASCII)

_KEYWORDS = {"vs": "vs", "versus": "vs", "v": "vs", "target": "target", "rolls": "rolls",
             "rote": "rote", "willpower": "willpower", "wp": "willpower", "chance": "chance",
             "resist": "resist", "resisted": "resist"}
_MAX_DIGITS = 6


class _Tok(Record):
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

    def number(self, what: str, most: int, unit: str) -> tuple[int, _Tok]:
        """A number for ``what``; one of more digits than any limit allows is refused at once,
        naming the limit it is far past (``most`` ``unit``)."""
        tok = self.peek()
        if tok is None:
            raise self.at_end(f"{what}: expected a number here")
        if tok.kind != "number":
            raise self.error(f"{what}: expected a number, not '{tok.text}'", tok)
        self.i += 1
        if len(tok.text) > _MAX_DIGITS:
            raise LimitError(f"{cut(tok.text)} {unit} is more than the limit of {most}", self.text,
                             (tok.start, tok.end))
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
    value, _ = r.number(what, r.limits.max_dice, "dice")
    if (tok := r.peek()) is not None and tok.kind == "word" and tok.text.lower() in ("dice", "die"):
        r.i += 1  # "5 dice": C1's "that many ten sided dice are rolled"
    name = " ".join(w[:1].upper() + w[1:].lower() for w in words)
    return Term(value, name, sign, resist)


_WORDS = ("10-again", "9-again", "8-again", "no-again", "rote", "willpower", "chance", "resist",
          "vs", "target")


def _slip(r: _Reader, tok: _Tok) -> NotationError | None:
    """A mistyped word of the notation where a pool's next number would go (``9-agian``,
    ``rot``): asked about, not read as a number without its sign."""
    word = re.match(r"\S+", r.text[tok.start:])
    assert word is not None
    if did_you_mean(word.group(), _WORDS) is None:
        return None
    return unknown(r.text, (tok.start, tok.start + word.end()), word.group(),
                   "a Chronicles of Darkness word", _WORDS, "")


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
            n = tok.text.lower().removesuffix("again").rstrip("- \t")  # the text's "9 again"
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
        elif tok.kind == "word" and tok.text.lower() == "extended":
            raise r.error("an extended action is written with the successes it needs: "
                          "'cofd: 5 target 10' (C11), and 'rolls N' for a limit of rolls", tok)
        elif tok.kind in ("number", "word") and not tok.key:
            if any(not t.resist for t in terms):
                raise _slip(r, tok) or r.error(f"'{tok.text}': put + or - between the numbers "
                                               "of a pool", tok)
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
        opts[key] = _SWITCH[key].read(value)
    except OptionError as exc:
        raise r.error(exc.message, tok) from None


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
            n, ntok = r.number(f"'{tok.text}'", *(
                (MAX_TARGET_PER_DIE * limits.max_dice, "successes") if tok.key == "target"
                else (limits.max_rolls, "rolls")))
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
        raise LimitError(f"{target} successes is more than the limit of "
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
    from .program import prepare
    from .rules import rules_from

    rules = rules_from({**options, **opts})
    for side, tok in ((actor, actor_tok), (opposition, opp_tok)):
        if side is not None:
            prep = prepare(side, rules, contested=opposition is not None)
            span = (tok.start, tok.end) if tok is not None else (start, len(text))
            limits.check_dice(prep.dice, text, span)
    return spec
