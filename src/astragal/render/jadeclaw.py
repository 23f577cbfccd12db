"""Jadeclaw in the game's words: a roll's steps as transcript lines. Pure functions of the steps
(``astragal.dice.steps``) and of dice sizes; the rules decide, this only says it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..dice.steps import (
    Adjust,
    Begin,
    Check,
    Count,
    Pair,
    Rolled,
    Round,
    Side,
    Step,
    Verdict,
    facts_of,
)

__all__ = ["OUTCOME_WORDS", "adjust_text", "dice_text", "n", "transcript", "verdict_line"]

OUTCOME_WORDS = {"botch": "Botch", "overwhelming_failure": "Overwhelming Failure",
                 "failure": "Failure", "tie": "Tie", "success": "Success",
                 "overwhelming_success": "Overwhelming Success"}


_SAID: dict[tuple[int, ...], str] = {}  # a pool's words, by its sizes (every roll says some)


def dice_text(sizes: Sequence[int]) -> str:
    """``2d12 & d4`` (largest first), ``no dice`` for an empty pool."""
    key = tuple(sizes)
    said = _SAID.get(key)
    if said is None:
        if len(_SAID) > 4096:
            _SAID.clear()
        counts: dict[int, int] = {}
        for s in sorted(key, reverse=True):
            counts[s] = counts.get(s, 0) + 1
        said = _SAID[key] = " & ".join(f"{k if k > 1 else ''}d{s}" if key else ""
                                       for s, k in counts.items()) or "no dice"
    return said


def n(count: int, one: str, many: str) -> str:
    """``1 Bonus``, ``2 Bonuses``."""
    return f"{count} {one if count == 1 else many}"


def verdict_line(a: int, b: int, qa: str | None, qb: str | None, outcome: str, rule: str = "J5",
                 setting: str = "", sides: tuple[str, str] = ("actor", "opposition")) -> str:
    """``7 vs 4: margin +3 → Success``, and what Quality did when a side names one: the rule that
    decided the contest (its ``rule`` and switch ``setting``) says whether it broke a tie."""
    line = f"{a} vs {b}: margin {a - b:+d} → {OUTCOME_WORDS[outcome]}"
    return line + _quality_words(rule, setting, qa, qb, outcome, sides)


def _quality_words(rule: str, setting: str, qa: str | None, qb: str | None, outcome: str,
                   sides: tuple[str, str]) -> str:
    """J7, J-A6, J-A8 in words, by the deciding rule: Quality broke the tie, left it standing,
    or (any other rule: the Scores decided) had no tie to break."""
    if rule == "J10":
        return " (double Botch; Quality breaks no double Botch, J-A8)" if qa or qb else \
            " (double Botch)"
    if rule == "J7" and qa and qb:
        if outcome == "tie":
            return f" (equal Scores and equal Quality, {qa.title()}: the Tie stands, J7)"
        win, lose = (qa, qb) if outcome == "success" else (qb, qa)
        return f" (equal Scores: Quality {win.title()} beats {lose.title()}, J7)"
    if rule == "J-A6":
        side, q = (sides[0], qa) if qa else (sides[1], qb)
        did = "it breaks no tie" if outcome == "tie" else "the skilled side wins"
        return f" (equal Scores, and only the {side} has a Quality, {(q or '').title()}: {did}, " \
               f"{setting}, J-A6)"
    if qa or qb:
        named = f"Quality {qa.title()} vs {qb.title()}" if qa and qb else \
            f"the {sides[0]}'s Quality, {qa.title()}," if qa else \
            f"the {sides[1]}'s Quality, {(qb or '').title()},"
        return f" ({named} breaks ties only: the Scores differ, J7)"
    return ""


def adjust_text(step: Adjust) -> str:
    """How a pool changed before its roll (J36–J38, J12, J13/J29, J-A9, J30)."""
    f = dict(step.facts)
    after = dice_text(f.get("sizes", ()))
    if step.what == "include":
        return f"Include {dice_text(f['dice'])} → {after}"
    if step.what == "remove":
        return f"Remove {f['die']} → {after}"
    if step.what == "limit":
        again = " again (house rule)" if step.rule == "J-A9" else ""
        return f"Limit d{f['limit']}{again} → {after}"
    if step.what == "net":
        b, p = f["net_bonuses"], f["net_penalties"]
        return (f"{n(f['bonuses'], 'Bonus', 'Bonuses')} and "
                f"{n(f['penalties'], 'Penalty', 'Penalties')} cancel → net "
                + (f"+{n(b, 'Bonus', 'Bonuses')}" if b else
                   f"-{n(p, 'Penalty', 'Penalties')}" if p else "none"))
    if step.what == "bonus":
        b, k = f["bonuses"], f["dice"]
        return (f"+{n(b, 'Bonus', 'Bonuses')}: {b} × {k} {'dice' if k > 1 else 'die'} = "
                f"{n(b * k, 'size increase', 'size increases')} → {after}")
    if step.what == "penalty":
        p = f["penalties"]
        return (f"-{n(p, 'Penalty', 'Penalties')}: remove the smallest die"
                f"{' for each' if p > 1 else ''} → {after}")
    raise ValueError(f"no words for {step!r}")


def _check_line(step: Check) -> str:
    f = dict(step.facts)
    if step.rule == "J48":
        if step.holds:
            return (f"J48: {dice_text(f['actor'])} matches {dice_text(f['difficulty'])} die for "
                    "die and the task is calm: Success without rolling")
        if f["penalties"]:
            return ("J48 does not apply: a Penalty (lack of time, poor preparation) means the "
                    "task is not calm: roll")
        return "J48 does not apply (the pool does not match the Difficulty die for die): roll"
    if step.rule == "J33":
        return "Slaying and Enervated cancel: normal damage (J33)"
    if step.holds:  # J35
        return "Resolve test against the damage faces (J35):"
    return ("No Wound, so no Resolve test (J35: a Damage Roll that scores a Wound becomes a "
            "Simple Roll in a Resolve Test)")


def _pair_line(step: Pair) -> str:
    vs = f"an imaginary {step.other_face}" if step.other < 0 else str(step.other_face)
    why = " (a 1 never hits)" if step.rule == "J27" else ""
    return f"  {step.face} vs {vs}: {step.value} hit{'s' if step.value != 1 else ''}{why}"


class _Sides:
    """What the words of a later step need from earlier ones: each side's facts, its Adjust lines
    not yet said (a Simple Roll's pool is shown when it is rolled), its rolls' Scores."""

    def __init__(self) -> None:
        self.facts: dict[str, Mapping[str, Any]] = {}
        self.pending: dict[str, list[str]] = {}
        self.adjusted: dict[str, int] = {}
        self.scores: dict[str, list[int]] = {}
        self.side = ""
        self.round = 0

    def name(self, side: str) -> str:
        return "difficulty" if self.facts[side].get("difficulty") else side

    def shown(self, side: str, lines: list[str]) -> None:
        """A Simple Roll's pool as it is about to roll: its working, then the dice it rolls."""
        pending = self.pending.pop(side, None)
        if pending is None:
            return
        facts, name = self.facts[side], self.name(side).capitalize()
        if pending:
            lines.append(f"{name}: {dice_text(facts['base'])}")
            lines += pending
        rolls = facts["rolls"]
        lines.append(f"{name} rolls {dice_text(facts['sizes'])}"
                     + (f", {rolls} times ({n(facts['penalties'], 'Penalty', 'Penalties')}: "
                        "keep the worst Score, J21)" if rolls > 1 else ""))


def _rolled_lines(step: Rolled, sides: _Sides, damage: bool) -> list[str]:
    lines: list[str] = []
    facts = sides.facts[step.side]
    sizes = facts["sizes"]
    if damage:
        if sides.adjusted.get(step.side) and sizes:
            lines.append(f"  rolls {dice_text(sizes)}")
        if not sizes:
            return lines + [f"  no {step.side} dice to roll"]
    group = sides.name(step.side) + (f" roll {sides.round}" if sides.round else "")
    lines.append(f"  {group}: " + ", ".join(f"d{s}→{runs[0][0]}"
                                            for s, runs in zip(sizes, step.runs)))
    for s, runs in zip(sizes, step.runs):
        if len(runs) > 1:
            lines.append(f"  Favored: re-roll the 1 on the d{s} → {runs[-1][0]}")
    for s, mark in zip(sizes, step.marks):
        if mark == "may_reroll":
            lines.append(f"  Favored: the player may re-roll the 1 on the d{s}")
    return lines


def _verdict_line(step: Verdict, sides: _Sides, damage: bool) -> str | None:
    if step.side:  # a side's Score
        if step.rule == "J-X3":
            return f"Actor has no dice: a Botch (house rule {step.setting})" \
                if step.side == "actor" else None
        scores = sides.scores.get(step.side, [])
        worst = f" (worst of {scores})" if sides.facts[step.side]["rolls"] > 1 else ""
        return (f"  Score {step.values[0]}{worst}"
                + (" — Botch!" if step.outcome == "botch" else ""))
    if step.rule == "J48":
        return None
    if len(step.values) == 2:  # a contest, or a Resolve test against the damage faces
        first = "resolve" if "resolve" in sides.facts else "actor"
        other = sides.facts.get("opposition", {}) if first == "actor" else {}
        names = ("actor", sides.name("opposition")) if first == "actor" else (
            "Resolve roll", "damage faces")
        return verdict_line(*step.values, sides.facts[first]["quality"], other.get("quality"),
                            step.outcome, step.rule, step.setting, names)
    value = step.values[0]
    if damage:
        return f"{value} hit{'s' if value != 1 else ''}" if value else "No hits: nothing"
    return "Botch!" if step.outcome == "botch" else f"Score {value}"


def transcript(steps: Iterable[Step]) -> tuple[str, ...]:
    """A Jadeclaw roll's steps in words, one line each."""
    lines: list[str] = []
    sides = _Sides()
    damage = False
    for step in steps:
        # the most frequent steps first: each fails fewer isinstance checks
        if isinstance(step, Verdict):
            line = _verdict_line(step, sides, damage)
            if line is not None:
                lines.append(line)
        elif isinstance(step, Count):
            if step.what == "soak_botch" and step.rule == "J28":
                lines.append("  Soak Botch (every soak die shows 1): +1 hit (J28)")
            elif step.what == "soak_botch":  # J-A12: no damage dice
                lines.append("No damage dice: no pairs (J-A12)" + (
                    "; the Soak Botch still gives +1 hit (soak_botch_with_no_damage_dice=true, "
                    "J28)" if step.value else ""))
            elif step.what == "score" and step.rule == "J-A12":  # J35 with no damage faces
                why = "a Botch: empty_pool=auto_botch, J-X3, " if step.value else ""
                lines.append(f"  no damage dice, so no faces: the Score to beat is {step.value} "
                             f"({why}J-A12)")
            elif step.what == "score" and step.rule == "J4" and step.side in sides.scores:
                sides.scores[step.side].append(step.value)
                if sides.round:
                    lines.append(f"    Score {step.value}")
        elif isinstance(step, Pair):
            lines.append(_pair_line(step))
        elif isinstance(step, Rolled):
            sides.shown(step.side, lines)
            lines += _rolled_lines(step, sides, damage and step.side != "resolve")
        elif isinstance(step, Side):
            facts = sides.facts[step.side] = facts_of(step.facts)
            sides.side, sides.round = step.side, 0
            sides.scores[step.side] = []
            if facts.get("difficulty"):
                lines.append(f"Difficulty: {facts['difficulty'].title()}; the GM rolls its "
                             "Difficulty Dice (J47, J52)")
            if damage and step.side != "resolve":
                lines.append(f"{step.side.capitalize()} dice: {dice_text(facts['base'])}")
            else:
                sides.pending[step.side] = []
        elif isinstance(step, Adjust):
            sides.adjusted[step.side] = sides.adjusted.get(step.side, 0) + 1
            if step.side in sides.pending:
                sides.pending[step.side].append(f"  {adjust_text(step)}")
            else:
                lines.append(f"  {adjust_text(step)}")
        elif isinstance(step, Round):
            sides.shown(sides.side, lines)
            sides.round = step.n
        elif isinstance(step, Check):
            lines.append(_check_line(step))
        elif isinstance(step, Begin):
            damage = step.kind == "damage"
            lines.append(f"Jadeclaw {'Damage' if damage else 'Simple'} Roll: {step.text[4:]}")
    return tuple(lines)
