"""The room's Luck panel: where each roll fell in its own exact odds, and each member's and each
session's luck (``astragal.luck``), as ``astragal luck export.json`` reports it.

A roll's odds are computed like any odds the table gives: in an odds worker, cut at the table's
time and memory, cached by text, and charged to the room's own share of the server's time for
odds (so one room's panel cannot starve another's). A roll whose odds are refused or cut shows
why instead of a percentile; when the room's share is used up, the rest wait for the next look
(``pending``). Each roll's luck is computed once and remembered (an entry never changes). The
panel covers the room's last ``WINDOW`` rolls, as the viewer may see them: a hidden roll has no
luck until it is revealed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..luck import Luck, place, report, verdict
from ..luck_report import rolls_of

__all__ = ["WINDOW", "Busy", "LuckBook"]

WINDOW = 5000        # the last entries of a room the panel reads
REMEMBERED = 200_000  # entries whose luck is remembered (then forgotten all at once)


def _law(page: Mapping[str, Any]) -> dict[Any, float]:
    """The value's law from an odds page (its JSON keys back to numbers)."""
    out: dict[Any, float] = {}
    for key, p in page["odds"]["distribution"].items():
        try:
            number: Any = int(key)
        except ValueError:
            try:
                number = float(key)
            except ValueError:
                continue
        out[number] = p
    return out


class Busy(Exception):
    """The room's share of the server's time for odds is used up: try later."""


OddsOf = Callable[[str, str], Mapping[str, Any]]


class LuckBook:
    """Each roll's luck, computed once. ``odds_of(notation, system)`` gives an odds page or
    raises (a refusal: its message is shown; ``Busy``: computed on a later look)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def entry(self, entry: Mapping[str, Any], odds_of: OddsOf) -> dict[str, Any] | None:
        """The luck of one visible roll entry: ``{"percentile", "worse", "same", "value"}``,
        ``{"none": why}``; None while it waits (Busy)."""
        key = (str(entry.get("room")), int(entry["id"]))
        with self._lock:
            known = self._known.get(key)
        if known is not None:
            return known
        found = self._compute(entry, odds_of)
        if found is None:
            return None
        with self._lock:
            if len(self._known) >= REMEMBERED:
                self._known.clear()
            self._known[key] = found
        return found

    @staticmethod
    def _compute(entry: Mapping[str, Any], odds_of: OddsOf) -> dict[str, Any] | None:
        roll, notation, system = entry.get("roll"), entry.get("notation"), entry.get("system")
        if not (isinstance(roll, dict) and isinstance(roll.get("result"), dict)
                and isinstance(notation, str) and isinstance(system, str)):
            return {"none": "this entry has no roll to place"}
        try:
            page = odds_of(notation, system)
        except Busy:
            return None
        except Exception as exc:  # noqa: BLE001 - a refusal (its message is the answer)
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            return {"none": f"luck not computed: {message}"}
        placed = place(roll["result"], str(page.get("value_name", "")), _law(page))
        if placed is None:
            return {"none": "this roll has no ordered result to place"}
        return placed.to_json()

    def report(self, entries: Iterable[Mapping[str, Any]], odds_of: OddsOf,
               seed: int) -> dict[str, Any]:
        """Each visible roll's luck, and the luck of each member, each session (seed epoch) and
        the whole panel: rolls, mean percentile, histogram, Anderson–Darling p-value."""
        by_member: dict[str, list[Luck]] = {}
        by_epoch: dict[str, list[Luck]] = {}
        lucks: dict[str, dict[str, Any]] = {}
        pending = 0
        for e in rolls_of(entries):
            found = self.entry(e, odds_of)
            if found is None:
                pending += 1
                continue
            lucks[str(e["id"])] = found
            if "none" in found:
                continue
            placed = Luck(found["value"], found["worse"], found["same"])
            by_member.setdefault(str(e.get("who", "?")), []).append(placed)
            fair = e.get("fair")
            epoch = str(fair.get("epoch")) if isinstance(fair, dict) else "-"
            by_epoch.setdefault(epoch, []).append(placed)
        # the session and each member as ``astragal luck export.json`` reports them
        return {**report(by_member, seed), "entries": lucks, "pending": pending,
                "window": WINDOW,
                "epochs": {k: verdict(v, seed).to_json() for k, v in by_epoch.items()}}
