"""Rolling one exchange and its exact odds, both on the dice algebra and the rules in ``rules``.

The attack dice are ``Top(Pool(n, d6))`` (the highest face and how many show it, A5), the
defender's DEFENSE dice ``Pool(d, d6 counting 6s)`` (A11), the critical dice ``Pool(c, d6)``
summed (A15). The roller samples them and reads the rules on the values; the odds take their
exact laws and read the same rules on every value.

Rolling order (the faces a player types with ``--faces "attack / defence / critical"``): the
attack dice, then the Luck dice (stream 0); the defender's DEFENSE dice (stream 1); the critical
damage dice (stream 2). A Whiff ends the exchange before the defender rolls (A19); a hit that
cannot be blocked is not rolled against.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..._limits import Limits
from ..._records import Record
from ..._rng import Source
from ...dice import Roll, Tray, TrayHands
from ...dice import steps as S
from ...dice.algebra import Chain, Pool, Reading, Top
from ...dice.sampler import sample, top
from ...odds import Distribution, maths
from ...odds import algebra as exact
from ...odds.exactness import denominator, exact_odds, product
from ...render import attack as words
from .. import Odds
from .notation import Exchange
from .rules import (
    BERSERK,
    COLUMNS,
    DIE,
    NORMAL,
    TRIPLE_COLUMNS,
    Rules,
    blocks,
    critical_dice,
    critical_total,
    read_column,
)

OUTCOMES = ("whiff", "blocked", "hit", "critical")
SYSTEM_NAME = "attack"


# --------------------------------------------------------------------------------------------
# The programs


def _face(position: int, face: int) -> int:
    return face


def _six(position: int, face: int) -> int:
    """A11: a DEFENSE die counts when it shows 6."""
    return int(face == DIE)


class _Once(Reading):
    """Every die of this game is rolled once."""

    def __call__(self, position: int, face: int) -> bool:
        return False


def d6_pool(n: int) -> Pool:
    """``n`` d6, each worth its face (attack dice, A5; critical dice, summed: A15)."""
    return Pool(n, Chain(DIE, _Once(), _face))


def defence_pool(n: int) -> Pool:
    """``n`` DEFENSE dice, worth the 6s they show (A11)."""
    return Pool(n, Chain(DIE, _Once(), _six))


# --------------------------------------------------------------------------------------------
# Rolling: the rules read on the faces, what was done recorded as steps (``render.attack``
# words them)


def attack_steps(spec: Exchange) -> list[S.Step]:
    """The attack dice before they are rolled: as written (Nd6) or the average of ATTACK and
    WEAPON (A1), a Throw Bonus (A2), the stance (A3) and the Luck dice (A4)."""
    a = spec.attacker
    if a.dice is not None:
        steps: list[S.Step] = [S.Side("attack", a.total, (("written", a.dice),))]
    else:
        steps = [S.Side("attack", a.total, (("attack", a.attack), ("weapon", a.weapon))),
                 S.Count("attack", "dice", a.base, "A1")]
    n = a.base
    if a.thrown:
        n += a.throw_bonus
        steps.append(S.Adjust("attack", "throw", "A2", (("by", a.throw_bonus), ("dice", n))))
    if a.stance != NORMAL:
        steps.append(S.Adjust("attack", "stance", "A3", (
            ("stance", a.stance), ("by", 1 if a.stance == BERSERK else -1), ("dice", a.ordinary))))
    if a.luck:
        steps.append(S.Adjust("attack", "luck", "A4", (("by", a.luck), ("dice", a.total))))
    return steps


def defence_steps(spec: Exchange, rules: Rules) -> list[S.Step]:
    """The defender's dice: as written (Nd6), or the pools of the first A12 rule that applies."""
    d = spec.defender
    if d is None:
        return []
    dice = d.dice_rolled(rules.threw_last_turn_defense)
    if d.dice is not None:
        return [S.Side("defence", dice, (("written", d.dice),))]
    return [S.Side("defence", dice, (("armor", d.armor), ("shield", d.shield), ("parry", d.parry),
                                     ("states", d.states))),
            S.Adjust("defence", "pools", "A12", (
                ("state", d.rule()), ("pools", d.pools(rules.threw_last_turn_defense))))]


def _rolled(side: str, hands: TrayHands, record: Any, read: str) -> S.Rolled:
    """A pool's dice as a step: their indices in the tray, faces, and what each counts."""
    return S.Rolled(side, tuple(hands.ids), tuple(d.runs for d in record.dice),
                    tuple(d.value for d in record.dice), (), read)


def _faces(*records: Any) -> list[int]:
    return [d.runs[0][0] for record in records for d in record.dice]


def roll(spec: Exchange, source: Source, rules: Rules, limits: Limits, text: str) -> Roll:
    """Roll one exchange: attack, defence, critical damage, read by the rules (A1–A19)."""
    tray = Tray(source, limits)
    a, d = spec.attacker, spec.defender
    steps: list[S.Step] = [S.Begin(str(spec)), *attack_steps(spec)]
    hands, luck_hands = TrayHands(tray, "attack", 0), TrayHands(tray, "luck", 0)
    attack = sample(d6_pool(a.ordinary), hands, limits)
    luck = sample(d6_pool(a.luck), luck_hands, limits)
    faces, luck_faces = _faces(attack), _faces(luck)
    steps.append(S.Rolled("attack", (*hands.ids, *luck_hands.ids),
                          tuple(d.runs for d in (*attack.dice, *luck.dice)),
                          (*faces, *luck_faces),
                          ("",) * len(faces) + ("luck",) * len(luck_faces) if luck_faces else (),
                          "A5"))
    reading = read_column(*top(attack, luck), rules)
    entry = reading.entry
    need = reading.sixes_to_block
    steps.append(S.Lookup(words.ATTACK_TABLE, "", reading.column,
                          (reading.highest, reading.showing), "A7",
                          () if entry is None else (("damage", entry.damage),
                                                    ("stun", entry.stun),
                                                    ("critical", entry.critical),
                                                    ("block", need))))
    result: dict[str, Any] = {
        "attack_dice": a.ordinary, "luck_dice": a.luck, "dice": a.total,
        "faces": faces, "luck_faces": luck_faces, "highest": reading.highest,
        "count": reading.showing, "sixes": reading.sixes, "column": reading.column,
        "whiff": reading.whiff, "hit": False, "blocked": False, "damage": 0, "stun": False,
        "critical": bool(entry and entry.critical),
        "sixes_to_block": need, "defence": None,
    }

    def done(outcome: str) -> Roll:
        source.finish()
        return Roll(SYSTEM_NAME, text, outcome, result, tray.freeze(),
                    words.transcript(steps), spec, tuple(steps))

    defence_dice = 0
    if d is not None:
        defence_dice = d.dice_rolled(rules.threw_last_turn_defense)
        result["defence"] = {"rule": d.rule(), "pools": list(d.pools(rules.threw_last_turn_defense)),
                             "dice": defence_dice, "faces": [], "sixes": 0, "rolled": False}
    if entry is None:  # A6, A-A8: a Whiff ends the exchange before the defender rolls (A19)
        steps.append(S.Verdict("", "whiff", (reading.highest,), "A6" if a.total else "A-A8"))
        return done("whiff")
    rolled = 0
    if d is not None:
        steps += defence_steps(spec, rules)
        if need is None:
            steps.append(S.Verdict("defence", "unblockable", (), "A11"))
        elif defence_dice == 0:
            steps.append(S.Verdict("defence", "no_dice", (0, need), "A11"))
        else:
            d_hands = TrayHands(tray, "defence", 1)
            defence = sample(defence_pool(defence_dice), d_hands, limits)
            k = defence.value
            rolled = defence_dice
            result["defence"].update(faces=_faces(defence), sixes=k, rolled=True)
            steps.append(_rolled("defence", d_hands, defence, "A11"))
            if blocks(need, k):
                result["blocked"] = True
                steps += [S.Verdict("defence", "blocked", (k, need), "A11"),
                          S.Verdict("", "blocked", (k, need), "A11")]
                return done("blocked")
            steps.append(S.Verdict("defence", "not_blocked", (k, need), "A11"))
    damage = entry.damage
    result.update(hit=True, stun=entry.stun)
    if entry.critical:
        class_dice = rules.crit_dice_for(a.weapon_class)
        def_sixes = result["defence"]["sixes"] if result["defence"] else 0
        c = critical_dice(reading.sixes, class_dice, rolled, def_sixes, rules.crit_dice_subtract)
        steps += [S.Side("critical", c, (
            ("sixes", reading.sixes), ("weapon_class", a.weapon_class),
            ("class_dice", class_dice), ("defence_dice", rolled), ("defence_sixes", def_sixes),
            ("subtract", rules.crit_dice_subtract), ("crit_bonus", a.crit_bonus))),
            S.Count("critical", "dice", c, "A13")]
        c_hands = TrayHands(tray, "critical", 2)
        crit = sample(d6_pool(c), c_hands, limits)
        total = critical_total(crit.value, a.crit_bonus)
        steps += [_rolled("critical", c_hands, crit, "A15"),
                  S.Count("critical", "total", total, "A15")]
        row = rules.critical_table.lookup(total)
        if rules.critical_table.rows:
            steps.append(S.Lookup(words.CRITICAL_TABLE, row.span if row else "", "", (total,),
                                  "A14", (("result", row.result), ("damage", row.damage))
                                  if row is not None else ()))
        damage += row.damage if row is not None else 0
        result.update(critical_dice=c, critical_faces=_faces(crit), critical_total=total,
                      critical_result=row.result if row is not None else None)
    result["damage"] = damage
    if entry.stun:
        steps.append(S.Verdict("defence", "stunned", (), "A10"))
    outcome = "critical" if entry.critical else "hit"
    steps.append(S.Verdict("", outcome, (damage,), "A9" if entry.critical else "A8"))
    return done(outcome)


# --------------------------------------------------------------------------------------------
# Exact odds


def column_chances(n: int, rules: Rules) -> dict[str, float]:
    """P(each column) for ``n`` attack dice (A5–A9), from the law of their highest face."""
    out = dict.fromkeys(COLUMNS, 0.0)
    if rules.triple_non_six == "own_column":
        out.update(dict.fromkeys(TRIPLE_COLUMNS, 0.0))
    for (high, count), p in exact.top_law(Top(d6_pool(n))).items():
        out[read_column(high, count, rules).column] += p
    return out


class ExchangeOdds(Record):
    """The exact laws of one exchange (every probability unconditional unless named 'given')."""

    outcomes: dict[str, float]
    columns: dict[str, float]
    stun: float
    damage: dict[int, float]
    critical_dice: dict[int, float]    # given a Critical Strike that lands
    critical_total: dict[int, float]   # given a Critical Strike that lands
    critical_results: dict[str, float]  # given a Critical Strike that lands (GM table only)


_REQUEST_STEPS = 1700  # a request's own steps: its rules, columns, notes and records


def work(n: int, defence: int, class_dice: int, rules: Rules | None = None) -> int:
    """The odds' steps, for the Limits: the programs' own estimates, the table walk over each
    (highest face, count) and the defender's 6s, and the critical total's law (a random number
    of d6 summed, one convolution per possible count: once, and once per column's damage when
    there is a Critical Damage Table)."""
    subtract = rules.crit_dice_subtract if rules is not None else "dice_rolled"
    # the most critical dice: every attack die a 6, against the defence if it can block them
    blockable = rules is None or read_column(DIE, n, rules).sixes_to_block is not None
    top = critical_dice(n, class_dice, defence if blockable else 0, 0, subtract) if n else 0
    totals = 1 + (len(COLUMNS) if rules is not None and rules.critical_table.rows else 0)
    return (_REQUEST_STEPS + exact.work(Top(d6_pool(n))) + exact.work(defence_pool(defence))
            + 12 * n * (defence + 2) + totals * (48 * top * top + 8 * top))


def memory(n: int, defence: int, class_dice: int, rules: Rules) -> int:
    """The odds' peak bytes: the (highest face, count) law, and the critical total's law (six
    values a critical die) in a list and the answer's dicts."""
    blockable = read_column(DIE, n, rules).sixes_to_block is not None
    top = critical_dice(n, class_dice, defence if blockable else 0, 0,
                        rules.crit_dice_subtract) if n else 0
    return (64 << 10) + 150 * DIE * n + 300 * (DIE * top + defence)


def _totals(dice: Mapping[int, float], crit_bonus: int) -> dict[int, float]:
    """A14, A15: the law of the critical total when the number of critical dice has the law
    ``dice``: a random number of d6 (the dice algebra's one die) summed, plus the Crit Bonus."""
    return dict(_totals_of(tuple(sorted(dice.items())), crit_bonus))


@lru_cache(maxsize=256)
def _totals_of(dice: tuple[tuple[int, float], ...],
               crit_bonus: int) -> tuple[tuple[int, float], ...]:
    unit = exact.law(d6_pool(1)).pmf
    return tuple(maths.pushforward((critical_total(t, crit_bonus), q)
                                   for t, q in enumerate(maths.compound(dict(dice), unit))).items())


def exchange_odds(n: int, defence: int | None, weapon_class: str | None, crit_bonus: int,
                  rules: Rules) -> ExchangeOdds:
    """Exact odds of an exchange of ``n`` attack dice against ``defence`` DEFENSE dice.

    ``defence`` None: no defender. Over the law of the highest face h and its count m (A5), the
    column's entry; the defender's 6s (A11) from their law; the critical dice (A13) from the 6s
    (and, under sixes_rolled, the defender's 6s), and their total from the law of their sum.
    """
    class_dice = rules.crit_dice_for(weapon_class)
    out = dict.fromkeys(OUTCOMES, 0.0)
    columns = dict.fromkeys(COLUMNS, 0.0)
    if rules.triple_non_six == "own_column":
        columns.update(dict.fromkeys(TRIPLE_COLUMNS, 0.0))
    damage: dict[int, float] = {}
    stun = 0.0
    crit_mass: dict[tuple[int, int], float] = {}  # (column damage, critical dice) → P
    d = defence or 0
    ways = exact.law(defence_pool(d)).pmf  # the defender's 6s
    held: dict[int | None, float] = {}  # P(a block) by the 6s a column needs

    def p_block(need: int | None) -> float:
        if need not in held:
            held[need] = sum(q for k, q in enumerate(ways) if blocks(need, k))
        return held[need]

    for (high, count), p in exact.top_law(Top(d6_pool(n))).items():
        reading = read_column(high, count, rules)
        columns[reading.column] += p
        entry = reading.entry
        if entry is None:
            out["whiff"] += p
            continue
        need = reading.sixes_to_block
        tries = defence is not None and need is not None and d > 0
        blocked = p_block(need) if tries else 0.0
        out["blocked"] += p * blocked
        land = p * (1.0 - blocked) if blocked else p
        if land == 0.0:
            continue
        stun += land if entry.stun else 0.0
        if not entry.critical:
            out["hit"] += land
            damage[entry.damage] = damage.get(entry.damage, 0.0) + land
            continue
        out["critical"] += land
        failed = [(k, q) for k, q in enumerate(ways) if not (tries and blocks(need, k))]
        for k, q in failed if tries else [(0, 1.0)]:
            c = critical_dice(reading.sixes, class_dice, d if tries else 0, k,
                              rules.crit_dice_subtract)
            crit_mass[(entry.damage, c)] = crit_mass.get((entry.damage, c), 0.0) + p * q
    damage[0] = damage.get(0, 0.0) + out["whiff"] + out["blocked"]
    c_dist = maths.pushforward((c, mass) for (_, c), mass in crit_mass.items())
    totals = _totals(c_dist, crit_bonus)
    table = rules.critical_table
    results: dict[str, float] = {}
    if not table.rows:
        for (base, _), mass in crit_mass.items():
            damage[base] = damage.get(base, 0.0) + mass
    else:  # the table's extra damage adds to each column's own damage
        for base in {b for b, _ in crit_mass}:
            dice = {c: m for (b, c), m in crit_mass.items() if b == base}
            for total, q in _totals(dice, crit_bonus).items():
                row = table.lookup(total)
                extra = row.damage if row is not None else 0
                damage[base + extra] = damage.get(base + extra, 0.0) + q
                label = f"{row.span}: {row.result}" if row is not None else "no entry"
                results[label] = results.get(label, 0.0) + q
    given = out["critical"]

    def cond(dist: dict[Any, float]) -> dict[Any, float]:
        return {k: v / given for k, v in dist.items()} if given else {}

    return ExchangeOdds(out, columns, stun, dict(sorted(damage.items())),
                        cond(dict(sorted(c_dist.items()))), cond(dict(sorted(totals.items()))),
                        cond(results))


def odds(spec: Exchange, rules: Rules, limits: Limits, text: str) -> Odds:
    """The exact odds of one exchange as an ``Odds`` record (the same JSON as every system)."""
    a, d = spec.attacker, spec.defender
    defence = None if d is None else d.dice_rolled(rules.threw_last_turn_defense)
    class_dice = rules.crit_dice_for(a.weapon_class)
    limits.check_work(work(a.total, defence or 0, class_dice, rules), "this exchange", text)
    limits.check_memory(memory(a.total, defence or 0, class_dice, rules), "this exchange", text)
    eo = exchange_odds(a.total, defence, a.weapon_class, a.crit_bonus, rules)
    notes = [words.attack_line(attack_steps(spec)), words.defence_note(defence_steps(spec, rules))]
    if eo.critical_total:
        notes.append(words.critical_note(bool(rules.critical_table.rows)))
    extra: dict[str, Any] = {
        "columns": Distribution.from_mapping(eo.columns, order=list(eo.columns)).to_json(),
        "stun": {"stun": eo.stun, "no_stun": max(0.0, 1.0 - eo.stun)},
    }
    if eo.critical_total:
        extra["critical_dice"] = Distribution.from_mapping(eo.critical_dice).to_json()
        extra["critical_total"] = Distribution.from_mapping(eo.critical_total).to_json()
    if eo.critical_results:
        extra["critical_results"] = dict(eo.critical_results)
    # every die is a d6 rolled once: the attack, the DEFENSE dice, and the critical dice that
    # a Critical Damage Table reads (at most the attack's 6s and the weapon's, A13)
    crit = a.total + class_dice if rules.critical_table.rows else 0
    return exact_odds(Odds(SYSTEM_NAME, text, Distribution.from_mapping(
        eo.outcomes, order=OUTCOMES), Distribution.from_mapping(
        {k: v for k, v in eo.damage.items() if v > 0}), "damage", tuple(notes), extra),
        product(denominator(d6_pool(a.total)), denominator(defence_pool(defence or 0)),
                denominator(d6_pool(crit))))


def block_chance(defence: int, needed: int) -> float:
    """P(a block) with ``defence`` DEFENSE dice against a hit that needs ``needed`` 6s (A11)."""
    return sum(q for k, q in enumerate(exact.law(defence_pool(defence)).pmf) if blocks(needed, k))

