"""The web table's caps: how much one room, one address or one request may take.

Every figure is in one place (``Caps``), each cap answers with its own status and a message naming
it: **429** for a rate or a number of connections (with ``Retry-After``), **413** for an entry too
large, **507** for a room whose storage is full. ``Budget`` is the token bucket that meters
amounts (CPU seconds, bytes) rather than requests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LOOSE", "Budget", "Caps"]


@dataclass(frozen=True, slots=True)
class Caps:
    """What one room, one address and one request may use (defaults: a generous table)."""

    # A room
    members_per_room: int = 50              # everyone who ever joined, the GM included
    entries_per_room: int = 20_000          # rolls in the log
    log_bytes_per_room: int = 64 << 20      # the log's stored JSON
    entry_bytes: int = 160 << 10            # one roll's entry (`cofd: 500 8-again rote`: 99 KB)
    live_per_room: int = 64                 # open WebSocket connections
    # One address (the client's IP as the server sees it)
    joins_per_address_per_room: int = 8     # members one address may add to one room
    live_per_address: int = 32              # open WebSocket connections
    rolls_per_address: tuple[float, int] = (4.0, 12)               # per second, burst
    stored_bytes_per_address: tuple[float, int] = (256 << 10, 4 << 20)  # bytes/s, burst
    odds_cpu_per_address: tuple[float, float] = (0.2, 15.0)        # CPU-s per second, burst
    reads_per_address: tuple[float, int] = (5.0, 60)                # room, /me, log pages
    pings_per_address: tuple[float, int] = (4.0, 32)               # live pings (a page: 1/20 s)
    # One member (key)
    live_per_member: int = 8
    exports_per_member: tuple[float, int] = (0.1, 3)               # per second, burst
    # The whole server
    rooms: int = 10_000                     # rooms the table holds (507 for one more)
    idle_room_days: float = 90.0            # a room with nothing new for this long is exported
                                            # to the table's archive folder, then deleted
    exports_at_once: int = 4                # exports streaming at the same time
    export_page: int = 16                   # entries read and sent at a time
    page_bytes: int = 256 << 10             # a page of the log (its stored JSON), over HTTP or
                                            # live: a page also ends at 500 entries
    live_reads: int = 4                     # live connections reading a page at the same time
    odds_seconds: float = 5.0               # the hard cut: an odds computation is killed after
    odds_memory: int = 1 << 30              # bytes of address space for an odds worker
    odds_workers: int = 2                   # odds computed at once (processes)
    odds_wait: float = 10.0                 # seconds a request waits for a free odds worker
    epoch_hours: float = 24.0               # a seed epoch rolled in for longer ends by itself


LOOSE = Caps(joins_per_address_per_room=10**6, live_per_address=10**6,
             rolls_per_address=(1e6, 10**6), stored_bytes_per_address=(1e12, 10**12),
             odds_cpu_per_address=(1e6, 1e6), reads_per_address=(1e6, 10**6),
             pings_per_address=(1e6, 10**6))
"""Every cap per room and per request as in production, none per address: for tests and tools
whose many simulated players all come from one address (127.0.0.1)."""


class Budget:
    """A token bucket of amounts per key: ``burst`` at most, refilled at ``rate`` per second.

    A request may start while the key's balance is above zero and is charged what it cost when
    it ends, so the balance can go below zero: the next request waits until it is paid back.
    """

    def __init__(self, rate: float, burst: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = float(rate)
        self.burst = float(burst)
        self.clock = clock
        self._balance: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def _now(self, key: str) -> tuple[float, float]:
        now = self.clock()
        balance, at = self._balance.get(key, (self.burst, now))
        return min(self.burst, balance + (now - at) * self.rate), now

    def wait(self, key: str) -> float:
        """0.0 when ``key`` may start a request, else the seconds until it may."""
        with self._lock:
            balance, _ = self._now(key)
        return 0.0 if balance > 0 else (-balance + 1e-9) / self.rate + 0.01

    def charge(self, key: str, amount: float) -> None:
        """Take ``amount`` from ``key``'s balance (it may go below zero)."""
        with self._lock:
            balance, now = self._now(key)
            self._balance[key] = (balance - amount, now)
            if len(self._balance) > 50_000:  # forget the full ones: memory stays bounded
                self._balance = {k: v for k, v in self._balance.items()
                                 if v[0] + (now - v[1]) * self.rate < self.burst}
