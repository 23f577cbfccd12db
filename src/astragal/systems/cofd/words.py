"""Chronicles of Darkness in the game's words: the lines of a transcript and the odds' notes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import rules as R

if TYPE_CHECKING:
    from .notation import Action, Term
    from .program import Prepared, SideRoll
    from .rules import Rules

VERDICT_WORDS = {"dramatic_failure": "Dramatic Failure", "failure": "Failure",
                 "success": "Success", "exceptional_success": "Exceptional Success"}


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 'es' if word.endswith('s') else 's'}"


def working(used: Sequence[Term], willpower: bool, pool: int) -> str:
    """'Manipulation 3 + Subterfuge 2 - Composure 2 (resists) = 3'."""
    shown: list[str] = []
    for t in used:
        if t.resist:
            shown.append(f"- {t.body()} (resists)")
        else:
            shown.append(("- " if t.sign < 0 else "+ " if shown else "") + t.body())
    if willpower:
        shown.append(f"+ {R.WILLPOWER_DICE} (Willpower)")
    text = " ".join(shown) if shown else "0"
    if len(used) > 1 or willpower or (used and used[0].sign < 0):
        text += f" = {pool}"
    return text


def side_header(prep: Prepared, name: str) -> str:
    rules_text = "no-again" if prep.again is None else f"{prep.again}-again"
    extra = ", rote action" if prep.rote else ""
    if prep.chance and prep.working == "a chance die":
        return f"{name}: a chance die ({rules_text}{extra})"
    if prep.chance:
        return (f"{name}: {prep.working}: below 1, so a chance die — only a 10 succeeds "
                f"(C-X1; {rules_text}{extra})")
    if prep.dice == 0:
        return f"{name}: {prep.working}: below 1, no roll (pool_below_one=auto_fail)"
    dice = f"{prep.dice} {'die' if prep.dice == 1 else 'dice'}"
    if prep.working != str(prep.pool):
        dice = f"{prep.working} → {dice}"
    return f"{name}: {dice} ({rules_text}{extra})"


def describe(side: SideRoll, rules: Rules) -> list[str]:
    lines: list[str] = []
    for k, die in enumerate(side.record.dice, 1):
        label = "chance die" if side.chance else f"die {k}"
        parts = []
        for j, run in enumerate(die.runs):
            chain = " → ".join(str(f) for f in run)
            parts.append(chain if j == 0 else f"rote re-roll: {chain}")
        mark = plural(die.value, "success") if die.value else "no success"
        if side.dramatic_failure:
            mark = "a 1 on the chance die: dramatic failure"
        lines.append(f"  {label}: {', '.join(parts)} ({mark})")
    return lines


def verdict_line(side: SideRoll, rules: Rules) -> str:
    v = R.verdict(side.successes, side.dramatic_failure, rules.exceptional_at)
    return f"{plural(side.successes, 'success')}: {VERDICT_WORDS[v]}"


def tie_again(a: int, b: int, rules: Rules) -> str:
    return f"{a} vs {b}: a tie — both roll again (contested_tie={rules.contested_tie})"


def contest_line(a: int, b: int, outcome: str, rules: Rules) -> str:
    """C10, C-A4, C-X7: the contest's closing line."""
    head = f"{a} vs {b}: "
    if a > b:
        return head + "the actor has more successes and wins (C10)"
    if a < b:
        return head + "the opposition has more successes and wins (C10)"
    if outcome == "lose":
        return head + f"a tie goes to the defender (contested_tie={rules.contested_tie})"
    if rules.contested_tie == "continue_next_turn":
        return head + "no winner this turn; the contest continues next turn " \
                      "(contested_tie=continue_next_turn)"
    return head + f"a tie (contested_tie={rules.contested_tie})"


def tie_note(rules: Rules, tie: float) -> str:
    return {"defender": "a tie goes to the defender (contested_tie=defender)",
            "reroll": f"a tie is rolled again until one side wins (contested_tie=reroll); "
                      f"{tie:.4%} of first rolls tie",
            "continue_next_turn": "tie: no winner this turn, the contest continues next turn "
                                  "(contested_tie=continue_next_turn)",
            "tie": "a tie stays a tie (contested_tie=tie)"}[rules.contested_tie]


def chance_note(rules: Rules) -> str:
    return "C-X1: only a 10 succeeds" + (", a 1 is a dramatic failure"
                                         if rules.dramatic_failure_on_chance_one else "")


def extended_header(spec: Action, actor: Prepared, opp: Prepared | None) -> list[str]:
    kind = "Extended contest" if opp is not None else "Extended action"
    lines = [f"Chronicles of Darkness: {str(spec)[6:]}",
             f"{kind}: accumulate successes to {spec.target} (C11)",
             "  " + side_header(actor, "Actor" if opp else "Pool")]
    if opp is not None:
        lines.append("  " + side_header(opp, "Opposition"))
    return lines


def extended_part(name: str, side: SideRoll, total: int) -> str:
    faces = "; ".join(", rote ".join(" → ".join(str(f) for f in run) for run in runs)
                      for runs in side.dice) or "no dice"
    df = ", dramatic failure" if side.dramatic_failure else ""
    return f"{name} {faces} = {side.successes}{df} (total {total})"


def extended_tie(target: int, total: int, settle: str, rules: Rules) -> str:
    if settle == "again":
        return (f"  both reach {target} with {total}: the contest goes on until one side leads "
                f"(contested_tie={rules.contested_tie})")
    if settle == "lose":
        return f"  both reach {target} with {total}: the defender wins (contested_tie=defender)"
    return f"  both reach {target} with {total}: a tie (contested_tie=tie)"


def extended_end(outcome: str, target: int, total: int, n: int) -> str:
    who = {"win": "The actor", "lose": "The opposition"}.get(outcome)
    if who is not None:
        return (f"{who} reaches {target} first, after {plural(n, 'roll')}: "
                f"{'the actor wins' if outcome == 'win' else 'the opposition wins'}")
    return f"Both reach {target} with {total} after {plural(n, 'roll')}: a tie (contested_tie=tie)"


def extended_notes(target: int, actor: Prepared, opp: Prepared | None) -> list[str]:
    return [f"extended {'contest' if opp else 'action'} to {target} successes (C11)",
            side_header(actor, "actor" if opp else "pool")] + (
        [side_header(opp, "opposition")] if opp is not None else [])


def extended_tie_note(rules: Rules) -> str:
    return {"tie": "both reaching the target with equal totals is a tie",
            "defender": "both reaching the target with equal totals: the defender wins",
            "reroll": "both reaching the target with equal totals: roll on until one leads",
            "continue_next_turn": "both reaching the target with equal totals: the contest "
                                  "continues until one leads"}[rules.contested_tie] + " (C-A4)"
