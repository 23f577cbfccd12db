"""A roll's steps in any game: one short line each, naming the dice and the rule of each step
(the HTML view of a roll lists them; a game's own words are in ``render/<game>.py``)."""

from __future__ import annotations

from typing import Any

from ..dice.steps import (
    Adjust,
    Begin,
    Changed,
    Check,
    Count,
    Items,
    Lookup,
    Pair,
    Rolled,
    Round,
    Side,
    Step,
    Tie,
    Verdict,
    Worked,
)


def _facts(facts: tuple[tuple[str, Any], ...]) -> str:
    return ", ".join(f"{k}={v}" for k, v in facts)


def _runs(runs: tuple[tuple[int, ...], ...]) -> str:
    return " | ".join(" → ".join(map(str, run)) for run in runs)


def step_line(step: Step) -> str:
    """``rolled actor: die #0 9 → 3 (1), die #1 2 | 5 (0); C2, again C5, re-roll C-X3``."""
    if isinstance(step, Begin):
        about = "; ".join(x for x in (step.kind, _facts(step.facts)) if x)
        return f"begin: {step.text}" + (f" ({about})" if about else "")
    if isinstance(step, Side):
        return f"side {step.side}: {step.dice} dice" + (f" ({_facts(step.facts)})"
                                                         if step.facts else "")
    if isinstance(step, Adjust):
        return f"adjust {step.side}: {step.what} ({step.rule}; {_facts(step.facts)})"
    if isinstance(step, Rolled):
        dice = ", ".join(f"die #{i} {_runs(runs)} ({v})"
                         for i, runs, v in zip(step.dice, step.runs, step.values)) or "no dice"
        rules = [r for r in (step.read, step.again and f"again {step.again}",
                             step.reroll and f"re-roll {step.reroll}") if r]
        marks = f"; marked {', '.join(m for m in step.marks if m)}" if any(step.marks) else ""
        if step.dropped:
            marks += f"; dropped {', '.join(f'#{i}' for i in step.dropped)} ({step.drop})"
        return f"rolled {step.side}: {dice}{marks}" + (f"; {', '.join(rules)}" if rules else "")
    if isinstance(step, Count):
        whose = f" of {step.side}" if step.side else ""
        return f"{step.what}{whose}: {step.value}" + (f" ({step.rule})" if step.rule else "")
    if isinstance(step, Verdict):
        who = step.side or "the roll"
        setting = f", {step.setting}" if step.setting else ""
        read = f" from {', '.join(map(str, step.values))}" if step.values else ""
        return f"verdict of {who}: {step.outcome}{read} ({step.rule}{setting})"
    if isinstance(step, Tie):
        setting = f", {step.setting}" if step.setting else ""
        return f"tie at {', '.join(map(str, step.values))}: {step.goes} ({step.rule}{setting})"
    if isinstance(step, Round):
        return f"roll {step.n}"
    if isinstance(step, Lookup):
        cell = ", ".join(f"{k} {v}" for k, v in (("row", step.row), ("column", step.column)) if v)
        return (f"lookup {step.table}: {cell or 'no cell'} by "
                f"{', '.join(map(str, step.values))} → {_facts(step.facts) or 'no entry'} "
                f"({step.rule})")
    if isinstance(step, Pair):
        other = (f"{step.against} {step.other_face} ({step.filler})" if step.other < 0
                 else f"{step.against} die #{step.other} {step.other_face}")
        return (f"pair {step.side} die #{step.die} {step.face} vs {other}: {step.value} "
                f"({step.rule})")
    if isinstance(step, Check):
        facts = f"; {_facts(step.facts)}" if step.facts else ""
        return f"check {step.rule}: {'holds' if step.holds else 'does not hold'}{facts}"
    if isinstance(step, Changed):
        dice = ", ".join(f"die #{i} {a} → {b}" for i, a, b in zip(step.dice, step.before,
                                                                  step.after))
        return f"changed {step.side}: {dice} ({step.rule})"
    if isinstance(step, Worked):
        whose = f" of {step.side}" if step.side else ""
        rule = f" ({step.rule})" if step.rule else ""
        return f"{step.what}{whose}: {step.working} → {_number(step.value)}{rule}"
    if isinstance(step, Items):
        values = ", ".join(_number(v) for v in step.values) or "no items"
        marks = f"; marked {', '.join(m for m in step.marks if m)}" if any(step.marks) else ""
        if step.dropped:
            marks += f"; dropped {', '.join(f'#{i}' for i in step.dropped)} ({step.drop})"
        rule = f" ({step.rule})" if step.rule else ""
        return f"items {step.side}: {values}{marks} → {_number(step.value)}{rule}"
    raise TypeError(f"not a step: {step!r}")


def _number(v: float) -> str:
    return str(v) if isinstance(v, int) else f"{v:.6f}".rstrip("0")
