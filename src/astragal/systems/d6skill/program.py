"""d6 + skill as a program of the dice algebra, rolled and computed exactly.

One d6 of a kind is ``Marked(Chain(6, explodes), mark, check=botch_checked)``: a 6 explodes while
6s keep coming (S9, capped by max_explosions), a first 1 calls a check die (S7) that adds nothing
and whose 1 marks the die a Botch (S8); a first 6 marks it a Critical. The roller samples the
program and maps the verdicts (S1, S2, S3, S5, S6) over the values; the odds take the program's
exact law and map the same verdicts over it. Re-rolled ties (S3) condition the round's law.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from ..._errors import LimitError
from ..._limits import Limits
from ..._records import Record
from ..._rng import Source
from ...dice import Roll, Tray, TrayHands
from ...dice import steps as S
from ...dice.algebra import Chain, Marked, Reading, sample
from ...odds import Distribution, Odds, maths
from ...odds import algebra as exact
from ...render import d6skill as words
from . import rules as R
from .notation import Check, Side
from .rules import ATK_OUTCOMES, CHECK_OUTCOMES, SIDES, SINGLE_OUTCOMES, DieRules, Rules

__all__ = [
    "D6Roll",
    "DieLaw",
    "RoundLaw",
    "d6_law",
    "die_program",
    "memory",
    "odds",
    "opposed_law",
    "read_d6",
    "result_law",
    "roll",
    "work",
]

_DIE_EPS = 1e-18  # where one die's Critical tail is cut: three dice lose far less than 1e-15


class D6Roll(Record):
    """One d6 as the rules read it: the faces it used, what it adds, Botch and Critical."""

    faces: tuple[int, ...]
    total: int
    botch: bool = False
    critical: bool = False

    @property
    def explosions(self) -> int:
        """How many times a 6 was rolled again (S9)."""
        return len(self.faces) - 1 if self.critical else 0


# --------------------------------------------------------------------------------------------
# The program: the rules read at each face


def _face(position: int, face: int) -> int:
    """S9: every roll of a Critical chain is added; S8: a checked 1 counts 1."""
    return face


class _Explodes(Reading):
    """S9 at each face of the chain (settings: does this kind explode)."""

    def __call__(self, position: int, face: int) -> bool:
        return R.explodes(face, *self.settings)


class _Checks(Reading):
    """S7 on the first face (settings: is this kind checked)."""

    def __call__(self, first: int) -> bool:
        return R.botch_checked(first, *self.settings)


class _Mark(Reading):
    """``botch`` (S7, S8), ``critical`` (a first 6 that explodes, S9) or None."""

    def __call__(self, first: int, checked: int | None) -> str | None:
        if R.botched(checked):
            return "botch"
        return "critical" if R.explodes(first, *self.settings) else None


@lru_cache(maxsize=64)
def die_program(dr: DieRules) -> Marked:
    """One d6 read by ``dr``, as a program of the dice algebra."""
    chain = Chain(SIDES, _Explodes(dr.explodes), _face, "Critical re-roll", dr.max_explosions)
    return Marked(chain, _Mark(dr.explodes and dr.max_explosions != 0), _Checks(dr.botches),
                  "botch check")


def _read(record: Any) -> D6Roll:
    faces = record.runs[0] + ((record.checked,) if record.checked is not None else ())
    return D6Roll(faces, record.value, record.mark == "botch", record.mark == "critical")


# --------------------------------------------------------------------------------------------
# Rolling


_PLAIN = DieRules()  # the seed's reading: 6s explode, a first 1 is checked, no cap


class _Faces:
    def __init__(self, faces: tuple[int, ...]) -> None:
        self.faces, self.used = faces, 0

    def _next(self) -> int:
        if self.used >= len(self.faces):
            raise IndexError
        self.used += 1
        return self.faces[self.used - 1]

    def new(self, size: int) -> int:
        self._next()
        return 0

    def again(self, die: int, note: str) -> int:
        return self._next()

    def face(self, die: int) -> int:
        return self.faces[0]


def read_d6(faces: tuple[int, ...] | list[int], rules: DieRules = _PLAIN) -> D6Roll | None:
    """Read one d6 from its faces in rolling order (S7–S11); None while a face is still needed.

    >>> read_d6([6, 6, 3])
    D6Roll(faces=(6, 6, 3), total=15, botch=False, critical=True)
    >>> read_d6([1, 6])
    D6Roll(faces=(1, 6), total=1, botch=False, critical=False)
    """
    hands = _Faces(tuple(faces))
    try:
        record = sample(die_program(rules), hands, Limits(max_explosions=10**6)).dice[0]
    except IndexError:
        return None
    return _read(record) if hands.used == len(faces) else None


def roll_die(tray: Tray, dr: DieRules, name: str, group: str, stream: int, limits: Limits,
             text: str, steps: list[S.Step]) -> D6Roll:
    """Roll one d6 by its program; the botch check's die is kept on the tray, not added (S8).
    Each face is a die of the tray (a Critical chain shown die by die); the step names them."""
    first = len(tray)
    hands = TrayHands(tray, group, stream, each_face_a_die=True)
    try:
        record = sample(die_program(dr), hands, limits).dice[0]
    except LimitError as exc:
        raise LimitError(exc.message, text, (0, len(text))) from None
    d = _read(record)
    chain = record.runs[0]
    marks: list[str] = []
    if d.critical:
        capped = (dr.max_explosions is not None and d.explosions == dr.max_explosions
                  and chain[-1] == R.CRITICAL_FACE)
        marks = ["critical"] + ["explosion"] * (len(chain) - 1)
        if capped:
            marks[-1] = "capped"
    dropped: tuple[int, ...] = ()
    if record.checked is not None:
        tray.drop(hands.last, "botch check: Botch" if d.botch else "botch check (ignored, S8)")
        marks = [""] * len(chain) + ["botch" if d.botch else "botch_check"]
        dropped = (hands.last,)
    faces = chain + ((record.checked,) if record.checked is not None else ())
    steps.append(S.Rolled(name, tuple(range(first, len(tray))), tuple(((f,),) for f in faces),
                          (*chain, *((0,) if dropped else ())), tuple(marks), "S1",
                          "S9" if len(chain) > 1 else "", "S7" if dropped else "", dropped,
                          "S8" if dropped else ""))
    return d


def _side_step(name: str, side: Side, dr: DieRules) -> S.Side:
    return S.Side(name, 1, (("kind", side.kind), ("title", R.KIND_TITLES[side.kind]),
                            ("bonus", side.bonus), ("explodes", dr.explodes),
                            ("botches", dr.botches), ("max_explosions", dr.max_explosions)))


def _side_json(d: D6Roll, side: Side) -> dict[str, Any]:
    return {"kind": side.kind, "faces": list(d.faces), "die": d.total, "bonus": side.bonus,
            "result": R.result(d.total, side.bonus), "botch": d.botch, "critical": d.critical}


def effective_rules(spec: Check, options: Mapping[str, Any]) -> Rules:
    """The switches for a spec: defaults, then the caller's options, then the notation's."""
    return R.make_rules({**options, **dict(spec.options)})


def _stressful(spec: Check, rules: Rules) -> bool:
    return rules.stressful if spec.situation is None else spec.situation == "stressful"


def _done(text: str, outcome: str, result: dict[str, Any], tray: Tray, spec: Check,
          steps: list[S.Step]) -> Roll:
    return Roll("d6skill", text, outcome, result, tray.freeze(), words.transcript(steps), spec,
                tuple(steps))


def roll(spec: Check, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a d6 + skill spec with faces from ``source``; the verdict comes from the rules, the
    steps are put into words by ``render.d6skill``."""
    rules = effective_rules(spec, options)
    tray = Tray(source, limits)
    dmg = "rolled" if isinstance(spec.dmg, Side) else spec.dmg
    steps: list[S.Step] = [S.Begin(str(spec), "", (("attack", spec.is_attack), ("dmg", dmg)))]
    actor = spec.actor
    if spec.difficulty is not None and spec.may_skip_roll:
        if R.automatic_success(actor.bonus, spec.difficulty, _stressful(spec, rules)):
            steps.append(S.Verdict("", "success", (actor.bonus, spec.difficulty), "S6"))
            return _done(text, "success",
                         {"kind": actor.kind, "bonus": actor.bonus, "difficulty": spec.difficulty,
                          "auto_success": True, "success": True, "botch": False,
                          "critical": False, "result": None}, tray, spec, steps)
        if actor.bonus > spec.difficulty:
            steps.append(S.Verdict("", "roll", (actor.bonus, spec.difficulty), "S6",
                                   "stressful"))
    if spec.opposition is not None:
        return _roll_opposed(spec, tray, rules, limits, text, steps)
    dr = rules.die(actor.kind)
    steps.append(_side_step("actor", actor, dr))
    d = roll_die(tray, dr, "actor", "actor", 0, limits, text, steps)
    result = _side_json(d, actor)
    res = result["result"]
    steps.append(S.Count("actor", "result", res, "S1"))
    if spec.difficulty is None:
        outcome = "botch" if d.botch else "no_botch"
        steps.append(S.Verdict("actor", outcome, (res,), "S8"))
        return _done(text, outcome, result, tray, spec, steps)
    verdict = R.check_outcome(res, d.botch, spec.difficulty)
    if spec.is_attack:  # ATK against a fixed DEF: S2 (higher than DEF) and S5
        hit = verdict == "success"
        margin = res - spec.difficulty
        result.update({"atk_result": res, "def_result": spec.difficulty, "hit": hit,
                       "margin": margin})
        outcome = {"botch": "botch", "failure": "miss", "success": "hit"}[verdict]
        steps.append(S.Verdict("", outcome, (res, spec.difficulty, margin), "S2"))
        _roll_damage(spec, tray, rules, limits, text, steps, result, hit, margin)
        return _done(text, outcome, result, tray, spec, steps)
    result.update({"difficulty": spec.difficulty, "auto_success": False,
                   "success": verdict == "success"})
    steps.append(S.Verdict("", verdict, (res, spec.difficulty), "S2"))
    return _done(text, verdict, result, tray, spec, steps)


def _roll_damage(spec: Check, tray: Tray, rules: Rules, limits: Limits, text: str,
                 steps: list[S.Step], result: dict[str, Any], hit: bool, margin: int) -> None:
    weapon: int | None = None
    if hit and isinstance(spec.dmg, Side):  # S9, S-A3: a rolled DMG, rolled by the attacker
        dr = rules.die("dmg")
        steps.append(_side_step("dmg", spec.dmg, dr))
        d = roll_die(tray, dr, "dmg", "dmg", 0, limits, text, steps)
        result["dmg_roll"] = _side_json(d, spec.dmg)
        weapon = result["dmg_roll"]["result"]
        steps.append(S.Count("dmg", "result", weapon or 0, "S1"))
    elif isinstance(spec.dmg, int):
        weapon = spec.dmg
    dmg = R.damage((weapon or 0) + margin) if hit else 0
    result.update({"dmg_bonus": margin if hit else 0, "weapon_dmg": weapon, "dmg": dmg})
    if hit:
        steps.append(S.Count("", "dmg", dmg, "S5"))


def _roll_opposed(spec: Check, tray: Tray, rules: Rules, limits: Limits, text: str,
                  steps: list[S.Step]) -> Roll:
    actor, opp = spec.actor, spec.opposition
    assert opp is not None
    ra, rb = rules.die(actor.kind), rules.die(opp.kind)
    steps += [_side_step("actor", actor, ra), _side_step("opposition", opp, rb)]
    setting = f"opposed_tie={rules.opposed_tie}"
    rounds: list[dict[str, Any]] = []
    while True:
        if len(rounds) >= limits.max_rolls:  # §6: a safety cap on re-rolled ties
            raise LimitError(f"{limits.max_rolls} tied rounds in a row: the re-roll limit is "
                             f"{limits.max_rolls}", text, (0, len(text)))
        group = "" if not rounds else f" round {len(rounds) + 1}"
        steps.append(S.Round(len(rounds) + 1))
        a = roll_die(tray, ra, "actor", f"actor{group}", 0, limits, text, steps)
        res_a = R.result(a.total, actor.bonus)
        steps.append(S.Count("actor", "result", res_a, "S1"))
        b = roll_die(tray, rb, "opposition", f"opposition{group}", 1, limits, text, steps)
        res_b = R.result(b.total, opp.bonus)
        steps.append(S.Count("opposition", "result", res_b, "S1"))
        verdict, margin = R.opposed_verdict(res_a - res_b, a.botch, b.botch, rules)
        rounds.append({"actor": _side_json(a, actor), "opposition": _side_json(b, opp),
                       "margin": res_a - res_b, "outcome": verdict})
        if verdict != "reroll":
            break
        steps.append(S.Tie((res_a, res_b), "again", "S3", setting))
    result: dict[str, Any] = {"rounds": rounds, "actor_result": res_a, "opposition_result": res_b,
                              "margin": margin, "botch": a.botch, "opposition_botch": b.botch,
                              "critical": a.critical, "success": verdict == "success"}
    tied = res_a == res_b and verdict in ("tie", "success", "failure")
    if spec.is_attack:
        outcome = {"botch": "botch", "failure": "miss", "success": "hit", "tie": "tie"}[verdict]
        result.update({"atk_result": res_a, "def_result": res_b, "hit": outcome == "hit"})
        steps.append(S.Verdict("", outcome, (res_a, res_b, margin), "S3",
                               setting if tied else ""))
        _roll_damage(spec, tray, rules, limits, text, steps, result, outcome == "hit", margin)
    else:
        outcome = verdict
        steps.append(S.Verdict("", outcome, (res_a, res_b, margin), "S3",
                               setting if tied else ""))
    return _done(text, outcome, result, tray, spec, steps)


# --------------------------------------------------------------------------------------------
# Exact odds: the program's law, the same verdicts mapped over it


class DieLaw(Record):
    """One d6's exact law: P(die adds t, no Botch) and P(die adds t, Botch) as dense lists,
    P(Critical), and the probability cut from the Critical tail."""

    plain: tuple[float, ...]
    botched: tuple[float, ...]
    critical: float
    truncated: float

    @property
    def botch(self) -> float:
        """P(Botch) (S7, S8)."""
        return sum(self.botched)

    def joint(self) -> Iterator[tuple[int, bool, float]]:
        """(what the die adds, Botch, probability)."""
        for t, q in enumerate(self.plain):
            yield t, False, q
        for t, q in enumerate(self.botched):
            yield t, True, q


@lru_cache(maxsize=64)
def d6_law(dr: DieRules) -> DieLaw:
    """The exact law of one d6 read by ``dr``: the program's marked law."""
    law = exact.marked_law(die_program(dr), _DIE_EPS)
    by_mark = dict(law.by_mark)
    plain = maths.mix(*(pmf for mark, pmf in by_mark.items() if mark != "botch"))
    return DieLaw(tuple(plain), tuple(by_mark.get("botch", ())), sum(by_mark.get("critical", ())),
                  law.truncated)


def result_law(law: DieLaw, bonus: int) -> dict[int, float]:
    """P(result = x) for d6 + bonus (S1), a botched die counting 1 (S8)."""
    return maths.pushforward((R.result(t, bonus), q) for t, _, q in law.joint())


@lru_cache(maxsize=256)
def _blocks(dr: DieRules, bonus: int) -> dict[bool, dict[int, float]]:
    """The result's law split by Botch."""
    out: dict[bool, dict[int, float]] = {}
    for t, botch, q in d6_law(dr).joint():
        if q:
            block = out.setdefault(botch, {})
            x = R.result(t, bonus)
            block[x] = block.get(x, 0.0) + q
    return out


class RoundLaw(Record):
    """An opposed roll after its ties: outcome and counted-margin probabilities."""

    outcomes: dict[str, float]
    margins: dict[int, float]            # the counted margin, over every decided outcome
    hit_margins: dict[int, float]        # the counted margin where the actor succeeds
    tie_per_round: float
    opposition_botch: float
    truncated: float


@lru_cache(maxsize=256)
def opposed_law(da: DieRules, bonus_a: int, db: DieRules, bonus_b: int,
                rules: Rules) -> RoundLaw:
    """An opposed roll (S3, S-A1, S-A4): each round's (verdict, margin, opposition botched) law,
    from the two results' laws split by Botch, conditioned on the round not being rolled again."""
    la, lb = d6_law(da), d6_law(db)
    joint: list[tuple[tuple[str, int, bool], float]] = []
    for a_botch, ra in _blocks(da, bonus_a).items():
        for b_botch, rb in _blocks(db, bonus_b).items():
            for m, q in maths.difference_of(ra, rb).items():
                joint.append((R.opposed_verdict(m, a_botch, b_botch, rules) + (b_botch,), q))
    decided, tie = maths.condition(maths.pushforward(joint), lambda k: k[0] == "reroll")
    lost = (la.truncated + lb.truncated - la.truncated * lb.truncated) / (1.0 - tie)
    return RoundLaw(maths.pushforward((k[0], p) for k, p in decided.items()),
                    maths.pushforward((k[1], p) for k, p in decided.items()),
                    maths.pushforward((k[1], p) for k, p in decided.items() if k[0] == "success"),
                    tie, sum(p for k, p in decided.items() if k[2]), lost)


def damage_law(hit_margins: Mapping[int, float], miss: float, weapon: int | Side | None,
               rules: Rules) -> tuple[dict[int, float], float]:
    """The law of DMG (S5), cached by its inputs (a table rolls the same attack often)."""
    law, lost = _damage_law(tuple(hit_margins.items()), miss, weapon, rules)
    return dict(law), lost


@lru_cache(maxsize=256)
def _damage_law(hit_margins: tuple[tuple[int, float], ...], miss: float,
                weapon: int | Side | None, rules: Rules) -> tuple[tuple[tuple[int, float], ...],
                                                                  float]:
    """The law of DMG (S5): 0 on a miss or Botch, else ``damage(weapon DMG + margin)``; a rolled
    DMG (S9, S-A3) is an independent law, added by convolution. Returns the law and the mass
    cut from the DMG roll's tail."""
    margins = dict(hit_margins)
    if isinstance(weapon, Side):
        law = d6_law(rules.die("dmg"))
        points = maths.sum_of(margins, result_law(law, weapon.bonus))
        lost = law.truncated * sum(margins.values())
    else:
        points = {m + (weapon or 0): p for m, p in margins.items()}
        lost = 0.0
    hits = maths.apply(R.damage, points)
    return tuple(maths.pushforward([(0, miss), *hits.items()]).items()), lost


_REQUEST_STEPS = 900  # a request's own steps: its rules, outcomes, notes and records


def work(spec: Check, rules: Rules) -> int:
    """The estimated steps of ``odds(spec)``: each kind of die's marked law, the results read
    over it; an opposed roll's margin law per pair of Botch blocks and the verdicts read over
    it; a rolled DMG's law added to the margins (one convolution) and read."""
    kinds = [rules.die(spec.actor.kind)]
    if spec.opposition is not None:
        kinds.append(rules.die(spec.opposition.kind))
    if isinstance(spec.dmg, Side):
        kinds.append(rules.die("dmg"))
    lengths = [exact.law_length(die_program(dr).unit) for dr in kinds]
    steps = _REQUEST_STEPS + sum(exact.work(die_program(dr)) for dr in set(kinds))
    steps += 30 * lengths[0]
    if spec.opposition is not None:
        # the Botch blocks: the large one is the die without a Botch, the others one value each
        steps += maths.convolve_work(lengths[0], lengths[1]) + 60 * (lengths[0] + lengths[1])
    if isinstance(spec.dmg, Side):
        margins = sum(lengths[:2])
        steps += maths.convolve_work(margins, lengths[-1]) + 20 * (margins + lengths[-1])
    return steps


def memory(spec: Check, rules: Rules) -> int:
    """The odds' peak bytes: each die's law, and the margins' and DMG's laws in a few dicts."""
    kinds = [spec.actor.kind] + ([spec.opposition.kind] if spec.opposition is not None else []) \
        + (["dmg"] if isinstance(spec.dmg, Side) else [])
    values = sum(exact.law_length(die_program(rules.die(kind)).unit) for kind in kinds)
    return (64 << 10) + 400 * values


def odds(spec: Check, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    """The exact odds of a d6 + skill spec."""
    rules = effective_rules(spec, options)
    limits.check_work(work(spec, rules), "this roll", text)
    limits.check_memory(memory(spec, rules), "this roll", text)
    actor = spec.actor
    la = d6_law(rules.die(actor.kind))
    notes = [words.law_note("actor", R.KIND_TITLES[actor.kind], actor.bonus,
                            rules.die(actor.kind))]
    extra: dict[str, Any] = {"p_critical": la.critical}
    if spec.opposition is not None:
        return _opposed_odds(spec, rules, la, text, notes, extra)
    res_dist = Distribution.from_mapping(result_law(la, actor.bonus), la.truncated)
    if spec.difficulty is None:
        out = {"botch": la.botch, "no_botch": 1.0 - la.botch}
        return Odds("d6skill", text, Distribution.from_mapping(out, order=SINGLE_OUTCOMES),
                    res_dist, "result", tuple(notes), extra)
    if spec.may_skip_roll:
        if R.automatic_success(actor.bonus, spec.difficulty, _stressful(spec, rules)):
            notes.append(f"S6: the bonus {actor.bonus:+d} alone beats # {spec.difficulty} and the "
                         "situation is calm: Success without rolling")
            out = {"botch": 0.0, "failure": 0.0, "success": 1.0}
            return Odds("d6skill", text, Distribution.from_mapping(out, order=CHECK_OUTCOMES),
                        Distribution.from_mapping({}), "result", tuple(notes),
                        {"p_critical": 0.0, "auto_success": True})
        if actor.bonus > spec.difficulty:
            notes.append("S6: the bonus alone beats #, but the situation is stressful: roll")
    d = spec.difficulty
    judged = [((R.check_outcome(x, botch, d), x - d), q)
              for botch, block in _blocks(rules.die(actor.kind), actor.bonus).items()
              for x, q in block.items()]
    out = {k: 0.0 for k in CHECK_OUTCOMES}
    out.update(maths.pushforward((v, q) for (v, _), q in judged))
    if not spec.is_attack:
        extra["auto_success"] = False
        return Odds("d6skill", text, Distribution.from_mapping(out, order=CHECK_OUTCOMES),
                    res_dist, "result", tuple(notes), extra)
    # ATK against a fixed DEF: a hit is higher than the DEF (S2), the margin goes to DMG (S5)
    hits = maths.pushforward((m, q) for (v, m), q in judged if v == "success")
    atk_out = {"botch": out["botch"], "miss": out["failure"], "hit": out["success"]}
    return _attack_odds(spec, rules, text, notes, extra, atk_out, hits, la.truncated,
                        ATK_OUTCOMES)


def _attack_odds(spec: Check, rules: Rules, text: str, notes: list[str], extra: dict[str, Any],
                 out: dict[str, float], hits: Mapping[int, float], truncated: float,
                 order: tuple[str, ...]) -> Odds:
    miss = sum(v for k, v in out.items() if k != "hit")
    dmg, lost = damage_law(hits, miss, spec.dmg, rules)
    if isinstance(spec.dmg, Side):
        notes.append(words.law_note("DMG roll", R.KIND_TITLES[spec.dmg.kind], spec.dmg.bonus,
                                    rules.die(spec.dmg.kind)))
    elif spec.dmg is None:
        notes.append("no weapon DMG given: DMG is the margin alone (S5)")
    extra["dmg_bonus"] = Distribution.from_mapping(dict(hits)).to_json()
    return Odds("d6skill", text, Distribution.from_mapping(out, order=order),
                Distribution.from_mapping(dmg, truncated + lost), "DMG", tuple(notes), extra)


def _opposed_odds(spec: Check, rules: Rules, la: DieLaw, text: str, notes: list[str],
                  extra: dict[str, Any]) -> Odds:
    opp = spec.opposition
    assert opp is not None
    lb = d6_law(rules.die(opp.kind))
    notes.append(words.law_note("opposition", R.KIND_TITLES[opp.kind], opp.bonus,
                                rules.die(opp.kind)))
    rl = opposed_law(rules.die(spec.actor.kind), spec.actor.bonus, rules.die(opp.kind), opp.bonus,
                     rules)
    if rules.opposed_tie == "reroll":
        notes.append(f"S3: a round ties with probability {rl.tie_per_round:.4g} and is rolled "
                     "again; these are the odds after the re-rolls")
    extra.update({"tie_per_round": rl.tie_per_round, "expected_rounds":
                  1.0 / (1.0 - rl.tie_per_round) if rules.opposed_tie == "reroll" else 1.0,
                  "p_opposition_botch": rl.opposition_botch,
                  "actor_result": Distribution.from_mapping(
                      result_law(la, spec.actor.bonus)).to_json(),
                  "opposition_result": Distribution.from_mapping(
                      result_law(lb, opp.bonus)).to_json()})
    tie_cat = ("tie",) if rules.opposed_tie == "stand" else ()
    if spec.is_attack:
        said = {"botch": "botch", "failure": "miss", "success": "hit", "tie": "tie"}
        out = dict.fromkeys(ATK_OUTCOMES + tie_cat, 0.0)
        for k, v in rl.outcomes.items():
            out[said[k]] += v
        return _attack_odds(spec, rules, text, notes, extra, out, rl.hit_margins, rl.truncated,
                            ("botch", "miss") + tie_cat + ("hit",))
    out = dict.fromkeys(CHECK_OUTCOMES + tie_cat, 0.0)
    out.update(rl.outcomes)
    return Odds("d6skill", text, Distribution.from_mapping(
        out, order=("botch", "failure") + tie_cat + ("success",)),
        Distribution.from_mapping(rl.margins, rl.truncated), "margin", tuple(notes), extra)
