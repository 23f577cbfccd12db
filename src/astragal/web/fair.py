"""Provably fair faces: the table commits to a secret seed, then every face follows from it.

A room runs in seed epochs. For each epoch the table draws a secret 32-byte seed and publishes
only its commitment, SHA-256(seed). Each member's page has a client seed of its own. The faces of
a roll are read, in the order the game draws them, from an HMAC-SHA256 stream keyed by the
seed over the room, the epoch, the member, the client seed and the roll's nonce (its entry's
number in the log, so the table cannot try a roll again and keep the one it likes: the numbers
leave no gap). When the GM ends an epoch, its seed is revealed in the log and anyone can derive
every face of that epoch again, offline (``astragal verify-log``).

The stream, exactly: block ``b`` (0, 1, 2, …) is HMAC-SHA256(key = seed, message = the UTF-8
bytes of ``canonical({"room", "epoch", "member", "client", "nonce", "block": b})``); the bytes
of blocks 0, 1, 2… are read in order. A face of a d``s`` takes the fewest bytes ``k`` with
256ᵏ ≥ ``s``, read big-endian as ``x``; when ``x`` < 256ᵏ − (256ᵏ mod ``s``) the face is
``x mod s + 1``, otherwise those bytes are dropped and the next ``k`` read (no modulo bias).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from .._rng import Source
from .chain import canonical

__all__ = ["FairSource", "commitment", "derive", "new_seed"]


def new_seed() -> str:
    """A fresh secret seed (hex of 32 random bytes)."""
    return secrets.token_hex(32)


def commitment(seed: str) -> str:
    """What is published before the seed is: SHA-256 of its 32 bytes, in hex."""
    return hashlib.sha256(bytes.fromhex(seed)).hexdigest()


class FairSource(Source):
    """Faces read from the seed's HMAC stream for one roll (every stream of the roll from one)."""

    def __init__(self, seed: str, room: str, epoch: int, member: str, client: str,
                 nonce: int) -> None:
        self._key = bytes.fromhex(seed)
        self._params: dict[str, Any] = {"room": room, "epoch": epoch, "member": member,
                                        "client": client, "nonce": nonce}
        self._block = 0
        self._buffer = b""

    def _bytes(self, k: int) -> bytes:
        while len(self._buffer) < k:
            message = canonical({**self._params, "block": self._block}).encode("utf-8")
            self._buffer += hmac.new(self._key, message, hashlib.sha256).digest()
            self._block += 1
        out, self._buffer = self._buffer[:k], self._buffer[k:]
        return out

    def face(self, size: int, stream: int = 0) -> int:
        k = max(1, (size - 1).bit_length() + 7 >> 3)
        span = 256 ** k
        limit = span - span % size
        while True:
            x = int.from_bytes(self._bytes(k), "big")
            if x < limit:
                return x % size + 1


def derive(seed: str, room: str, epoch: int, member: str, client: str, nonce: int,
           sizes: list[int]) -> list[int]:
    """The faces of dice of these sizes, in order, for one roll."""
    source = FairSource(seed, room, epoch, member, client, nonce)
    return [source.face(s) for s in sizes]
