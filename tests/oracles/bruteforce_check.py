"""Brute-force cross-check of the icepool Jadeclaw oracle (a script, not a pytest file).

Every face combination of small pools (at most 3 dice per side) is enumerated
with ``itertools.product``; the Favored re-roll is enumerated explicitly as
well.  Exact ``Fraction`` results are compared with
``tests/oracles/icepool_jadeclaw.py`` to an absolute tolerance of 1e-12.

Usage (from the repository root)::

    /tmp/icev/bin/python tests/oracles/bruteforce_check.py [--quick] [--seed N]
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import icepool_jadeclaw as oracle

SIZES = (4, 6, 8, 10, 12)
TOLERANCE = 1e-12

Roll = tuple[int, ...]
K = TypeVar("K")


# ---------------------------------------------------------------------------
# Brute-force reference implementation, written directly from the rules
# ---------------------------------------------------------------------------


def rolls(sizes: Sequence[int], favored: bool) -> dict[Roll, Fraction]:
    """Probability of every ordered face tuple (index i = die i) after the Favored re-roll."""
    result: dict[Roll, Fraction] = defaultdict(Fraction)
    base = Fraction(1, max(1, _prod(sizes)))
    for faces in itertools.product(*(range(1, s + 1) for s in sizes)):
        ones = [i for i, f in enumerate(faces) if f == 1]
        if favored and ones:
            target = max(ones, key=lambda i: sizes[i])  # any largest die showing 1
            for new_face in range(1, sizes[target] + 1):
                rerolled = faces[:target] + (new_face,) + faces[target + 1 :]
                result[rerolled] += base / sizes[target]
        else:
            result[faces] += base
    return result


def _prod(values: Iterable[int]) -> int:
    """Product of ints (1 for none)."""
    out = 1
    for v in values:
        out *= v
    return out


def sorted_rolls(sizes: Sequence[int], favored: bool) -> dict[Roll, Fraction]:
    """Distribution of the face multiset, sorted high to low."""
    result: dict[Roll, Fraction] = defaultdict(Fraction)
    for faces, p in rolls(sizes, favored).items():
        result[tuple(sorted(faces, reverse=True))] += p
    return result


def brute_score(sizes: Sequence[int], penalties: int, favored: bool) -> dict[int, Fraction]:
    """Score distribution: max of each roll, then min over ``penalties + 1`` iid rolls."""
    one: dict[int, Fraction] = defaultdict(Fraction)
    for faces, p in rolls(sizes, favored).items():
        one[max(faces)] += p
    result: dict[int, Fraction] = defaultdict(Fraction)
    for combo in itertools.product(one.items(), repeat=penalties + 1):
        p = Fraction(1)
        for _, q in combo:
            p *= q
        result[min(score for score, _ in combo)] += p
    return result


def brute_category(a: int, b: int, double_botch: str, aq: int | None, oq: int | None) -> str:
    """Contest category for actor Score ``a`` and opposition Score ``b``."""
    if a == 1 and b == 1:
        return "tie" if double_botch == "tie" else "botch"
    if a == 1:
        return "botch"
    m = a - b
    if m >= 5:
        return "overwhelming_success"
    if m <= -5:
        return "overwhelming_failure"
    if m > 0:
        return "success"
    if m < 0:
        return "failure"
    if aq is not None and oq is not None and aq != oq:
        return "success" if aq > oq else "failure"
    return "tie"


def brute_contest(
    actor: Sequence[int],
    opp: Sequence[int],
    ap: int,
    op: int,
    af: bool,
    of: bool,
    aq: int | None,
    oq: int | None,
    double_botch: str,
) -> dict[str, Fraction]:
    """Contest outcome distribution by joint enumeration of both pools."""
    result: dict[str, Fraction] = {k: Fraction(0) for k in oracle.CONTEST_OUTCOMES}
    # Enumerate joint face combinations of both pools (penalty rolls via score distributions).
    if ap == 0 and op == 0:
        ra = rolls(actor, af)
        rb = rolls(opp, of)
        for fa, pa in ra.items():
            for fb, pb in rb.items():
                result[brute_category(max(fa), max(fb), double_botch, aq, oq)] += pa * pb
    else:
        sa = brute_score(actor, ap, af)
        sb = brute_score(opp, op, of)
        for a, pa in sa.items():
            for b, pb in sb.items():
                result[brute_category(a, b, double_botch, aq, oq)] += pa * pb
    return result


def brute_pair_hits(d: int, s: int, slaying: bool, enervated: bool) -> int:
    """Hits of one damage face ``d`` against one soak face ``s``."""
    if d == 1:
        return 0
    if slaying and enervated:
        slaying = enervated = False
    if slaying:
        return 2 if d > s else 0
    if enervated:
        return 1 if d >= s + 5 else 0
    if d >= s + 5:
        return 2
    return 1 if d > s else 0


def brute_damage(
    dmg: Sequence[int], soak: Sequence[int], slaying: bool, enervated: bool, df: bool, sf: bool
) -> dict[int, Fraction]:
    """Hits distribution: enumerate both pools, sort high to low, pair by rank."""
    if not dmg:
        return {0: Fraction(1)}
    result: dict[int, Fraction] = defaultdict(Fraction)
    rd = sorted_rolls(dmg, df)
    rs = sorted_rolls(soak, sf) if soak else {(): Fraction(1)}
    for fd, pd in rd.items():
        for fs, ps in rs.items():
            hits = 0
            for i, d in enumerate(fd):
                s = fs[i] if i < len(fs) else 1
                hits += brute_pair_hits(d, s, slaying, enervated)
            if fs and all(s == 1 for s in fs):
                hits += 1
            result[hits] += pd * ps
    return result


# ---------------------------------------------------------------------------
# Comparison driver
# ---------------------------------------------------------------------------


class Tally:
    """Comparison results for one function."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cases = 0
        self.failures: list[str] = []
        self.max_err = 0.0
        self.seconds = 0.0

    def compare(
        self, label: str, expected: Mapping[K, Fraction], actual: Mapping[K, float]
    ) -> None:
        """Record one case; the error is the largest absolute difference (or |total - 1|)."""
        self.cases += 1
        total = sum(float(v) for v in actual.values())
        keys = set(expected) | set(actual)
        err = max(
            (abs(float(expected.get(k, Fraction(0))) - actual.get(k, 0.0)) for k in keys),
            default=0.0,
        )
        err = max(err, abs(total - 1.0))
        self.max_err = max(self.max_err, err)
        if err > TOLERANCE:
            self.failures.append(
                f"{label}: err={err:.3e}\n  expected={dict(expected)}\n  actual={dict(actual)}"
            )

    def summary(self) -> str:
        """One summary line."""
        status = "OK" if not self.failures else f"{len(self.failures)} FAILED"
        return (
            f"{self.name:<13} cases={self.cases:>6}  max_abs_err={self.max_err:.2e}  "
            f"time={self.seconds:7.1f}s  {status}"
        )


def multisets(max_dice: int, min_dice: int = 0) -> list[tuple[int, ...]]:
    """All size multisets with ``min_dice..max_dice`` dice."""
    out: list[tuple[int, ...]] = []
    for n in range(min_dice, max_dice + 1):
        out.extend(itertools.combinations_with_replacement(SIZES, n))
    return out


def timed(tally: Tally, fn: Callable[[], None]) -> None:
    """Run ``fn`` and add its wall time to ``tally``."""
    t0 = time.perf_counter()
    fn()
    tally.seconds += time.perf_counter() - t0


def check_score(tally: Tally) -> None:
    """Every pool of 1-3 dice, Favored on/off, 0-2 penalties."""
    for sizes in multisets(3, 1):
        for favored in (False, True):
            for penalties in (0, 1, 2):
                # Shuffle the order to make sure input order does not matter.
                shuffled = list(sizes)[::-1]
                tally.compare(
                    f"score{shuffled} p={penalties} fav={favored}",
                    brute_score(shuffled, penalties, favored),
                    oracle.simple_score(shuffled, penalties, favored),
                )


def check_contest(tally: Tally, rng: random.Random, quick: bool) -> None:
    """All pool pairs of <= 2 dice per side, plus a random sample with 3 dice."""
    pools = multisets(2 if quick else 3, 1)
    pairs = [(a, b) for a in pools for b in pools]
    # Exhaustive over flag combinations for pools of <= 2 dice; random for the rest.
    small = [(a, b) for a, b in pairs if len(a) <= 2 and len(b) <= 2]
    large = [(a, b) for a, b in pairs if not (len(a) <= 2 and len(b) <= 2)]
    chosen = small if quick else small + rng.sample(large, min(len(large), 300))
    qualities = [(None, None), (2, 1), (1, 2), (3, 3), (1, None)]
    for a, b in chosen:
        for af, of in itertools.product((False, True), repeat=2):
            for ap, op in ((0, 0), (1, 0), (0, 2)) if len(a) + len(b) <= 3 else ((0, 0), (1, 1)):
                aq, oq = rng.choice(qualities)
                for double_botch in ("tie", "botch"):
                    tally.compare(
                        f"contest{list(a)} vs {list(b)} p={ap},{op} fav={af},{of} q={aq},{oq} db={double_botch}",
                        brute_contest(a, b, ap, op, af, of, aq, oq, double_botch),
                        oracle.contest(list(a), list(b), ap, op, af, of, aq, oq, double_botch),
                    )


def check_damage(tally: Tally, rng: random.Random, quick: bool) -> None:
    """Every flag combination for small pairs, random flags for larger ones."""
    dmg_pools = multisets(3, 0)
    soak_pools = multisets(3, 0)
    flag_sets = list(itertools.product((False, True), repeat=4))  # slaying, enervated, df, sf
    pairs = [(d, s) for d in dmg_pools for s in soak_pools]
    small = [(d, s) for d, s in pairs if len(d) + len(s) <= (3 if quick else 4)]
    large = [(d, s) for d, s in pairs if len(d) + len(s) > (3 if quick else 4)]
    cases: list[tuple[tuple[int, ...], tuple[int, ...], tuple[bool, ...]]] = []
    for d, s in small:  # every flag combination
        cases.extend((d, s, flags) for flags in flag_sets)
    n_large = 60 if quick else 700
    for d, s in rng.sample(large, min(len(large), n_large)):
        cases.extend((d, s, flags) for flags in rng.sample(flag_sets, 3))
    # Always include the full 3-vs-3 d12 case and a few hand-picked ones, all flags.
    for d, s in (
        ((12, 12, 12), (12, 12, 12)),
        ((12, 12, 8), (10, 6)),
        ((4, 4), (12, 12, 12)),
        ((12, 10, 10), (4,)),
        ((6, 6, 6), ()),
    ):
        cases.extend((d, s, flags) for flags in flag_sets)
    for d, s, (sl, en, df, sf) in cases:
        dl, sl_ = list(d)[::-1], list(s)  # mixed input orders
        tally.compare(
            f"damage{dl} vs {sl_} slaying={sl} enervated={en} fav={df},{sf}",
            brute_damage(dl, sl_, sl, en, df, sf),
            oracle.damage_hits(dl, sl_, sl, en, df, sf),
        )


def main() -> int:
    """Run all checks and print a summary; exit status 1 on any disagreement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer cases")
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    tallies = [Tally("simple_score"), Tally("contest"), Tally("damage_hits")]
    timed(tallies[0], lambda: check_score(tallies[0]))
    timed(tallies[1], lambda: check_contest(tallies[1], rng, args.quick))
    timed(tallies[2], lambda: check_damage(tallies[2], rng, args.quick))

    for tally in tallies:
        print(tally.summary())
    failures = [f for t in tallies for f in t.failures]
    for failure in failures[:20]:
        print("FAIL", failure)
    print("ALL AGREE" if not failures else f"{len(failures)} DISAGREEMENTS")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
