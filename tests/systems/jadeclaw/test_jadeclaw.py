"""Jadeclaw: every worked example and rule vector of the seed, through the API and the CLI.

Each vector of ``tests/data/vectors.json`` (system ``jadeclaw``) is turned into the notation a
player would type and the faces they rolled; the test checks what the player would read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import astragal
from astragal.cli import main as cli_main
from astragal.systems import jadeclaw as J

VECTORS = [v for v in json.loads((Path(__file__).parents[2] / "data" / "vectors.json")
                                 .read_text()) if v["system"] == "jadeclaw"]


def dice(sizes: list[int]) -> str:
    return " ".join(f"d{s}" for s in sizes)


def faces(*sides: list[int]) -> str:
    return " / ".join(",".join(str(f) for f in side) for side in sides)


def rolled_sizes(roll: astragal.Roll, group: str) -> list[int]:
    return [d.size for d in roll.dice if d.group == group and d.kept]


def case(v: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
    """A vector → (notation, faces, options), the way a player would type it."""
    i = v["input"]
    op = i.get("op")
    if op == "bonus":
        kind = "dmg " if i.get("roll") == "damage" else ""
        base = dice(i["dice"]) if i["dice"] else "L0"
        return f"jc: {kind}{base} +{i['bonuses']}b", None, {}
    if op == "level_dice":
        return f"jc: L{i['level']}", None, {}
    if op == "damage_penalty":
        return f"jc: dmg {dice(i['dice'])} -{i['penalties']}p", None, {}
    if op == "include":
        return f"jc: {dice(i['dice'])} " + " ".join(f"+d{s}" for s in i["include"]), None, {}
    if op == "remove_biggest":
        return f"jc: {dice(i['dice'])}" + " remove biggest" * i["count"], None, {}
    if op == "limit":
        return f"jc: {dice(i['dice'])} limit d{i['limit']}", None, {}
    if op == "prepare_simple":
        return f"jc: {dice(i['dice'])} limit d{i['limit']} +{i['bonuses']}b", None, {}
    if op == "difficulty":
        return f"jc: d12 vs '{i['name']}'", None, {}
    if op == "auto_success_check":
        name = next(k for k, d in J.DIFFICULTIES.items() if list(d) == i["difficulty_dice"])
        calm = "" if i["dire"] or i["contested"] else " calm"
        return f"jc: {dice(i['dice'])} vs '{name}'{calm}", None, {}
    if i.get("roll") == "damage":
        kinds = i.get("damage_kind", [])
        kinds = [kinds] if isinstance(kinds, str) else kinds
        d_sizes = i.get("damage_dice", [12] * len(i["damage_faces"]))
        s_sizes = i.get("soak_dice", [12] * len(i["soak_faces"]))
        text = f"jc: dmg {dice(d_sizes)} {' '.join(kinds)}".rstrip()
        if s_sizes:
            text += f" vs soak {dice(s_sizes)}"
        return text, faces(i["damage_faces"], i["soak_faces"]), {}
    if "opposition_faces_reused_from_damage" in i:
        dmg = i["opposition_faces_reused_from_damage"]
        text = f"jc: dmg {dice([12] * len(dmg))} resolve {dice(i['actor_dice'])}"
        return text, faces(dmg, [], i["actor_faces"]), {}
    if "actor_score" in i and "actor_faces" not in i:
        # only Scores are given: a single die showing each Score
        return ("jc: d12 vs d12", faces([i["actor_score"]], [i["opposition_score"]]), {})
    if "rolls_faces" in i:
        flat = [f for r in i["rolls_faces"] for f in r]
        return f"jc: {dice(i['dice'])} -{i['penalties']}p", faces(flat), {}
    if "roll_scores" in i:
        return f"jc: d12 -{i['penalties']}p", faces(i["roll_scores"]), {}
    if "favored" in i:
        return (f"jc: {dice(i['dice'])} fav", faces(i["faces"] + [i["reroll_face"]]), {})
    if i.get("roll") == "simple" and "actor_faces" in i:
        a_sizes = i.get("actor_dice", [12] * len(i["actor_faces"]))
        text = f"jc: {dice(a_sizes)}"
        if i.get("actor_quality"):
            text += f" q={i['actor_quality'].lower()}"
        opts: dict[str, Any] = {}
        if "gm_double_botch_is_tie" in i:
            opts["double_botch"] = "tie" if i["gm_double_botch_is_tie"] else "both_botch"
        if "opposition_faces" not in i:
            return text, faces(i["actor_faces"]), opts
        o_sizes = i.get("opposition_dice", [12] * len(i["opposition_faces"]))
        text += f" vs {dice(o_sizes)}"
        if i.get("opposition_quality"):
            text += f" q={i['opposition_quality'].lower()}"
        return text, faces(i["actor_faces"], i["opposition_faces"]), opts
    if i.get("roll") == "simple" and "penalties" in i:
        return f"jc: d12 -{i['penalties']}p", None, {}
    if set(i) == {"bonuses", "penalties"}:
        return f"jc: d8 +{i['bonuses']}b -{i['penalties']}p", None, {}
    raise AssertionError(f"no case for {v['name']}")


def check(v: dict[str, Any], roll: astragal.Roll) -> None:
    """What the player reads off the roll equals the vector's expectation."""
    e, i, r = v["expected"], v["input"], roll.result
    groups = {d.group for d in roll.dice}
    if "opposition_faces_reused_from_damage" in i:  # J35: the Resolve test's verdict
        assert r["resolve"]["score"] == e["actor_score"]
        assert r["resolve"]["damage_score"] == e["opposition_score"]
        assert r["resolve"]["outcome"] == e["outcome"]
        return
    if "dice" in e:
        group = "damage" if i.get("roll") == "damage" or i.get("op") == "damage_penalty" else (
            "difficulty" if i.get("op") == "difficulty" else "actor")
        assert sorted(rolled_sizes(roll, group), reverse=True) == sorted(e["dice"], reverse=True)
    if "actor_score" in e:
        assert r["actor_score"] == e["actor_score"]
    if "opposition_score" in e:
        assert r["opposition_score"] == e["opposition_score"]
    if "outcome" in e:
        assert roll.outcome == e["outcome"]
    if "opposition_outcome" in e:  # the other side's view: the mirror of the actor's
        mirror = {"success": "failure", "failure": "success", "tie": "tie"}
        assert mirror[roll.outcome] == e["opposition_outcome"]
    if "margin" in e:
        assert r["margin"] == e["margin"]
    if "botch" in e:
        assert r["botch"] is e["botch"]
    if "both_botch" in e:
        assert r["both_botch"] is e["both_botch"]
    if "roll_count" in e:
        assert len({g for g in groups if g.startswith("actor")}) == e["roll_count"]
    if "roll_scores" in e:
        scores = [max([d.face for d in roll.dice if d.group == f"actor roll {n + 1}"])
                  for n in range(len(e["roll_scores"]))]
        assert scores == e["roll_scores"]
    if "final_score" in e:
        assert r["actor_score"] == e["final_score"]
    if "hits" in e:
        assert r["hits"] == e["hits"]
    if "pairs" in e:
        assert [[d, 1 if s is None else s, h] for d, s, h in r["pairs"]] == e["pairs"]
    if "faces" in e and "favored" in i:
        assert [d.face for d in roll.dice] == e["faces"]
        assert r["actor_score"] == e["score"]
    if "rerolled_die" in e:
        rerolled = [d for d in roll.dice if len(d.faces) > 1]
        assert [d.size for d in rerolled] == [e["rerolled_die"]]
    if "reroll_count" in e:
        assert sum(len(d.faces) - 1 for d in roll.dice) == e["reroll_count"]
    if "may_declare_success" in e:
        assert r.get("auto_success", False) is e["may_declare_success"]
        assert roll.outcome == "success" and not roll.dice
    if "net_bonuses" in e:
        spec = astragal.parse(roll.input).spec
        assert J.net(spec.actor.bonuses, spec.actor.penalties) == (
            e["net_bonuses"], e["net_penalties"])
        assert rolled_sizes(roll, "actor") == [8 + 2 * e["net_bonuses"]]


ROLL_VECTORS = [v for v in VECTORS if v["input"].get("op") not in ("quality",)
                and v["name"] != "level_0_dice"]


def test_level_0_has_no_dice() -> None:
    """J18: Level 0 is no dice; such a pool cannot be rolled (J-X3) but takes Bonuses (J17)."""
    assert astragal.parse("jc: L0").spec.actor.base == ()
    with pytest.raises(astragal.InputError, match="no dice"):
        astragal.roll("jc: L0")
    assert rolled_sizes(astragal.roll("jc: L0 +1b", seed=1), "actor") == [4]


@pytest.mark.parametrize("v", ROLL_VECTORS, ids=[v["name"] for v in ROLL_VECTORS])
def test_vector_through_the_api(v: dict[str, Any]) -> None:
    text, f, opts = case(v)
    roll = astragal.roll(text, faces=f, options=opts) if f else astragal.roll(
        text, seed=7, options=opts)
    check(v, roll)


@pytest.mark.parametrize("v", ROLL_VECTORS, ids=[v["name"] for v in ROLL_VECTORS])
def test_vector_through_the_cli(v: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    text, f, opts = case(v)
    argv = ["roll", text, "--json"] + (["--faces", f] if f else ["--seed", "7"])
    for k, val in opts.items():
        argv += ["-o", f"{k}={val}"]
    assert cli_main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"system", "input", "outcome", "result", "dice", "transcript", "steps"}
    dice_records = tuple(astragal.Die(d["size"], tuple(d.get("faces", [d["face"]])) if d["face"]
                                      else (), d["group"], d.get("note", ""), d.get("kept", True))
                         for d in data["dice"])
    check(v, astragal.Roll(data["system"], data["input"], data["outcome"], data["result"],
                           dice_records, tuple(data["transcript"])))


def test_quality_from_level() -> None:
    v = next(v for v in VECTORS if v["name"] == "quality_from_level")
    got = [J.quality_of_level(level) for level in v["input"]["levels"]]
    assert [q.title() if q else None for q in got] == v["expected"]["quality"]
    # and through the notation: q=6 is a Level 6 Skill, Expert
    # (the canonical form keeps the Skill Level: its band depends on quality_bands, J-A6)
    assert str(astragal.parse("jc: d12 q=6 vs d12 q=5")) == "jc: d12 q=6 vs d12 q=5"
    assert astragal.roll("jc: d12 q=6 vs d12 q=5", faces="7 / 7").outcome == "success"


def test_level_table_reproduces_every_cell() -> None:
    """J20: the computed table equals the seed's table (all 126 bonus cells + 21 level cells)."""
    rows = J.levels_table()
    cells = {v["name"]: v["expected"]["dice"] for v in VECTORS
             if v["name"].startswith("level_")}
    assert len(cells) == 147
    for level in range(21):
        assert sorted(J.level_dice(level), reverse=True) == cells[f"level_{level}_dice"]
        for b in range(1, 7):
            want = cells[f"level_{level}_plus_{b}_bonus"]
            assert rows[level + 1][b + 1] == J.dice_text(want)


def test_pooled_reading_differs_only_with_two_small_dice() -> None:
    """§1.3: readings A and E agree on the table, differ on d8&d4 +1 (A: d10&d6, E: d12&d4)."""
    assert J.levels_table(distribution="pooled_largest_first") == J.levels_table()
    assert sorted(J.apply_bonuses((8, 4), 1)) == [6, 10]
    assert sorted(J.apply_bonuses((8, 4), 1, "pooled_largest_first")) == [4, 12]
    roll = astragal.roll("jc: d8 d4 +1b", seed=1, options={"bonus_distribution":
                                                          "pooled_largest_first"})
    assert sorted(rolled_sizes(roll, "actor")) == [4, 12]


def test_limit_after_bonus_switch() -> None:
    """J-A9: by default a Bonus can lift dice above a Limit; the switch re-applies the Limit."""
    assert sorted(rolled_sizes(astragal.roll("jc: d12 d10 d4 limit d8 +1b", seed=1),
                               "actor")) == [6, 10, 10]
    roll = astragal.roll("jc: d12 d10 d4 limit d8 +1b", seed=1,
                         options={"limit_before_bonus": "false"})
    assert sorted(rolled_sizes(roll, "actor")) == [6, 8, 8]


def test_double_botch_switch() -> None:
    """J10, J-A8: a double Botch is a Tie by default; with both_botch the actor Botches."""
    assert astragal.roll("jc: d6 vs d6", faces="1 / 1").outcome == "tie"
    assert astragal.roll("jc: d6 vs d6 double_botch=both_botch", faces="1 / 1").outcome == "botch"


def test_botch_beats_overwhelm_and_quality_does_not_break_double_botch() -> None:
    """J-A7: a Score of 1 against 6+ is reported as a Botch; J-A8: no Quality on a double Botch."""
    roll = astragal.roll("jc: d6 vs d8", faces="1 / 7")
    assert roll.outcome == "botch" and roll.result["margin"] == -6
    roll = astragal.roll("jc: d6 vs d8 botch_overrides_overwhelm=false", faces="1 / 7")
    assert roll.outcome == "overwhelming_failure"
    assert astragal.roll("jc: d6 vs d8 q=mythic:basic", faces="1 / 1").outcome == "tie"


def test_quality_only_breaks_ties_when_both_sides_have_one() -> None:
    """J-A6: no tie-break unless both sides have a Quality (switchable)."""
    assert astragal.roll("jc: d6 q=expert vs d6", faces="4 / 4").outcome == "tie"
    roll = astragal.roll("jc: d6 q=expert vs d6 quality_vs_no_quality=skilled_side_wins",
                         faces="4 / 4")
    assert roll.outcome == "success"


def test_favored_each_penalty_roll() -> None:
    """J40: with a Penalty, each repeat roll gets its own Favored re-roll."""
    roll = astragal.roll("jc: d12 -1p fav", faces="1,5,1,9")
    assert roll.result["actor_score"] == 5 and [d.faces for d in roll.dice] == [(1, 5), (1, 9)]
    roll = astragal.roll("jc: d12 -1p fav favored_each_penalty_roll=false", faces="1,5,1")
    assert roll.result["actor_score"] == 1 and roll.outcome == "botch"


def test_penalty_keeps_the_faces_of_the_worst_roll_for_combinations() -> None:
    """J-A10: the faces of the roll that produced the worst Score are the ones kept."""
    roll = astragal.roll("jc: d12 d10 -1p", faces="9,3,2,5")
    assert roll.result["actor_score"] == 5
    assert [d.faces for d in roll.dice if d.group == "actor roll 2"] == [(2,), (5,)]


def test_soak_botch_and_favored_soak() -> None:
    """J28, J-A11: all soak 1s give +1 hit; a Favored soak re-roll can cancel the Botch."""
    assert astragal.roll("jc: dmg d6 vs soak d6 d6", faces="5 / 1,1").result["hits"] == 2
    assert astragal.roll("jc: dmg d6 vs soak d6 d6 fav", faces="5 / 1,1,3").result["hits"] == 1
    roll = astragal.roll("jc: dmg d6 vs soak d6 d6 fav favored_on_soak=false", faces="5 / 1,1")
    assert roll.result["hits"] == 2


def test_damage_penalty_leaves_no_dice() -> None:
    """J-A12: no damage dice left → 0 hits, no roll, no Soak Botch bonus."""
    roll = astragal.roll("jc: dmg d6 -2p vs soak d4", faces=[[], [1]])
    assert roll.result["hits"] == 0 and rolled_sizes(roll, "damage") == []


def test_empty_simple_pool() -> None:
    """J-X3: a Simple Roll with no dice cannot be rolled by default; auto_botch makes it a Botch."""
    with pytest.raises(astragal.InputError, match="no dice"):
        astragal.roll("jc: d6 remove biggest vs d6", seed=1)
    # the roll and its odds name the same pool
    for text in ("jc: d6 remove biggest vs d6", "jc: L0"):
        with pytest.raises(astragal.InputError, match="^the actor pool has no dice"):
            astragal.odds(text)
    with pytest.raises(astragal.InputError, match="^the opposing pool has no dice"):
        astragal.odds("jc: d8 vs d4 remove biggest")
    roll = astragal.roll("jc: d6 remove biggest vs d6 empty_pool=auto_botch", faces=[[], [3]])
    assert roll.outcome == "botch"


def test_auto_success_needs_a_calm_task_and_dominance() -> None:
    """J48 / J-A16: pairwise dominance by default; count_and_max is looser."""
    assert J.may_declare_success((10, 8), (8, 8))
    assert not J.may_declare_success((12, 4), (8, 8))
    assert J.may_declare_success((12, 4), (8, 8), "count_and_max")
    roll = astragal.roll("jc: d12 d4 vs intermediate calm", faces="3,2 / 4,1")
    assert roll.outcome == "failure"  # no dominance: it is rolled


def test_contest_tie_break_and_overwhelm_edges() -> None:
    """J6: Scores ≥ 8 cannot be Overwhelmed; only Scores ≥ 6 Overwhelm."""
    for a in range(1, 13):
        for b in range(1, 13):
            out = J.contest_outcome(a, b)
            if out == "overwhelming_success":
                assert a >= 6
            if out == "overwhelming_failure":
                assert a < 8


def test_slaying_and_enervated_per_pair() -> None:
    """J50: the summary table of damage per die pair."""
    for d in range(1, 13):
        for s in range(1, 13):
            normal = J.pair_hits(d, s)
            if d == 1 or d <= s:
                assert normal == J.pair_hits(d, s, J.SLAYING) == J.pair_hits(d, s, J.ENERVATED) == 0
            elif d - s >= 5:
                assert (normal, J.pair_hits(d, s, J.SLAYING), J.pair_hits(d, s, J.ENERVATED)) == (
                    2, 2, 1)
            else:
                assert (normal, J.pair_hits(d, s, J.SLAYING), J.pair_hits(d, s, J.ENERVATED)) == (
                    1, 2, 0)


# J-A18: the text's own words for Bonuses, Penalties and the top Difficulties, checked on the
# worked examples they name (the vector's expectation, typed the way the text says it)
IN_WORDS = [
    ("mai_li_one_bonus", "jc: d10 & d6 +1 bonus vs 2d10"),
    ("shi_xintan_one_bonus", "jc: d12 & d6 +1 Bonus"),
    ("shi_xintan_two_bonuses", "jc: d12 & d6 +2 bonuses"),
    ("magnificent_weasel_strike_hard", "jc: dmg d12 & d8 +1 bonus vs soak d6"),
    ("biaochi_damage_penalty", "jc: dmg 2d8 & d4 -1 penalty"),
    ("du_cheng_fa_penalty", "jc: d12 & d10 -1 penalty"),
    ("bonus_penalty_cancel_2_1", "jc: d8 2 bonuses -1 penalty"),
    ("bonus_penalty_cancel_2_1", "jc: d8 two Bonuses a Penalty"),
    ("bonus_penalty_cancel_1_1", "jc: d8 bonus penalty"),
    ("mai_li_one_bonus", "jc: d10 & d6 one Bonus vs 2d10"),
    ("difficulty_for_experts_only", "jc: d12 vs experts only"),
    ("difficulty_for_heroes_only", "jc: d12 vs heroes only"),
    ("difficulty_for_heroes_only", "jc: d12 vs Heroes-Only"),
    ("difficulty_for_heroes_only", "jc: d12 vs 'heroes only'"),
    ("difficulty_for_legends_only", "jc: d12 vs legends only"),
]


@pytest.mark.parametrize("name, text", IN_WORDS, ids=[t for _, t in IN_WORDS])
def test_the_texts_words_are_read_as_its_short_forms(name: str, text: str) -> None:
    v = next(v for v in VECTORS if v["name"] == name)
    short, f, _ = case(v)
    roll = astragal.roll(text, faces=f) if f else astragal.roll(text, seed=7)
    check(v, roll)
    assert read_as(text) == read_as(short)


def read_as(text: str) -> tuple[int, int, str | None]:
    """The first pool's Bonuses and Penalties, and the Difficulty named on the vs side."""
    spec = astragal.parse(text).spec
    first = spec.damage if isinstance(spec, J.Damage) else spec.actor
    other = spec.opposition if isinstance(spec, J.Simple) else None
    return first.bonuses, first.penalties, other.difficulty if other else None

def test_a_worded_count_with_the_wrong_sign_is_refused_as_its_short_form() -> None:
    for text, word, says in [("jc: d12 +1 penalty", "+1 penalty", "a Penalty is written -1p"),
                             ("jc: d12 -2 bonuses", "-2 bonuses", "a Bonus is written +2b"),
                             ("jc: d12 vs heroes only +1 bonus", "+1",
                              "after the Difficulty 'for heroes only'")]:
        with pytest.raises(astragal.NotationError) as caught:
            astragal.roll(text, seed=1)
        assert says in caught.value.message
        span = caught.value.span
        assert span is not None and text[span[0]:span[1]] == word
