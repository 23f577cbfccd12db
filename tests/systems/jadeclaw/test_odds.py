"""Jadeclaw exact odds: equal to the rule functions enumerated over every face combination.

The odds code uses fast algorithms (closed-form Score laws, a DP over faces for Damage Rolls);
these tests enumerate the *rule functions* (``score``, ``favored_index``, ``contest_outcome``,
``damage_hits``) over all faces with exact fractions and compare to 1e-12.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import astragal
from astragal.systems import jadeclaw as J

TOL = 1e-12
METHODS = ["exact", "numpy", "enumerate"]  # the two exact damage algorithms; "auto" picks by pool size
POOLS_UP_TO_3 = [p for n in range(4) for p in itertools.combinations_with_replacement(
    J.SIZES[::-1], n)]
NONEMPTY = [p for p in POOLS_UP_TO_3 if p]


def one_roll(sizes: Sequence[int], favored: bool) -> Iterator[tuple[Fraction, tuple[int, ...]]]:
    """Every face combination of one roll (with the Favored re-roll), with its probability."""
    base = Fraction(1, math.prod(sizes))
    for faces in itertools.product(*[range(1, s + 1) for s in sizes]):
        j = J.favored_index(sizes, faces) if favored else None
        if j is None:
            yield base, faces
            continue
        for g in range(1, sizes[j] + 1):
            yield base / sizes[j], faces[:j] + (g,) + faces[j + 1:]


def brute_score(sizes: Sequence[int], favored: bool = False, penalties: int = 0) -> dict[int, Fraction]:
    """The final Score law by enumeration: J4 per roll, J21 worst of p+1 rolls."""
    per_roll: Counter[int] = Counter()
    for p, faces in one_roll(sizes, favored):
        per_roll[max(faces)] += p  # type: ignore[assignment]
    out: Counter[int] = Counter()
    for scores in itertools.product(per_roll, repeat=penalties + 1):
        out[min(scores)] += math.prod(per_roll[s] for s in scores)  # type: ignore[assignment]
    return dict(out)


def brute_contest(a: Sequence[int], b: Sequence[int], qa: str | None = None,
                  qb: str | None = None, options: dict[str, object] | None = None,
                  pa: int = 0, pb: int = 0, fa: bool = False, fb: bool = False
                  ) -> dict[str, Fraction]:
    opts = {**J.DEFAULTS, **(options or {})}
    la, lb = brute_score(a, fa, pa), brute_score(b, fb, pb)
    out: Counter[str] = Counter()
    for x, px in la.items():
        for y, py in lb.items():
            out[J.contest_outcome(x, y, qa, qb, opts)] += px * py  # type: ignore[assignment]
    return dict(out)


def brute_damage(d: Sequence[int], s: Sequence[int], kind: str = J.NORMAL,
                 fd: bool = False, fs: bool = False) -> dict[int, Fraction]:
    out: Counter[int] = Counter()
    soak_rolls = list(one_roll(s, fs)) if s else [(Fraction(1), ())]
    for p, df in one_roll(d, fd):
        for q, sf in soak_rolls:
            out[J.damage_hits(df, sf, kind)] += p * q  # type: ignore[assignment]
    return dict(out)


def close(fast: dict[object, float], exact: dict[object, Fraction]) -> None:
    keys = set(fast) | set(exact)
    worst = max(abs(fast.get(k, 0.0) - float(exact.get(k, 0))) for k in keys)
    assert worst < TOL, (worst, fast, exact)


def contest_odds(a: Sequence[int], b: Sequence[int], extra: str = "") -> dict[str, float]:
    text = f"jc: {' '.join(f'd{x}' for x in a)} vs {' '.join(f'd{x}' for x in b)} {extra}"
    return astragal.odds(text.strip()).outcomes.as_dict()


def test_every_contest_of_up_to_3_dice_against_up_to_3_dice() -> None:
    """All 35 × 35 nonempty pools: the Score-law odds equal the enumerated rule."""
    laws = {p: brute_score(p) for p in NONEMPTY}
    for a in NONEMPTY:
        for b in NONEMPTY:
            fast = J.contest_distribution(
                [0.0] + [float(laws[a].get(k, 0)) for k in range(1, 13)],
                [0.0] + [float(laws[b].get(k, 0)) for k in range(1, 13)], None, None, J.DEFAULTS)
            got = contest_odds(a, b)
            assert got == pytest.approx(fast, abs=TOL)
    # and the whole pipeline against whole-contest enumeration on a spread of cases
    for a, b in [((12, 8), (10, 10)), ((4,), (12, 12, 12)), ((6, 6, 6), (8,)), ((10,), (10,))]:
        close(contest_odds(a, b), brute_contest(a, b))


@pytest.mark.parametrize("favored", [False, True])
@pytest.mark.parametrize("penalties", [0, 1, 2])
def test_score_law_with_favored_and_penalties(favored: bool, penalties: int) -> None:
    """J21, J39, J40: the closed-form Score law equals enumeration for every pool of ≤ 3 dice."""
    for pool in NONEMPTY:
        prep = J.Prepared(pool, (), penalties, favored, None)
        pmf = J.final_score_pmf(prep, J.DEFAULTS)
        close({k: pmf[k] for k in range(1, 13) if pmf[k]}, brute_score(pool, favored, penalties))


@pytest.mark.parametrize("case", [
    ("d12 d8 -1p fav", "2d10 fav", {}, {"pa": 1, "fa": True, "fb": True}),
    ("d6 q=expert", "d6 q=basic", {}, {"qa": "expert", "qb": "basic"}),
    ("d6 q=basic", "d8 q=mythic", {}, {"qa": "basic", "qb": "mythic"}),
    ("d4 d4", "d4", {"double_botch": "both_botch"}, {}),
    ("d6", "d12 -2p", {"botch_overrides_overwhelm": False}, {"pb": 2}),
    ("d6 q=heroic", "d6", {"quality_vs_no_quality": "skilled_side_wins"}, {"qa": "heroic"}),
])
def test_contest_options_equal_enumeration(case: tuple[str, str, dict[str, object],
                                                       dict[str, object]]) -> None:
    a_text, b_text, options, kw = case
    got = astragal.odds(f"jc: {a_text} vs {b_text}", options=options).outcomes.as_dict()
    a = astragal.parse(f"jc: {a_text}").spec.actor.base
    b = astragal.parse(f"jc: {b_text}").spec.actor.base
    close(got, brute_contest(a, b, options=options, **kw))  # type: ignore[arg-type]


def test_contest_outcomes_are_exclusive_and_sum_to_one() -> None:
    out = astragal.odds("jc: L7 -1p fav vs L5 q=expert:basic").outcomes
    assert out.outcomes() == J.CONTEST_OUTCOMES
    assert out.total() == pytest.approx(1.0, abs=TOL)


POOLS_UP_TO_2 = [p for p in POOLS_UP_TO_3 if len(p) <= 2]


@pytest.mark.parametrize("method", METHODS)
def test_damage_every_pool_up_to_2_against_up_to_2_calling_the_rule(method: str) -> None:
    """The damage odds equal ``damage_hits`` itself called on every face combination."""
    for d in POOLS_UP_TO_2:
        for s in POOLS_UP_TO_2:
            fast = J.damage_hits_distribution(d, s, J.NORMAL, method=method)
            close(dict(enumerate(fast)), brute_damage(d, s, J.NORMAL))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fd,fs", [(True, False), (False, True), (True, True)])
def test_damage_favored_equals_enumeration(fd: bool, fs: bool, method: str) -> None:
    for d, s in [((12, 8), (10,)), ((6, 4), (6, 6)), ((4,), (4, 4)), ((10, 6, 4), (8,))]:
        fast = J.damage_hits_distribution(d, s, J.NORMAL, fd, fs, method=method)
        close(dict(enumerate(fast)), brute_damage(d, s, J.NORMAL, fd, fs))


def sorted_law(sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Every face combination of a pool, sorted high→low and counted (exact integer weights)."""
    counts: Counter[tuple[int, ...]] = Counter(
        tuple(sorted(f, reverse=True)) for f in itertools.product(*[range(1, x + 1) for x in sizes]))
    keys = list(counts)
    return np.array(keys, dtype=np.int64), np.array([counts[k] for k in keys], dtype=np.int64)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=3, max_size=3),
       st.lists(st.integers(1, 12), min_size=0, max_size=3),
       st.sampled_from([J.NORMAL, J.SLAYING, J.ENERVATED]))
def test_vectorised_enumerator_is_the_rule(d: list[int], s: list[int], kind: str) -> None:
    """The vectorised enumerator below computes exactly ``damage_hits`` on any faces."""
    table = np.array([[J.pair_hits(x, y, kind) for y in range(13)] for x in range(13)])
    sd = np.array([sorted(d, reverse=True)])
    ss = np.array([sorted(s, reverse=True) + [1] * (len(d) - len(s))])
    botch = int(bool(s) and all(f == 1 for f in s))
    assert int(table[sd, ss].sum()) + botch == J.damage_hits(d, s, kind)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", [J.NORMAL, J.SLAYING, J.ENERVATED])
def test_damage_every_pool_up_to_3_against_up_to_3(kind: str, method: str) -> None:
    """Every damage pool of 1–3 dice against every soak pool of 0–3 dice (56 × 55 pairs)."""
    table = np.array([[J.pair_hits(x, y, kind) for y in range(13)] for x in range(13)])
    laws = {p: sorted_law(p) for p in POOLS_UP_TO_3 if p}
    for d in NONEMPTY:
        dk, dw = laws[d]
        n = len(d)
        for s in POOLS_UP_TO_3:
            if s:
                sk, sw = laws[s]
                botch = (sk == 1).all(axis=1).astype(np.int64)  # J28
                pad = max(0, n - len(s))  # J26: imaginary 1s; J25: surplus soak ignored
                sk = np.hstack([sk, np.ones((len(sk), pad), dtype=np.int64)])[:, :n]
            else:
                sk, sw = np.ones((1, n), dtype=np.int64), np.ones(1, dtype=np.int64)
                botch = np.zeros(1, dtype=np.int64)
            hits = table[dk[:, None, :], sk[None, :, :]].sum(axis=2) + botch[None, :]
            weight = dw[:, None] * sw[None, :]
            total = math.prod(d) * math.prod(s)
            exact = np.bincount(hits.ravel(), weights=weight.ravel().astype(float)) / total
            fast = J.damage_hits_distribution(d, s, kind, method=method)
            m = max(len(exact), len(fast))
            assert np.abs(np.pad(exact, (0, m - len(exact))) -
                          np.pad(fast, (0, m - len(fast)))).max() < TOL, (d, s)


def test_resolve_combination_odds_equal_enumeration() -> None:
    """J35: the Resolve test against the damage faces' Score, after a Wound (audit ruling)."""
    import itertools

    got = astragal.odds("jc: dmg d8 d6 resolve d10 d6")
    joint: dict[object, Fraction] = {}
    tested = Fraction(0)
    for d in itertools.product(range(1, 9), range(1, 7)):
        if J.damage_hits(list(d), []) == 0:
            continue
        for r in itertools.product(range(1, 11), range(1, 7)):
            p = Fraction(1, 8 * 6 * 10 * 6)
            tested += p
            k = J.contest_outcome(max(r), max(d), None, None)
            joint[k] = joint.get(k, Fraction(0)) + p
    assert abs(got.extra["resolve_tested"] - float(tested)) < TOL
    close(got.extra["resolve_outcomes"], {k: v / tested for k, v in joint.items()})


def test_calm_auto_success_odds() -> None:
    out = astragal.odds("jc: d10 d8 vs intermediate calm").outcomes
    assert out["success"] == 1.0
    assert astragal.odds("jc: d10 d6 vs intermediate calm").outcomes["success"] < 1.0


def test_odds_work_limit_is_a_clear_error() -> None:
    with pytest.raises(astragal.LimitError, match="odds work limit"):
        astragal.odds("jc: dmg 40d12 vs soak 40d12")


def test_long_pools_against_few_dice_are_refused_by_what_they_cost() -> None:
    # a long pool's packed hits polynomial makes each of the exact kernel's moves longer: this
    # request took 6.3 s (many times the default limit's ~0.6 s) while its estimate counted
    # every move alike; it is refused at once, and a long pool against two dice is answered
    with pytest.raises(astragal.LimitError, match="odds work limit"):
        astragal.odds("jc: dmg 60d12 vs soak 4d12")
    assert astragal.odds("jc: dmg 60d12 vs soak 2d12").outcomes["hit"] > 0.999


SHAPE_POOLS = [(), (12,), (12, 8), (12, 8, 4), (6,), (6, 6), (10, 10, 4)]


@functools.cache
def side_law(sizes: tuple[int, ...], favored: bool) -> tuple[tuple[tuple[int, ...], Fraction], ...]:
    """Every face combination of one roll (J39 Favored re-roll included), by sorted faces."""
    law: Counter[tuple[int, ...]] = Counter()
    for p, faces in (one_roll(sizes, favored) if sizes else [(Fraction(1), ())]):
        law[tuple(sorted(faces, reverse=True))] += p  # type: ignore[assignment]
    return tuple(law.items())


def brute_damage_by_law(d: tuple[int, ...], s: tuple[int, ...], kind: str, fd: bool,
                        fs: bool) -> dict[int, Fraction]:
    """``damage_hits`` called on every pair of sorted face vectors, weighted by their exact
    probability (the rule depends on the faces only through the sorted vectors, J23)."""
    if not d:
        return {0: Fraction(1)}
    out: Counter[int] = Counter()
    soak = side_law(s, fs)
    for df, p in side_law(d, fd):
        for sf, q in soak:
            out[J.damage_hits(df, sf, kind)] += p * q  # type: ignore[assignment]
    return dict(out)


@pytest.mark.parametrize("kind", [J.NORMAL, J.SLAYING, J.ENERVATED])
@pytest.mark.parametrize("fd,fs", [(False, False), (True, False), (False, True), (True, True)])
def test_damage_0_to_3_against_0_to_3_every_kind_and_favored(kind: str, fd: bool,
                                                             fs: bool) -> None:
    """Both kernels of the sorted-pool evaluator equal ``damage_hits`` over every face
    combination (with the J39 Favored re-roll), 0–3 damage dice against 0–3 soak dice:
    homogeneous and mixed sizes, one Favored size class and several."""
    for d in SHAPE_POOLS:
        for s in SHAPE_POOLS:
            exact = brute_damage_by_law(d, s, kind, fd, fs)
            for method in ("exact", "numpy"):
                fast = J.damage_hits_distribution(d, s, kind, fd, fs, method=method)
                close(dict(enumerate(fast)), exact)


@pytest.mark.parametrize("text,damage,soak,fd,fs,kind", [
    ("d12 d8 d6 -1p vs soak d10 d4", (12, 8), (10, 4), False, False, J.NORMAL),
    ("2d10 d4 +1b fav vs soak d8 -2p", (12, 12, 6), (), True, False, J.NORMAL),
    ("d12 d6 +1b -2p slaying vs soak 2d6 fav", (12,), (6, 6), False, True, J.SLAYING),
    ("3d8 -1p fav enervated vs soak d12 d6 fav", (8, 8), (12, 6), True, True, J.ENERVATED),
])
def test_damage_odds_with_penalties_and_favored_equal_enumeration(
        text: str, damage: tuple[int, ...], soak: tuple[int, ...], fd: bool, fs: bool,
        kind: str) -> None:
    """Through the API: J30 Damage Penalties remove the smallest dice, Bonuses step dice up,
    Favored on either side; the hits law equals the rule enumerated on the prepared pools."""
    spec = astragal.parse(f"jc: dmg {text}").spec
    assert J.prepare(spec.damage, J.DEFAULTS, damage=True).sizes == damage
    assert J.prepare(spec.soak, J.DEFAULTS, damage=True).sizes == soak
    got = astragal.odds(f"jc: dmg {text}").distribution.as_dict()
    close(got, brute_damage_by_law(damage, soak, kind, fd, fs))


@pytest.mark.parametrize("text, notes", [
    ("jc: dmg 2d12 fav slaying vs soak d12 d10",
     ("damage: 2d12, Favored (J39), Slaying (J31)", "soak: d12 & d10")),
    ("jc: dmg 2d12 fav slaying enervated vs soak d12 fav",  # J33 cancels; J39 on both sides
     ("damage: 2d12, Favored (J39)",
      "soak: d12, Favored (J39)")),
    ("jc: dmg 2d12 enervated vs soak d8", ("damage: 2d12, Enervated (J32)", "soak: d8")),
    ("jc: dmg 2d12 fav vs soak d12 fav favored_on_soak=false",
     ("damage: 2d12, Favored (J39)", "soak: d12")),
    ("jc: d12 d8 fav vs 2d10 favored_auto=false", ("actor: d12 & d8", "opposition: 2d10")),
    ("jc: d12 d8 -1p fav vs 2d10",
     ("actor: d12 & d8, 2 rolls keep the worst, each Favored (J40)", "opposition: 2d10")),
    ("jc: d12 d8 -2p fav vs 2d10 favored_each_penalty_roll=false",
     ("actor: d12 & d8, 3 rolls keep the worst, 1 of them Favored (J40)", "opposition: 2d10")),
])
def test_the_odds_say_which_rolls_are_favored_and_the_kind_of_damage(
        text: str, notes: tuple[str, ...]) -> None:
    """What the odds were taken of, as the program that computed them has it: a Favored pool
    whose odds include its re-roll says so, and one whose switch turned it off does not."""
    assert astragal.odds(text).notes[:2] == notes
