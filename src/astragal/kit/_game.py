"""A game in one definition: its notation (a form), its dice (a function that builds the kit's
dice), its verdict (a registered rule of the values) and its switches. From these ``Game``
derives the roll with its record and words, the exact odds with fractions, and the rulebook."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._errors import LimitError, NotationError
from .._limits import Limits
from .._rng import Source
from ..dice import Roll, Tray
from ..odds import Distribution, Odds
from ..rulebook import rule as _register
from ..switches import Switch
from ._dice import Dice, Hand, _lift
from ._form import Form, Spec
from ._law import Law, joint

__all__ = ["AGAIN", "Decision", "Game"]


class _Again:
    """The verdict that a roll is made again (a tie rolled off)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "AGAIN"


AGAIN = _Again()


class Decision:
    """What a rule decided and why: the outcome, the rule that decided it, optionally the words
    the game says for it (``{value}`` is filled in) and what else the roll's result records
    (``found={"margin": 3}``: a result the game's players read, kept in ``Roll.result``)."""

    __slots__ = ("found", "outcome", "rule", "says")

    def __init__(self, outcome: str, rule: str = "", says: str = "",
                 found: Mapping[str, Any] | None = None) -> None:
        self.outcome, self.rule, self.says = outcome, rule, says
        self.found = dict(found or {})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Decision) and (other.outcome, other.rule, other.says,
                                                other.found) == (self.outcome, self.rule,
                                                                 self.says, self.found)

    def __hash__(self) -> int:
        return hash((self.outcome, self.rule, self.says, tuple(sorted(self.found.items()))))

    def __repr__(self) -> str:
        return f"Decision({self.outcome!r}, {self.rule!r})"


def _wants(f: Callable[..., Any]) -> tuple[str, ...] | None:
    """The keyword parameters ``f`` takes (None: it takes any, ``**kw``)."""
    params = inspect.signature(f).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))


def _given(wants: tuple[str, ...] | None, known: Mapping[str, Any],
           skip: int = 0) -> dict[str, Any]:
    if wants is None:
        return dict(known)
    return {k: known[k] for k in wants[skip:] if k in known}


def _json(value: Any) -> Any:
    return [_json(v) for v in value] if isinstance(value, tuple) else value


def _word(value: Any) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(map(_word, value)) + ")"
    return str(value)


class Game:
    """One game. ``form`` is its notation (see ``astragal.kit.Form``); ``dice`` builds its dice
    from the form's fields and the switches, by parameter name: one expression, or several
    (a tuple or a mapping of side names) for a contest. The verdict (``@game.verdict``) reads
    the values the same way. ``value`` names what the dice give (``total``, ``successes``);
    ``order`` lists the outcomes for the odds (else from the lowest mean value to the highest);
    ``measure`` gives the number the odds tabulate (else the value, or a tuple value's first
    place);
    ``tones`` says how each outcome reads at the table (good, bad, critical, neutral), and
    ``examples`` are rolls a player might type (the web room offers them)."""

    def __init__(self, name: str, title: str, form: str, dice: Callable[..., Any] | None = None,
                 *, aliases: Sequence[str] = (), switches: Sequence[Switch] = (),
                 words: Mapping[str, Mapping[str, Any]] | None = None,
                 order: Sequence[str] = (), value: str = "total", examples: Sequence[str] = (),
                 sides: Sequence[str] = ("you", "rival"),
                 measure: Callable[..., Any] | None = None,
                 tones: Mapping[str, str] | None = None) -> None:
        self.name, self.title = name, title
        self.aliases = tuple(aliases)
        self.switches = tuple(switches)
        self.form = Form(name, form, words)
        self.order = tuple(order)
        self.value_name = value
        self.examples = tuple(examples)
        self.sides = tuple(sides)
        self.measure = measure
        self.outcome_tones = dict(tones or {})
        if set(self.outcome_tones.values()) - {"good", "bad", "critical", "neutral"}:
            raise ValueError("an outcome's tone is good, bad, critical or neutral")
        self.tables: Mapping[str, Callable[[Mapping[str, Any]], list[list[str]]]] = {}
        self._dice: Callable[..., Any] | None = None
        self._verdict: Callable[..., Any] | None = None
        self._verdict_rule = ""
        self._statements: dict[str, str] = {}
        if dice is not None:
            self.dice(dice)

    # what a designer writes --------------------------------------------------------------

    def dice(self, f: Callable[..., Any]) -> Callable[..., Any]:
        """Decorate the function that builds the dice from the fields and switches."""
        self._dice, self._dice_wants = f, _wants(f)
        return f

    def rule(self, rule_id: str, statement: str) -> Callable[[Callable[..., Any]],
                                                             Callable[..., Any]]:
        """Register a rule of the game (listed by ``astragal rules``)."""
        self._statements[rule_id] = statement
        return _register(self.name, rule_id, statement)

    def verdict(self, rule_id: str, statement: str) -> Callable[[Callable[..., Any]],
                                                                Callable[..., Any]]:
        """Register the rule that reads the dice's values: it returns the outcome (a word), a
        ``Decision`` (an outcome with the rule that decided it), or ``AGAIN``."""
        def take(f: Callable[..., Any]) -> Callable[..., Any]:
            self.rule(rule_id, statement)(f)
            self._verdict, self._verdict_rule = f, rule_id
            self._verdict_wants = _wants(f)
            return f
        return take

    # what the registry asks of a system ----------------------------------------------------

    @property
    def defaults(self) -> dict[str, Any]:
        return {s.name: s.default for s in self.switches}

    def parse(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Spec:
        return self.form.parse(text, start)

    def _known(self, spec: Spec, options: Mapping[str, Any]) -> dict[str, Any]:
        return {**options, **spec.values}

    def build(self, spec: Spec, options: Mapping[str, Any], limits: Limits,
              text: str) -> list[tuple[str, Dice]]:
        """The sides' dice for ``spec``: (side name, dice) pairs."""
        if self._dice is None or self._verdict is None:
            raise TypeError(f"the game {self.name} has no dice or no verdict")
        try:
            made = self._dice(**_given(self._dice_wants, self._known(spec, options)))
        except ValueError as e:  # the game's word that this roll cannot be made
            raise NotationError(str(e), text, (0, len(text))) from None
        except Exception as e:  # noqa: BLE001 - a fault of the game's code, named as such
            raise NotationError(f"the game {self.name}'s dice could not be made for this roll "
                                f"({type(e).__name__}: {e}); to refuse a roll, its dice "
                                "function raises ValueError with the reason", text,
                                (0, len(text))) from None
        if isinstance(made, (Dice, int)):  # a number: no dice are rolled (an automatic success)
            sides = [("", _lift(made))]
        elif isinstance(made, Mapping):
            sides = [(k, _lift(v)) for k, v in made.items()]
        else:
            sides = [(self.sides[i] if i < len(self.sides) else f"side {i + 1}", _lift(d))
                     for i, d in enumerate(made)]
        limits.check_dice(sum(d.dice_count() for _, d in sides), text)
        return sides

    def decide(self, values: Sequence[Any], known: Mapping[str, Any]) -> Decision | _Again:
        """The verdict on the sides' values, with the rule that gave it."""
        assert self._verdict is not None
        out = self._verdict(*values, **_given(self._verdict_wants, known, len(values)))
        if isinstance(out, Decision):  # one that names no rule was decided by the verdict
            return out if out.rule else Decision(out.outcome, self._verdict_rule, out.says,
                                                 out.found)
        if out is AGAIN:
            return out
        return Decision(str(out), self._verdict_rule)

    def words(self, decision: Decision, values: Sequence[Any]) -> str:
        """The transcript's line for a decision: the game's words for it, or its outcome and the
        rule that decided it."""
        value = _word(values[0]) if len(values) == 1 else " vs ".join(map(_word, values))
        if decision.says:
            return decision.says.format(value=value, outcome=decision.outcome)
        statement = self._statements.get(decision.rule, "")
        return f"{decision.outcome} ({decision.rule}: {statement})" if statement else (
            decision.outcome)

    def roll(self, spec: Spec, source: Source, options: Mapping[str, Any], limits: Limits,
             text: str) -> Roll:
        sides = self.build(spec, options, limits, text)
        known = self._known(spec, options)
        tray = Tray(source, limits)
        lines: list[str] = []
        decision: Decision | _Again = AGAIN
        values: list[Any] = []
        for attempt in range(limits.max_rolls + 1):
            if attempt == limits.max_rolls:
                raise LimitError(f"the roll was made again {limits.max_rolls} times without an "
                                 "end: the limit of rolls")
            values = []
            for i, (side, dice) in enumerate(sides):
                value, said = dice.sample(Hand(tray, i, side or "dice"))
                values.append(value)
                head = f"{side}: " if side else ""
                # a one-sided game that says which number its value comes to shows that number
                shown = _word(self.measure(value) if self.measure and len(sides) == 1 else value)
                lines.append(f"{head}{dice}: {said} = {shown}" if said != shown
                             else f"{head}{dice}: {said}")
            decision = self.decide(values, known)
            if isinstance(decision, Decision):
                break
            lines.append(f"a tie: rolled again ({self._verdict_rule})")
        source.finish()
        assert isinstance(decision, Decision)
        lines.append(self.words(decision, values))
        result: dict[str, Any] = {"value": _json(values[0]) if len(values) == 1 else
                                  [_json(v) for v in values], "rule": decision.rule,
                                  **decision.found}
        return Roll(self.name, text, decision.outcome, result, tray.freeze(), tuple(lines), spec)

    def law(self, spec: Spec, options: Mapping[str, Any], limits: Limits,
            text: str) -> Law:
        """The exact law of (values, decision) pairs, ties rolled again taken out."""
        sides = self.build(spec, options, limits, text)
        known = self._known(spec, options)
        laws = [d.law(limits, text) for _, d in sides]

        def both(*values: Any) -> tuple[tuple[Any, ...], Decision | _Again]:
            return values, self.decide(values, known)

        law = joint(laws, both, limits, text)
        return law.without(lambda k: k[1] is AGAIN)

    def odds(self, spec: Spec, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
        law = self.law(spec, options, limits, text)
        outcomes = law.map(lambda k: k[1].outcome)
        n_sides = len(next(iter(law.weights))[0])
        numeric = all(all(type(v) is int for v in k[0]) for k in law.weights)
        measure: Callable[..., Any] = self.measure or _first_side
        name = self.value_name
        if self.measure is None and n_sides == 2 and numeric:
            measure, name = (lambda a, b: a - b), "margin"
        values = law.map(lambda k: measure(*k[0]))
        if not all(type(k) in (int, float) for k in values.weights):
            raise NotationError(f"the game {self.name} gives no number for its odds to tabulate "
                                "(its values are not numbers): its Game needs measure=, called "
                                "with one value per side", text, (0, len(text)))
        order = self.order or _by_mean(law, measure)
        notes = () if not law.cut else (
            f"an infinite tail of probability {float(law.cut):.1e} is cut",)
        return Odds(self.name, text, _distribution(outcomes, order), _distribution(values),
                    name, notes)


def _first_side(value: Any, *others: Any) -> Any:
    """The number a roll's odds tabulate: the first side's value, or its first place."""
    return value[0] if isinstance(value, tuple) and value else value


def _by_mean(law: Law, measure: Callable[..., Any]) -> tuple[str, ...]:
    """The outcomes from the lowest mean measured value to the highest."""
    sums: dict[str, list[float]] = {}
    for (values, decision), w in law.weights.items():
        m = float(measure(*values))
        s = sums.setdefault(decision.outcome, [0.0, 0.0])
        s[0] += m * w
        s[1] += w
    return tuple(sorted(sums, key=lambda o: sums[o][0] / sums[o][1] if sums[o][1] else 0.0))


def _distribution(law: Law, order: Sequence[Any] | None = None) -> Distribution:
    """The law as a Distribution, its whole-number counts kept (exact fractions at any size)."""
    fracs = law.fractions()
    den = math.lcm(*(f.denominator for f in fracs.values())) if fracs else 1
    return Distribution.from_counts({k: int(f * den) for k, f in fracs.items()} if not law.cut
                                    else law.weights, den if not law.cut else law.total,
                                    order=order or None)
