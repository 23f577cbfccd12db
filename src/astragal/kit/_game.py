"""A game in one definition: its notation (a form), its dice (a function that builds the kit's
dice), its verdict (a registered rule of the values) and its switches. From these ``Game``
derives the roll with its record and words, the exact odds with fractions, and the rulebook."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
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
from ._law import COMBINATION, Law, by_margin, joint

__all__ = ["AGAIN", "Decision", "Game", "Then", "then"]


class _Again:
    """The verdict that a roll is made again (a tie rolled off)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "AGAIN"


AGAIN = _Again()


class Decision:
    """What a rule decided and why: the outcome (or ``AGAIN``), the rule that decided it,
    optionally the words the game says for it (``{value}`` is filled in; several lines as a
    tuple), what else the roll's result records (``found={"margin": 3}``: a result the game's
    players read, kept in ``Roll.result``) and ``value``, the number the odds tabulate for it
    when it is not the dice's value (a damage total, a margin that a rule adjusted).

    ``says`` and ``found`` may be functions of nothing that give them: the odds, which weigh
    every combination of values and need only the outcome and the value, never call them; a
    roll calls them once."""

    __slots__ = ("_found", "_says", "outcome", "rule", "value")

    def __init__(self, outcome: Any, rule: str = "",
                 says: str | tuple[str, ...] | Callable[[], str | tuple[str, ...]] = "",
                 found: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
                 value: int | None = None) -> None:
        self.outcome, self.rule, self.value = outcome, rule, value
        self._says, self._found = says, found

    @property
    def says(self) -> str | tuple[str, ...]:
        if callable(self._says):
            self._says = self._says()
        return self._says

    @property
    def found(self) -> dict[str, Any]:
        if callable(self._found):
            self._found = self._found()
        return dict(self._found or {})

    def _key(self) -> tuple[Any, ...]:
        return (self.outcome, self.rule, self.says, self.value, _frozen(self.found))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Decision) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Decision({self.outcome!r}, {self.rule!r})"


def _frozen(x: Any) -> Any:
    """A found value as a hashable key (dicts and lists inside a decision's record)."""
    if isinstance(x, Mapping):
        return tuple(sorted((k, _frozen(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return tuple(_frozen(v) for v in x)
    return x


class Then:
    """A verdict that needs more dice before it is decided: ``dice`` are rolled (as the side
    ``side``, from the faces of ``stream``) and ``rule(value, *args)`` decides (an outcome, a
    ``Decision`` or another ``Then``). The roll rolls them only when the verdict asks; the odds
    weigh every value they can show (a damage roll made only on a hit), working out each
    ``rule(value, *args)`` once: equal ``args`` must give equal decisions. ``says`` are the lines
    the words give before those dice (the hit that calls for them), ``found`` what the roll's
    result records so far (the rule's decision adds to it)."""

    __slots__ = ("_found", "_says", "args", "dice", "rule", "side", "stream")

    def __init__(self, dice: Dice | int, rule: Callable[..., Any], *args: Hashable,
                 side: str = "", stream: int = 0,
                 says: str | tuple[str, ...] | Callable[[], str | tuple[str, ...]] = "",
                 found: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
                 ) -> None:
        self.dice, self.rule, self.args = _lift(dice), rule, args
        self.side, self.stream, self._says, self._found = side, stream, says, found

    @property
    def says(self) -> tuple[str, ...]:
        says = self._says() if callable(self._says) else self._says
        return (says,) if isinstance(says, str) and says else tuple(says)

    @property
    def found(self) -> dict[str, Any]:
        return dict((self._found() if callable(self._found) else self._found) or {})

    def _key(self) -> tuple[Any, ...]:
        return (id(self.dice), self.rule, self.args)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Then) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())


def then(dice: Dice | int, rule: Callable[..., Any], *args: Hashable, side: str = "",
         stream: int = 0, says: str | tuple[str, ...] | Callable[[], Any] = "",
         found: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None) -> Then:
    """The verdict's word that ``dice`` are rolled next and ``rule(value, *args)`` decides on
    their value (see ``Then``)."""
    return Then(dice, rule, *args, side=side, stream=stream, says=says, found=found)


def _again(d: Any) -> bool:
    return d is AGAIN or isinstance(d, Decision) and d.outcome is AGAIN


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

    def __init__(self, name: str, title: str, form: str | Callable[[str, int], Any],
                 dice: Callable[..., Any] | None = None,
                 *, aliases: Sequence[str] = (), switches: Sequence[Switch] = (),
                 words: Mapping[str, Mapping[str, Any]] | None = None,
                 order: Sequence[str] | Callable[..., Sequence[str]] = (),
                 value: str | Callable[..., str] = "total",
                 examples: Sequence[str] = (), sides: Sequence[str] = ("you", "rival"),
                 measure: Callable[..., Any] | None = None,
                 tones: Mapping[str, str] | None = None,
                 line: Callable[..., str] | None = None, margin: bool = False) -> None:
        self.name, self.title = name, title
        self.aliases = tuple(aliases)
        self.switches = tuple(switches)
        # the notation: a one-line form, or the game's own reader of (text, start) that returns
        # the roll's fields (a mapping, or a record whose ``values`` are its fields)
        self.form: Form | None = Form(name, form, words) if isinstance(form, str) else None
        self._reader = None if isinstance(form, str) else form
        self.order = order if callable(order) else tuple(order)
        self.value_name = value
        self.examples = tuple(examples)
        self.sides = tuple(sides)
        self.measure = measure
        self.line = line
        # a contest whose verdict reads the two sides only through the difference of their
        # numbers and the rest of each value: its odds convolve instead of pairing every value
        self.margin = margin
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

    def verdict(self, rule_id: str = "", statement: str = "") -> Callable[
            [Callable[..., Any]], Callable[..., Any]]:
        """Register the rule that reads the dice's values: it returns the outcome (a word), a
        ``Decision`` (an outcome with the rule that decided it), ``AGAIN`` or ``then(...)``. A
        verdict with no rule ID only calls the game's rules, and each of its decisions names
        the rule that decided it."""
        def take(f: Callable[..., Any]) -> Callable[..., Any]:
            if rule_id:
                f = self.rule(rule_id, statement)(f)
            self._verdict, self._verdict_rule = f, rule_id
            self._verdict_wants = _wants(f)
            return f
        return take

    # what the registry asks of a system ----------------------------------------------------

    @property
    def defaults(self) -> dict[str, Any]:
        return {s.name: s.default for s in self.switches}

    def parse(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Any:
        if self._reader is not None:
            return self._reader(text, start)
        assert self.form is not None
        return self.form.parse(text, start)

    def _known(self, spec: Any, options: Mapping[str, Any]) -> dict[str, Any]:
        fields = spec.values if hasattr(spec, "values") and not isinstance(spec, Mapping) else spec
        return {**options, **fields}

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

    def decide(self, values: Sequence[Any], known: Mapping[str, Any]) -> Decision | Then | _Again:
        """The verdict on the sides' values, with the rule that gave it."""
        assert self._verdict is not None
        return self._settle(self._verdict(*values, **_given(self._verdict_wants, known,
                                                             len(values))))

    def _settle(self, out: Any) -> Decision | Then | _Again:
        if isinstance(out, (Then, _Again)):
            return out
        if isinstance(out, Decision):  # one that names no rule was decided by the verdict
            return out if out.rule else Decision(out.outcome, self._verdict_rule, out._says,
                                                 out._found, out.value)
        return Decision(str(out), self._verdict_rule)

    def _value_name(self, known: Mapping[str, Any]) -> str:
        if callable(self.value_name):
            return str(self.value_name(**_given(_wants(self.value_name), known)))
        return self.value_name

    def _order(self, known: Mapping[str, Any]) -> tuple[str, ...]:
        if callable(self.order):
            return tuple(self.order(**_given(_wants(self.order), known)))
        return self.order

    def words(self, decision: Decision, values: Sequence[Any]) -> tuple[str, ...]:
        """The transcript's lines for a decision: the game's words for it, or its outcome and
        the rule that decided it."""
        value = _word(values[0]) if len(values) == 1 else " vs ".join(map(_word, values))
        if decision.says:
            says = (decision.says,) if isinstance(decision.says, str) else decision.says
            return tuple(x.format(value=value, outcome=decision.outcome) for x in says)
        if decision.outcome is AGAIN:
            return (f"a tie: rolled again ({decision.rule or self._verdict_rule})",)
        statement = self._statements.get(decision.rule, "")
        return (f"{decision.outcome} ({decision.rule}: {statement})" if statement else
                decision.outcome,)

    def _rolled(self, side: str, dice: Dice, hand: Hand, one: bool,
                known: Mapping[str, Any]) -> tuple[Any, str]:
        """Roll one side's dice: its value and its line in the words."""
        tray = hand.tray
        start = len(tray)
        value, said = dice.sample(hand)
        if self.line is not None:  # the game's own words for a side, from its dice's records
            return value, self.line(side, value, tray.freeze()[start:],
                                    **_given(_wants(self.line), known, 3))
        head = f"{side}: " if side else ""
        # a one-sided game that says which number its value comes to shows that number
        shown = _word(self.measure(value) if self.measure and one else value)
        return value, (f"{head}{dice}: {said} = {shown}" if said != shown
                       else f"{head}{dice}: {said}")

    def roll(self, spec: Any, source: Source, options: Mapping[str, Any], limits: Limits,
             text: str) -> Roll:
        sides = self.build(spec, options, limits, text)
        known = self._known(spec, options)
        tray = Tray(source, limits)
        lines: list[str] = []
        attempts: list[list[str]] = []
        rounds: list[dict[str, Any]] = []
        decision: Any = AGAIN
        values: list[Any] = []
        for attempt in range(limits.max_rolls + 1):
            if attempt == limits.max_rolls:
                raise LimitError(f"{limits.max_rolls} tied rounds in a row: the roll was made "
                                 f"again {limits.max_rolls} times, the limit of rolls", text,
                                 (0, len(text)))
            lines = []
            values = []
            for i, (side, dice) in enumerate(sides):
                group = (side or "dice") + (f" round {attempt + 1}" if attempt else "")
                value, line = self._rolled(side, dice, Hand(tray, i, group),
                                           len(sides) == 1, known)
                values.append(value)
                lines.append(line)
            decision = self.decide(values, known)
            found_so_far: dict[str, Any] = {}
            while isinstance(decision, Then):  # more dice, rolled only now that they are asked
                lines.extend(decision.says)
                found_so_far.update(decision.found)
                value, line = self._rolled(decision.side, decision.dice,
                                           Hand(tray, decision.stream, decision.side or "dice"),
                                           False, known)
                lines.append(line)
                decision = self._settle(decision.rule(value, *decision.args))
            if found_so_far and isinstance(decision, Decision):
                decision = Decision(decision.outcome, decision.rule, decision.says,
                                    {**found_so_far, **decision.found}, decision.value)
            found = decision.found if isinstance(decision, Decision) else {}
            if not _again(decision):
                rounds.append({"outcome": decision.outcome, **found})
                attempts.append(lines)
                break
            rounds.append({"outcome": "again", **found})
            attempts.append(lines + list(self.words(decision, values)
                                         if isinstance(decision, Decision) else
                                         self.words(Decision(AGAIN), values)))
        source.finish()
        assert isinstance(decision, Decision)
        if len(attempts) > 1:  # each round headed when a tie was rolled again
            lines = [x for n, said in enumerate(attempts, 1) for x in (f"Round {n}:", *said)]
        lines.extend(self.words(decision, values))
        result: dict[str, Any] = {"value": _json(values[0]) if len(values) == 1 else
                                  [_json(v) for v in values], "rule": decision.rule,
                                  **decision.found}
        if len(rounds) > 1:
            result["rounds"] = rounds
        return Roll(self.name, text, decision.outcome, result, tray.freeze(), tuple(lines), spec)

    def law(self, spec: Any, options: Mapping[str, Any], limits: Limits,
            text: str) -> Law:
        """The exact law of (outcome, counted number) pairs: ties rolled again taken out, the
        dice a verdict asks for weighed in. The number is the decision's ``value``, else the
        game's ``measure`` of the sides' values (a contest of two numbers: their margin; one
        side: its value, or a tuple's first place; no dice rolled: None)."""
        return self._law(spec, options, limits, text)[0]

    def _law(self, spec: Any, options: Mapping[str, Any], limits: Limits,
             text: str) -> tuple[Law, str]:
        sides = self.build(spec, options, limits, text)
        known = self._known(spec, options)
        laws = [d.law(limits, text) for _, d in sides]
        measure: Callable[..., Any] = self.measure or _first_side
        name = self._value_name(known)
        if self.measure is None and len(laws) == 2 and all(
                type(v) is int for law in laws for v in law.weights):
            measure, name = (lambda a, b: a - b), "margin"

        def decided(d: Any, values: tuple[Any, ...]) -> Any:
            if isinstance(d, Then) or _again(d):
                return d
            return d.outcome, d.value if d.value is not None else measure(*values)

        verdict, settle = self._verdict, self._settle
        assert verdict is not None
        given = _given(self._verdict_wants, known, len(laws))  # the same for every combination

        def both(*values: Any) -> Any:
            return decided(settle(verdict(*values, **given)), values)

        fast = (by_margin(laws[0], laws[1], both, limits, text) if self.margin and len(laws) == 2
                else None)
        law = (fast if fast is not None else joint(laws, both, limits, text)).without(_again)
        while any(isinstance(k, Then) for k in law.weights):
            law = self._then(law, limits, text)
        return law, name

    def _then(self, law: Law, limits: Limits, text: str) -> Law:
        """The law with each ``Then`` decided: its dice's law weighed in (once per dice), each
        ``rule(value, *args)`` worked out once."""
        follow: dict[int, Law] = {}
        for d in law.weights:
            if isinstance(d, Then) and id(d.dice) not in follow:
                follow[id(d.dice)] = d.dice.law(limits, text)
        scale = math.lcm(*(f.total for f in follow.values()))
        limits.check_work(COMBINATION * sum(len(follow[id(d.dice)].weights) for d in law.weights
                                            if isinstance(d, Then)),
                          "the dice a verdict asks for", text)
        out: dict[Any, int] = {}
        for d, w in law.weights.items():
            if not isinstance(d, Then):
                out[d] = out.get(d, 0) + w * scale
                continue
            f = follow[id(d.dice)]
            k = scale // f.total
            for v, wv in f.weights.items():
                then = self._settle(d.rule(v, *d.args))
                key: Any = then
                if isinstance(then, Decision) and not _again(then):
                    key = then.outcome, then.value if then.value is not None else _first_side(v)
                out[key] = out.get(key, 0) + w * wv * k
        return Law(out, law.total * scale).without(_again)

    def odds(self, spec: Any, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
        law, name = self._law(spec, options, limits, text)
        known = self._known(spec, options)
        outcomes = law.map(lambda k: k[0])
        values = law.map(lambda k: k[1])
        values.weights.pop(None, None)  # a roll that rolled nothing (an automatic success)
        if not all(type(k) in (int, float) for k in values.weights):
            raise NotationError(f"the game {self.name} gives no number for its odds to tabulate "
                                "(its values are not numbers): its Game needs measure=, called "
                                "with one value per side", text, (0, len(text)))
        order = self._order(known) or _by_mean(law)
        notes = () if not law.cut else (
            f"an infinite tail of probability {float(law.cut):.1e} is cut",)
        return Odds(self.name, text, _distribution(outcomes, order),
                    _distribution(values) if values.weights else Distribution.from_mapping({}),
                    name, notes)


def _first_side(*values: Any) -> Any:
    """The number a roll's odds tabulate: the first side's value, or its first place (None
    where no dice were rolled)."""
    if not values:
        return None
    value = values[0]
    return value[0] if isinstance(value, tuple) and value else value


def _by_mean(law: Law) -> tuple[str, ...]:
    """The outcomes from the lowest mean counted value to the highest."""
    sums: dict[str, list[float]] = {}
    for (outcome, c), w in law.weights.items():
        m = 0.0 if c is None else float(c)
        s = sums.setdefault(outcome, [0.0, 0.0])
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
