"""What the fuzzers start from: valid rolls of every system, each system's words, and known-nasty input.

The seeds are rolls a player would type (from each system's documentation and tests); mutating them
gives grammar-shaped input that gets past the first token. The nasty list holds what public dice
rollers have fallen to: enormous counts, endless explosions, re-roll storms, deep nesting.
"""

from __future__ import annotations

SEEDS: dict[str, list[str]] = {
    "jadeclaw": [
        "jc: d12 d8 vs 2d10", "jc: d10 d4 vs routine", "jc: d12 & d6 +2b vs routine",
        "jc: L7 +1b fav vs L8 q=expert:expert", "jc: L7 -1p fav vs L5 q=expert:basic",
        "jc: d12 d10 d4 limit d8 +d8 remove biggest vs 2d8", "jc: d10 d6 vs intermediate calm",
        "jc: d12 -1p fav favored_each_penalty_roll=false", "jc: d12 d12 d12 vs d12 d12 d12",
        "jc: L10 vs L5", "jc: d12 d10 d8 fav vs d6", "jc: 2d12 d6 vs 3d10 q=heroic:expert",
        "jc: d12 -2p", "jc: L0 +1b", "jc: 5d12",
    ],
    "cofd": [
        "cofd: 7", "cofd: 3+2 -2", "cofd: 5 9-again rote", "cofd: 2-3", "cofd: 6 vs 5",
        "cofd: 6 target 10 vs 5", "cofd: Dexterity 3 + Stealth 2 vs Wits 2 + Composure 3",
        "cofd: 4 target 8 rolls 5", "cofd: 6 vs 6 contested_tie=defender",
        "cofd: 4 resist Resolve 2 vs 3", "cofd: 5 - resist 2", "cofd: 3 8-again target 7 rolls 3",
        "cofd: 2 9-again exceptional_at=2", "cofd: 5 willpower", "cofd: chance",
    ],
    "d6system": [
        "od6: 3D+1 wild vs moderate", "od6: 2D+2 wild vs easy", "od6: 3D+2 +2 pips",
        "od6: 4D -1D advantaged vs 10 modifier_form=dice", "od6: 3D wild vs 2D+2 wild",
        "od6: 2D extremely disadvantaged", "od6: 1D +21 vs easy incredible_from=16",
        "od6: 3D +1D slightly disadvantaged vs moderate (13)", "od6: 2D vs 2D opposed_tie=reroll",
        "d6system: 4d+2 VS Very-Difficult", "od6: 3D -1 pip", "od6: 0D",
    ],
    "attack": [
        "at: 3d6 vs 2d6", "at: atk 4 wpn 3 berserk luck 1 vs armor 2 shield 1 parry 2",
        "at: atk 4 wpn 3 weapon D crit +2 vs armor 2 shield 1 parry 2 stunned",
        "at: 6d6 weapon C vs 3d6", "at: 3d6 vs armor 1 shield 1 parry 1 threw_last_turn",
        "at: 3d6 vs parry 2 dodge 1", "at: 2d6 stun_columns=4,6 damage_by_column=0/0/0/0/9/0/0",
        "attack: ATK=4 WPN=3 Throw 2 luck vs Armour 2 dodge 1", "at: 3d6 vs 2d6 luck 2",
        "at: 0d6", "at: atk 1 wpn 0 defensive luck 2",
    ],
    "d6skill": [
        "ds: d6+4", "ds: d6+6 vs 5", "ds: d6+6-2+1 vs 5", "ds: trait d6+2 vs 4",
        "ds: d6+7 vs 6 calm", "ds: d6+3 vs d6+2", "ds: d6+3 vs trait d6+2",
        "ds: atk d6+6 vs def d6+3 dmg 4", "ds: atk d6+6 vs 5 dmg 3",
        "ds: atk d6+6 vs def d6+3 dmg d6+2", "ds: loot d6+1", "ds: d6+3 vs d6+3 opposed_tie=stand",
        "ds: d6 max_explosions=2",
    ],
    "dice": [
        "dice: 4d6kh3+2", "dice: 2d20kh1+5 >= 15", "dice: 10d10>=8f1", "dice: d6!",
        "dice: {d12,d8}kh1", "dice: 6x 4d6kh3", "dice: 3d6!!", "dice: 4dF", "dice: d%",
        "dice: 2d10r<2", "dice: 8d6ro1 + 3", "dice: (2d6+3)*2 [fire]", "dice: 5d10>=7dbl10",
        "dice: 4d6dl1", "dice: max(d20, d20) + 4", "dice: d20 # attack", "dice: 3d6!p",
        "dice: 2d6xo>5", "dice: 1d100 <= 45", "dice: 20d6sa", "dice: -d4 + 10 % 3",
    ],
}

# Words and symbols each system reads (mixed into token soups with the generic ones below).
WORDS: dict[str, list[str]] = {
    "jadeclaw": ["d4", "d6", "d8", "d10", "d12", "&", "vs", "routine", "intermediate", "hard",
                 "calm", "fav", "limit", "remove", "biggest", "+1b", "-1p", "+2b", "q=expert:basic",
                 "L7", "L0", "L99", "dmg", "soak", "+d8"],
    "cofd": ["9-again", "8-again", "no-again", "10-again", "rote", "willpower", "wp", "chance",
             "vs", "target", "rolls", "resist", "resisted", "by", "Wits", "+", "-"],
    "d6system": ["3D", "D", "+1", "pip", "pips", "wild", "vs", "easy", "moderate", "difficult",
                 "very", "heroic", "advantaged", "disadvantaged", "(13)", "+1D", "-1D"],
    "attack": ["atk", "wpn", "weapon", "crit", "luck", "berserk", "throw", "defensive", "vs",
               "armor", "armour", "shield", "parry", "dodge", "stunned", "3d6", "C", "D", "E"],
    "d6skill": ["skill", "trait", "atk", "def", "loot", "dmg", "d6", "+3", "-2", "vs", "#5",
                "calm", "stressful", "d6+2"],
    "dice": ["d6", "4d6", "d20", "d%", "dF", "kh", "kl", "k", "dh", "dl", "r", "rr", "ro", "!",
             "!!", "!p", "x", "xo", "f", "dbl", "s", "sa", "sd", ">=", "<=", ">", "<", "=", "==",
             "(", ")", "{", "}", ",", "+", "-", "*", "/", "%", "[fire]", "#", "max", "min",
             "floor", "ceil", "round", "abs", "6x"],
}

GENERIC = ["0", "1", "-1", "6", "99", "1000", "2147483648", "9" * 30, "1e9", "0x10", "1.5",
           "=", ":", "vs", "&", "(", ")", "\x00", "\u202e", "é", "\u00a0", "🎲", "\n", "\t",
           "true", "false", "none", "NaN", "inf", "²", "٣", "３"]

NASTY: list[str] = [
    "dice: 100000000d20", "dice: d1!", "dice: d6!>0", "dice: d6!<7", "dice: d1!!", "dice: d1!p",
    "dice: 1000d6!", "dice: 500d1!", "dice: d6r<7", "dice: d6rr<7", "dice: d6r>0", "dice: d1r1",
    "dice: d1ro1", "dice: 10d6r<6!", "dice: d2!>1r<2", "dice: d1000!", "dice: d999999999999",
    "dice: 99999999999999999999d6", "dice: 1d6+" + "9" * 400, "dice: " + "(" * 1000 + "d6" + ")" * 1000,
    "dice: " + "(" * 40 + "d6" + ")" * 40, "dice: " + "-" * 900 + "d6", "dice: " + "{" * 300 + "d6",
    "dice: " + "+".join(["d6"] * 240), "dice: " + "*".join(["d6"] * 200), "dice: 500d6",
    "dice: 500d1000", "dice: 100d100kh50", "dice: 500d6>=4", "dice: 200d6!", "dice: 100x 500d6",
    "dice: 1000x d6", "dice: d6" + "!" * 400, "dice: d6" + "kh1" * 150, "dice: d6/0",
    "dice: d6%0", "dice: 0d6", "dice: d0", "dice: 5d6k6", "dice: 5d6k0", "dice: 3d6dbl0",
    "dice: max(" * 100 + "d6" + ")" * 100, "dice: {d6,d6,d6}kh" + "9" * 20,
    "dice: 2^1000", "dice: 10**10**10", "dice: d6*d6*d6*d6*d6*d6*d6*d6*d6*d6*d6*d6",
    "jc: 1000000d12", "jc: d12 " * 120, "jc: L999999999", "jc: d12 +999999999b",
    "jc: d12 -999999999p", "jc: d12 +99b vs 99d12 -99p", "jc: L200 vs L200 dmg",
    "cofd: 300 + 300", "cofd: 999999999", "cofd: 300 target 999999999", "cofd: 30 rote 8-again",
    "cofd: 300 8-again vs 300 8-again", "cofd: 10 target 100 rolls 999999", "cofd: " + "1+" * 300 + "1",
    "od6: 400D", "od6: 300D +300D", "od6: 999999999D", "od6: 3D +99999999 pips", "od6: 100D wild vs 100D wild",
    "at: 99999d6", "at: 400d6 vs 400d6", "at: 400d6 luck 200", "at: atk 999999999 wpn 999999999",
    "at: 3d6 crit +999999999",
    "ds: d6+1234567", "ds: d6+9999999999999999999", "ds: loot d6", "ds: d6 max_explosions=999999",
    "ds: atk d6+6 vs def d6+3 dmg d6+999999999", "ds: d6" + "+1" * 400,
    "", " ", ":", "jc:", "dice:", "nosuch: d6", "\x00", "\x00d6", "d6",
]
