"""Every house-rule switch of every game changes something: no switch is dead.

For each switch of each installed game, an input where the switch matters and another value: the
exact odds must differ (or, where the switch turns a roll into a refusal, the answer must). A game
that gains a switch without a case here fails ``test_every_switch_has_a_case``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import astragal
from astragal.systems import get_system

DATA = Path(astragal.__file__).parent / "data"

# system → switch → (input, the other value)
CASES: dict[str, dict[str, tuple[str, Any]]] = {
    "dice": {
        "dialect": ("3d6>10", "avrae"),  # count the dice over 10, or compare the total
        "reroll": ("d6r1", "once"),
        "greater_than": ("4d6>4", "or_equal"),
    },
    "jadeclaw": {
        "penalty_rolls": ("jc: d8 -4p vs d8", "literal_text"),
        "double_botch": ("jc: d4 vs d4", "both_botch"),
        "botch_overrides_overwhelm": ("jc: d4 vs d12", False),
        "quality_bands": ("jc: d8 q=5 vs d8 q=6", "0-4"),
        "quality_vs_no_quality": ("jc: d8 q=expert vs d8", "skilled_side_wins"),
        "limit_before_bonus": ("jc: d12 d10 d4 limit d8 +1b vs d8", False),
        "bonus_distribution": ("jc: d10 d6 d4 +1b vs d8", "pooled_largest_first"),
        "favored_auto": ("jc: d8 fav vs d8", False),
        "favored_on_soak": ("jc: dmg d8 d6 vs soak d6 fav", False),
        "favored_each_penalty_roll": ("jc: d8 fav -1p vs d8", False),
        "empty_pool": ("jc: d4 remove d4 vs d8", "auto_botch"),
        "soak_botch_with_no_damage_dice": ("jc: dmg d6 -1p vs soak d4", True),
        "auto_success_dominance": ("jc: d12 d4 vs intermediate calm", "count_and_max"),
    },
    "cofd": {
        "pool_below_one": ("cofd: 1 - 2", "auto_fail"),
        "again_threshold": ("cofd: 3", "8"),
        "rote": ("cofd: 3", True),
        "exceptional_at": ("cofd: 5", 3),
        "contested_tie": ("cofd: 3 vs 3", "defender"),
        "contest_uses_resistance": ("cofd: 5 resist Composure 2 vs 3", False),
        "dramatic_failure_on_chance_one": ("cofd: chance", False),
        "chance_reroll": ("cofd: chance", "as_normal_die"),
    },
    "d6system": {
        "incredible_from": ("od6: 5D vs 5", 16),
        "modifier_form": ("od6: 3D advantaged", "dice"),
        "wild_die": ("od6: 3D", True),
        "wild_one": ("od6: 3D wild", "complication_only"),
        "pips_carry": ("od6: 3D+2 +2 pips", False),
        "min_dice_after_penalty": ("od6: 3D -3D", 2),
        "penalty_below_min": ("od6: 1D -1D", "ignore"),
        "opposed_tie": ("od6: 3D vs 3D", "defender"),
    },
    "d6skill": {
        "explode_on": ("ds: d6+3", "none"),
        "botch_on": ("ds: d6+3", "none"),
        "max_explosions": ("ds: d6+3", 1),
        "opposed_tie": ("ds: d6+3 vs d6+3", "actor"),
        "botch_check_on_opposed": ("ds: d6+3 vs d6+3", "after_ties"),
        "stressful": ("ds: d6+5 vs 4", False),
    },
    "attack": {
        "attack_table": ("at: 4d6", "TABLE"),
        "damage_by_column": ("at: 4d6", "2/2/3/3/4/4/4"),
        "stun_columns": ("at: 4d6", "none"),
        "sixes_to_block_by_column": ("at: 4d6 vs 3d6", "1/1/1/1/1/1/match"),
        "critical_damage_table": ("at: 6d6 weapon D vs 1d6", "CRITS"),
        "crit_dice_subtract": ("at: 6d6 weapon D vs 3d6", "sixes_rolled"),
        "triple_non_six": ("at: 4d6", "own_column"),
        "threw_last_turn_defense": ("at: 4d6 vs armor 1 parry 2 threw_last_turn", "armor"),
        "zero_attack_dice": ("at: atk 0 wpn 0", "cannot_attack"),
        "weapon_class_crit_dice": ("at: 6d6 weapon C vs 1d6", "C:3/D:2"),
        # these two change the fight tracker's state across turns, not one roll's odds
        "stun_duration": ("FIGHT", "one_defence"),
        "luck_dice": ("FIGHT", "kept"),
    },
}

# a second input for some switches (each must matter there too)
MORE: list[tuple[str, str, str, Any]] = [
    ("dice", "dialect", "3d6>3", "roll20"),
    ("dice", "reroll", "d6r<3", "once"),
    ("dice", "greater_than", "3d6>3", "or_equal"),
]


def _answer(text: str, options: dict[str, Any]) -> Any:
    try:
        o = astragal.odds(text, options=options)
    except astragal.InputError as exc:
        return ("refused", type(exc).__name__)
    return (o.outcomes.as_dict(), o.distribution.as_dict(), json.dumps(o.extra, sort_keys=True,
                                                                        default=str))


def _files(tmp_path: Path) -> dict[str, str]:
    """A changed attack table and a Critical Damage Table with entries, for the file switches."""
    table = json.loads((DATA / "attack_table.json").read_text())
    text = json.dumps(table)
    changed = text.replace('"damage": 1', '"damage": 2', 1)
    assert changed != text, "the shipped attack table has no 'damage': 1 entry to change"
    (tmp_path / "table.json").write_text(changed)
    crits = {"format": "astragal critical damage table", "version": 1,
             "rows": [{"min": 1, "max": None, "result": "Broken arm", "damage": 2}]}
    (tmp_path / "crits.json").write_text(json.dumps(crits))
    return {"TABLE": str(tmp_path / "table.json"), "CRITS": str(tmp_path / "crits.json")}


def _fight(tmp_path: Path, switch: str, value: str) -> list[tuple[str, int, bool]]:
    """Wolf (with 2 Luck dice declared) stuns Bear, then Bear's turn passes: who is left how."""
    import subprocess
    import sys

    f = str(tmp_path / f"{switch}-{value}.json")

    def run(*args: str) -> None:
        out = subprocess.run([sys.executable, "-m", "astragal.cli", "fight", "--file", f, *args],
                             check=False, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr

    run("new")
    run("option", f"{switch}={value}")
    run("add", "Wolf", "atk=4", "wpn=4", "luck=3")
    run("add", "Bear", "atk=5", "wpn=4", "armor=2")
    run("attack", "Wolf", "Bear", "luck=2", "--faces", "4,4,1,1,1,1 / 1,1")
    run("pass", "Bear")
    data = json.loads(Path(f).read_text())
    return [(c["name"], c["luck"], c["stunned"]) for c in data["combatants"]]


@pytest.mark.parametrize("system, switch, text, other",
                         [(s, k, *CASES[s][k]) for s in CASES for k in CASES[s]] + MORE)
def test_flipping_a_switch_changes_the_odds(system: str, switch: str, text: str, other: Any,
                                            tmp_path: Path) -> None:
    if text == "FIGHT":
        default = get_system(system).defaults[switch]
        assert _fight(tmp_path, switch, default) != _fight(tmp_path, switch, other)
        return
    if other in ("TABLE", "CRITS"):
        other = _files(tmp_path)[other]
    default = get_system(system).defaults[switch]
    assert other != default
    before, after = _answer(text, {}), _answer(text, {switch: other})
    assert before != after, f"{system}: {switch}={other} changes nothing on {text!r}"
    assert before[0] != "refused" or after[0] != "refused"


@pytest.mark.parametrize("system", sorted(CASES))
def test_every_switch_has_a_case(system: str) -> None:
    assert set(get_system(system).defaults) == set(CASES[system])


@pytest.mark.parametrize("value", ["--3", "+-2", "1e3", "٣", " ", "0x10"])
def test_a_malformed_whole_number_is_an_option_error(value: str) -> None:
    with pytest.raises(astragal.OptionError, match="whole number"):
        astragal.odds("od6: 3D", options={"min_dice_after_penalty": value})


@pytest.mark.parametrize("system", sorted(CASES))
def test_every_switch_says_what_it_takes(system: str) -> None:
    """``astragal rules GAME`` lists each switch with the values it takes: those words come from
    the switch, and a value they describe is read by it."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "astragal.cli", "rules", system], check=False,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    for switch in get_system(system).switches:
        said = switch.allowed()
        assert f"  {switch.name}=" in out.stdout and f"({said}; {switch.rule})" in out.stdout
        if switch.choices and not switch.multiple:
            assert all(c in said for c in switch.choices)
        if switch.file:
            assert said.startswith("a JSON file")
        elif switch.parse is not None:
            assert said == "text"
        elif "whole number" in said:
            assert switch.read(str(switch.low if switch.low is not None else 3)) is not None
