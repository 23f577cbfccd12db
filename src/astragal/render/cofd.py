"""Chronicles of Darkness in the game's words: a roll's steps as transcript lines, and the odds'
notes. Pure functions of the steps (``astragal.dice.steps``) and of a side's facts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..dice.steps import Begin, Count, Rolled, Round, Side, Step, Tie, Verdict

if TYPE_CHECKING:
    from ..systems.cofd.notation import Term
    from ..systems.cofd.rules import Rules

VERDICT_WORDS = {"dramatic_failure": "Dramatic Failure", "failure": "Failure",
                 "success": "Success", "exceptional_success": "Exceptional Success"}
_NAMES = {"pool": "Pool", "actor": "Actor", "opposition": "Opposition"}


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 'es' if word.endswith('s') else 's'}"


def working(used: Sequence[Term], willpower: bool, willpower_dice: int, pool: int) -> str:
    """'Manipulation 3 + Subterfuge 2 - Composure 2 (resists) = 3'."""
    shown: list[str] = []
    for t in used:
        if t.resist:
            shown.append(f"- {t.body()} (resists)")
        else:
            shown.append(("- " if t.sign < 0 else "+ " if shown else "") + t.body())
    if willpower:
        shown.append(f"+ {willpower_dice} (Willpower)")
    text = " ".join(shown) if shown else "0"
    if len(used) > 1 or willpower or (used and used[0].sign < 0):
        text += f" = {pool}"
    return text


def side_header(name: str, dice: int, facts: Mapping[str, Any]) -> str:
    """``Pool: Wits 3 + Composure 2 = 5 → 5 dice (9-again)``; ``facts`` are a ``Side`` step's."""
    again, pool, work = facts["again"], facts["pool"], facts["working"]
    rules_text = "no-again" if again is None else f"{again}-again"
    extra = ", rote action" if facts["rote"] else ""
    if facts["chance"] and work == "a chance die":
        return f"{name}: a chance die ({rules_text}{extra})"
    if facts["chance"]:
        return (f"{name}: {work}: below 1, so a chance die — only a 10 succeeds "
                f"(C-X1; {rules_text}{extra})")
    if dice == 0:
        return f"{name}: {work}: below 1, no roll (pool_below_one=auto_fail)"
    shown = f"{dice} {'die' if dice == 1 else 'dice'}"
    if work != str(pool):
        shown = f"{work} → {shown}"
    return f"{name}: {shown} ({rules_text}{extra})"


def _die_lines(step: Rolled, chance: bool) -> list[str]:
    lines: list[str] = []
    dramatic = "dramatic_failure" in step.marks
    for k, (runs, value) in enumerate(zip(step.runs, step.values), 1):
        label = "chance die" if chance else f"die {k}"
        parts = []
        for j, run in enumerate(runs):
            chain = " → ".join(str(f) for f in run)
            parts.append(chain if j == 0 else f"rote re-roll: {chain}")
        mark = plural(value, "success") if value else "no success"
        if dramatic:
            mark = "a 1 on the chance die: dramatic failure"
        lines.append(f"  {label}: {', '.join(parts)} ({mark})")
    return lines


def _extended_part(step: Rolled, total: int) -> str:
    faces = "; ".join(", rote ".join(" → ".join(str(f) for f in run) for run in runs)
                      for runs in step.runs) or "no dice"
    df = ", dramatic failure" if "dramatic_failure" in step.marks else ""
    name = "actor" if step.side == "pool" else step.side
    return f"{name} {faces} = {sum(step.values)}{df} (total {total})"


def _contest_line(v: Verdict) -> str:
    """C10, C-A4, C-X7: the contest's closing line."""
    a, b = v.values
    head = f"{a} vs {b}: "
    if v.rule == "C10":  # the words say what the rule decided, never work it out again
        if v.outcome == "win":
            return head + "the actor wins (C10: more successes wins)"
        if v.outcome == "lose":
            return head + "the opposition wins (C10: more successes wins)"
        return head + f"{v.outcome} (C10)"
    if v.outcome == "lose":
        return head + f"a tie goes to the defender ({v.setting})"
    if v.setting == "contested_tie=continue_next_turn":
        return head + "no winner this turn; the contest continues next turn " \
                      "(contested_tie=continue_next_turn)"
    return head + f"a tie ({v.setting})"


def _extended_end(v: Verdict, target: int, rolls: int) -> str:
    if len(v.values) == 1:  # an extended action: reached, or not within its rolls
        if v.outcome == "success":
            return f"{target} successes reached after {plural(rolls, 'roll')}: Success"
        return f"{target} successes not reached in {rolls} rolls: Failure"
    who = {"win": "The actor", "lose": "The opposition"}.get(v.outcome)
    if who is not None:
        return (f"{who} reaches {target} first, after {plural(rolls, 'roll')}: "
                f"{'the actor wins' if v.outcome == 'win' else 'the opposition wins'}")
    return (f"Both reach {target} with {v.values[0]} after {plural(rolls, 'roll')}: a tie "
            "(contested_tie=tie)")


def _extended_tie(t: Tie, target: int, seen: bool) -> str:
    if seen:
        return "  still level: another roll"
    total = t.values[0]
    if t.goes == "again":
        return (f"  both reach {target} with {total}: the contest goes on until one side leads "
                f"({t.setting})")
    if t.goes == "lose":
        return f"  both reach {target} with {total}: the defender wins ({t.setting})"
    return f"  both reach {target} with {total}: a tie ({t.setting})"


def transcript(steps: Iterable[Step]) -> tuple[str, ...]:
    """A Chronicles of Darkness roll's steps in words, one line each (a round of an extended
    action in one line)."""
    lines: list[str] = []
    facts: dict[str, Mapping[str, Any]] = {}
    extended = False
    target = rolls = 0
    seen_tie = False
    parts: list[str] = []
    pending: Rolled | None = None
    for step in steps:
        if isinstance(step, Begin):
            lines.append(f"Chronicles of Darkness: {step.text[6:]}")
            extended = step.kind == "extended"
            if extended:
                target = dict(step.facts)["target"]
                kind = "Extended contest" if dict(step.facts)["contest"] else "Extended action"
                lines.append(f"{kind}: accumulate successes to {target} (C11)")
        elif isinstance(step, Side):
            facts[step.side] = dict(step.facts)
            header = side_header(_NAMES[step.side], step.dice, facts[step.side])
            lines.append("  " + header if extended else header)
        elif isinstance(step, Round):
            rolls = step.n
            parts = []
            lines.append("")
        elif isinstance(step, Rolled):
            if extended:
                pending = step
            else:
                lines += _die_lines(step, bool(facts[step.side]["chance"]))
        elif isinstance(step, Count):  # an extended round's running total
            assert pending is not None
            parts.append(_extended_part(pending, step.value))
            lines[-1] = f"Roll {rolls}: " + "; ".join(parts)
        elif isinstance(step, Tie):
            if extended:
                lines.append(_extended_tie(step, target, seen_tie))
                seen_tie = True
            else:
                lines.append(f"{step.values[0]} vs {step.values[1]}: a tie — both roll again "
                             f"({step.setting})")
        elif isinstance(step, Verdict):
            if step.side:
                line = f"{plural(step.values[0], 'success')}: {VERDICT_WORDS[step.outcome]}"
                lines.append(line if step.side == "pool" else "  " + line)
            elif extended:
                lines.append(_extended_end(step, target, rolls))
            else:
                lines.append(_contest_line(step))
    return tuple(lines)


# --------------------------------------------------------------------------------------------
# The odds' notes


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


def extended_notes(target: int, actor: Side, opp: Side | None) -> list[str]:
    """The notes of an extended action's odds, from its sides' ``Side`` steps."""
    return [f"extended {'contest' if opp else 'action'} to {target} successes (C11)",
            side_header("actor" if opp else "pool", actor.dice, dict(actor.facts))] + (
        [side_header("opposition", opp.dice, dict(opp.facts))] if opp is not None else [])


def extended_tie_note(rules: Rules) -> str:
    return {"tie": "both reaching the target with equal totals is a tie",
            "defender": "both reaching the target with equal totals: the defender wins",
            "reroll": "both reaching the target with equal totals: roll on until one leads",
            "continue_next_turn": "both reaching the target with equal totals: the contest "
                                  "continues until one leads"}[rules.contested_tie] + " (C-A4)"
