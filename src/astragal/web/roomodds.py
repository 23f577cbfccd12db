"""The table's exact odds and luck, apart from HTTP: the ``Table`` methods that compute a roll's odds
in the odds workers (metered per address, refusals cached) and the Luck panel, and the page an
odds worker makes (``odds_page``).
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

import astragal
from astragal import Distribution, InputError, LimitError, Limits
from astragal.render import fold_ends, odds_text, outcome_words

from .basics import Member, RateLimit, RollError, TableError
from .caps import Budget, Caps
from .luck import WINDOW, Busy, LuckBook
from .oddspool import OddsPool, short_error
from .sheet import Expansion
from .store import Store
from .tabletools import outcome_kind

log = logging.getLogger("astragal.web")

__all__ = ["MAX_ODDS_VALUES", "REFUSED_SHAPE_SECONDS", "TableOdds", "engine_error", "odds_page"]

MAX_ODDS_VALUES = 2000


class TableOdds:
    """The ``Table``'s odds and luck, as a mixin: the attributes and methods named below are the
    ``Table``'s own (set in its ``__init__``), declared here for the type checker."""

    store: Store
    caps: Caps
    limits: Limits
    pool: OddsPool
    odds_limit: RateLimit
    odds_cpu: Budget
    luckbook: LuckBook
    _odds_cache: dict[tuple[str, str | None], dict[str, Any]]
    _refused: dict[tuple[str, str | None], dict[str, Any]]
    _refused_shapes: dict[tuple[str, str | None], tuple[str, float]]
    _odds_lock: threading.Lock
    _odds_running: set[str]

    if TYPE_CHECKING:
        def expand(self, member: Member | None, text: object,
                   system: str | None) -> Expansion: ...

        @staticmethod
        def visible(entry: Mapping[str, Any], viewer: Member) -> dict[str, Any] | None: ...

    # -- odds and luck -----------------------------------------------------------------------

    def odds(self, text: object, system: str | None, member: Member | None = None,
             who: str = "") -> dict[str, Any]:
        """Exact odds of ``text`` (expanded with the member's sheet): JSON and the CLI's text.

        Metered by CPU time per address (``caps.odds_cpu_per_address``), one computation at a
        time per address, each in a worker process cut at ``caps.odds_seconds``. Refusals are
        cached: by the text, and computations that were cut (or ran out of memory) by the shape
        of their canonical form, every number replaced by its size in bits, for
        ``REFUSED_SHAPE_SECONDS``: ``d60000ro<59999`` and ``d60001ro<59998`` are one shape,
        refused at once after the first was cut; numbers that double or halve are a new shape,
        which costs one more cut (and the address's budget).
        """
        self.odds_limit.check(member.id if member is not None else f"ip:{who}", "odds requests")
        address = f"ip:{who}"
        exp = self.expand(member, text, system)
        cache_key = (exp.text, system)
        with self._odds_lock:
            hit = self._odds_cache.get(cache_key)
            refused = self._refused.get(cache_key)
        if refused is not None:
            raise TableError(500 if refused["error"] == "EngineError" else 422, refused["error"],
                             refused["message"],
                             **{k: v for k, v in refused.items() if k not in ("error", "message")})
        if hit is not None:
            return {"text": exp.typed, **hit}
        if (wait := self.odds_cpu.wait(address)) > 0:
            raise TableError(429, "RateLimited", f"this address has used its share of the "
                             f"server's time for odds (at most {self.odds_cpu.rate:g} CPU-seconds "
                             f"per second, bursts of {self.odds_cpu.burst:g}); try again in "
                             f"{wait:.1f} s", retry_after=round(wait, 2))
        with self._odds_lock:
            if address in self._odds_running:
                raise TableError(429, "RateLimited", "odds from this address are already being "
                                 "computed: one at a time", retry_after=1)
            self._odds_running.add(address)
        try:
            return {"text": exp.typed, **self._compute_odds(exp, system, address)}
        finally:
            with self._odds_lock:
                self._odds_running.discard(address)

    def _compute_odds(self, exp: Expansion, system: str | None, *payers: str) -> dict[str, Any]:
        """The odds of ``exp``, their CPU time charged to each of ``payers`` (an address; for
        the Luck panel its room too)."""
        start = time.thread_time()
        try:
            try:
                canon = str(astragal.parse(exp.text, limits=self.limits, default_system=system))
            except InputError as exc:
                self._refuse((exp.text, system), RollError(exc, exp))
            except Exception as exc:  # noqa: BLE001 - a bug in a game's parser
                raise engine_error("odds", exp.text, exc) from None
        finally:
            for payer in payers:
                self.odds_cpu.charge(payer, time.thread_time() - start)
        shape = (_SHAPE_NUMBER.sub(lambda m: f"#{int(m.group()).bit_length()}", canon), system)
        with self._odds_lock:
            said, when = self._refused_shapes.get(shape, ("", 0.0))
        if said and time.monotonic() - when < REFUSED_SHAPE_SECONDS:
            self._refuse((exp.text, system), RollError(LimitError(
                f"{said} (a roll of the same shape was refused: its numbers are within a factor "
                "of two of this one's)", exp.text, (0, len(exp.text))), exp))
        outcome = self.pool.run(exp.text, system, self.limits)  # may be killed at its cut
        if outcome is None:
            raise TableError(503, "Busy", "the server is computing other odds: try again in a "
                             "moment", retry_after=2)
        for payer in payers:
            self.odds_cpu.charge(payer, outcome.cpu)
        if outcome.kind in ("overrun", "memory"):
            what = (f"took over {self.pool.seconds:g} s, the most the web table spends on one "
                    "roll's odds" if outcome.kind == "overrun" else
                    f"needed over {self.pool.memory / 2**30:g} GiB of memory, the most the web "
                    "table gives one roll's odds")
            message = f"the exact odds of this roll {what}"
            log.warning("odds cut off (%s): %r", outcome.kind, exp.text[:100])
            with self._odds_lock:
                if len(self._refused_shapes) > 4096:
                    self._refused_shapes.clear()
                self._refused_shapes[shape] = (message, time.monotonic())
            # Not cached by its text: the shape holds it, and forgets it after a while (a cut
            # on a machine busy with other work should not refuse a roll for ever).
            raise RollError(LimitError(message + " (the command line has no such cut)",
                                       exp.text, (0, len(exp.text))), exp)
        if outcome.kind == "input":
            kind, message, text, span = outcome.value
            error = LimitError(message, text, tuple(span) if span else None) \
                if kind == "LimitError" else InputError(message, text, tuple(span) if span else None)
            refusal = RollError(error, exp)
            refusal.kind = kind
            self._refuse((exp.text, system), refusal)
        if outcome.kind == "crash":
            log.error("engine error in odds of %r: %s", exp.text[:100], outcome.value)
            self._refuse((exp.text, system), TableError(500, "EngineError", _ENGINE_MESSAGE))
        hit: dict[str, Any] = outcome.value
        with self._odds_lock:
            if len(self._odds_cache) > 512:
                self._odds_cache.clear()
            self._odds_cache[(exp.text, system)] = hit
        return hit

    def luck(self, viewer: Member, who: str = "") -> dict[str, Any]:
        """The Luck panel of ``viewer``'s room: each roll they may see placed in its own exact
        odds (the last ``luck.WINDOW`` entries), and each member's and session's luck. Odds are
        computed in the odds workers, one at a time per address (``who``), and charged both to
        the room's own share of the server's time and to the address's (one address with many
        rooms gets no more than one room's share)."""
        self.odds_limit.check(viewer.id, "luck reports")
        room_id = viewer.room
        payers = (f"luck:{room_id}", f"ip:{who}")

        def odds_of(notation: str, system: str) -> Mapping[str, Any]:
            key = (notation, system)
            with self._odds_lock:
                hit, refused = self._odds_cache.get(key), self._refused.get(key)
            if refused is not None:
                raise TableError(422, refused["error"], refused["message"])
            if hit is not None:
                return hit
            if any(self.odds_cpu.wait(payer) > 0 for payer in payers):
                raise Busy
            with self._odds_lock:
                if payers[1] in self._odds_running:
                    raise Busy  # this address's odds are being computed (another room's)
                self._odds_running.add(payers[1])
            try:
                return self._compute_odds(Expansion(notation, notation), system, *payers)
            except TableError as exc:
                if exc.status in (429, 503):
                    raise Busy from None
                raise
            finally:
                with self._odds_lock:
                    self._odds_running.discard(payers[1])

        last = self.store.head(room_id)[0]
        seed = int.from_bytes(hashlib.sha256(room_id.encode()).digest()[:4], "big")
        return self.luckbook.report(self._visible_from(viewer, max(0, last - WINDOW), last),
                                    odds_of, seed)

    def _visible_from(self, viewer: Member, after: int, last: int) -> Iterator[dict[str, Any]]:
        """The entries after ``after`` up to ``last`` that ``viewer`` may see, a page at a time."""
        page = max(1, self.caps.export_page)
        while after < last:
            rows, more = self.store.page(viewer.room, after, min(page * 8, last - after),
                                         self.caps.page_bytes)
            for e in rows:
                if (v := self.visible(e, viewer)) is not None:
                    yield v
            if not more:
                return
            after = rows[-1]["id"]

    def _refuse(self, key: tuple[str, str | None], error: TableError) -> NoReturn:
        """Cache the refusal of ``key`` and raise it."""
        with self._odds_lock:
            if len(self._refused) > 4096:
                self._refused.clear()
            self._refused[key] = error.to_json()
        raise error


_SHAPE_NUMBER = re.compile(r"\d+")
REFUSED_SHAPE_SECONDS = 600.0  # how long a cut-off computation's shape is refused at once
_ENGINE_MESSAGE = ("astragal failed on this roll (a bug in the game's rules code, now in the "
                   "server's log); nothing was stored")


def engine_error(what: str, text: str, exc: BaseException) -> TableError:
    """A bug in a game's code met by a request: one line in the log, a 500 for the player."""
    log.error("engine error in %s of %r: %s", what, text[:100], short_error(exc))
    return TableError(500, "EngineError", _ENGINE_MESSAGE)


def odds_page(text: str, system: str | None, limits: Limits) -> dict[str, Any]:
    """The web table's answer for the odds of ``text``: what an odds worker computes.

    Raises ``InputError`` (``LimitError`` for more than ``MAX_ODDS_VALUES`` values).
    """
    result = astragal.odds(text, limits=limits, default_system=system)
    dist = result.distribution
    if len(dist) > MAX_ODDS_VALUES:
        # A page of 10 000 rows helps nobody, and its JSON and text cost seconds each.
        raise LimitError(f"the odds of this roll have {len(dist)} possible values; the web table "
                         f"shows at most {MAX_ODDS_VALUES} (the command line has no such limit)",
                         text, (0, len(text)))
    rows = _value_rows(dist)
    return {"notation": text, "system": result.system, "value_name": result.value_name,
            "odds": result.to_json(), "odds_text": odds_text(result),
            # For the page, in order (a JSON object's numeric keys lose it in JavaScript):
            # [key, words, P], and [value, P(=), P(>=), P(<=)].
            "outcome_rows": [[str(k), outcome_words(str(k)), p]
                             for k, p in result.outcomes.items()],
            "tones": {str(k): outcome_kind(str(k), result.system) for k in result.outcomes},
            "value_rows": rows,
            # the rows worth drawing: a long law's far tails folded, as ``odds_text`` folds them
            "shown": list(fold_ends([row[1] for row in rows]))}


def _value_rows(dist: Distribution) -> list[list[Any]]:
    """``[value, P(=), P(>=), P(<=)]`` per value, in the engine's order, in linear time.

    ``Distribution.at_least`` sums afresh for each value (quadratic: 51 s for a d10000). Here
    the probabilities are made exact integers over one power of two, summed once in order of
    value, and each tail divided back: Python rounds an integer division correctly, as ``fsum``
    rounds its exact sum, so every number equals ``at_least``/``at_most`` to the last bit.
    """
    items = dist.items()
    if not all(isinstance(k, (int, float)) and not isinstance(k, bool) for k, _ in items):
        return [[str(k), p, dist.at_least(k), dist.at_most(k)] for k, p in items]
    ratios = [p.as_integer_ratio() for _, p in items]
    scale = max((d for _, d in ratios), default=1)
    exact = [n * (scale // d) for n, d in ratios]
    order = sorted(range(len(items)), key=lambda i: items[i][0])
    total = sum(exact)
    at_most: dict[int, int] = {}
    below = 0
    for i in order:
        below += exact[i]
        at_most[i] = below
    return [[str(k), p, (total - at_most[i] + exact[i]) / scale, at_most[i] / scale]
            for i, (k, p) in enumerate(items)]
