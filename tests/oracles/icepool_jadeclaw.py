"""Independent oracle for the Jadeclaw dice game, built on ``icepool`` 2.1.3.

This module is intentionally self-contained: it shares no code with the
``astragal`` package and is meant to serve as a test oracle and as a
benchmark peer ("what an icepool user would write").

Rules implemented (faces are ``1..size``; pools may mix sizes):

* **Score** of a pool: the highest face rolled.
* **Favored**: after rolling, if any die shows 1, exactly one die showing 1 is
  re-rolled -- one of the largest size among the dice showing 1 -- and its new
  face stands (it may be 1 again).
* **Penalties** ``p``: the pool is rolled ``p + 1`` independent times (each with
  its own Favored re-roll) and the lowest Score counts.
* **Contest**: actor Score ``a`` against opposition Score ``b``; see
  :func:`contest`.
* **Damage**: both pools rolled, sorted high to low and paired by rank; see
  :func:`damage_hits`.

Favored pools are represented exactly as an ``icepool.MultisetMixture`` of
ordinary pools.  Order the dice by size, largest first, and let ``k`` be the
first die in that order that shows 1.  Then dice ``0..k-1`` are conditioned to
show at least 2, die ``k`` is re-rolled (so it is again a fresh die of its
size) and the remaining dice are unconditioned.  If no die shows 1, every die is
conditioned to show at least 2.  Each case is a pool of independent dice, and
the case weights (scaled by the product of the sizes to make them integers)
are ``prod_{i<k}(s_i - 1) * prod_{i>k} s_i`` and ``prod_i (s_i - 1)``.

All computation is exact (integer quantities); probabilities are converted to
``float`` only when the result dictionaries are built.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from fractions import Fraction
from functools import partial
from typing import Final, Literal

import icepool
from icepool import Order

__all__ = [
    "CONTEST_OUTCOMES",
    "contest",
    "damage_hits",
    "damage_hits_die",
    "score_die",
    "simple_score",
]

CONTEST_OUTCOMES: Final[tuple[str, ...]] = (
    "botch",
    "overwhelming_failure",
    "failure",
    "tie",
    "success",
    "overwhelming_success",
)
"""All contest outcome categories, from the actor's point of view."""

_OVERWHELMING_MARGIN: Final[int] = 5
"""Margin (Score difference / face difference) for overwhelming results and 2-hit damage."""

_Mode = Literal["normal", "slaying", "enervated"]


# ---------------------------------------------------------------------------
# Helpers: validation, pools, conversion
# ---------------------------------------------------------------------------


def _validate_sizes(sizes: Sequence[int], what: str) -> list[int]:
    """Return ``sizes`` as a list, checking every entry is an int >= 2."""
    result = list(sizes)
    for size in result:
        if isinstance(size, bool) or not isinstance(size, int) or size < 2:
            raise ValueError(f"{what}: die sizes must be ints >= 2, got {size!r}")
    return result


def _validate_penalties(penalties: int, what: str) -> int:
    """Check that ``penalties`` is a non-negative int."""
    if isinstance(penalties, bool) or not isinstance(penalties, int) or penalties < 0:
        raise ValueError(f"{what}: penalties must be a non-negative int, got {penalties!r}")
    return penalties


def _no_ones_die(size: int) -> icepool.Die[int]:
    """A ``d(size)`` conditioned on not showing 1, i.e. uniform on ``2..size``.

    Every face deliberately gets quantity 2 rather than 1.  The distribution is
    the same, but icepool 2.1.3 then no longer sees this die as a bottom
    truncation of ``d(size)``.  A pool mixing ``2..size`` dice with ``d(size)``
    dice would otherwise prefer the ascending pop order, while a pool of mixed
    standard sizes prefers the descending one.  When the two inputs of a
    two-pool evaluation disagree like that, icepool 2.1.3 merges the
    preferences into ``Order.Any``, hands that to ``next_state`` and the pools
    report wrong (mostly zero) counts -- a silently wrong result for an
    order-agnostic evaluator.  With quantity 2 no pool ever prefers ascending
    pops, so the preferences never conflict.
    """
    return icepool.Die({face: 2 for face in range(2, size + 1)})


def _pool_expression(sizes: Sequence[int], favored: bool) -> icepool.MultisetExpression[int]:
    """The multiset of faces produced by rolling ``sizes`` (with the Favored re-roll if asked).

    Without Favored this is a plain :class:`icepool.Pool`.  With Favored it is an
    exact :class:`icepool.MultisetMixture` of pools of independent dice (see the
    module docstring for the decomposition).
    """
    if not favored:
        return icepool.Pool([icepool.d(size) for size in sizes])

    ordered = sorted(sizes, reverse=True)
    n = len(ordered)
    components: defaultdict[icepool.MultisetExpression[int], int] = defaultdict(int)
    for k in range(n + 1):
        # k < n: die k is the first (largest) die showing 1 and gets re-rolled;
        # k == n: no die shows 1.
        dice = [_no_ones_die(size) for size in ordered[:k]]
        dice += [icepool.d(size) for size in ordered[k:]]
        weight = math.prod(size - 1 for size in ordered[:k]) * math.prod(ordered[k + 1 :])
        components[icepool.Pool(dice)] += weight
    return icepool.MultisetMixture(dict(components))


def _to_float_dict(die: icepool.Die[int]) -> dict[int, float]:
    """Convert a die to ``{outcome: probability}`` (ascending, zero-probability outcomes dropped)."""
    denominator = die.denominator()
    return {
        outcome: float(Fraction(quantity, denominator))
        for outcome, quantity in sorted(die.items())
        if quantity > 0
    }


# ---------------------------------------------------------------------------
# 1. Simple Score
# ---------------------------------------------------------------------------


def score_die(sizes: Sequence[int], penalties: int = 0, favored: bool = False) -> icepool.Die[int]:
    """Exact Score distribution as an ``icepool.Die`` (see :func:`simple_score`)."""
    checked = _validate_sizes(sizes, "score")
    _validate_penalties(penalties, "score")
    if not checked:
        raise ValueError("score: the pool must contain at least one die")
    single_roll = _pool_expression(checked, favored).highest(1).sum()
    if penalties == 0:
        return single_roll
    return single_roll.lowest(penalties + 1)


def simple_score(sizes: list[int], penalties: int = 0, favored: bool = False) -> dict[int, float]:
    """Distribution of the Score of a pool.

    Args:
        sizes: Die sizes of the pool (e.g. ``[12, 8, 8]``); at least one die.
        penalties: Number of penalties ``p``; the pool is rolled ``p + 1``
            independent times and the lowest Score is kept.
        favored: Apply the Favored re-roll to every roll of the pool.

    Returns:
        ``{score: probability}`` for every Score with non-zero probability,
        in ascending order of Score.
    """
    return _to_float_dict(score_die(sizes, penalties, favored))


# ---------------------------------------------------------------------------
# 2. Contest
# ---------------------------------------------------------------------------


def _contest_category(
    a: int,
    b: int,
    *,
    double_botch: str,
    actor_quality: int | None,
    opp_quality: int | None,
) -> str:
    """Outcome category of a single contest with actor Score ``a`` and opposition Score ``b``."""
    if a == 1 and b == 1:
        return "tie" if double_botch == "tie" else "botch"
    if a == 1:
        return "botch"
    margin = a - b
    if margin >= _OVERWHELMING_MARGIN:
        return "overwhelming_success"
    if margin <= -_OVERWHELMING_MARGIN:
        return "overwhelming_failure"
    if margin > 0:
        return "success"
    if margin < 0:
        return "failure"
    if actor_quality is not None and opp_quality is not None and actor_quality != opp_quality:
        return "success" if actor_quality > opp_quality else "failure"
    return "tie"


def contest(
    actor_sizes: list[int],
    opp_sizes: list[int],
    actor_penalties: int = 0,
    opp_penalties: int = 0,
    actor_favored: bool = False,
    opp_favored: bool = False,
    actor_quality: int | None = None,
    opp_quality: int | None = None,
    double_botch: str = "tie",
) -> dict[str, float]:
    """Distribution of contest outcomes from the actor's point of view.

    With ``a`` the actor's Score and ``b`` the opposition's Score:

    * ``a == 1 and b == 1``: ``'tie'`` if ``double_botch == 'tie'`` else ``'botch'``;
    * otherwise ``a == 1``: ``'botch'``;
    * otherwise with ``m = a - b``: ``m >= 5`` overwhelming success,
      ``m <= -5`` overwhelming failure, ``m > 0`` success, ``m < 0`` failure;
    * ``m == 0``: if both qualities are given and differ, the side with the
      greater quality wins (success/failure); otherwise tie.

    Returns:
        A dict with exactly the keys of :data:`CONTEST_OUTCOMES` (zero
        probabilities included).
    """
    actor_score = score_die(actor_sizes, actor_penalties, actor_favored)
    opp_score = score_die(opp_sizes, opp_penalties, opp_favored)
    category = partial(
        _contest_category,
        double_botch=double_botch,
        actor_quality=actor_quality,
        opp_quality=opp_quality,
    )
    outcome_die: icepool.Die[str] = icepool.map(category, actor_score, opp_score)
    denominator = outcome_die.denominator()
    return {
        name: float(Fraction(outcome_die.quantity(name), denominator)) for name in CONTEST_OUTCOMES
    }


# ---------------------------------------------------------------------------
# 3. Damage
# ---------------------------------------------------------------------------


_HIT_PARAMETERS: Final[dict[str, tuple[int, int]]] = {
    "normal": (1, 1),
    "slaying": (2, 0),
    "enervated": (0, 1),
}
"""Per mode: ``(base, bonus)``; a pair with ``d > s`` scores ``base + bonus * (d >= s + 5)``."""

# State of the damage evaluator (a plain tuple, so it is hashable and cheap):
#   hits         -- hits already counted
#   botch_check  -- soak pool size while the Soak Botch is still undecided, else None
#   skip_damage  -- surplus (lowest) damage dice not yet seen; each meets an imaginary soak 1
#   skip_soak    -- surplus (lowest) soak dice not yet seen; they are ignored
#   pending_dmg  -- paired damage dice seen whose soak partner (higher face) is still unseen
#   resolved     -- paired soak dice seen, partner unseen, hits already counted
#                   (they are the lowest waiting soak dice, so they are matched first)
#   waiting      -- faces (ascending) of the other paired soak dice whose partner is unseen
_DamageState = tuple[int, "int | None", int, int, int, int, tuple[int, ...]]


class DamageHitsEvaluator(icepool.MultisetEvaluator[int, int]):  # type: ignore[misc]
    """Counts Jadeclaw damage hits; inputs are ``(damage_pool, soak_pool)``.

    Both multisets are processed together in ascending order of outcome.  Pairing
    by rank from the top is equivalent, when the pool sizes ``D`` and ``S`` are
    known, to first setting aside the lowest ``D - S`` damage dice (surplus,
    compared with an imaginary soak 1) or the lowest ``S - D`` soak dice
    (ignored), and then pairing the remaining dice of both pools in ascending
    order.  A damage die whose partner is not seen yet scores nothing (the
    partner is higher).  A soak die whose partner is not seen yet will meet a
    strictly higher damage face, so its hits only depend on whether that face
    is at least ``s + 5``; once ``s <= outcome - 4`` (or always, when the bonus
    is irrelevant, as under Slaying) the hits are counted immediately.  Only
    the few faces still undecided are kept in the state, which keeps the state
    space small.
    """

    def __init__(self, mode: _Mode = "normal") -> None:
        """Create an evaluator for the given damage mode (normal/slaying/enervated)."""
        if mode not in _HIT_PARAMETERS:
            raise ValueError(f"unknown damage mode {mode!r}")
        self._mode: _Mode = mode
        self._base, self._bonus = _HIT_PARAMETERS[mode]

    @property
    def next_state_key(self) -> Hashable:
        """Identifies ``next_state`` so icepool can cache intermediate results."""
        return (type(self), self._mode)

    def initial_state(
        self, order: Order, outcomes: Sequence[int], damage_size: int, soak_size: int
    ) -> _DamageState:
        """Set up surplus counts from the pool sizes; only ascending order is supported."""
        if order != Order.Ascending:
            # Order.Any is also refused: in icepool 2.1.3 it comes from conflicting
            # pool preferences and the counts it yields are not reliable.
            raise icepool.UnsupportedOrder(
                f"DamageHitsEvaluator needs ascending order, got {order!r}"
            )
        botch_check = soak_size if (soak_size > 0 and damage_size > 0) else None
        return (
            0,
            botch_check,
            max(damage_size - soak_size, 0),
            max(soak_size - damage_size, 0),
            0,
            0,
            (),
        )

    def next_state(
        self, state: _DamageState, order: Order, outcome: int, damage: int, soak: int
    ) -> _DamageState:
        """Consume all damage and soak dice showing ``outcome``."""
        hits, botch_check, skip_damage, skip_soak, pending_dmg, resolved, waiting = state
        base = self._base
        bonus = self._bonus

        # Soak Botch: decided at the lowest outcome (1 if any die can show 1).
        if botch_check is not None:
            if outcome == 1 and soak == botch_check:
                hits += 1
            botch_check = None

        # Surplus damage dice (the lowest ones) meet an imaginary soak 1.
        if skip_damage and damage:
            n = min(skip_damage, damage)
            if outcome > 1:
                hits += n * (base + bonus * (outcome >= 1 + _OVERWHELMING_MARGIN))
            damage -= n
            skip_damage -= n
        # Surplus soak dice (the lowest ones) are ignored.
        if skip_soak and soak:
            n = min(skip_soak, soak)
            soak -= n
            skip_soak -= n

        # New soak dice partner earlier (lower) damage dice: no hits.
        if pending_dmg and soak:
            n = min(pending_dmg, soak)
            soak -= n
            pending_dmg -= n
        # New damage dice partner earlier (lower) soak dice, lowest first.
        if damage and resolved:
            n = min(resolved, damage)
            damage -= n
            resolved -= n
        if damage and waiting:
            n = min(len(waiting), damage)
            for soak_face in waiting[:n]:
                hits += base + bonus * (outcome >= soak_face + _OVERWHELMING_MARGIN)
            waiting = waiting[n:]
            damage -= n
        # Equal faces pair with each other (no hits); leftovers wait for
        # partners with higher faces.
        if damage > soak:
            pending_dmg += damage - soak
        elif soak > damage:
            waiting += (outcome,) * (soak - damage)

        # Count waiting soak dice whose hits no longer depend on the partner,
        # whose face will be at least outcome + 1.
        if waiting:
            if not bonus:
                hits += base * len(waiting)
                resolved += len(waiting)
                waiting = ()
            else:
                n = 0
                for soak_face in waiting:
                    if soak_face + _OVERWHELMING_MARGIN > outcome + 1:
                        break
                    n += 1
                if n:
                    hits += n * (base + bonus)
                    resolved += n
                    waiting = waiting[n:]

        return (hits, botch_check, skip_damage, skip_soak, pending_dmg, resolved, waiting)

    def final_outcome(
        self, final_state: _DamageState, order: Order, outcomes: tuple[int, ...], *sizes: int
    ) -> int:
        """Total hits (all dice have been paired by now)."""
        hits, _botch, skip_damage, skip_soak, pending_dmg, resolved, waiting = final_state
        if skip_damage or skip_soak or pending_dmg or resolved or waiting:
            raise AssertionError(f"unpaired dice left in final state {final_state!r}")
        return hits


def _damage_mode(slaying: bool, enervated: bool) -> _Mode:
    """Slaying and Enervated cancel each other out."""
    if slaying and not enervated:
        return "slaying"
    if enervated and not slaying:
        return "enervated"
    return "normal"


def damage_hits_die(
    damage_sizes: Sequence[int],
    soak_sizes: Sequence[int],
    slaying: bool = False,
    enervated: bool = False,
    damage_favored: bool = False,
    soak_favored: bool = False,
) -> icepool.Die[int]:
    """Exact hits distribution as an ``icepool.Die`` (see :func:`damage_hits`).

    A fresh evaluator is used on every call, so no cache is carried between
    calls (timings are not flattered by earlier calls).
    """
    damage_checked = _validate_sizes(damage_sizes, "damage")
    soak_checked = _validate_sizes(soak_sizes, "soak")
    if not damage_checked:
        return icepool.Die([0])
    evaluator = DamageHitsEvaluator(_damage_mode(slaying, enervated))
    try:
        result = evaluator.evaluate(
            _pool_expression(damage_checked, damage_favored),
            _pool_expression(soak_checked, soak_favored),
        )
    except icepool.ConflictingOrderError as exc:  # pragma: no cover - guarded by _no_ones_die
        raise NotImplementedError(
            "icepool could not evaluate these pools in ascending order "
            f"(damage={damage_checked}, soak={soak_checked}, "
            f"favored={damage_favored}/{soak_favored}); see _no_ones_die"
        ) from exc
    if not isinstance(result, icepool.Die):  # pragma: no cover - only inside @multiset_function
        raise TypeError("unexpected evaluation result")
    return result


def damage_hits(
    damage_sizes: list[int],
    soak_sizes: list[int],
    slaying: bool = False,
    enervated: bool = False,
    damage_favored: bool = False,
    soak_favored: bool = False,
) -> dict[int, float]:
    """Distribution of damage hits.

    Both pools are rolled (each with the Favored re-roll if requested), sorted
    high to low and paired by rank.  Per pair with damage face ``d`` and soak
    face ``s``:

    * normal: ``d >= s + 5`` scores 2, else ``d > s`` scores 1, else 0;
    * Slaying: ``d > s`` scores 2, else 0;
    * Enervated: ``d >= s + 5`` scores 1, else 0;
    * Slaying and Enervated together cancel (normal).

    Surplus soak dice are ignored; surplus damage dice are compared (with the
    same rule) to an imaginary soak of 1.  A damage die showing 1 never scores.
    Soak Botch: with at least one damage die and at least one soak die, if every
    soak die shows 1 there is one extra hit.  With no damage dice the result is
    0 hits with certainty.

    Returns:
        ``{hits: probability}`` for every hit count with non-zero probability,
        in ascending order.
    """
    return _to_float_dict(
        damage_hits_die(damage_sizes, soak_sizes, slaying, enervated, damage_favored, soak_favored)
    )
