"""The rulebook: every registered rule is used by the roller and by the odds, and matters to both.

For each game with a rulebook: (1) every rule function is wrapped where the game's modules hold it,
the caches are cleared, a probe set of inputs is rolled and its odds computed, and each rule must
have been called on both paths; (2) each rule is replaced by a perturbed version, and on an input
where it matters both the roll's result (typed-in faces) and the odds must change. A rule added to
the rulebook without a probe or a perturbation here fails the test.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import astragal
from astragal.odds import algebra
from astragal.systems import get_system

# Probe inputs per game: roll (with a seed) and odds of each must touch every rule.
PROBES: dict[str, list[str]] = {
    "cofd": ["cofd: 3 rote 9-again", "cofd: chance rote", "cofd: 2 - 4",
             "cofd: Wits 2 resist Composure 1 vs 2 willpower", "cofd: 2 target 3 vs 2 8-again",
             "cofd: 2 target 3", "cofd: 2 vs 2 contested_tie=reroll"],
    "d6skill": ["ds: d6+2", "ds: d6+3 vs 6", "ds: d6+7 vs 6 calm", "ds: d6+1 vs d6",
                "ds: atk d6+30 vs 0 dmg d6+1", "ds: atk d6+2 vs def d6 dmg 3"],
    "d6system": ["od6: 3D+1 +1D very advantaged vs moderate", "od6: 2D vs automatic",
                 "od6: 3D wild vs 2D+2", "od6: 3D wild", "od6: 2D vs 2D opposed_tie=reroll",
                 "od6: 4D vs 12"],
    "attack": ["at: atk 20 wpn 20 weapon C crit +1 berserk luck 1 vs armor 2 shield 1 parry 2",
               "at: 30d6 vs armor 1 shield 1 stunned", "at: 2d6"],
}

# rule id → (perturbed function factory, input, typed-in faces)
PERTURB: dict[str, dict[str, tuple[Callable[[Callable[..., Any]], Callable[..., Any]], str,
                                   str]]] = {
    "cofd": {
        "C1": (lambda f: lambda r, s, w: f(r, s, w) + 1, "cofd: 2", "8,1"),
        "C2": (lambda f: lambda face, chance=False: face >= 7 if not chance else f(face, True),
               "cofd: 1", "7"),
        "C3": (lambda f: lambda s, d=False, e=5: f(s, d, e - 2), "cofd: 3", "8,8,8"),
        "C5": (lambda f: lambda face, again, chance=False: False, "cofd: 1", "10,8"),
        "C10": (lambda f: lambda m: f(-m), "cofd: 2 vs 1", "8,8 / 8"),
        "C11": (lambda f: lambda a, b, t: f(a, b, t + 1), "cofd: 1 target 1", "8"),
        "C-X1": (lambda f: lambda first, chance, df=True: False, "cofd: chance", "1"),
        "C-X3": (lambda f: lambda first, chance=False, df=True: False, "cofd: 1 rote", "3,8"),
        "C-X7": (lambda f: lambda rule, extended: "lose", "cofd: 1 vs 1", "8 / 8"),
    },
    "d6skill": {
        "S1": (lambda f: lambda die, bonus: f(die, bonus) + 1, "ds: d6+2", "3"),
        "S2": (lambda f: lambda r, b, d: f(r, b, d + 1), "ds: d6+3 vs 6", "4"),
        "S3": (lambda f: lambda m, a, b, rules: f(-m, a, b, rules), "ds: d6+3 vs d6", "4 / 2"),
        "S5": (lambda f: lambda points: f(points) + 1, "ds: atk d6+3 vs 2 dmg 4", "4"),
        "S6": (lambda f: lambda b, d, s: False, "ds: d6+7 vs 6 calm", "3"),
        "S7": (lambda f: lambda first, checks: False, "ds: d6", "1,1"),
        "S8": (lambda f: lambda checked: checked is not None, "ds: d6", "1,2"),
        "S9": (lambda f: lambda face, enabled: False, "ds: d6", "6,3"),
    },
    "d6system": {
        "D2": (lambda f: lambda side, o: f(side, o)._replace(number=f(side, o).number + 1),
               "od6: 2D", "3,4"),
        "D7": (lambda f: lambda number: False, "od6: 2D vs automatic", "3,4"),
        "D8": (lambda f: lambda total, d: f(total, d) + 1, "od6: 2D vs 7", "3,4"),
        "D10": (lambda f: lambda rp, inc=17: f(rp - 1, inc), "od6: 2D vs 7", "3,4"),
        "D11": (lambda f: lambda rp: f(rp) + 1, "od6: 2D vs 5", "3,4"),
        "D12": (lambda f: lambda rp: f(rp) + 1, "od6: 2D vs 5", "3,4"),
        "D-X1": (lambda f: lambda face, first: None, "od6: 2D wild", "3,6,2"),
        "D-X4": (lambda f: lambda rule: "defender", "od6: 2D vs 2D", "3,4 / 4,3"),
    },
    "attack": {
        "A1": (lambda f: lambda a, w: f(a, w) + 1, "at: atk 3 wpn 4", "4,2,1"),
        "A3": (lambda f: lambda base, thrown=False, bonus=0, stance="normal":
               f(base, thrown, bonus, stance) + 1, "at: atk 3 wpn 4 berserk", "4,2,1,1"),
        "A7": (lambda f: lambda h, m, t="double": f(h, m + 1, t), "at: 3d6", "4,2,1"),
        "A11": (lambda f: lambda need, k: not f(need, k), "at: 2d6 vs 2d6", "4,1 / 6,1"),
        "A12": (lambda f: lambda states, threw="full": ("ARMOR",),
                "at: 2d6 vs armor 1 shield 1", "5,1 / 6,1"),
        "A13": (lambda f: lambda s, c, d, k=0, sub="dice_rolled": f(s, c, d, k, sub) + 1,
                "at: 3d6", "6,6,6 / / 1,2,3"),
        "A15": (lambda f: lambda t, b=0: f(t, b) + 1, "at: 3d6", "6,6,6 / / 1,2,3"),
    },
}


def _modules(system: str) -> list[Any]:
    get_system(system)  # the game's modules are loaded on first use
    prefix = f"astragal.systems.{system}"
    return [m for name, m in list(sys.modules.items())
            if m is not None and (name == prefix or name.startswith(prefix + "."))]


def _clear_caches(system: str) -> None:
    algebra.clear_caches()
    for module in _modules(system):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


@contextmanager
def _swapped(system: str, function: Callable[..., Any],
             replacement: Callable[..., Any]) -> Iterator[None]:
    """``replacement`` wherever the game's modules hold ``function``."""
    swapped: list[tuple[Any, str]] = []
    for module in _modules(system):
        for name, value in list(vars(module).items()):
            if value is function:
                setattr(module, name, replacement)
                swapped.append((module, name))
    assert swapped, f"{function.__qualname__} is not held by any module of {system}"
    _clear_caches(system)
    try:
        yield
    finally:
        for module, name in swapped:
            setattr(module, name, function)
        _clear_caches(system)


def _outcome(text: str, faces: str) -> Any:
    try:
        r = astragal.roll(text, faces=faces)
    except astragal.InputError as exc:  # e.g. a perturbed rule that wants other faces
        return ("error", type(exc).__name__)
    return (r.outcome, r.result)


def _odds(text: str) -> Any:
    o = astragal.odds(text)
    return (o.outcomes.as_dict(), o.distribution.as_dict(), repr(o.extra))


@pytest.mark.parametrize("system", sorted(PROBES))
def test_every_rule_is_used_by_the_roller_and_by_the_odds(system: str) -> None:
    book = astragal.rulebook(system)
    assert book, f"{system} registers no rules"
    for path in ("roll", "odds"):
        calls: dict[str, int] = {r.id: 0 for r in book}
        stack = []
        for r in book:
            def counted(*a: Any, _r: Any = r, **k: Any) -> Any:
                calls[_r.id] += 1
                return _r.function(*a, **k)
            stack.append(_swapped(system, r.function, counted))
        for ctx in stack:
            ctx.__enter__()
        try:
            for text in PROBES[system]:
                if path == "roll":
                    astragal.roll(text, seed=7)
                else:
                    astragal.odds(text)
        finally:
            for ctx in reversed(stack):
                ctx.__exit__(None, None, None)
        unused = sorted(rid for rid, n in calls.items() if n == 0)
        assert not unused, f"the {path} path never calls rules {unused} of {system}"


@pytest.mark.parametrize("system, rule_id", [(s, r) for s in sorted(PERTURB) for r in PERTURB[s]])
def test_perturbing_a_rule_changes_both_the_roll_and_the_odds(system: str, rule_id: str) -> None:
    rule = next(r for r in astragal.rulebook(system) if r.id == rule_id)
    make, text, faces = PERTURB[system][rule_id]
    roll_before, odds_before = _outcome(text, faces), _odds(text)
    with _swapped(system, rule.function, make(rule.function)):
        roll_after, odds_after = _outcome(text, faces), _odds(text)
    assert roll_after != roll_before, f"{rule_id}: the roll did not change"
    assert odds_after != odds_before, f"{rule_id}: the odds did not change"
    assert _outcome(text, faces) == roll_before and _odds(text) == odds_before  # restored


@pytest.mark.parametrize("system", sorted(PERTURB))
def test_every_registered_rule_has_a_perturbation(system: str) -> None:
    assert {r.id for r in astragal.rulebook(system)} == set(PERTURB[system])


def test_rules_command_lists_the_rulebook(capsys: pytest.CaptureFixture[str]) -> None:
    from astragal.cli import main

    assert main(["rules", "cofd"]) == 0
    out = capsys.readouterr().out
    for r in astragal.rulebook("cofd"):
        assert f"{r.id} " in out and r.statement in out
    assert "contested_tie=continue_next_turn" in out
