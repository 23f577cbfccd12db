"""The d6 attack-table game (seed 003): every vector through the API and the CLI, the notation,
the exact odds against enumeration and icepool, the roller against its odds, and scripted fights.

The vectors of ``tests/data/vectors.json`` (system ``attack_table``) are turned into what a player
types (``at: ...`` and the faces rolled); the fights are driven through ``astragal fight``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import icepool
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import astragal
from astragal import InputError, Limits, SeededSource
from astragal import fight_cli as FIGHT
from astragal.cli import main as cli_main
from astragal.systems import attack as A
from astragal.systems.attack import exchange as X
from astragal.systems.attack import fight as FIGHT_MODEL
from astragal.systems.attack import rules as R
from astragal.systems.attack.notation import Attacker, Defender, Exchange
from tests.stats import assert_matches

VECTORS = [v for v in json.loads((Path(__file__).parents[2] / "data" / "vectors.json")
                                 .read_text()) if v["system"] == "attack_table"]

COLUMN_FACES = {"3 or less": [3], "one 4": [4], "double 4": [4, 4], "one 5": [5],
                "double 5": [5, 5], "one 6": [6], "double 6": [6, 6], "three+ 6s": [6, 6, 6]}
POOL_SIZES = {"ARMOR": 1, "SHIELD": 2, "PARRY/DODGE": 4}  # distinct, so the count names the pools


def faces(*sides: list[int]) -> str:
    return " / ".join(",".join(str(f) for f in side) for side in sides)


def case(v: dict[str, Any]) -> tuple[str, str | None, Any]:
    """A vector → (notation, faces or None for a seed, how to read the answer from the result)."""
    i, e = v["input"], v["expected"]
    if "attack" in i:
        text = f"at: atk {i['attack']} wpn {i['weapon']}"
        if i.get("thrown"):
            text += f" throw +{i['throw_bonus']}"
        text += " berserk" * bool(i.get("berserk")) + " defensive" * bool(i.get("defensive"))
        text += f" luck {i['luck_dice']}" if i.get("luck_dice") else ""
        return text, None, lambda r: {"dice": r["dice"]}
    if "faces" in i and "critical_dice" not in i:
        # a Critical Strike that lands rolls its critical dice too (A13: the 6s, no defender)
        crit = [[], [1] * e["sixes"]] if e.get("critical") else []
        return (f"at: {len(i['faces'])}d6", faces(i["faces"], *crit),
                lambda r: {k: r[k] for k in e})
    if "attack_column" in i:
        att, dfc = COLUMN_FACES[i["attack_column"]], i["defense_faces"]
        return (f"at: {len(att)}d6 vs {len(dfc)}d6", faces(att, dfc),
                lambda r: {"blocked": r["blocked"]})
    if "state" in i:
        states = " ".join(s for s in i["state"] if s != "normal")
        n = sum(POOL_SIZES[p] for p in e["pools"])
        return (f"at: 1d6 vs armor 1 shield 2 parry 4 {states}".rstrip(), faces([4], [1] * n),
                lambda r: {"pools": r["defence"]["pools"]})
    if "attack_sixes" in i:
        s, rolled = i["attack_sixes"], i["defender_dice_rolled"]
        return (f"at: {s}d6 weapon {i['weapon_class']} vs {rolled}d6",
                faces([6] * s, [1] * rolled, [3] * e["critical_dice"]),
                lambda r: {"critical_dice": r["critical_dice"]})
    if "critical_dice" in i:
        # three 6s, a C weapon (+1) and a defender who rolled 2 dice: 3 + 1 − 2 critical dice
        rolled = 3 + 1 - i["critical_dice"]
        return (f"at: 3d6 weapon C crit +{i['crit_bonus']} vs {rolled}d6",
                faces([6, 6, 6], [1] * rolled, i["faces"]),
                lambda r: {"total": r["critical_total"]})
    raise AssertionError(f"no case for vector {v['name']}")


def test_every_vector_has_a_case() -> None:
    assert len(VECTORS) == 23
    for v in VECTORS:
        case(v)


@pytest.mark.parametrize("v", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_through_the_api(v: dict[str, Any]) -> None:
    text, f, read = case(v)
    r = astragal.roll(text, faces=f) if f is not None else astragal.roll(text, seed=7)
    assert read(r.result) == v["expected"]


@pytest.mark.parametrize("v", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_through_the_cli(v: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    text, f, read = case(v)
    argv = ["roll", text, "--json"] + (["--faces", f] if f is not None else ["--seed", "7"])
    assert cli_main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["system"] == "attack"
    assert read(data["result"]) == v["expected"]


def test_rule_functions_of_the_vectors() -> None:
    assert R.attack_dice(3, 4) == 3  # A1
    assert R.pool_size(R.attack_dice(5, 4), True, 1, R.BERSERK) + 2 == 8  # A2–A4
    assert R.pool_size(R.attack_dice(4, 4), stance=R.DEFENSIVE) == 3
    assert R.critical_dice(3, 2, 4) == 1  # A13, literal: minus dice rolled
    assert R.critical_dice(3, 2, 4, defender_sixes=1, subtract="sixes_rolled") == 4  # A-A5
    assert R.critical_dice(3, 0, 9) == 0  # floor 0
    assert R.critical_total(4 + 5, 2) == 11  # A14, A15
    assert R.defence_pools([R.BERSERK_LAST_TURN, R.WHIFFED_LAST_TURN]) == (R.ARMOR,)


def test_default_table_is_the_reconstruction() -> None:
    """A-A1..A-A3: damage = highest face − 3; doubles and Criticals stun; block matches count."""
    table = R.default_attack_table()
    for col in table.columns:
        face = int(col.name.split()[1][0])
        count = {"one": 1, "double": 2, "three+": 3}[col.name.split()[0]]
        assert col.damage == face - 3
        assert col.stun == (count >= 2)
        assert col.sixes_to_block(count) == count
        assert col.critical == (count == 3)
    assert R.default_critical_table().rows == ()


# --------------------------------------------------------------------------------------------
# The notation


def test_issue_examples_parse_and_print_canonically() -> None:
    for text in ("at: 5d6", "at: atk 4 wpn 3 berserk luck 1 vs armor 2 shield 1 parry 2",
                 "at: atk 4 wpn 3 weapon D crit +2 vs armor 2 shield 1 parry 2 stunned"):
        assert str(astragal.parse(text)) == text
    assert str(astragal.parse("attack: ATK=4 WPN=3 Throw 2 luck vs Armour 2 dodge 1 "
                              "Berserk Last Turn whiffed")) == \
        "at: atk 4 wpn 3 throw +2 luck 1 vs armor 2 parry 1 berserk_last_turn whiffed_last_turn"
    spec = astragal.parse("at: 3d6 vs 2d6 damage_by_column=1,1,2,2,3,3,4").spec
    assert spec.options == (("damage_by_column", "1,1,2,2,3,3,4"),)


@pytest.mark.parametrize("text, where, words", [
    ("at: 5d8", "5d8", "every die is a d6"),
    ("at: atk 4", "atk", "without WEAPON"),
    ("at: atk 4 wpn 3 berserk defensive", "defensive", "twice"),
    ("at: atk 4 wpn 3 5d6", "atk", "not both"),
    ("at: 3d6 vs armor 2 armour 3", "armour", "twice"),
    ("at: 3d6 vs parry 2 dodge 1", "dodge", "one pool"),
    ("at: 3d6 vs 3d6 stunned", "stunned", "ARMOR"),
    ("at: 3d6 stunned vs 2d6", "stunned", "after 'vs'"),
    ("at: 3d6 vs 2d6 berserk_last", "berserk_last", "not part of a defence"),
    ("at: 3d6 vs 2d6 luck 2", "luck", "before 'vs'"),
    ("at: 3d6 vs", None, "no dice"),
    ("at: 3d6 weapon sword", "sword", "weapon class"),
    ("at: 3d6 crit x", "x", "Crit Bonus"),
    ("at: 3d6 vs 2d6 frobnicate=1", "frobnicate=1", "not a house rule"),
    ("at: 3d6 crit_dice_subtract=always", "crit_dice_subtract=always", "one of"),
    ("at: 3d6 stun_columns=4-4,7-7", "stun_columns=4-4", "not a column"),
    ("at: 3d6 vs 1d6 vs 1d6", "vs", "only one"),
    ("at: ", None, "nothing to roll"),
    ("at: 99999d6", "99999d6", "more than"),
    ("at: 400d6 luck 200", "400d6", "limit"),
])
def test_notation_errors_point_at_the_mistake(text: str, where: str | None, words: str) -> None:
    with pytest.raises(InputError) as info:
        astragal.parse(text)
    err = info.value
    assert words in err.message
    if where is not None:
        assert err.span is not None
        assert text[err.span[0]:err.span[1]] == where
    assert "^" in err.pretty()


def test_zero_attack_dice_is_a_whiff_or_refused() -> None:
    r = astragal.roll("at: atk 1 wpn 1 defensive vs armor 2", seed=1)  # A-A8
    assert r.outcome == "whiff" and r.result["dice"] == 0 and not r.dice
    assert astragal.odds("at: 0d6").outcomes["whiff"] == 1.0
    with pytest.raises(InputError, match="A-A8"):
        astragal.roll("at: 0d6 zero_attack_dice=cannot_attack", seed=1)
    r = astragal.roll("at: atk 1 wpn 0 defensive luck 2", faces="4,1")  # Luck dice alone
    assert r.result["column"] == "one 4" and r.result["attack_dice"] == 0


@st.composite
def exchanges(draw: st.DrawFn) -> Exchange:
    if draw(st.booleans()):
        dice, atk, wpn = draw(st.integers(0, 30)), None, None
    else:
        dice, atk, wpn = None, draw(st.integers(0, 40)), draw(st.integers(0, 40))
    thrown = draw(st.booleans())
    attacker = Attacker(dice, atk, wpn, draw(st.sampled_from([None, "A", "C", "D", "Z"])),
                        draw(st.integers(-9, 9)), thrown,
                        draw(st.integers(0, 5)) if thrown else 0,
                        draw(st.sampled_from(R.STANCES)), draw(st.integers(0, 4)))
    defender = None
    if draw(st.booleans()):
        if draw(st.booleans()):
            defender = Defender(dice=draw(st.integers(0, 20)))
        else:
            states = draw(st.sets(st.sampled_from(R.DEFENCE_STATES)))
            defender = Defender(None, draw(st.integers(0, 9)), draw(st.integers(0, 9)),
                                draw(st.integers(0, 9)),
                                tuple(s for s in R.DEFENCE_STATES if s in states))
    options = draw(st.dictionaries(st.sampled_from(["crit_dice_subtract", "threw_last_turn_defense",
                                                    "triple_non_six"]),
                                   st.just(""), max_size=2))
    chosen = tuple(sorted((k, draw(st.sampled_from(R.CHOICES[k]))) for k in options
                          if k != "triple_non_six"))
    return Exchange(attacker, defender, chosen)


@settings(max_examples=300, deadline=None)
@given(exchanges())
def test_notation_round_trip(spec: Exchange) -> None:
    text = str(spec)
    assert astragal.parse(text).spec == spec
    assert str(astragal.parse(text)) == text


_WORDS = ["at:", "5d6", "d6", "atk", "wpn", "4", "+2", "-1", "weapon", "D", "crit", "throw",
          "berserk", "defensive", "luck", "vs", "armor", "shield", "parry", "dodge", "2d6",
          "stunned", "whiffed", "normal", "=", "x", ",", "0d6", "crit_dice_subtract=sixes_rolled",
          "stun_columns=4-4", "luck=2", "atk=3", "last", "turn", "d8", "weapon=C", "99999"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_WORDS), max_size=12), st.text(max_size=8))
def test_any_input_parses_or_says_why(words: list[str], noise: str) -> None:
    for text in ("at: " + " ".join(words), "at: " + " ".join(words) + noise):
        try:
            parsed = astragal.parse(text)
        except InputError as err:
            assert err.message
            continue
        assert astragal.parse(str(parsed)).spec == parsed.spec


# --------------------------------------------------------------------------------------------
# Exact odds: enumeration of the rules over every face, and icepool


def brute(n: int, d: int | None, weapon_class: str | None, crit_bonus: int,
          rules: R.Rules) -> dict[str, dict[Any, Fraction]]:
    """Every attack, defence and critical face enumerated through the rule functions.

    Weights are whole numbers in units of 6^-(n + d + most critical dice); the critical faces of
    each dice count are enumerated once and reused (they do not depend on the earlier faces).
    """
    laws: dict[str, dict[Any, int]] = {k: {} for k in ("outcomes", "damage", "columns", "stun",
                                                       "total", "dice")}

    def add(law: str, key: Any, w: int) -> None:
        laws[law][key] = laws[law].get(key, 0) + w

    class_dice = rules.crit_dice_for(weapon_class)
    d_max = d or 0
    c_max = n + class_dice
    crit_laws: dict[int, dict[int, int]] = {}
    for c in range(c_max + 1):
        counts: dict[int, int] = {}
        for cf in itertools.product(range(1, 7), repeat=c):
            total = R.critical_total(sum(cf), crit_bonus)
            counts[total] = counts.get(total, 0) + 6 ** (c_max - c)
        crit_laws[c] = counts
    unit = 6 ** (d_max + c_max)
    for att in itertools.product(range(1, 7), repeat=n):
        reading = R.read_attack(att, rules)
        add("columns", reading.column, unit)
        if reading.whiff:
            add("outcomes", "whiff", unit)
            add("damage", 0, unit)
            continue
        need, entry = reading.sixes_to_block, reading.entry
        assert entry is not None
        tries = d is not None and need is not None and d > 0
        for df in itertools.product(range(1, 7), repeat=d_max if tries else 0):
            w = 6 ** (d_max - len(df) + c_max)
            if tries and R.blocks(need, R.sixes(df)):
                add("outcomes", "blocked", w)
                add("damage", 0, w)
                continue
            if entry.stun:
                add("stun", True, w)
            if not entry.critical:
                add("outcomes", "hit", w)
                add("damage", entry.damage, w)
                continue
            c = R.critical_dice(reading.sixes, class_dice, len(df), R.sixes(df),
                                rules.crit_dice_subtract)
            add("dice", c, w)
            w //= 6 ** c_max
            for total, k in crit_laws[c].items():
                row = rules.critical_table.lookup(total)
                add("outcomes", "critical", w * k)
                add("total", total, w * k)
                add("damage", entry.damage + (row.damage if row else 0), w * k)
    den = 6 ** (n + d_max + c_max)
    return {law: {k: Fraction(v, den) for k, v in values.items()}
            for law, values in laws.items()}


def assert_close(ours: dict[Any, float], exact: dict[Any, Fraction], scale: Fraction = Fraction(1),
                 tol: float = 1e-12) -> None:
    keys = set(ours) | {k for k, v in exact.items() if v}
    for k in keys:
        want = float(exact.get(k, Fraction(0)) / scale) if scale else 0.0
        assert abs(ours.get(k, 0.0) - want) <= tol, (k, ours.get(k), want)


def compare(eo: X.ExchangeOdds, laws: dict[str, dict[Any, Fraction]]) -> None:
    assert_close(eo.outcomes, laws["outcomes"])
    assert_close(eo.damage, laws["damage"])
    assert_close({k: v for k, v in eo.columns.items()}, laws["columns"])
    assert abs(eo.stun - float(laws["stun"].get(True, Fraction(0)))) <= 1e-12
    crit = laws["outcomes"].get("critical", Fraction(0))
    assert_close(eo.critical_total, laws["total"], crit)
    assert_close(eo.critical_dice, laws["dice"], crit)
    assert abs(sum(eo.outcomes.values()) - 1) < 1e-12


def gm_tables(tmp: Path) -> tuple[str, str]:
    table = json.loads((Path(R.__file__).parents[2] / "data" / "attack_table.json").read_text())
    table["columns"]["three+ 4s"] = {"damage": 2, "stun": True, "block": 3}
    table["columns"]["three+ 5s"] = {"damage": 4, "stun": False, "block": None, "critical": True}
    table["columns"]["one 6"]["block"] = None
    crit = {"format": "astragal critical damage table", "version": 1,
            "rows": [{"min": 1, "max": 6, "result": "Graze"},
                     {"min": 7, "max": 9, "result": "Broken arm", "damage": 2},
                     {"min": 12, "max": None, "result": "Down", "damage": 5}]}
    a, c = tmp / "table.json", tmp / "crit.json"
    a.write_text(json.dumps(table))
    c.write_text(json.dumps(crit))
    return str(a), str(c)


SMALL = [(n, d) for n in (0, 1, 2, 3) for d in (None, 0, 1, 2, 3)] + [(4, None), (4, 1), (4, 2)]


@pytest.mark.parametrize("n, d", SMALL)
@pytest.mark.parametrize("variant", ["default", "sixes_rolled", "gm_tables"])
def test_odds_equal_enumeration(n: int, d: int | None, variant: str, tmp_path: Path) -> None:
    if variant == "gm_tables":
        a, c = gm_tables(tmp_path)
        # the rules take the tables as data (the command line and the API read the files)
        rules = R.rules_for({"attack_table": json.loads(Path(a).read_text()),
                             "critical_damage_table": json.loads(Path(c).read_text()),
                             "triple_non_six": "own_column", "stun_columns": "4/5-5-5/6-6-6",
                             "weapon_class_crit_dice": "C:1/D:2/E:3"})
        weapon_class, bonus = "E", 4
    elif variant == "sixes_rolled":
        rules = R.rules_for({"crit_dice_subtract": "sixes_rolled"})
        weapon_class, bonus = "D", -1
    else:
        rules = R.rules_for({})
        weapon_class, bonus = "C", 2
    eo = X.exchange_odds(n, d, weapon_class, bonus, rules)
    compare(eo, brute(n, d, weapon_class, bonus, rules))


def icepool_exchange(n: int, d: int | None, class_dice: int, crit_bonus: int,
                     subtract: str = "dice_rolled") -> icepool.Die:
    """The exchange written straight from RULES.md A5–A15 (default reconstruction) in icepool.

    Outcome: (category, damage, stun, critical total or -1).
    """
    top = icepool.d6.pool(n).highest_outcome_and_count()
    rolled = d or 0
    six_count = icepool.d6.pool(rolled).keep_outcomes([6]).size()

    def exchange(hm: tuple[int, int], k: int) -> Any:
        h, m = hm
        if h <= 3 or m == 0:
            return ("whiff", 0, False, -1)
        critical = h == 6 and m >= 3
        need = m if critical else min(m, 2)  # three 4s/5s read double (A-A4)
        tries = d is not None and rolled > 0
        if tries and k >= need:
            return ("blocked", 0, False, -1)
        if not critical:
            return ("hit", h - 3, m >= 2, -1)
        minus = (rolled if tries else 0) if subtract == "dice_rolled" else k
        c = max(0, m + class_dice - minus)
        return ("critical", 3, True, c @ icepool.d6 + crit_bonus)

    return icepool.map(exchange, top, six_count)


def _law(die: icepool.Die, index: int, where: Any = None) -> dict[Any, float]:
    total = die.denominator()
    out: dict[Any, float] = {}
    for outcome, q in die.items():
        if where is None or where(outcome):
            out[outcome[index]] = out.get(outcome[index], 0) + q
    norm = sum(out.values()) if where is not None else total
    return {k: v / norm for k, v in out.items()} if norm else {}


@pytest.mark.parametrize("n, d, cls, bonus, subtract", [
    (5, 3, "D", 2, "dice_rolled"), (8, None, "C", 0, "dice_rolled"), (12, 5, "D", 2, "dice_rolled"),
    (10, 0, None, 1, "dice_rolled"), (9, 6, "C", 0, "sixes_rolled"), (12, 2, "D", -2, "sixes_rolled"),
    (7, 9, None, 3, "dice_rolled"),
])
def test_odds_equal_icepool(n: int, d: int | None, cls: str | None, bonus: int,
                            subtract: str) -> None:
    rules = R.rules_for({"crit_dice_subtract": subtract})
    eo = X.exchange_odds(n, d, cls, bonus, rules)
    die = icepool_exchange(n, d, rules.crit_dice_for(cls), bonus, subtract)
    for ours, theirs in ((eo.outcomes, _law(die, 0)), (eo.damage, _law(die, 1)),
                         (eo.critical_total, _law(die, 3, lambda o: o[0] == "critical"))):
        for k in set(ours) | set(theirs):
            assert abs(ours.get(k, 0.0) - theirs.get(k, 0.0)) < 1e-12, (k, ours.get(k),
                                                                       theirs.get(k))
    assert abs(eo.stun - _law(die, 2).get(True, 0.0)) < 1e-12


def test_categories_table_equals_icepool_and_the_whiff_formula(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["table", "attack", "categories", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)  # {"columns": header, "rows": numbers}
    header, rows = data["columns"], data["rows"]
    assert [r[0] for r in rows] == list(range(1, 13))
    for row in rows:
        n = int(row[0])
        cells = dict(zip(header[1:], row[1:]))
        assert abs(cells["3 or less"] - 0.5 ** n) <= 5e-5 + 1e-12  # a Whiff: every die shows 3 or less
        top = icepool.d6.pool(n).highest_outcome_and_count()
        law: dict[str, float] = {}
        for (h, m), q in top.items():
            name = R.column_for(h, m)
            law[name] = law.get(name, 0.0) + q / top.denominator()
        ours = X.column_chances(n, R.rules_for({}))
        for name in R.COLUMNS:
            assert abs(ours[name] - law.get(name, 0.0)) < 1e-12
            assert abs(cells[name] - law.get(name, 0.0)) <= 5e-5 + 1e-12
    assert cli_main(["table", "attack", "block"]) == 0
    assert "needs 6-6" in capsys.readouterr().out


@settings(max_examples=150, deadline=None)
@given(exchanges(), st.integers(0, 2**32))
def test_odds_are_laws_and_rolls_stay_in_bounds(spec: Exchange, seed: int) -> None:
    spec = Exchange(spec.attacker, spec.defender, ())
    text = str(spec)
    o = astragal.odds(text)
    assert abs(o.outcomes.total() - 1) < 1e-9 and abs(o.distribution.total() - 1) < 1e-9
    assert abs(sum(o.extra["columns"].values()) - 1) < 1e-9
    if "critical_total" in o.extra:
        assert abs(sum(o.extra["critical_total"].values()) - 1) < 1e-9
    r = astragal.roll(text, seed=seed)
    assert o.outcomes[r.outcome] > 0 and o.distribution[r.result["damage"]] > 0
    assert 0 <= r.result["damage"] <= 3
    assert len([d for d in r.dice if d.group in ("attack", "luck")]) == spec.attacker.total
    assert all(1 <= d.face <= 6 for d in r.dice)


def test_odds_json_shape_and_notes() -> None:
    o = astragal.odds("at: atk 4 wpn 3 weapon D crit +2 vs armor 2 shield 1 parry 2 stunned")
    data = o.to_json()
    assert set(data["outcomes"]) == set(X.OUTCOMES)
    assert abs(sum(data["outcomes"].values()) - 1) < 1e-12
    assert abs(sum(data["distribution"].values()) - 1) < 1e-12
    assert set(data["columns"]) == set(R.COLUMNS)
    assert abs(sum(data["critical_total"].values()) - 1) < 1e-12
    assert any("ARMOR = 2 dice" in n for n in data["notes"])
    assert "critical_results" not in data  # no GM table: the total only


def test_odds_with_a_gm_critical_table(tmp_path: Path) -> None:
    _, c = gm_tables(tmp_path)
    o = astragal.odds("at: 6d6 weapon D vs 2d6", options={"critical_damage_table": c})
    results = o.extra["critical_results"]
    assert set(results) <= {"1–6: Graze", "7–9: Broken arm", "12+: Down", "no entry"}
    assert abs(sum(results.values()) - 1) < 1e-12
    assert max(o.distribution.outcomes()) == 3 + 5


def test_odds_work_limit() -> None:
    with pytest.raises(astragal.LimitError):
        astragal.odds("at: 400d6 vs 400d6", limits=Limits(max_odds_work=10_000))


# --------------------------------------------------------------------------------------------
# The roller against its own exact odds


@pytest.mark.parametrize("text, seed", [
    ("at: atk 5 wpn 4 weapon D crit +1 vs armor 1 shield 1 parry 1", 20240611),
    ("at: 6d6 weapon C vs 2d6 crit_dice_subtract=sixes_rolled", 977),
])
def test_roller_matches_its_odds(text: str, seed: int) -> None:
    parsed = astragal.parse(text)
    rules = A.rules_of(parsed.spec, {})
    source = SeededSource(seed)
    rolls = [X.roll(parsed.spec, source, rules, Limits(), text) for _ in range(30_000)]
    o = astragal.odds(text)
    assert_matches([r.outcome for r in rolls], o.outcomes.as_dict())
    assert_matches([r.result["damage"] for r in rolls], o.distribution.as_dict())
    assert_matches([r.result["stun"] for r in rolls],
                   {True: o.extra["stun"]["stun"], False: o.extra["stun"]["no_stun"]})
    totals = [r.result["critical_total"] for r in rolls if r.outcome == "critical"]
    assert_matches(totals, {int(k): p for k, p in o.extra["critical_total"].items()})
    for r in rolls[:500]:
        assert 0 <= r.result["damage"] <= 3
        assert len([d for d in r.dice if d.group in ("attack", "luck")]) == r.result["dice"]


def test_roll_transcript_reads_the_rules() -> None:
    r = astragal.roll("at: atk 4 wpn 3 weapon D crit +2 luck 1 vs armor 2 shield 1 parry 2 "
                      "whiffed_last_turn", faces="6,6,2 6 / 6,1,1 / 4,5")
    text = str(r)
    assert "plus 1 Luck die (A4) = 4" in text
    assert "Luck: 6" in text
    assert "ARMOR + SHIELD = 3 dice" in text
    assert "3 sixes + 2 (weapon D) − 3 dice the defender rolled = 2" in text
    assert r.outcome == "critical" and r.result["critical_total"] == 4 + 5 + 2
    assert [d.group for d in r.dice] == ["attack"] * 3 + ["luck"] + ["defence"] * 3 + \
        ["critical"] * 2


def test_blocked_hits_and_unblockable_columns(tmp_path: Path) -> None:
    r = astragal.roll("at: 2d6 vs 2d6", faces="6,6 / 6,6")
    assert r.outcome == "blocked" and r.result["damage"] == 0 and not r.result["stun"]
    a, _ = gm_tables(tmp_path)
    r = astragal.roll("at: 2d6 vs 3d6", faces="6,1", options={"attack_table": a})
    assert r.outcome == "hit" and r.result["sixes_to_block"] is None  # no defence roll
    r = astragal.roll("at: 3d6 vs armor 0", faces="6,6,6 / / 1,2,3")  # no dice to block with
    assert r.result["critical_dice"] == 3 and r.result["critical_total"] == 6
    assert r.result["defence"]["rolled"] is False


def test_switches_change_the_reading(tmp_path: Path) -> None:
    base = "at: 3d6 vs armor 1 shield 1 parry 1 threw_last_turn"
    assert astragal.roll(base, faces="5,5,5 / 1,1,1").result["column"] == "double 5"
    assert astragal.roll(base + " threw_last_turn_defense=armor", faces="4,1,1 / 1"
                         ).result["defence"]["pools"] == ["ARMOR"]
    a, _ = gm_tables(tmp_path)
    r = astragal.roll("at: 3d6", faces="5,5,5", options={"attack_table": a,
                                                        "triple_non_six": "own_column"})
    assert r.result["column"] == "three+ 5s" and r.outcome == "critical"
    r = astragal.roll("at: 2d6 stun_columns=4,6 damage_by_column=0/0/0/0/9/0/0", faces="6,1")
    assert r.result["stun"] and r.result["damage"] == 9
    r = astragal.roll("at: 2d6 vs 2d6 sixes_to_block_by_column=1/1/1/1/1/-/3", faces="6,6")
    assert r.outcome == "hit" and not r.result["defence"]["rolled"]  # nothing to roll against
    r = astragal.roll("at: 3d6 weapon E vs 1d6 weapon_class_crit_dice=E:3",
                      faces="6,6,6 / 1 / 1,1,1,1,1")
    assert r.result["critical_dice"] == 3 + 3 - 1
    with pytest.raises(InputError, match="three\\+ 4s"):
        astragal.roll("at: 3d6 triple_non_six=own_column", faces="4,4,4")


@pytest.mark.parametrize("change, words", [
    (lambda t: t["columns"].pop("one 5"), "one 5 missing"),
    (lambda t: t["columns"]["one 4"].update(damage=-1), "damage must be a whole number"),
    (lambda t: t["columns"]["one 4"].update(block=0), "block"),
    (lambda t: t["columns"]["one 4"].update(stun="yes"), "true or false"),
    (lambda t: t["columns"].update({"two 4": {}}), "not a column"),
    (lambda t: t.update(format="x"), "format"),
])
def test_bad_gm_tables_are_clear_errors(change: Any, words: str, tmp_path: Path) -> None:
    table = json.loads((Path(R.__file__).parents[2] / "data" / "attack_table.json").read_text())
    change(table)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(table))
    with pytest.raises(InputError, match=words):
        astragal.roll("at: 2d6", seed=1, options={"attack_table": str(path)})
    path.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        astragal.roll("at: 2d6", seed=1, options={"attack_table": str(path)})
    with pytest.raises(InputError, match="cannot read"):
        astragal.roll("at: 2d6", seed=1, options={"attack_table": str(tmp_path / "none")})
    bad = {"format": "astragal critical damage table", "rows": [
        {"min": 1, "max": 5, "result": "a"}, {"min": 5, "result": "b"}]}
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError, match="overlap"):
        astragal.odds("at: 2d6", options={"critical_damage_table": str(path)})


# --------------------------------------------------------------------------------------------
# The fight tracker


class Fight:
    """Drives ``astragal fight`` through the CLI and reads its file."""

    def __init__(self, path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.path = path
        self.capsys = capsys

    def __call__(self, *args: str, code: int = 0) -> str:
        rc = cli_main(["fight", "--file", str(self.path), *args])
        out = self.capsys.readouterr()
        assert rc == code, out.err
        return out.out if code == 0 else out.err

    def fails(self, *args: str) -> str:
        before = self.path.read_bytes()
        err = self(*args, code=2)
        assert self.path.read_bytes() == before  # all of the turn or none of it
        return err

    def who(self, name: str) -> dict[str, Any]:
        data = json.loads(self.path.read_text())
        return next(c for c in data["combatants"] if c["name"] == name)  # type: ignore[no-any-return]

    def data(self) -> dict[str, Any]:
        return json.loads(self.path.read_text())  # type: ignore[no-any-return]


@pytest.fixture
def fight(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Fight:
    f = Fight(tmp_path / "fight.json", capsys)
    f("new")
    f("add", "Anna", "atk=4", "wpn=3", "class=C", "throw=1", "crit=+2", "armor=2", "shield=1",
      "parry=2", "luck=2", "heal=3", "ammo=2", "hp=12")
    f("add", "Bram", "atk=5", "wpn=5", "armor=3", "parry=1", "luck=1", "hp=10")
    f("add", "Cato", "atk=2", "wpn=2", "armor=1", "shield=1", "dodge=1")
    return f


def test_a_scripted_fight_keeps_its_state(fight: Fight) -> None:
    f = fight
    # 1: Anna, Berserk with 1 Luck die: 3 + 1 + 1 luck = 5 dice; double 6 through Bram's 4 dice
    out = f("attack", "Anna", "Bram", "berserk", "luck=1", "--faces", "6,6,2,1,1 / 6,2,3,1")
    assert "Hit! 3 damage" in out and "Luck 2 → 1" in out
    assert f.who("Anna")["luck"] == 1 and f.who("Anna")["last_turn"] == ["berserk"]
    assert f.who("Bram")["damage"] == 3 and f.who("Bram")["stunned"]
    # 2: Bram's own turn ends his stun (A-A9 default); he Whiffs; Anna is not rolled against
    out = f("attack", "Bram", "Anna", "--faces", "3,2,1,1,1")
    assert "no longer stunned" in out
    assert not f.who("Bram")["stunned"] and f.who("Bram")["last_turn"] == ["whiffed"]
    # 3: Anna throws (+1 die, 1 Ammo); Bram whiffed → ARMOR + SHIELD = 3 dice; three 6s:
    #    critical dice = 3 sixes + 1 (class C) − 3 dice rolled = 1; total 4 + 2 = 6
    f("attack", "Anna", "Bram", "throw", "--faces", "6,6,6,1 / 1,2,3 / 4")
    bram = f.who("Bram")
    assert bram["damage"] == 6 and bram["stunned"]
    assert bram["criticals"] == [{"turn": 3, "from": "Anna", "total": 6, "result": None}]
    assert f.who("Anna")["ammo"] == 1 and f.who("Anna")["last_turn"] == ["threw"]
    # 4: Bram Defensive: 5 − 1 = 4 dice; Anna threw last turn → full defence (A-A6), 5 dice
    out = f("attack", "Bram", "Anna", "defensive", "--faces", "5,5,1,1 / 6,6,1,2,3")
    assert "Blocked" in out and f.who("Anna")["damage"] == 0
    assert f.who("Bram")["last_turn"] == ["defensive"]
    # 5: Cato's one 4 against Bram's full defence (defensive last turn): 4 dice, no 6
    f("attack", "Cato", "Bram", "--faces", "4,2 / 1,1,1,1")
    assert f.who("Bram")["damage"] == 7 and not f.who("Bram")["stunned"]
    # 6: three 4s read double 4 (A-A4): 1 damage and a stun; Cato's 3 dice show one 6
    f("attack", "Bram", "Cato", "--faces", "4,4,4,2,1 / 1,6,2")
    assert f.who("Cato")["damage"] == 1 and f.who("Cato")["stunned"]
    assert f.who("Bram")["last_turn"] == []
    # 7: stunned Cato defends with ARMOR only (1 die) and blocks a one 5 with a 6
    f("attack", "Anna", "Cato", "--faces", "5,1,1 / 6")
    assert f.who("Cato")["stunned"] and f.who("Cato")["damage"] == 1
    # 8: Cato passes: his turn ends the stun
    f("pass", "Cato")
    assert not f.who("Cato")["stunned"]
    # spending what is not there changes nothing
    assert "0 Heal" in f.fails("heal", "Bram", "2")
    f("set", "Bram", "heal=2")
    f("heal", "Bram", "2")
    assert f.who("Bram")["damage"] == 5 and f.who("Bram")["heal"] == 0
    assert "cannot spend 2" in f.fails("attack", "Anna", "Bram", "luck=2")
    # 9: thrown with the last Ammo and the last Luck: 3 + 1 + 1 luck; a Whiff
    f("attack", "Anna", "Bram", "throw", "luck=1", "--faces", "1,2,3,3,2")
    anna = f.who("Anna")
    assert anna["ammo"] == 0 and anna["luck"] == 0 and anna["last_turn"] == ["threw", "whiffed"]
    assert "0 Ammo left" in f.fails("attack", "Anna", "Bram", "throw")
    # 10: first rule that applies: threw (full, 5 dice) before whiffed (A12)
    f("attack", "Bram", "Anna", "--faces", "6,1,1,1,1 / 6,1,1,1,1")
    assert f.who("Anna")["damage"] == 0
    # 11, 12: Anna whiffs; then defends with ARMOR + SHIELD (3 dice) and is hit by a double 6
    f("attack", "Anna", "Cato", "--faces", "1,1,1")
    f("attack", "Cato", "Anna", "--faces", "6,6 / 6,1,1")
    assert f.who("Anna")["damage"] == 3 and f.who("Anna")["stunned"]
    # 13: stunned Anna rolls ARMOR only (2 dice) against four 6s: 4 + 0 − 2 = 2 critical dice
    out = f("attack", "Bram", "Anna", "--faces", "6,6,6,6,2 / 6,6 / 3,4")
    assert "= 7 (A14, A15)" in out
    anna = f.who("Anna")
    assert anna["damage"] == 6 and anna["stunned"] and anna["criticals"][0]["total"] == 7
    data = f.data()
    assert data["turn"] == 13
    attacks = [e for e in data["log"] if e["action"] == "attack"]
    assert len(attacks) == 12
    assert attacks[2]["faces"] == "6,6,6,1 / 1,2,3 / 4"
    for e in attacks:  # every logged turn re-rolls to the same verdict from its notation
        r = astragal.roll(e["notation"], faces=e["faces"])
        assert (r.outcome, r.result["damage"], r.result["stun"]) == \
            (e["outcome"], e["damage"], e["stun"])
    shown = f("show")
    assert "stunned" in shown and "Critical (turn 13, from Bram): total 7" in shown
    assert "Anna" in f("log") and json.loads(f("log", "--json"))[0]["action"] == "add"


def test_fight_errors_change_nothing(fight: Fight) -> None:
    f = fight
    assert "no combatant 'Zed'" in f.fails("attack", "Anna", "Zed")
    assert "themself" in f.fails("attack", "Anna", "anna")
    assert "Berserk or Defensive" in f.fails("attack", "Anna", "Bram", "berserk", "defensive")
    assert "already" in f.fails("add", "bram")
    assert "not a combatant's number" in f.fails("add", "Dora", "atak=3")
    assert "whole number" in f.fails("set", "Anna", "armor=-1")
    assert "state" in f.fails("add", "Dora", "damage=3")
    assert "attack dice" in f.fails("attack", "Anna", "Bram", "--faces", "6,6")
    assert "unknown fight command" in f.fails("dance")
    assert "faces" in f.fails("heal", "Anna", "--faces", "3")
    assert "already exists" in f.fails("new")
    assert "not a house rule" in f.fails("option", "stun=forever")
    assert "one of" in f.fails("option", "stun_duration=forever")
    assert "Luck" in f.fails("spend", "Cato", "luck")
    assert "no Ammo counter" in f.fails("spend", "Cato", "ammo")
    assert f.data()["turn"] == 0


def test_stun_duration_and_luck_switches(fight: Fight) -> None:
    f = fight
    f("option", "stun_duration=one_defence", "luck_dice=kept")
    f("attack", "Bram", "Cato", "--faces", "4,4,1,1,1 / 1,1,1")
    assert f.who("Cato")["stunned"]
    f("attack", "Cato", "Anna", "--faces", "1,1")  # his own turn does not end it here
    assert f.who("Cato")["stunned"]
    f("attack", "Anna", "Cato", "luck=2", "--faces", "5,1,1,1,1 / 1")  # ARMOR only: 1 die
    assert not f.who("Cato")["stunned"] and f.who("Anna")["luck"] == 2  # kept
    f("option", "stun_duration=manual")
    # Cato whiffed on his last turn: ARMOR + SHIELD, 2 dice
    f("attack", "Bram", "Cato", "--faces", "5,5,1,1,1 / 1,1")
    f("pass", "Cato")
    assert f.who("Cato")["stunned"]
    f("set", "Cato", "stunned=false")
    assert not f.who("Cato")["stunned"]


def test_fight_with_gm_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, c = gm_tables(tmp_path)
    f = Fight(tmp_path / "gm.json", capsys)
    f("new", f"table={a}", f"critical_table={c}", "crit_dice_subtract=sixes_rolled")
    Path(c).write_text("{}")  # the fight keeps its own copy
    f("add", "Ulf", "atk=6", "wpn=6", "class=D")
    f("add", "Vik", "armor=2")
    out = f("attack", "Ulf", "Vik", "--faces", "6,6,6,1,1,1 / 1,6 / 3,3,1,1")
    # 3 sixes + 2 (D) − 1 six rolled = 4 dice: 3+3+1+1 = 8 → "Broken arm" (+2 damage)
    assert "Broken arm" in out
    assert f.who("Vik")["damage"] == 3 + 2
    assert f.who("Vik")["criticals"][0]["result"] == "Broken arm"
    odds = json.loads(f("odds", "Ulf", "Vik", "--json"))
    assert "critical_results" in odds
    assert "own attack table" in f("show")


def test_the_rules_and_the_web_tracker_read_no_files(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables are read by the command line and the Python API only: the rules take them as
    data, and the web table's fight tracker (anyone may open a room) never opens a path."""
    from astragal import _files
    from astragal.web.tabletools import fight_command, parse_command

    a, _ = gm_tables(tmp_path)
    table = json.loads(Path(a).read_text())
    # the API reads the file and the rules get the same table as data: the same odds
    by_path = astragal.odds("at: 4d6 vs 2d6", options={"attack_table": a})
    by_data = astragal.odds("at: 4d6 vs 2d6", options={"attack_table": table})
    assert by_path.outcomes == by_data.outcomes != astragal.odds("at: 4d6 vs 2d6").outcomes
    assert astragal.odds("at: 4d6 vs 2d6", options={"attack_table": Path(a)}).outcomes == \
        by_path.outcomes  # a pathlib.Path is a path too
    with pytest.raises(InputError, match="takes the attack table"):
        astragal.odds("at: 4d6 vs 2d6", options={"attack_table": 3})

    def no_reading(*_: Any, **__: Any) -> Any:
        raise AssertionError("a file was opened")

    monkeypatch.setattr(_files, "read_bytes", no_reading)
    with pytest.raises(InputError, match="only the command line"):
        R.rules_for({"attack_table": a})
    for typed in ("option table=/etc/passwd", "option critical_table=/etc/hostname",
                  f"option attack_table={a}"):
        with pytest.raises(InputError, match="only 'astragal fight' on the command line"):
            fight_command(None, parse_command("fight", typed), astragal.SeededSource(1))
    table["columns"]["one 4"]["damage"] = "x"
    with pytest.raises(InputError, match="damage must be a whole number"):
        astragal.odds("at: 4d6", options={"attack_table": table})


def test_writes_are_atomic(fight: Fight, monkeypatch: pytest.MonkeyPatch) -> None:
    f = fight
    before = f.path.read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(FIGHT.os, "replace", broken_replace)
    assert "unchanged" in f("attack", "Anna", "Bram", "--seed", "3", code=2)
    monkeypatch.undo()
    real_dump = json.dump

    def dies_halfway(obj: Any, fh: Any, **kw: Any) -> None:
        fh.write(json.dumps(obj, **kw)[:40])
        raise RuntimeError("power cut")

    monkeypatch.setattr(FIGHT.json, "dump", dies_halfway)
    with pytest.raises(RuntimeError):
        cli_main(["fight", "--file", str(f.path), "pass", "Anna"])
    monkeypatch.setattr(FIGHT.json, "dump", real_dump)
    assert f.path.read_bytes() == before
    assert [p.name for p in f.path.parent.iterdir()] == ["fight.json"]  # no temporary left


def test_damaged_fight_files_are_clear_errors(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    f = Fight(tmp_path / "f.json", capsys)
    assert "no fight file" in f("show", code=2)
    f.path.write_text('{"format": "astragal fight", "version": 1, "turn": 0')
    assert "not valid JSON" in f("show", code=2)
    f.path.write_text(json.dumps({"format": "something else"}))
    assert "not an astragal fight file" in f("show", code=2)
    good = {"format": "astragal fight", "version": 1, "turn": 0, "options": {},
            "attack_table": None, "critical_damage_table": None, "log": [],
            "combatants": [dict(FIGHT_MODEL.new_combatant("X"), luck=-1)]}
    f.path.write_text(json.dumps(good))
    assert "damaged" in f("show", code=2)
    good["combatants"] = [FIGHT_MODEL.new_combatant("X")]
    good["options"] = {"stun_duration": "forever"}
    f.path.write_text(json.dumps(good))
    assert "house rules" in f("show", code=2)


def test_a_side_is_kept_once_given_and_a_fight_without_one_reads_as_before(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = Fight(tmp_path / "f.json", capsys)
    f("new")
    f("add", "Anna", "atk=4", "wpn=3")
    assert "side" not in json.loads(f.path.read_text())["combatants"][0]  # as written before
    assert "side foes" in f("add", "Bram", "atk=3", "wpn=2", "side=foes")
    f("show")
    assert json.loads(f.path.read_text())["combatants"][1]["side"] == "foes"
    assert "one word" in f("set", "Anna", "side=two words", code=2)
    data = json.loads(f.path.read_text())
    data["combatants"][1]["side"] = 7
    f.path.write_text(json.dumps(data))
    assert "damaged" in f("show", code=2) and "side = 7" in f("show", code=2)


def test_a_long_seeded_fight_replays_from_its_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = Fight(tmp_path / "long.json", capsys)
    f("new")
    names = ["Ash", "Bo", "Cy", "Di"]
    for i, name in enumerate(names):
        f("add", name, f"atk={3 + i}", f"wpn={2 + 2 * i}", f"class={'ABCD'[i]}", "throw=1",
          f"crit=+{i}", f"armor={i + 1}", f"shield={i % 2}", f"parry={2 - i % 2}",
          "luck=6", "heal=4", "ammo=5")
    rng = random.Random(5)
    healed = {n: 0 for n in names}
    for turn in range(150):
        a, b = rng.sample(names, 2)
        words = [rng.choice(["", "berserk", "defensive"]), rng.choice(["", "throw"])]
        luck = rng.choice([0, 0, 0, 1])
        args = ["attack", a, b, *[w for w in words if w], "--seed", str(turn)]
        if luck:
            args.append(f"luck={luck}")
        if (luck and f.who(a)["luck"] < luck) or ("throw" in words and f.who(a)["ammo"] == 0):
            f.fails(*args)
            continue
        f(*args)
        if rng.random() < 0.1 and f.who(b)["damage"] and f.who(b)["heal"]:
            f("heal", b)
            healed[b] += 1
    data = f.data()
    attacks = [e for e in data["log"] if e["action"] == "attack"]
    assert data["turn"] == len(attacks) > 75
    for c in data["combatants"]:
        assert min(c["luck"], c["heal"], c["ammo"]) >= 0
        taken = sum(e["damage"] for e in attacks if e["defender"] == c["name"])
        assert c["damage"] == taken - healed[c["name"]]
        mine = [e for e in attacks if e["attacker"] == c["name"]]
        if mine:  # A20: last turn's flags are those of the combatant's last attack
            last = astragal.parse(mine[-1]["notation"]).spec.attacker
            flags = [fl for fl, on in (("berserk", last.stance == R.BERSERK),
                                       ("defensive", last.stance == R.DEFENSIVE),
                                       ("threw", last.thrown),
                                       ("whiffed", mine[-1]["outcome"] == "whiff")) if on]
            assert c["last_turn"] == flags
    for e in attacks:
        r = astragal.roll(e["notation"], faces=e["faces"] or None,
                          seed=None if e["faces"] else 0)
        assert (r.outcome, r.result["damage"], r.result["stun"]) == \
            (e["outcome"], e["damage"], e["stun"])


def test_fight_help_and_read_only_commands(fight: Fight) -> None:
    f = fight
    assert "attack A B" in f()
    before = f.path.read_bytes()
    out = f("odds", "Anna", "Bram", "berserk", "luck=1")
    assert "Exact odds" in out and "Whiff" in out
    assert f.path.read_bytes() == before
    assert json.loads(f("show", "--json"))["format"] == "astragal fight"
    assert os.path.exists(f.path)


@pytest.mark.parametrize("key", ["attack_table", "critical_damage_table"])
def test_table_files_cannot_be_named_inside_a_roll(key: str) -> None:
    """Anyone who may type a roll (the web table) must not make the engine read a file."""
    with pytest.raises(astragal.NotationError, match="names a file") as info:
        astragal.roll(f"at: 5d6 {key}=/etc/passwd", seed=1)
    assert "root" not in info.value.message
