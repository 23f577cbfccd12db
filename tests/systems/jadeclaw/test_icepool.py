"""Jadeclaw exact odds against icepool, an independent exact peer, on pools too big to enumerate.

The peer model lives in ``tests/oracles/icepool_jadeclaw.py`` (an icepool evaluator written from
the rules, sharing no code with astragal).
"""

from __future__ import annotations

import pytest

pytest.importorskip("icepool")

import astragal
from astragal.systems import jadeclaw as J
from tests.oracles import icepool_jadeclaw as peer

TOL = 1e-12


def close(ours: dict[object, float], theirs: dict[object, float]) -> None:
    keys = set(ours) | set(theirs)
    worst = max(abs(ours.get(k, 0.0) - theirs.get(k, 0.0)) for k in keys)
    assert worst < TOL, (worst, ours, theirs)


@pytest.mark.parametrize("a,b,pa,fa,fb", [
    (7, 5, 0, False, False), (12, 20, 1, False, False), (20, 20, 2, True, False),
    (16, 9, 0, True, True), (3, 14, 3, False, True), (25, 18, 1, True, True),
])
def test_level_contests_equal_icepool(a: int, b: int, pa: int, fa: bool, fb: bool) -> None:
    text = f"jc: L{a} -{pa}p {'fav' if fa else ''} vs L{b} {'fav' if fb else ''}".replace(
        " -0p", "")
    ours = astragal.odds(text).outcomes.as_dict()
    theirs = peer.contest(list(J.level_dice(a)), list(J.level_dice(b)), actor_penalties=pa,
                          actor_favored=fa, opp_favored=fb)
    close(ours, theirs)


def test_quality_tie_break_equals_icepool() -> None:
    ours = astragal.odds("jc: 2d12 d6 vs 3d10 q=heroic:expert").outcomes.as_dict()
    theirs = peer.contest([12, 12, 6], [10, 10, 10], actor_quality=3, opp_quality=2)
    close(ours, theirs)


@pytest.mark.parametrize("method", ["auto", "exact", "numpy"])
@pytest.mark.parametrize("d,s,kind", [
    ((12, 12, 12, 12), (12, 12, 12), J.NORMAL),
    ((12, 10, 8, 6, 4), (12, 8, 4), J.NORMAL),
    ((12,) * 5 + (8,), (12,) * 4, J.ENERVATED),
    ((10,) * 5, (12,) * 6, J.SLAYING),
    ((12,) * 6, (10,) * 5, J.NORMAL),
    ((4,) * 9, (4,) * 7, J.NORMAL),  # few sorted vectors but 4^9 face combinations
])
def test_damage_equals_icepool(d: tuple[int, ...], s: tuple[int, ...], kind: str,
                               method: str) -> None:
    ours = dict(enumerate(J.damage_hits_distribution(d, s, kind, method=method)))
    theirs = peer.damage_hits(list(d), list(s), slaying=kind == J.SLAYING,
                              enervated=kind == J.ENERVATED)
    close(ours, theirs)


@pytest.mark.parametrize("fd,fs", [(True, False), (False, True), (True, True)])
def test_favored_damage_equals_icepool(fd: bool, fs: bool) -> None:
    d, s = (12, 12, 8, 6), (10, 10, 4)
    ours = dict(enumerate(J.damage_hits_distribution(d, s, J.NORMAL, fd, fs)))
    theirs = peer.damage_hits(list(d), list(s), damage_favored=fd, soak_favored=fs)
    close(ours, theirs)
