"""Checks any game can run against itself (``pip install 'astragal[test]'`` for the statistics).

``check_game(game, texts)`` holds a kit game to the engine's promise on each text:

- **enumeration**: the roll is made on every sequence of faces (each die branching on each face),
  which weighs every outcome exactly without the odds' algorithms; the odds must equal it (within
  the cut tail of an infinite law);
- **roller against odds**: seeded rolls against the exact outcome law, a chi-square test whose
  false-alarm rate is ``alarm`` (one in ten million by default);
- **a perturbed verdict**: the verdict rule made to give the next outcome changes the odds, the
  roll's outcome and its words, so each is seen to come from the rule.

Each returns quietly or raises ``AssertionError`` naming the text and what disagreed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

from ._limits import DEFAULT_LIMITS
from ._rng import Source

__all__ = ["check_enumeration", "check_game", "check_perturbed", "check_sampler",
           "enumerate_outcomes"]


class _Cut(Exception):
    """A path of faces longer than the enumeration follows."""


class _PathSource(Source):
    """Faces from a path of choices, recording the size of each draw (an odometer's wheels)."""

    def __init__(self, path: list[int], depth: int) -> None:
        self.path, self.depth = path, depth
        self.sizes: list[int] = []

    def face(self, size: int, stream: int = 0) -> int:
        i = len(self.sizes)
        if i >= self.depth:
            raise _Cut
        self.sizes.append(size)
        if i == len(self.path):
            self.path.append(1)
        return self.path[i]

    def finish(self) -> None:
        return None


def enumerate_outcomes(game: Any, text: str, options: Mapping[str, Any] | None = None,
                       depth: int = 12, limit: int = 2_000_000) -> tuple[dict[str, Fraction],
                                                                        Fraction]:
    """Every sequence of faces the roll of ``text`` can draw (at most ``depth`` dice), each
    weighed by its chance: the law of the outcomes, and the chance of the paths cut at
    ``depth``."""
    from .systems import resolve_options

    opts = resolve_options(game, options)
    body = text.split(":", 1)[1] if ":" in text else text
    spec = game.parse(body, 0, opts, DEFAULT_LIMITS)
    out: dict[str, Fraction] = {}
    cut = Fraction(0)
    path: list[int] = []
    for _ in range(limit):
        source = _PathSource(path, depth)
        weight = Fraction(1)
        try:
            roll = game.roll(spec, source, opts, DEFAULT_LIMITS, text)
            for s in source.sizes:
                weight /= s
            out[roll.outcome] = out.get(roll.outcome, Fraction(0)) + weight
        except _Cut:
            for s in source.sizes:
                weight /= s
            cut += weight
        sizes = source.sizes
        del path[len(sizes):]
        while path and path[-1] == sizes[len(path) - 1]:
            path.pop()
        if not path:
            return out, cut
        path[-1] += 1
    raise AssertionError(f"{text}: more than {limit} sequences of faces to enumerate")


def _install(game: Any) -> None:
    """``game`` as the system its name finds (a copy loaded from a file may be there already)."""
    from .systems import add_system

    add_system(game)


@contextmanager
def _verdict(game: Any, f: Callable[..., Any]) -> Any:
    old = game._verdict
    game._verdict = f
    try:
        yield
    finally:
        game._verdict = old


def _outcomes(text: str, options: Mapping[str, Any] | None) -> dict[str, float]:
    from . import odds

    return dict(odds(text, options=options).outcomes.items())


def check_enumeration(game: Any, text: str, options: Mapping[str, Any] | None = None,
                      depth: int = 12) -> None:
    from . import odds

    _install(game)
    found, cut = enumerate_outcomes(game, text, options, depth)
    got = odds(text, options=options).outcomes
    for outcome in set(found) | set(got.outcomes()):
        want = found.get(outcome, Fraction(0))
        have = got[outcome]
        if abs(have - want) > cut + Fraction(1, 10**12):
            raise AssertionError(f"{text}: the odds give {outcome!r} {have}, every sequence of "
                                 f"faces gives {float(want)} (paths cut: {float(cut):.2g})")
    if not cut:
        exact = {k: v for k, v in got.exact() if v}  # an outcome ``order`` lists may not occur
        if exact != {k: v for k, v in found.items() if v}:
            raise AssertionError(f"{text}: exact odds {exact} differ from the enumeration {found}")


def check_sampler(text: str, options: Mapping[str, Any] | None = None, rolls: int = 4000,
                  alarm: float = 1e-7, seed: int = 1) -> None:
    """Seeded rolls of ``text`` against its exact outcome law (chi-square, rare outcomes pooled
    so each cell expects at least five)."""
    from scipy.stats import chi2  # type: ignore[import-untyped]  # the test extra's

    from . import roll

    law = _outcomes(text, options)
    counts: dict[str, int] = {}
    for i in range(rolls):
        got = roll(text, seed=seed * 1_000_003 + i, options=options).outcome
        if got not in law:
            raise AssertionError(f"{text}: rolled {got!r}, which the odds never give")
        counts[got] = counts.get(got, 0) + 1
    cells: list[tuple[float, int]] = []
    spare_p, spare_n = 0.0, 0
    for outcome, p in sorted(law.items(), key=lambda kv: kv[1]):
        if p * rolls < 5 or spare_p * rolls < 5 and spare_p:
            spare_p, spare_n = spare_p + p, spare_n + counts.get(outcome, 0)
        else:
            cells.append((p, counts.get(outcome, 0)))
    if spare_p:
        cells.append((spare_p, spare_n))
    if len(cells) < 2:
        return
    stat = sum((n - p * rolls) ** 2 / (p * rolls) for p, n in cells)
    if chi2.sf(stat, len(cells) - 1) < alarm:
        raise AssertionError(f"{text}: {rolls} rolls gave {counts}, far from the odds {law}")


def check_perturbed(game: Any, text: str, options: Mapping[str, Any] | None = None,
                    seeds: int = 200) -> None:
    """The verdict made to give the next outcome (in the odds' order) must change the odds, the
    roll's outcome and the roll's last line of words, for some seed."""
    from . import roll

    _install(game)
    before = _outcomes(text, options)
    order = list(before)
    rolled = [roll(text, seed=s, options=options) for s in range(seeds)]
    real = game._verdict

    def shifted(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        name = getattr(out, "outcome", out)
        if not isinstance(name, str) or name not in order:
            return out
        return order[(order.index(name) + 1) % len(order)]

    shifted.__wrapped__ = real  # type: ignore[attr-defined]
    with _verdict(game, shifted):
        after = _outcomes(text, options)
        again = [roll(text, seed=s, options=options) for s in range(seeds)]
    if len(order) > 1 and after == before:
        raise AssertionError(f"{text}: a perturbed verdict leaves the odds unchanged")
    if len(order) > 1 and all(a.outcome == b.outcome for a, b in zip(rolled, again)):
        raise AssertionError(f"{text}: a perturbed verdict leaves every roll's outcome unchanged")
    if len(order) > 1 and all(a.transcript[-1] == b.transcript[-1]
                              for a, b in zip(rolled, again)):
        raise AssertionError(f"{text}: a perturbed verdict leaves the words unchanged")


def check_game(game: Any, texts: Iterable[str], options: Mapping[str, Any] | None = None,
               depth: int = 12) -> None:
    """Every check above on each of ``texts`` (small cases: enumeration visits every face)."""
    _install(game)
    for text in texts:
        check_enumeration(game, text, options, depth)
        check_sampler(text, options)
        check_perturbed(game, text, options)
