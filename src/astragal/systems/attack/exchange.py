"""Rolling one exchange and its exact odds. Both read the dice through the rules in ``rules``.

Rolling order (the faces a player types with ``--faces "attack / defence / critical"``): the
attack dice, then the Luck dice (stream 0); the defender's DEFENSE dice (stream 1); the critical
damage dice (stream 2). A Whiff ends the exchange before the defender rolls (A19); a hit that
cannot be blocked is not rolled against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..._limits import Limits
from ..._rng import Source
from ...dice import Roll, Tray
from ...odds import Distribution
from .. import Odds
from .notation import Exchange
from .rules import (
    BERSERK,
    BERSERK_LAST_TURN,
    COLUMNS,
    DEFENSIVE,
    DEFENSIVE_LAST_TURN,
    DIE,
    STUNNED,
    THREW_LAST_TURN,
    TRIPLE_COLUMNS,
    WHIFF,
    WHIFFED_LAST_TURN,
    CriticalRow,
    Rules,
    blocked,
    column_for,
    critical_dice,
    critical_total,
    read_attack,
    sixes,
    sum_pmfs,
)

OUTCOMES = ("whiff", "blocked", "hit", "critical")
SYSTEM_NAME = "attack"

_RULE_WORDS = {
    STUNNED: "stunned: ARMOR only",
    BERSERK_LAST_TURN: "attacked Berserk last turn: ARMOR only",
    DEFENSIVE_LAST_TURN: "attacked Defensively last turn: full defence",
    THREW_LAST_TURN: "threw a weapon last turn",
    WHIFFED_LAST_TURN: "Whiffed last turn: PARRY/DODGE lost",
    "normal": "normal defence",
}


def _count_words(n: int) -> str:
    return {1: "one die", 2: "two dice", 3: "three dice"}.get(n, f"{n} dice")


def _need_words(need: int | None) -> str:
    if need is None:
        return "cannot be blocked"
    return f"block with {'-'.join(['6'] * need) if need <= 4 else f'{need} sixes'}"


def attack_dice_lines(spec: Exchange) -> list[str]:
    """How the attack dice were counted (A1–A4), as transcript lines."""
    a = spec.attacker
    if a.dice is not None:
        parts = [f"{a.dice}d6"]
    else:
        parts = [f"({a.attack} ATTACK + {a.weapon} WEAPON) / 2 = {a.base} (A1)"]
    if a.thrown:
        parts.append(f"+{a.throw_bonus} Throw Bonus (A2)")
    if a.stance == BERSERK:
        parts.append("+1 Berserk (A3)")
    elif a.stance == DEFENSIVE:
        parts.append("−1 Defensive (A3)")
    line = "Attack dice: " + ", ".join(parts)
    if len(parts) > 1:
        line += f" → {a.ordinary}"
    if a.luck:
        line += f", plus {a.luck} Luck {'die' if a.luck == 1 else 'dice'} (A4) = {a.total}"
    return [line]


def _row_text(row: CriticalRow | None) -> str:
    if row is None:
        return "no entry in the Critical Damage Table"
    extra = f" (+{row.damage} damage)" if row.damage else ""
    return f"Critical Damage Table {row.span}: {row.result}{extra}"


def roll(spec: Exchange, source: Source, rules: Rules, limits: Limits, text: str) -> Roll:
    """Roll one exchange: attack, defence, critical damage, read by the rules (A1–A19)."""
    tray = Tray(source, limits)
    a, d = spec.attacker, spec.defender
    lines = [f"Attack table: {str(spec)[4:]}", *attack_dice_lines(spec)]
    faces = [tray.face(tray.roll(DIE, "attack", 0)) for _ in range(a.ordinary)]
    luck_faces = [tray.face(tray.roll(DIE, "luck", 0)) for _ in range(a.luck)]
    shown = "  rolled: " + (" ".join(map(str, faces)) if faces else "no attack dice")
    if luck_faces:
        shown += "   Luck: " + " ".join(map(str, luck_faces))
    lines.append(shown)
    reading = read_attack(faces + luck_faces, rules)
    result: dict[str, Any] = {
        "attack_dice": a.ordinary, "luck_dice": a.luck, "dice": a.total,
        "faces": faces, "luck_faces": luck_faces, "highest": reading.highest,
        "count": reading.count, "sixes": reading.sixes, "column": reading.column,
        "whiff": reading.whiff, "hit": False, "blocked": False, "damage": 0, "stun": False,
        "critical": bool(reading.entry and reading.entry.critical),
        "sixes_to_block": reading.sixes_to_block, "defence": None,
    }
    defence_dice = 0
    if d is not None:
        pools = d.pools(rules.threw_last_turn_defense)
        defence_dice = d.dice_rolled(rules.threw_last_turn_defense)
        result["defence"] = {"rule": d.rule(), "pools": list(pools), "dice": defence_dice,
                             "faces": [], "sixes": 0, "rolled": False}
    entry = reading.entry
    if entry is None:
        why = "no attack dice (A-A8)" if not faces and not luck_faces else \
            f"highest face {reading.highest}"
        lines.append(f"  {why}: the attack Whiffs, a complete miss (A6); the attacker loses "
                     "PARRY/DODGE on their next defence")
        source.finish()
        return Roll(SYSTEM_NAME, text, "whiff", result, tray.freeze(), tuple(lines), spec)
    need = reading.sixes_to_block
    lines.append(f"  highest {reading.highest} on {_count_words(reading.count)} → "
                 f"{reading.column} (A7): {entry.damage} damage"
                 + (", stuns" if entry.stun else "")
                 + (", Critical Strike!" if entry.critical else "") + f"; {_need_words(need)}")
    rolled = 0
    defence_faces: list[int] = []
    if d is not None:
        pools_text = " + ".join(result["defence"]["pools"])
        lines.append(f"Defence ({_RULE_WORDS[d.rule()]}, A12): {pools_text} = "
                     f"{defence_dice} {'die' if defence_dice == 1 else 'dice'}"
                     if d.dice is None else f"Defence: {defence_dice}d6")
        if need is None:
            lines.append("  this hit cannot be blocked: no defence roll")
        elif defence_dice == 0:
            lines.append("  no DEFENSE dice to roll: the hit cannot be blocked")
        else:
            defence_faces = [tray.face(tray.roll(DIE, "defence", 1))
                             for _ in range(defence_dice)]
            rolled = defence_dice
            k = sixes(defence_faces)
            result["defence"].update(faces=defence_faces, sixes=k, rolled=True)
            is_blocked = blocked(need, defence_faces)
            lines.append(f"  rolled: {' '.join(map(str, defence_faces))} → "
                         f"{k} six{'es' if k != 1 else ''}: "
                         + (f"blocked (A11, needs {need})" if is_blocked
                            else f"not enough to block (needs {need})"))
            if is_blocked:
                result["blocked"] = True
                lines.append("Blocked: no damage, no stun (A11)")
                source.finish()
                return Roll(SYSTEM_NAME, text, "blocked", result, tray.freeze(), tuple(lines),
                            spec)
    damage = entry.damage
    result.update(hit=True, stun=entry.stun)
    outcome = "hit"
    if entry.critical:
        outcome = "critical"
        class_dice = rules.crit_dice_for(a.weapon_class)
        c = critical_dice(reading.sixes, class_dice, rolled, sixes(defence_faces),
                          rules.crit_dice_subtract)
        minus = (f"− {rolled} {'die' if rolled == 1 else 'dice'} the defender rolled"
                 if rules.crit_dice_subtract == "dice_rolled"
                 else f"− {sixes(defence_faces)} six(es) the defender rolled")
        lines.append(f"Critical damage dice (A13): {reading.sixes} sixes + {class_dice} "
                     f"(weapon {a.weapon_class or 'with no class'}) {minus} = {c}")
        crit_faces = [tray.face(tray.roll(DIE, "critical", 2)) for _ in range(c)]
        total = critical_total(crit_faces, a.crit_bonus)
        row = rules.critical_table.lookup(total)
        lines.append(f"  rolled: {' '.join(map(str, crit_faces)) or 'no dice'} → total "
                     f"{sum(crit_faces)}" + (f" {a.crit_bonus:+d} Crit Bonus" if a.crit_bonus
                                             else "") + f" = {total} (A14, A15)")
        if rules.critical_table.rows:
            lines.append(f"  {_row_text(row)}")
        damage += row.damage if row is not None else 0
        result.update(critical_dice=c, critical_faces=crit_faces, critical_total=total,
                      critical_result=row.result if row is not None else None)
    result["damage"] = damage
    lines.append(("Critical Strike" if entry.critical else "Hit") + f"! {damage} damage"
                 + (", the defender is stunned (A10)" if entry.stun else ""))
    source.finish()
    return Roll(SYSTEM_NAME, text, outcome, result, tray.freeze(), tuple(lines), spec)


# --------------------------------------------------------------------------------------------
# Exact odds


def column_chances(n: int, triple_non_six: str = "double") -> dict[str, float]:
    """P(each column) for ``n`` attack dice (A5–A9): exact counts over 6**n, then floats.

    P(highest h on exactly m dice) = C(n, m)·(h−1)^(n−m) / 6^n.
    """
    out = dict.fromkeys(COLUMNS, 0.0)
    if triple_non_six == "own_column":
        out.update(dict.fromkeys(TRIPLE_COLUMNS, 0.0))
    den = DIE ** n
    out[WHIFF] = 3 ** n / den if n else 1.0
    for h in (4, 5, 6):
        for m in range(1, n + 1):
            out[column_for(h, m, triple_non_six)] += math.comb(n, m) * (h - 1) ** (n - m) / den
    return out


@dataclass(frozen=True, slots=True)
class ExchangeOdds:
    """The exact laws of one exchange (every probability unconditional unless named 'given')."""

    outcomes: dict[str, float]
    columns: dict[str, float]
    stun: float
    damage: dict[int, float]
    critical_dice: dict[int, float]    # given a Critical Strike that lands
    critical_total: dict[int, float]   # given a Critical Strike that lands
    critical_results: dict[str, float]  # given a Critical Strike that lands (GM table only)


def work(n: int, defence: int, class_dice: int) -> int:
    """A rough count of the odds' inner steps, for the Limits."""
    crit = n + class_dice
    return 3 * n * (defence + 2) + 3 * crit * crit * DIE


def exchange_odds(n: int, defence: int | None, weapon_class: str | None, crit_bonus: int,
                  rules: Rules) -> ExchangeOdds:
    """Exact odds of an exchange of ``n`` attack dice against ``defence`` DEFENSE dice.

    ``defence`` None: no defender. Loop over the highest face h and its count m; the defender's
    6s are binomial; the critical dice count depends on the 6s (and, under sixes_rolled, on the
    defender's 6s); their total is the d6 sum law.
    """
    class_dice = rules.crit_dice_for(weapon_class)
    out = dict.fromkeys(OUTCOMES, 0.0)
    columns = dict.fromkeys(COLUMNS, 0.0)
    if rules.triple_non_six == "own_column":
        columns.update(dict.fromkeys(TRIPLE_COLUMNS, 0.0))
    damage: dict[int, float] = {}
    stun = 0.0
    crit_mass: dict[tuple[int, int], float] = {}  # (column damage, critical dice) → P
    den = DIE ** n
    out["whiff"] = columns[WHIFF] = 3 ** n / den if n else 1.0
    d = defence or 0
    ways = [math.comb(d, k) * 5 ** (d - k) / DIE ** d for k in range(d + 1)]
    tails = [math.fsum(ways[k:]) for k in range(d + 2)] + [0.0]
    entries = {c.name: c for c in rules.table.columns}
    for h in (4, 5, 6):
        for m in range(1, n + 1):
            p = math.comb(n, m) * (h - 1) ** (n - m) / den
            if p == 0.0:
                continue
            name = column_for(h, m, rules.triple_non_six)
            columns[name] += p
            entry = entries[name]
            need = entry.sixes_to_block(m)
            tries = defence is not None and need is not None and d > 0
            p_block = tails[min(need, d + 1)] if tries and need is not None else 0.0
            out["blocked"] += p * p_block
            land = p * (1.0 - p_block) if p_block else p
            if land == 0.0:
                continue
            stun += land if entry.stun else 0.0
            if not entry.critical:
                out["hit"] += land
                damage[entry.damage] = damage.get(entry.damage, 0.0) + land
                continue
            out["critical"] += land
            s = m if h == DIE else 0
            if tries and rules.crit_dice_subtract == "sixes_rolled":
                for k in range(min(need or 0, d + 1)):  # the 6s of a failed block
                    c = critical_dice(s, class_dice, d, k, "sixes_rolled")
                    key = (entry.damage, c)
                    crit_mass[key] = crit_mass.get(key, 0.0) + p * ways[k]
            else:
                c = critical_dice(s, class_dice, d if tries else 0, 0, "dice_rolled")
                crit_mass[(entry.damage, c)] = crit_mass.get((entry.damage, c), 0.0) + land
    damage[0] = damage.get(0, 0.0) + out["whiff"] + out["blocked"]
    c_dist: dict[int, float] = {}
    for (_, c), mass in crit_mass.items():
        c_dist[c] = c_dist.get(c, 0.0) + mass
    # A14, A15: the critical total is c d6 summed plus the Crit Bonus; sums index a list
    top = max(c_dist, default=0)
    import numpy as np

    from .rules import _sum_law

    summed = np.zeros(DIE * top + 1)
    for c, mass in c_dist.items():  # arrays: no Python float per term (big pools stay fast)
        law = _sum_law(c)
        summed[c:c + len(law)] += mass * law
    sums = summed.tolist()
    totals = {t + crit_bonus: q for t, q in enumerate(sums) if q > 0.0}
    table = rules.critical_table
    results: dict[str, float] = {}
    if not table.rows:
        for (base, _), mass in crit_mass.items():
            damage[base] = damage.get(base, 0.0) + mass
    else:
        pmfs = sum_pmfs(set(c_dist))
        rows = {t: table.lookup(t) for t in range(crit_bonus, DIE * top + crit_bonus + 1)}
        for (base, c), mass in crit_mass.items():
            for i, q in enumerate(pmfs[c], c):
                row = rows[i + crit_bonus]
                extra = row.damage if row is not None else 0
                damage[base + extra] = damage.get(base + extra, 0.0) + mass * q
                label = f"{row.span}: {row.result}" if row is not None else "no entry"
                results[label] = results.get(label, 0.0) + mass * q
    given = out["critical"]

    def cond(dist: dict[Any, float]) -> dict[Any, float]:
        return {k: v / given for k, v in dist.items()} if given else {}

    return ExchangeOdds(out, columns, stun, dict(sorted(damage.items())),
                        cond(dict(sorted(c_dist.items()))), cond(totals), cond(results))


def odds(spec: Exchange, rules: Rules, limits: Limits, text: str) -> Odds:
    """The exact odds of one exchange as an ``Odds`` record (the same JSON as every system)."""
    a, d = spec.attacker, spec.defender
    defence = None if d is None else d.dice_rolled(rules.threw_last_turn_defense)
    limits.check_work(work(a.total, defence or 0, rules.crit_dice_for(a.weapon_class)),
                      "this exchange", text)
    eo = exchange_odds(a.total, defence, a.weapon_class, a.crit_bonus, rules)
    notes = [attack_dice_lines(spec)[0]]
    if d is not None:
        notes.append(f"defence: {' + '.join(d.pools(rules.threw_last_turn_defense))} = "
                     f"{defence} {'die' if defence == 1 else 'dice'} ({_RULE_WORDS[d.rule()]})"
                     if d.dice is None else f"defence: {defence}d6")
    else:
        notes.append("no defender: every hit lands")
    if eo.critical_total:
        notes.append("critical dice and totals are given a Critical Strike that lands"
                     + ("" if rules.critical_table.rows else
                        " (no Critical Damage Table: the total is reported)"))
    extra: dict[str, Any] = {
        "columns": Distribution.from_mapping(eo.columns, order=list(eo.columns)).to_json(),
        "stun": {"stun": eo.stun, "no_stun": max(0.0, 1.0 - eo.stun)},
    }
    if eo.critical_total:
        extra["critical_dice"] = Distribution.from_mapping(eo.critical_dice).to_json()
        extra["critical_total"] = Distribution.from_mapping(eo.critical_total).to_json()
    if eo.critical_results:
        extra["critical_results"] = dict(eo.critical_results)
    return Odds(SYSTEM_NAME, text, Distribution.from_mapping(eo.outcomes, order=OUTCOMES),
                Distribution.from_mapping({k: v for k, v in eo.damage.items() if v > 0}),
                "damage", tuple(notes), extra)


def block_chance(defence: int, needed: int) -> float:
    """P(at least ``needed`` 6s on ``defence`` d6) (A11)."""
    if needed > defence:
        return 0.0
    ways = sum(math.comb(defence, k) * 5 ** (defence - k) for k in range(needed, defence + 1))
    return float(ways / DIE ** defence)

