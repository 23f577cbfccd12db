"""The D6 System as a program of the dice algebra, rolled and computed exactly.

A side's die code (prepared by D2) is ``Pool(n, d6)`` summed (D1); with the Wild Die (D-X1) one of
the n dice is a ``Marked`` chain that explodes on 6 and is marked by a first 1, a complication,
which by default removes it and the highest other die: ``Drop(Pool(n − 1, d6))``. The roller
samples the program; the odds take its exact law (a mixture over the Wild Die's mark) and map the
same verdicts (D8, D10, D11, D12, D-X4) over it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..._errors import LimitError
from ..._limits import Limits
from ..._records import Record
from ..._rng import Source
from ...dice import Roll, Tray, TrayHands
from ...dice import steps as S
from ...dice.algebra import Chain, Drop, Marked, Pool, Reading
from ...dice.sampler import PoolRecord, dropped, sample
from ...odds import Distribution, Odds, maths
from ...odds import algebra as exact
from ...odds.exactness import conditioned, denominator, exact_odds, product
from ...render import d6system as words
from . import rules as R
from .notation import Side, Spec
from .rules import AUTOMATIC_OUTCOMES, CHECK_OUTCOMES, PLAIN_OUTCOMES, SIDES, Prepared

__all__ = ["SideLaw", "dice_law", "dice_total", "effective_options", "odds", "roll",
           "total_law"]

_DIE_EPS = 1e-18  # where the Wild Die's explosion tail is cut


# --------------------------------------------------------------------------------------------
# The program


def _face(position: int, face: int) -> int:
    """D1: a die adds its face; D-X1: each roll of the Wild Die's chain adds."""
    return face


class _Regular(Reading):
    """A regular die is rolled once."""

    def __call__(self, position: int, face: int) -> bool:
        return False


class _WildAgain(Reading):
    """D-X1: the Wild Die rolls again on a 6."""

    def __call__(self, position: int, face: int) -> bool:
        return R.wild_die(face, position == 0) == "again"


class _Complication(Reading):
    """D-X1: the mark of the Wild Die: a 1 on its first roll."""

    def __call__(self, first: int, checked: int | None) -> bool:
        return R.wild_die(first, True) == "complication"


def regular(dice: int) -> Pool:
    """``dice`` regular d6, summed (D1)."""
    return Pool(dice, Chain(SIDES, _Regular(), _face))


WILD = Marked(Chain(SIDES, _WildAgain(), _face, "Wild Die"), _Complication())


# --------------------------------------------------------------------------------------------
# Rolling


class Rolled(Record):
    """One side as it landed: its total, faces, the Wild Die's chain and what was removed."""

    total: int
    faces: list[int]
    wild: list[int]
    complication: bool
    removed: int | None
    dice_sum: int


def _settle(reg: PoolRecord, wild: PoolRecord | None,
            drop: bool) -> tuple[int, bool, int | None]:
    """The dice's part of the total: D1, and D-X1's complication."""
    if wild is None:
        return reg.value, False, None
    complication = bool(wild.dice[0].mark)
    if complication and drop:
        rest = dropped(reg)  # the Wild Die and the highest other die are removed
        return rest.value, True, rest.dropped[0] if rest.dropped else None
    return reg.value + wild.value, complication, None


def _side_steps(side: Side, prep: Prepared, name: str) -> list[S.Step]:
    """A side about to roll (its code as written and as rolled) and how its code changed."""
    facts = (("written", str(side)), ("prepared", str(prep)), ("code", prep.code),
             ("pips", prep.pips), ("number", prep.number))
    return [S.Side(name, prep.dice, facts), *(S.Adjust(name, *a[1:]) for a in prep.steps)]


def _roll_side(tray: Tray, prep: Prepared, name: str, group: str, stream: int,
               options: Mapping[str, Any], limits: Limits, steps: list[S.Step]) -> Rolled:
    """Roll one side's dice: the regular dice, then the Wild Die and its re-rolls (D-X1)."""
    wild_on = bool(options["wild_die"])
    drop = options["wild_one"] == "drop_one_and_highest"
    hands = TrayHands(tray, group, stream)
    reg = sample(regular(prep.dice - 1 if wild_on else prep.dice), hands, limits)
    wild = None
    if wild_on:
        wild_hands = TrayHands(tray, f"{group} wild", stream, "Wild Die")
        try:
            wild = sample(WILD, wild_hands, limits)
        except LimitError as exc:
            raise LimitError(f"the Wild Die: {exc.message}") from None
    dice_sum, complication, removed = _settle(reg, wild, drop)
    ids = list(hands.ids)
    runs = [d.runs for d in reg.dice]
    values = [d.value for d in reg.dice]
    marks: tuple[str, ...] = ()
    gone: list[int] = []
    if wild is not None:
        ids.append(wild_hands.ids[0])
        runs.append(wild.dice[0].runs)
        values.append(wild.value)
        marks = ("",) * len(reg.dice) + ("complication" if complication else "wild_die",)
    if wild is not None:  # its sixes rolled again and added (D-X1), or its complication
        wild_runs = wild.dice[0].runs
        tray.facts(wild_hands.ids[0], joined="exploded" if len(wild_runs[0]) > 1 else "",
                   scored=wild.value if len(wild_runs[0]) > 1 else None,
                   tone="bad" if complication else "")
    if complication and drop and wild is not None:
        tray.drop(wild_hands.ids[0], "Wild Die: complication (1 on its first roll), removed")
        gone.append(wild_hands.ids[0])
        if removed is not None:
            tray.drop(hands.ids[removed], "removed with the Wild Die's 1 (the highest other die)")
            gone.append(hands.ids[removed])
    faces = [d.value for d in reg.dice]
    chain = list(wild.dice[0].runs[0]) if wild is not None else []
    total = dice_sum + prep.added
    steps += [S.Rolled(name, tuple(ids), tuple(runs), tuple(values), marks, "D1",
                       "D-X1" if wild is not None else "", "", tuple(gone),
                       "D-X1" if gone else ""),
              S.Count(name, "total", total, "D1")]
    return Rolled(total, faces, chain, complication, removed, dice_sum)


class _Faces:
    """Faces typed in, one after another (for ``dice_total``)."""

    def __init__(self, faces: Sequence[int]) -> None:
        self.faces, self.used, self.shown = list(faces), 0, [0] * len(faces)

    def new(self, size: int) -> int:
        self.used += 1
        return self.used - 1

    def again(self, die: int, note: str) -> int:
        self.used += 1
        return self.faces[self.used - 1]

    def face(self, die: int) -> int:
        return self.faces[die]


def dice_total(faces: Sequence[int], wild: Sequence[int] = (),
               wild_one: str = "drop_one_and_highest") -> tuple[int, bool, int | None]:
    """The dice's part of a total from the faces, read by the program: (sum, complication, index
    of the removed regular die). ``wild`` is the Wild Die's faces in order (empty: no Wild Die)."""
    reg = sample(regular(len(faces)), _Faces(faces))
    settled = sample(WILD, _Faces(wild)) if wild else None
    return _settle(reg, settled, wild_one == "drop_one_and_highest")


def _side_result(prep: Prepared, rolled: Rolled) -> dict[str, Any]:
    out: dict[str, Any] = {"code": prep.code, "dice_rolled": prep.dice, "pips": prep.pips,
                           "bonus": prep.number, "faces": rolled.faces, "total": rolled.total}
    if rolled.wild:
        out["wild"] = rolled.wild
        out["complication"] = rolled.complication
        if rolled.removed is not None:
            out["removed"] = rolled.faces[rolled.removed]
    return out


def _verdict(points: int, options: Mapping[str, Any], result: dict[str, Any],
             steps: list[S.Step]) -> str:
    level = R.success_level(points, options["incredible_from"])
    half, dmg = R.half_bonus(points), R.damage_bonus(points)
    result.update({"result_points": points, "success": level is not None, "level": level,
                   "half_bonus": half, "damage_bonus": dmg})
    outcome = "failure" if level is None else level.lower()
    steps.append(S.Verdict("", outcome, (points,), "D9" if level is None else "D10"))
    if level is not None and points > 0:
        steps += [S.Count("", "half_bonus", half, "D11"), S.Count("", "damage_bonus", dmg, "D12")]
    return outcome


def effective_options(spec: Spec, options: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults, the caller's options, then the options written in the notation."""
    merged = R.options_from({**options, **dict(spec.options)})
    if spec.wild:
        merged["wild_die"] = True
    return merged


def _done(text: str, outcome: str, result: dict[str, Any], tray: Tray, spec: Spec,
          steps: list[S.Step]) -> Roll:
    return Roll("d6system", text, outcome, result, tray.freeze(), words.transcript(steps), spec,
                tuple(steps))


def roll(spec: Spec, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a D6 System spec with faces from ``source``; the verdict comes from the rules, the
    steps are put into words by ``render.d6system``.

    Faces are read per side in rolling order: the regular dice, then the Wild Die, then its
    re-rolls after each 6.
    """
    options = effective_options(spec, options)
    tray = Tray(source, limits)
    d = spec.difficulty
    steps: list[S.Step] = [S.Begin(str(spec), "", (
        ("wild_die", bool(options["wild_die"])), ("wild_one", options["wild_one"]),
        ("difficulty_title", d.title if d is not None else None),
        ("difficulty_level", d.level if d is not None else None)))]
    if d is not None and R.is_automatic(d.number):
        steps.append(S.Verdict("", "automatic", (0,), "D7"))
        return _done(text, "automatic", {"automatic": True, "success": True, "difficulty": 0},
                     tray, spec, steps)
    actor = R.prepare(spec.actor, options)
    steps += _side_steps(spec.actor, actor, "actor")
    a = _roll_side(tray, actor, "actor", "actor", 0, options, limits, steps)
    result: dict[str, Any] = {**_side_result(actor, a)}
    if d is not None:
        result["difficulty"] = d.number
        points = R.result_points(a.total, d.number)
        steps += [S.Count("", "difficulty", d.number, "D6"),
                  S.Count("", "result_points", points, "D8")]
        return _done(text, _verdict(points, options, result, steps), result, tray, spec, steps)
    if spec.opposition is None:
        outcome = "complication" if a.complication else "no_complication"
        steps.append(S.Verdict("", outcome, (), "D-X1"))
        return _done(text, outcome, result, tray, spec, steps)
    opp = R.prepare(spec.opposition, options)
    steps += _side_steps(spec.opposition, opp, "opposition")
    b = _roll_side(tray, opp, "opposition", "opposition", 1, options, limits, steps)
    rerolls = 0
    tie_rule = options["opposed_tie"]
    setting = f"opposed_tie={tie_rule}"
    goes = R.tie_goes(tie_rule)
    while a.total == b.total and goes == "again":  # D-X4: both sides roll again
        rerolls += 1
        if rerolls >= limits.max_rolls:
            raise LimitError(f"{rerolls} tied rolls in a row; the limit is {limits.max_rolls} "
                             "rolls")
        steps += [S.Tie((a.total, b.total), "again", "D-X4", setting), S.Round(rerolls + 1)]
        a = _roll_side(tray, actor, "actor", f"actor roll {rerolls + 1}", 0, options, limits,
                       steps)
        b = _roll_side(tray, opp, "opposition", f"opposition roll {rerolls + 1}", 1, options,
                       limits, steps)
    result = {**_side_result(actor, a), "opposition": _side_result(opp, b),
              "opposition_total": b.total, "tie_rule": tie_rule}
    if rerolls:
        result["rerolls"] = rerolls
    margin = R.result_points(a.total, b.total)
    steps.append(S.Count("", "result_points", margin, "D8"))
    if margin == 0 and goes == "defender":
        steps += [S.Tie((a.total, b.total), "lose", "D-X4", setting),
                  S.Verdict("", "failure", (0,), "D-X4", setting)]
        result.update({"result_points": 0, "success": False, "level": None, "half_bonus": 0,
                       "damage_bonus": 0})
        return _done(text, "failure", result, tray, spec, steps)
    if margin == 0:
        steps.append(S.Tie((a.total, b.total), "win", "D-X3", setting))
    return _done(text, _verdict(margin, options, result, steps), result, tray, spec, steps)


# --------------------------------------------------------------------------------------------
# Exact odds: the program's law, the same verdicts mapped over it


class SideLaw(Record):
    """The law of a side's dice (before pips and bonuses): P(value = k), the cut tail, and the
    probability of a complication."""

    pmf: tuple[float, ...]
    truncated: float
    complication: float

    def probabilities(self) -> dict[int, float]:
        """value → probability."""
        return {k: p for k, p in enumerate(self.pmf) if p}


_REQUEST_STEPS = 600  # a request's own steps: its options, notes and records
_REQUEST_BYTES = 64 << 10  # and its own allocations


def _work(dice: int, wild: bool, drop: bool) -> tuple[int, int]:
    """(steps, law length) of ``dice_law``: the regular dice's law, and with the Wild Die its
    marked law, their product by mark and the law without the dropped dice."""
    if not wild:
        length = exact.law_length(regular(dice))
        return exact.work(regular(dice)) + 4 * length, length
    rest = regular(dice - 1)
    reg, wild_len = exact.law_length(rest), exact.law_length(WILD.unit)
    steps = (exact.work(rest) + exact.work(WILD) + 2 * maths.convolve_work(reg, wild_len)
             + (exact.work(Drop(rest)) if drop and dice > 1 else 0))
    return steps + 4 * (reg + wild_len), reg + wild_len - 1


def _check_work(sides: list[Prepared], wild: bool, drop: bool, graded: bool, limits: Limits,
                text: str) -> None:
    """The estimated steps of the odds: each side's law, read into totals; the opposed total's
    law; the result points, success levels and bonuses read over the values (``graded``)."""
    laws = [_work(p.dice, wild, drop) for p in sides]
    steps = _REQUEST_STEPS + sum(w + 8 * n for w, n in laws)
    values = laws[0][1]
    # peak bytes: a value of a side's law in a list or two; an opposed total's or a graded
    # roll's in several dicts (the answer's laws of result points and bonuses, by name)
    nbytes = _REQUEST_BYTES + 150 * sum(n for _, n in laws)
    if len(laws) == 2:
        steps += maths.convolve_work(laws[0][1], laws[1][1]) + 4 * (laws[0][1] + laws[1][1])
        values = laws[0][1] + laws[1][1]
    if graded:
        steps += 60 * values
        nbytes += 500 * values
    limits.check_work(steps, "this D6 System roll", text)
    limits.check_memory(nbytes, "this D6 System roll", text)


@lru_cache(maxsize=512)
def dice_law(dice: int, wild: bool = False, wild_one: str = "drop_one_and_highest") -> SideLaw:
    """The exact law of a side's dice: D1, with the D-X1 Wild Die (a mixture over its mark)."""
    if not wild:
        law = exact.law(regular(dice))
        return SideLaw(law.pmf, law.truncated, 0.0)
    reg = exact.law(regular(dice - 1)).pmf
    marked = exact.marked_law(WILD, _DIE_EPS)
    by_mark = dict(marked.by_mark)
    plain = maths.convolve(reg, by_mark.get(False, ()))
    complication = sum(by_mark.get(True, ()))
    if wild_one == "drop_one_and_highest":
        rest = [complication * p for p in exact.law(Drop(regular(dice - 1))).pmf]
    else:
        rest = maths.convolve(reg, by_mark.get(True, ()))
    pmf = maths.mix(plain, rest)
    while len(pmf) > 1 and pmf[-1] == 0.0:
        pmf.pop()
    return SideLaw(tuple(pmf), marked.truncated, complication)


def total_law(prep: Prepared, options: Mapping[str, Any]) -> tuple[dict[int, float], SideLaw]:
    """A side's total: its dice's law moved by its pips and bonuses."""
    law = dice_law(prep.dice, bool(options["wild_die"]), options["wild_one"])
    return {k + prep.added: p for k, p in enumerate(law.pmf) if p}, law


def _levels(points: Mapping[int, float], options: Mapping[str, Any]) -> dict[str, float]:
    """D9, D10: each outcome's share of the result points' law."""
    out = dict.fromkeys(CHECK_OUTCOMES, 0.0)
    for rp, p in points.items():
        level = R.success_level(rp, options["incredible_from"])
        out["failure" if level is None else level.lower()] += p
    return out


def _bonuses(points: Mapping[int, float]) -> dict[str, Any]:
    """D11, D12: the laws of the result-point bonuses."""
    return {"half_bonus": Distribution.from_mapping(maths.pushforward(
                (R.half_bonus(rp), p) for rp, p in points.items())).to_json(),
            "damage_bonus": Distribution.from_mapping(maths.pushforward(
                (R.damage_bonus(rp), p) for rp, p in points.items())).to_json()}


def _denominator(sides: Sequence[Prepared], options: Mapping[str, Any]) -> int | None:
    """The common denominator of the sides' laws: 6 per die; None with the Wild Die (D-X1: a
    6 explodes without end)."""
    if options["wild_die"]:
        return None
    return product(*(denominator(regular(side.dice)) for side in sides))


def odds(spec: Spec, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    """The exact odds of a D6 System spec (D1–D15, the Wild Die D-X1, opposed rolls D-X4)."""
    options = effective_options(spec, options)
    if spec.difficulty is not None and R.is_automatic(spec.difficulty.number):
        return exact_odds(_odds(spec, options, limits, text), 1)
    sides = [R.prepare(spec.actor, options)] + (
        [R.prepare(spec.opposition, options)] if spec.opposition else [])
    again = spec.opposition is not None and R.tie_goes(options["opposed_tie"]) == "again"
    result = _odds(spec, options, limits, text)
    kept = 1.0 - result.extra["contest"]["tie"] if again else 1.0  # D-X4: ties rolled again
    return exact_odds(result, conditioned(_denominator(sides, options), kept),
                      _outcomes_denominator(spec, sides[0], options))


def _outcomes_denominator(spec: Spec, actor: Prepared, options: Mapping[str, Any]) -> int | None:
    """With the Wild Die (its law infinite), a common denominator of the outcomes of a roll
    against a difficulty: every level below Incredible is decided by totals below the difficulty
    + incredible_from, which the Wild Die reaches in at most (that − 1) // 6 explosions (each
    adds a 6), so it is a finite sum; Incredible is the rest. Without a difficulty, the outcome
    is the Wild Die's first face."""
    if not options["wild_die"] or spec.opposition is not None:
        return None
    if spec.difficulty is None:
        return SIDES
    below = spec.difficulty.number + options["incredible_from"] - actor.added
    rolls = actor.dice + max(0, (below - 1) // SIDES)
    return None if rolls > 15 else SIDES ** rolls


def _odds(spec: Spec, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    wild_on = bool(options["wild_die"])
    if spec.difficulty is not None and R.is_automatic(spec.difficulty.number):
        return Odds("d6system", text, Distribution.from_mapping({"automatic": 1.0},
                                                                order=AUTOMATIC_OUTCOMES),
                    Distribution.from_mapping({}), "total",
                    ("Automatic difficulty: success without rolling (D7)",))
    actor = R.prepare(spec.actor, options)
    sides = [actor] + ([R.prepare(spec.opposition, options)] if spec.opposition else [])
    drop = options["wild_one"] == "drop_one_and_highest"
    _check_work(sides, wild_on, drop, spec.difficulty is not None or len(sides) == 2, limits,
                text)
    notes = [f"actor rolls {actor}" + (" with the Wild Die" if wild_on else "")]
    pa, la = total_law(actor, options)
    if wild_on:
        notes.append(f"Wild Die: a 6 explodes (tail below {_DIE_EPS:.0e} cut), a first 1 is a "
                     "complication" + (" removing it and the highest die" if drop
                                       else " (the 1 counts)"))
    extra: dict[str, Any] = {}
    if wild_on:
        extra["complication"] = {"actor": la.complication}
    if spec.difficulty is None and spec.opposition is None:
        c = la.complication
        outcomes = {"no_complication": 1 - c, "complication": c}
        return Odds("d6system", text, Distribution.from_mapping(outcomes, order=PLAIN_OUTCOMES),
                    Distribution.from_mapping(pa, la.truncated), "total", tuple(notes), extra)
    if spec.difficulty is not None:
        d = spec.difficulty.number
        points = maths.pushforward((R.result_points(x, d), p) for x, p in pa.items())  # D8
        cats = _levels(points, options)
        p_success = sum(v for k, v in cats.items() if k != "failure")
        notes.append(f"difficulty {spec.difficulty.title} ({d}): P(success) = "
                     f"{100 * p_success:.3f}%")
        extra["p_success"] = p_success
        extra["result_points"] = {"difficulty": d, "distribution": {
            str(k): p for k, p in sorted(points.items())}}
        extra.update(_bonuses(points))
        top = R.success_level(options["incredible_from"], options["incredible_from"])
        if top is not None:  # the Wild Die's cut tail is all far above the difficulty
            cats[top.lower()] += la.truncated
        return Odds("d6system", text, Distribution.from_mapping(cats, order=CHECK_OUTCOMES),
                    Distribution.from_mapping(pa, la.truncated), "total", tuple(notes), extra)
    return _opposed(spec, options, sides[1], pa, la, text, notes, extra)


def _dice_key(law: Mapping[int, float], low: int) -> tuple[float, ...]:
    return tuple(law.get(low + i, 0.0) for i in range(max(law) - low + 1))


@lru_cache(maxsize=256)
def _difference(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[tuple[int, float], ...]:
    """The law of A − B for laws over 0, 1, 2, … (cached: a table rolls the same codes often)."""
    return tuple(maths.difference_of(dict(enumerate(a)), dict(enumerate(b))).items())


def _opposed(spec: Spec, options: Mapping[str, Any], opp: Prepared, pa: dict[int, float],
             la: SideLaw, text: str, notes: list[str], extra: dict[str, Any]) -> Odds:
    wild_on = bool(options["wild_die"])
    pb, lb = total_law(opp, options)
    notes.append(f"opposition rolls {opp}" + (" with the Wild Die" if wild_on else ""))
    if wild_on:
        extra["complication"]["opposition"] = lb.complication
    shift, opp_shift = min(pa), min(pb)
    raw = {m + shift - opp_shift: p for m, p in _difference(
        _dice_key(pa, shift), _dice_key(pb, opp_shift))}  # D8, D-X4: the opposing total
    points = maths.pushforward((R.result_points(m, 0), p) for m, p in raw.items())
    win = sum(p for m, p in points.items() if m > 0)
    tie = points.get(0, 0.0)
    lose = sum(p for m, p in points.items() if m < 0)
    truncated = 1 - (1 - la.truncated) * (1 - lb.truncated)
    extra["contest"] = {"win": win, "tie": tie, "lose": lose}
    extra["actor_total"] = {"distribution": {str(k): p for k, p in pa.items()}}
    extra["opposition_total"] = {"distribution": {str(k): p for k, p in pb.items()}}
    tie_rule = options["opposed_tie"]
    goes = R.tie_goes(tie_rule)
    notes.append({"actor": "a tie goes to the acting character (meet or beat, D-X4)",
                  "defender": "a tie goes to the defender (D-X4)",
                  "again": "a tie is rolled again until it breaks (D-X4)"}[goes])
    if goes == "again":
        if win + lose <= 0:
            raise LimitError("these sides always tie, so re-rolling ties would never end", text)
        points, _ = maths.condition(points, lambda m: m == 0)
        truncated /= win + lose
    cats = _levels(points, options)
    if goes == "defender":
        cats["failure"] += cats["minimal"]
        cats["minimal"] = 0.0
    extra.update(_bonuses(points))
    return Odds("d6system", text, Distribution.from_mapping(cats, truncated,
                                                            order=CHECK_OUTCOMES),
                Distribution.from_mapping(points, truncated), "result points", tuple(notes),
                extra)
