"""Statistical check of a roller against its own exact distribution.

A chi-square goodness-of-fit test with a false-alarm rate of ``ALPHA`` = 1e-7 (below one in a
million, as the project requires). Outcomes whose expected count is under 5 are pooled into one bin,
so the chi-square approximation holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping

from scipy.stats import chi2

ALPHA = 1e-7


def chi_square_pvalue(samples: Iterable[Hashable], exact: Mapping[Hashable, float]) -> float:
    """The p-value of the samples under the exact distribution (pooling rare outcomes)."""
    counts = Counter(samples)
    n = sum(counts.values())
    unknown = set(counts) - {k for k, p in exact.items() if p > 0}
    if unknown:
        return 0.0  # a sample the exact law says is impossible
    bins: list[tuple[float, int]] = []
    rare_e, rare_o = 0.0, 0
    for k, p in exact.items():
        e = n * p
        if e < 5:
            rare_e += e
            rare_o += counts.get(k, 0)
        else:
            bins.append((e, counts.get(k, 0)))
    if rare_e > 0:
        bins.append((rare_e, rare_o))
    if len(bins) < 2:
        return 1.0
    stat = sum((o - e) ** 2 / e for e, o in bins)
    return float(chi2.sf(stat, len(bins) - 1))


def assert_matches(samples: Iterable[Hashable], exact: Mapping[Hashable, float]) -> None:
    """Fail if the samples reject the exact distribution at the 1e-7 level."""
    samples = list(samples)
    p = chi_square_pvalue(samples, exact)
    assert p > ALPHA, f"roller disagrees with its exact odds: p = {p:.3g} over {len(samples)} rolls"
