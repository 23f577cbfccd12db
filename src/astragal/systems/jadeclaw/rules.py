"""Jadeclaw: the data, the switches and every rule, once (RULES.md §1).

Each rule is a plain function of faces, Scores or dice sizes, registered under its ID. The roller
and the exact odds reach the dice rules through the program (``program.py``): a pool's Score is a
``Highest`` of its dice (with a ``Favored`` re-roll, and the worst of several rolls under a
Penalty), a Damage Roll a ``Paired`` of the damage and soak dice. Both map the same verdict
functions over what they get: the roller over one roll's values, the odds over their law.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._digits import digits
from ..._errors import InputError
from ..._records import Record
from ...dice import STEP_SIZES
from ...dice.algebra import Favored, Highest, Mixed
from ...dice.steps import Adjust
from ...rulebook import reading, rule
from ...switches import Switch

if TYPE_CHECKING:
    from .notation import Pool

GAME = "jadeclaw"

reading(GAME, "J-A9", "the Limit is applied before the Bonuses, as the step lists order them "
        "('3. Limit die size' before '4. Apply Bonuses'): a Bonus can lift a die above the "
        "Limit (d12 d10 d4 limited to d8, +1 Bonus: d10 d10 d6); limit_before_bonus=false "
        "applies the Limit again after the Bonuses")
reading(GAME, "J-A12", "with every damage die removed, a Soak Botch's hit (switch "
        "soak_botch_with_no_damage_dice=true) is a Wound with no damage faces, and J35 makes "
        "'their Score = highest damage face' the Resolve test's opposition: the Resolve roll "
        "must beat Score 0, so it succeeds unless it Botches (a Botch, Score 1, under "
        "empty_pool=auto_botch)")

SIZES = STEP_SIZES  # J1: d4, d6, d8, d10, d12 only
TOP = 12            # J2: the d12 is the top step

DIFFICULTIES: dict[str, tuple[int, ...]] = {  # J47: the Difficulty Dice ladder
    "trivial": (4,),
    "simple": (4, 4),
    "routine": (6, 6),
    "intermediate": (8, 8),
    "difficult": (10, 10),
    "for experts only": (12, 12),
    "for heroes only": (12, 12, 12),
    "for legends only": (12, 12, 12, 12),
}
DIFFICULTY_TITLES = {k: k.title() for k in DIFFICULTIES}

QUALITIES = ("basic", "expert", "heroic", "legendary", "mythic")  # J8, worst → best

CONTEST_OUTCOMES = ("botch", "overwhelming_failure", "failure", "tie", "success",
                    "overwhelming_success")
SINGLE_OUTCOMES = ("botch", "no_botch")
OVERWHELM = 5  # J6

NORMAL, SLAYING, ENERVATED = "normal", "slaying", "enervated"

SWITCHES = (
    Switch("penalty_rolls", "p_plus_one", "J-A2",
           "p Penalties roll p+1 times, or the text's literal 'four Penalties: four rolls'",
           ("p_plus_one", "literal_text")),
    Switch("double_botch", "tie", "J10", "both Scores 1: a Tie, or a Botch for both",
           ("tie", "both_botch")),
    Switch("botch_overrides_overwhelm", True, "J-A7",
           "a Botch is reported as a Botch even when it is also an Overwhelming Failure"),
    Switch("quality_bands", "1-5", "J-A6", "Skill Levels per Quality band: 1-5, 6-10… or 0-4, 5-9…",
           ("1-5", "0-4")),
    Switch("quality_vs_no_quality", "no_tie_break", "J-A6",
           "a tie between a side with a Quality and one without: a Tie, or the skilled side wins",
           ("no_tie_break", "skilled_side_wins")),
    Switch("limit_before_bonus", True, "J-A9",
           "a Bonus may lift dice above a Limit (the FAQ's order), or the Limit applies again"),
    Switch("bonus_distribution", "per_die_carry_down", "J13",
           "each die takes its increases and a d12 passes them down, or all increases are pooled "
           "and spent on the largest die first", ("per_die_carry_down", "pooled_largest_first")),
    Switch("favored_auto", True, "J-A11",
           "a Favored roll re-rolls its 1 by itself, or the transcript only says it may"),
    Switch("favored_on_soak", True, "J-A11", "Soak dice may be Favored"),
    Switch("favored_each_penalty_roll", True, "J40",
           "each repeat roll of a Penalty gets its own Favored re-roll, or only the first"),
    Switch("empty_pool", "cannot_roll", "J-X3",
           "a pool left with no dice cannot be rolled, or counts as a Botch",
           ("cannot_roll", "auto_botch")),
    Switch("soak_botch_with_no_damage_dice", False, "J-A12",
           "a Soak Botch adds its hit even when no damage dice are left"),
    Switch("auto_success_dominance", "pairwise", "J-A16",
           "a calm pool matches a Difficulty die for die, or by count and largest die",
           ("pairwise", "count_and_max")),
)
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SWITCHES}


# --------------------------------------------------------------------------------------------
# Levels, Quality, Bonuses, Penalties, Limits (J8, J12–J21, J30, J36–J38)


@rule(GAME, "J8", "Quality bands by Skill Level: Basic, Expert, Heroic, Legendary, Mythic")
def quality_of_level(level: int, bands: str = "1-5") -> str | None:
    """J8 / J-A6: the Quality band of a Skill Level (None for Level 0 under the 1–5 bands)."""
    if bands == "0-4":
        return QUALITIES[min(level // 5, 4)]
    if level <= 0:
        return None
    return QUALITIES[min((level - 1) // 5, 4)]


@rule(GAME, "J12", "Bonuses and Penalties cancel one for one")
def net(bonuses: int, penalties: int) -> tuple[int, int]:
    """J12: the net Bonuses and net Penalties."""
    return max(0, bonuses - penalties), max(0, penalties - bonuses)


@rule(GAME, "J13", "a Bonus is one size increase per die, a d12 passing it down, leftovers a d4")
def apply_bonuses(sizes: Sequence[int], bonuses: int,
                  distribution: str = "per_die_carry_down") -> tuple[int, ...]:
    """J13–J17: each Bonus is one size increase per die (zero dice count as one), all at once.

    Reading A (default): each die gets its increases, a d12 passes them down to the next smaller
    die, and leftovers start new d4s. Reading E pools them and spends them on the largest die first.
    Dice keep their positions; new dice are appended.
    """
    if bonuses <= 0:
        return tuple(sizes)
    dice = list(sizes)
    increases = bonuses * max(1, len(dice))  # J16, J17
    order = sorted(range(len(dice)), key=lambda i: -dice[i])
    if distribution == "per_die_carry_down":
        carry = 0
        for i in order:
            budget = bonuses + carry  # J14: a d12's increase carries to the next smaller die
            steps = min(budget, (TOP - dice[i]) // 2)
            dice[i] += 2 * steps
            carry = budget - steps
        leftover = carry + (bonuses if not sizes else 0)
    else:
        leftover = increases
        for i in order:
            steps = min(leftover, (TOP - dice[i]) // 2)
            dice[i] += 2 * steps
            leftover -= steps
    while leftover > 0:  # J15: a new d4 costs one increase, then grows with the rest
        steps = min(leftover - 1, (TOP - 4) // 2)
        dice.append(4 + 2 * steps)
        leftover -= 1 + steps
    return tuple(dice)


@rule(GAME, "J18", "Level L is floor(L/5) d12s and a d(2·(L mod 5)+2)")
def level_dice(level: int) -> tuple[int, ...]:
    """J18: Level L is floor(L/5) d12s plus a d(2·(L mod 5)+2) when L mod 5 > 0."""
    dice = (TOP,) * (level // 5)
    if level % 5:
        dice += (2 * (level % 5) + 2,)
    return dice


@rule(GAME, "J21", "with p Penalties the pool is rolled p+1 times and the worst Score stands")
def roll_count(penalties: int, rule: str = "p_plus_one") -> int:
    """J21, J-A2: with p net Penalties the pool is rolled p+1 times."""
    if rule == "literal_text" and penalties >= 4:
        return penalties
    return penalties + 1


@rule(GAME, "J30", "each Damage Penalty removes the smallest die before rolling")
def damage_penalty(sizes: Sequence[int], penalties: int) -> tuple[int, ...]:
    """J30: each net Damage Penalty removes the smallest die before rolling."""
    dice = list(sizes)
    for _ in range(max(0, penalties)):
        if not dice:
            break
        del dice[len(dice) - 1 - dice[::-1].index(min(dice))]
    return tuple(dice)


@rule(GAME, "J37", "Remove takes one named die (the biggest, the smallest, a size) out")
def remove_die(sizes: Sequence[int], what: str) -> tuple[int, ...] | None:
    """J37: take one die out before rolling (``biggest``, ``smallest`` or a size such as ``d8``).

    None if there is no such die.
    """
    dice = list(sizes)
    if not dice:
        return None
    if what == "biggest":
        target = max(dice)
    elif what == "smallest":
        target = min(dice)
    else:
        target = int(what[1:])
        if target not in dice:
            return None
    # J-A14: among equal dice any one may go; take the last so earlier faces keep their places
    idx = len(dice) - 1 - dice[::-1].index(target)
    del dice[idx]
    return tuple(dice)


@rule(GAME, "J38", "Limit dS: every die larger than dS becomes dS")
def apply_limit(sizes: Sequence[int], limit: int | None) -> tuple[int, ...]:
    """J38: every die larger than the Limit becomes the Limit."""
    return tuple(sizes) if limit is None else tuple(min(s, limit) for s in sizes)


@rule(GAME, "J48", "a calm pool matching the Difficulty die for die succeeds without a roll")
def may_declare_success(actor: Sequence[int], difficulty: Sequence[int],
                        dominance: str = "pairwise", penalties: int = 0) -> bool:
    """J48: at least as many dice as the Difficulty, each at least as large (J-A16).

    Only "as long as things are nice and quiet (no rush jobs, no improvised materials)": a
    Penalty ("lack of time, poor preparation", J20) means the task is not calm, so it is rolled.
    """
    if penalties:
        return False
    a, d = sorted(actor, reverse=True), sorted(difficulty, reverse=True)
    if len(a) < len(d) or not d:
        return False
    if dominance == "count_and_max":
        return a[0] >= d[0]
    return all(x >= y for x, y in zip(a, d))


@rule(GAME, "J-X3", "a pool with no dice cannot roll, or (house rule) is a Botch")
def empty_pool_score(rule: str) -> int | None:
    """J-X3: the Score of a pool left with no dice (None: it cannot be rolled)."""
    return 1 if rule == "auto_botch" else None


# --------------------------------------------------------------------------------------------
# The Score and the contest (J4–J10)


@rule(GAME, "J4", "the Score is the highest face showing")
def score(pool: Mixed | Favored) -> Highest:
    """J4: what a roll of ``pool`` is worth: its highest face."""
    return Highest(pool)


@rule(GAME, "J6", "a margin of 5 or more Overwhelms")
def overwhelms(margin: int) -> bool:
    """J6: a margin of at least five is Overwhelming."""
    return margin >= OVERWHELM


@rule(GAME, "J9", "a Score of 1 is a Botch")
def is_botch(score: int) -> bool:
    """J9, J22: every die shows 1."""
    return score == 1


@rule(GAME, "J10", "both sides Botching may be ruled a Tie")
def double_botch_ties(rule: str) -> bool:
    """J10, J-A8: two Scores of 1 are a Tie (default) or a Botch for the actor."""
    return rule == "tie"


@rule(GAME, "J5", "a higher Score succeeds, a lower one fails, an equal one ties")
def contest_outcome(a: int, b: int, qa: str | None = None, qb: str | None = None,
                    options: Mapping[str, Any] = DEFAULTS) -> str:
    """J5–J10, J-A7, J-A8: the actor's outcome for Scores ``a`` vs ``b``."""
    botch = is_botch(a)
    if botch and is_botch(b) and double_botch_ties(options["double_botch"]):
        return "tie"
    margin = a - b
    if botch and (options["botch_overrides_overwhelm"] or not overwhelms(-margin)):
        return "botch"
    if overwhelms(margin):
        return "overwhelming_success"
    if overwhelms(-margin):
        return "overwhelming_failure"
    if margin > 0:
        return "success"
    if margin < 0:
        return "failure"
    return tie_break(qa, qb, options)


@rule(GAME, "J7", "on equal Scores a strictly better Quality wins")
def tie_break(qa: str | None, qb: str | None, options: Mapping[str, Any] = DEFAULTS) -> str:
    """J7: on equal Scores a strictly better Quality wins; no Quality on a side (J-A6) → Tie."""
    if qa is None or qb is None:
        if options["quality_vs_no_quality"] == "skilled_side_wins" and (qa or qb):
            return "success" if qa else "failure"
        return "tie"
    ra, rb = QUALITIES.index(qa), QUALITIES.index(qb)
    return "success" if ra > rb else "failure" if ra < rb else "tie"


# --------------------------------------------------------------------------------------------
# Favored (J39, J40, J-A15)


@rule(GAME, "J39", "a Favored roll re-rolls one die showing 1; the new face stands")
def favored_rerolls(face: int) -> bool:
    """J39: the face a Favored roll may re-roll."""
    return face == 1


@rule(GAME, "J-A15", "of several 1s, the Favored re-roll takes the largest die")
def favored_order(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """J-A15: the dice in the order the Favored re-roll looks at them: largest size first."""
    return tuple(sorted(range(len(sizes)), key=lambda i: -sizes[i]))


@rule(GAME, "J40", "each repeat roll of a Penalty is Favored too")
def favored_roll(index: int, each_penalty_roll: bool = True) -> bool:
    """J40: whether roll ``index`` (0 = the first) of a Favored pool gets its re-roll."""
    return index == 0 or each_penalty_roll


# --------------------------------------------------------------------------------------------
# Damage (J23–J35)


@rule(GAME, "J33", "Slaying and Enervated on the same damage cancel")
def damage_kind(slaying: bool, enervated: bool) -> str:
    """J33: Slaying and Enervated on the same damage cancel."""
    if slaying and not enervated:
        return SLAYING
    if enervated and not slaying:
        return ENERVATED
    return NORMAL


@rule(GAME, "J27", "a damage die showing 1 never scores")
def never_scores(face: int) -> bool:
    """J27: under any rule, Slaying included."""
    return face == 1


@rule(GAME, "J24", "a damage die beating its soak die scores 1 hit, by 5 or more 2 (J31, J32)")
def pair_hits(d: int, s: int, kind: str = NORMAL) -> int:
    """J24, J27, J31, J32: hits of one damage face against its soak face (or imaginary 1)."""
    if never_scores(d) or d <= s:
        return 0
    if kind == SLAYING:
        return 2
    if kind == ENERVATED:
        return 1 if d - s >= OVERWHELM else 0
    return 2 if d - s >= OVERWHELM else 1


@rule(GAME, "J26", "surplus damage dice meet an imaginary 1")
def imaginary_soak() -> int:
    """J26: the soak face a surplus damage die meets."""
    return 1


@rule(GAME, "J28", "every soak die showing 1 is a Soak Botch: one more hit")
def soak_botch(soak_score: int) -> int:
    """J28: the extra hit of a Soak Botch, read from the soak dice's Score."""
    return 1 if soak_score == 1 else 0


@rule(GAME, "J-A12", "with no damage dice left, a Soak Botch adds nothing (switch)")
def soak_botch_without_damage(switch: bool) -> bool:
    """J-A12: whether a Soak Botch counts when no damage dice are left."""
    return switch


@rule(GAME, "J35", "a Damage Roll that scores a Wound is the opposition of a Resolve Test")
def resolve_tested(hits: int) -> bool:
    """J35: "A Damage Roll that scores a Wound becomes a Simple Roll to be defeated in a Resolve
    Test": the test follows an injury, so a roll without a hit has none."""
    return hits > 0


# --------------------------------------------------------------------------------------------
# A pool prepared for its roll (J41, J42 steps 1–5)


def quality_in_force(quality: str | None, bands: str) -> str | None:
    """J8, J-A6: a Quality by name, or a Skill Level (``q=7``) read with the bands in force."""
    if quality is not None and digits(quality):
        return quality_of_level(int(quality), bands)
    return quality


class Prepared(Record):
    """A pool after J41/J42 steps 1–5: the dice to roll, how each step changed them (``Adjust``
    steps, their side left blank), net modifiers."""

    sizes: tuple[int, ...]
    steps: tuple[Adjust, ...]
    penalties: int  # net Simple-roll Penalties (re-rolls); 0 for damage pools
    favored: bool
    quality: str | None
    base: tuple[int, ...] = ()


def prepare(pool: Pool, options: Mapping[str, Any], damage: bool) -> Prepared:
    """J41 (Simple) / J42 (Damage) steps 1–5 in order."""
    sizes = pool.base
    steps: list[Adjust] = []
    if pool.include:  # 1. Include (J36)
        sizes = sizes + pool.include
        steps.append(Adjust("", "include", "J36", (("dice", pool.include), ("sizes", sizes))))
    for what in pool.remove:  # 2. Remove (J37)
        after = remove_die(sizes, what)
        if after is None:
            from ...render.jadeclaw import dice_text

            raise InputError(f"cannot remove {what}: the pool ({dice_text(sizes)}) has no such die")
        steps.append(Adjust("", "remove", "J37", (("die", what), ("sizes", after))))
        sizes = after
    if pool.limit is not None:  # 3. Limit (J38)
        sizes = apply_limit(sizes, pool.limit)
        steps.append(Adjust("", "limit", "J38", (("limit", pool.limit), ("sizes", sizes))))
    b, p = net(pool.bonuses, pool.penalties)
    if pool.bonuses and pool.penalties:
        steps.append(Adjust("", "net", "J12", (("bonuses", pool.bonuses),
                                               ("penalties", pool.penalties),
                                               ("net_bonuses", b), ("net_penalties", p))))
    if b:  # 4. Bonuses (J13–J17; J29 for damage)
        k = max(1, len(sizes))  # J17: no dice count as one
        sizes = apply_bonuses(sizes, b, options["bonus_distribution"])
        steps.append(Adjust("", "bonus", "J29" if damage else "J13",
                            (("bonuses", b), ("dice", k), ("sizes", sizes))))
        if pool.limit is not None and not options["limit_before_bonus"]:
            sizes = apply_limit(sizes, pool.limit)
            steps.append(Adjust("", "limit", "J-A9", (("limit", pool.limit), ("sizes", sizes))))
    if damage and p:  # 5. Damage Penalty: remove the smallest die per Penalty (J30)
        sizes = damage_penalty(sizes, p)
        steps.append(Adjust("", "penalty", "J30", (("penalties", p), ("sizes", sizes))))
        p = 0
    return Prepared(sizes, tuple(steps), p, pool.favored,
                    quality_in_force(pool.quality, options["quality_bands"]), pool.base)
