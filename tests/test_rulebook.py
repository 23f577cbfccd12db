"""The rulebook: every registered rule is used by the roller and by the odds, and matters to both.

For each game with a rulebook: (1) every rule function is wrapped where the game's modules hold it,
the caches are cleared, a probe set of inputs is rolled and its odds computed, and each rule must
have been called on both paths; (2) each rule is replaced by a perturbed version, and on an input
where it matters both the roll's result (typed-in faces) and the odds must change. A rule added to
the rulebook without a probe or a perturbation here fails the test.
"""

from __future__ import annotations

import importlib
import pkgutil
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
    "dice": ["4d6kh3+2", "3d6r<2!", "10d10>=8f1", "4d6k>3", "2d6mi2ma5", "4dF",
             "floor(d7/2)+max(d4,d6) > 3"],
    "jadeclaw": ["jc: d12 d8 +1b fav vs L7 remove biggest limit d8",
                 "jc: d8 -2p fav vs d8 q=4:7", "jc: d12 d8 +1b -3p vs d4",
                 "jc: d4 vs d8 q=basic:expert",  # a tie (seed 7) broken by Quality
                 "jc: d4 remove d4 vs d4 remove d4 empty_pool=auto_botch",
                 "jc: d10 d8 vs simple calm",
                 "jc: dmg 2d12 d8 -1p slaying vs soak d10 fav resolve d8",
                 "jc: dmg d4 -1p vs soak d6", "jc: dmg 3d12 vs soak d4"],
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
        "S3": (lambda f: lambda m, a, b, tie, order: f(-m, a, b, tie, order), "ds: d6+3 vs d6",
               "4 / 2"),
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
    "dice": {
        "N0": (lambda f: lambda d, raw: 2 * f(d, raw), "4dF", "1,2,3,3"),
        "N1": (lambda f: lambda d, face: False, "d6r<2", "1,4"),
        "N2": (lambda f: lambda d, face: False, "d6!", "6,3"),
        "N3": (lambda f: lambda d, v: v, "d6mi3", "1"),
        "N4": (lambda f: lambda keep: (f(keep)[0], not f(keep)[1], f(keep)[2]),
               "4d6kh3", "1,2,3,4"),
        "N5": (lambda f: lambda keep, v: not f(keep, v), "4d6k>3", "1,2,5,6"),
        "N6": (lambda f: lambda term, v: 2 * f(term, v), "4d10>=8", "8,1,9,2"),
        "N7": (lambda f: lambda op, a, b: f("+" if op == "*" else op, a, b), "d6*3", "4"),
        "N8": (lambda f: lambda name, args: f("ceil" if name == "floor" else name, args),
               "floor(d6/4)", "3"),
        "N9": (lambda f: lambda op, a, b: 1 - f(op, a, b), "d6 > 4", "5"),
    },
    "jadeclaw": {
        # J4: only the first die counts
        "J4": (lambda f: lambda pool: f(_first_die(pool)), "jc: d8 d6", "1,5"),
        "J5": (lambda f: lambda a, b, qa=None, qb=None, o=None: f(b, a, qb, qa, o),
               "jc: d12 vs d4", "6 / 3"),
        "J6": (lambda f: lambda m: m >= 3, "jc: d12 vs d4", "7 / 3"),
        "J7": (lambda f: lambda qa, qb, o=None: "success", "jc: d8 vs d8", "5 / 5"),
        "J8": (lambda f: lambda level, bands="1-5": "basic", "jc: d8 q=7 vs d8 q=3", "5 / 5"),
        "J9": (lambda f: lambda s: s <= 2, "jc: d8", "2"),
        "J10": (lambda f: lambda rule: False, "jc: d6 vs d6", "1 / 1"),
        "J12": (lambda f: lambda b, p: (b, p), "jc: d6 +1b -1p", "3"),
        "J13": (lambda f: lambda sizes, b, d="per_die_carry_down": tuple(sizes), "jc: d6 +1b",
                "7"),
        "J18": (lambda f: lambda level: f(max(0, level - 1)), "jc: L3", "7"),
        "J21": (lambda f: lambda p, rule="p_plus_one": 1, "jc: d8 -1p", "5,3"),
        "J24": (lambda f: lambda d, s, kind="normal": f(d, s, kind) + (d > s),
                "jc: dmg d8 vs soak d6", "5 / 3"),
        "J26": (lambda f: lambda: 2, "jc: dmg d8", "2"),
        "J27": (lambda f: lambda face: face <= 2, "jc: dmg d8", "2"),
        "J28": (lambda f: lambda s: 0, "jc: dmg d8 vs soak d6", "5 / 1"),
        "J30": (lambda f: lambda sizes, p: tuple(sizes), "jc: dmg d8 d4 -1p", "5"),
        "J33": (lambda f: lambda s, e: "slaying", "jc: dmg d8", "5"),
        "J35": (lambda f: lambda hits: True, "jc: dmg d8 vs soak d8 resolve d8", "3 / 5"),
        "J37": (lambda f: lambda sizes, what: tuple(sizes), "jc: d8 d6 remove biggest", "5"),
        "J38": (lambda f: lambda sizes, limit: tuple(sizes), "jc: d12 limit d6", "9"),
        "J39": (lambda f: lambda face: face <= 2, "jc: d8 fav", "2"),
        "J40": (lambda f: lambda i, each=True: i == 0, "jc: d12 -1p fav", "1,5,1,9"),
        "J48": (lambda f: lambda a, d, dom="pairwise", p=0: False, "jc: d10 d8 vs simple calm",
                "5,4 / 3,2"),
        "J-A12": (lambda f: lambda switch: True, "jc: dmg d4 -1p vs soak d6", "/ 1"),
        "J-A15": (lambda f: lambda sizes: tuple(range(len(sizes)))[::-1], "jc: d12 d4 fav",
                  "1,1,9"),
        "J-X3": (lambda f: lambda rule: 2, "jc: d4 remove d4 vs d6 empty_pool=auto_botch",
                 "/ 3"),
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


def _first_die(pool: Any) -> Any:
    """A Jadeclaw side cut to its first die (a perturbed J4 reads only that one)."""
    from astragal.dice.algebra import Favored, Mixed

    if isinstance(pool, Favored):
        return pool._replace(pool=Mixed(pool.pool.units[:1]))
    return Mixed(pool.units[:1])


def _modules(system: str) -> list[Any]:
    get_system(system)  # the game's modules are loaded on first use
    prefix = f"astragal.systems.{system}"
    # and some only when first needed (the roller, the exact odds): import them all now, or a
    # module imported while a rule is swapped would keep the swapped function for good
    package = sys.modules[prefix]
    for info in pkgutil.iter_modules(getattr(package, "__path__", [])):
        importlib.import_module(f"{prefix}.{info.name}")
    return [m for name, m in list(sys.modules.items())
            if m is not None and (name == prefix or name.startswith(prefix + "."))]


def _clear_caches(system: str) -> None:
    algebra.clear_caches()
    for module in _modules(system):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
        forget = vars(module).get("forget")  # whole expressions' laws remembered by a game
        if callable(forget):
            forget()


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


def _words(text: str, faces: str) -> Any:
    try:
        return astragal.roll(text, faces=faces).transcript
    except astragal.InputError as exc:
        return ("error", type(exc).__name__)


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
            def counted(*a: Any, _r: Any = r, _calls: dict[str, int] = calls, **k: Any) -> Any:
                _calls[_r.id] += 1
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
def test_perturbing_a_rule_changes_the_roll_its_words_and_the_odds(system: str, rule_id: str) -> None:
    rule = next(r for r in astragal.rulebook(system) if r.id == rule_id)
    make, text, faces = PERTURB[system][rule_id]
    roll_before, odds_before = _outcome(text, faces), _odds(text)
    words_before = _words(text, faces)
    with _swapped(system, rule.function, make(rule.function)):
        roll_after, odds_after = _outcome(text, faces), _odds(text)
        words_after = _words(text, faces)
    assert roll_after != roll_before, f"{rule_id}: the roll did not change"
    # the words render what the rules decided, so they change with it
    assert words_after != words_before, f"{rule_id}: the roll's words did not change"
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


# issue 40, item 12: the readings players question are stated plainly, each resting on RULES.md
@pytest.mark.parametrize("game, rule_id, said", [
    ("jc", "J-A9", "the Limit is applied before the Bonuses"),
    ("jc", "J-A12", "must beat Score 0"),
    ("od6", "D-A4", "2D -1 pip is 2D-1, not 1D+2"),
    ("attack", "A-A2", "cells 0, 3, 5 and 7"),
])
def test_astragal_rules_states_the_readings(game: str, rule_id: str, said: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from astragal.cli import main

    assert main(["rules", game]) == 0
    out = capsys.readouterr().out
    readings = out[out.index("readings"):]
    line = next(x for x in readings.splitlines() if x.strip().startswith(rule_id))
    assert said in line


def test_every_reading_quotes_rules_md() -> None:
    import re
    from pathlib import Path

    from astragal.rulebook import readings

    spec = Path(__file__).resolve().parent.parent.joinpath("RULES.md").read_text(
        encoding="utf-8")
    for game in ("jadeclaw", "cofd", "d6system", "attack", "d6skill", "dice"):
        for r in readings(game):
            assert f"- {r.id}." in spec, r.id
            for quoted in re.findall(r"(?:^|[\s(])'([^']{6,}?)'(?=[\s),.:;]|$)", r.text):
                assert quoted in spec, (r.id, quoted)
