"""Provably fair faces: the table commits to a secret seed, then every face follows from it.

A room runs in seed epochs. For each epoch the table draws a secret seed and publishes only its
commitment (below). Each member's page has a client seed of its own. The faces of
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

Hidden rolls keep their faces secret after the epoch ends. A seed drawn since then is 64 bytes:
its first half ``P`` keys the stream and is what the epoch's end reveals; its second half ``K``
never leaves the table. Each entry number ``n`` has a secret ``s_n`` = HMAC-SHA256(``K``, the
ASCII digits of ``n``); the leaves SHA-256(``s_n``) for ``n`` = 0 … 2¹⁵ − 1 make a Merkle tree
(a node is SHA-256(left ‖ right)) whose root ``R`` the epoch's commitment covers:
SHA-256(``P`` ‖ ``R``). A GM-only or blind roll mixes its own ``s_n`` into its stream (the
message gains ``"secret": hex(s_n)``) and carries ``s_n`` and its path to the root in its
``fair`` record, inside the hidden entry: the epoch's end reveals ``P`` and ``R`` only, so no one
derives a hidden roll's faces until its reveal shows ``s_n``; and ``s_n`` was fixed, by ``R``,
before the epoch's first roll, so the table cannot choose it. A seed of 32 bytes (drawn before)
is ``P`` alone, committed as SHA-256(``P``), with no secrets.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from typing import Any

from .._rng import Source
from .chain import canonical

__all__ = ["DEPTH", "FairSource", "commitment", "derive", "fair_roll", "new_seed", "proof_root",
           "revealed", "seed_commitment"]

DEPTH = 15  # the tree has a leaf for every entry number below 2**15 (a room holds 20,000)
_HALF = 64  # hex digits of 32 bytes


def new_seed() -> str:
    """A fresh secret seed: hex of 64 random bytes (the stream's key, then the secrets' key)."""
    return secrets.token_hex(32) + secrets.token_hex(32)


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _secret(hidden_key: bytes, n: int) -> bytes:
    return hmac.digest(hidden_key, str(n).encode("ascii"), "sha256")


def _secrets(hidden_key: bytes, start: int, stop: int) -> list[bytes]:
    """``_secret(hidden_key, n)`` for ``n`` in ``range(start, stop)``: the same HMAC-SHA256
    (RFC 2104), with the key's two padded blocks hashed once for all of them (half the time of
    one ``hmac.digest`` each: a tree is 32,768 of them)."""
    key = (hidden_key if len(hidden_key) <= 64 else _sha(hidden_key)).ljust(64, b"\0")
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in key))
    outer = hashlib.sha256(bytes(b ^ 0x5C for b in key))
    out = []
    for n in range(start, stop):
        i = inner.copy()
        i.update(b"%d" % n)
        o = outer.copy()
        o.update(i.digest())
        out.append(o.digest())
    return out


def _levels(level: bytes, top: int) -> list[bytes]:
    """``level`` (32-byte nodes joined) and the levels above it, up to ``top`` nodes or one."""
    levels = [level]
    while len(level) > 32 * top:
        level = b"".join([_sha(level[i:i + 64]) for i in range(0, len(level), 64)])
        levels.append(level)
    return levels


# A tree's levels from _LOW up are kept per seed (16 KiB of nodes at that level, 32 KiB in all);
# the levels below, for the 2**_LOW leaves under one of its nodes, are made again when a proof
# needs them (64 secrets and 127 hashes), and the last few such blocks are kept: a room's hidden
# rolls take nearby entry numbers. Keeping whole trees (2 MiB each) for 16 seeds made every
# hidden roll in a table of more rooms than that make its room's tree again (~0.1 s each).
_LOW = 6


def _block_levels(hidden_key: bytes, block: int) -> list[bytes]:
    """The levels 0 … ``_LOW`` of the subtree over the leaves of block ``block``."""
    per = 1 << _LOW
    leaves = b"".join([_sha(s) for s in _secrets(hidden_key, block * per, (block + 1) * per)])
    return _levels(leaves, 1)


@functools.lru_cache(maxsize=256)
def _block(hidden_half: str, block: int) -> tuple[bytes, ...]:
    return tuple(_block_levels(bytes.fromhex(hidden_half), block))


@functools.lru_cache(maxsize=1024)
def _upper(hidden_half: str) -> tuple[bytes, ...]:
    """The tree's levels ``_LOW`` … ``DEPTH`` (the root), each level its 32-byte nodes joined."""
    key = bytes.fromhex(hidden_half)
    low = b"".join([_block_levels(key, b)[-1] for b in range(1 << (DEPTH - _LOW))])
    return tuple(_levels(low, 1))


def _proof(hidden_half: str, nonce: int) -> list[str]:
    """The siblings on the path from leaf ``nonce`` to the root, lowest first (hex)."""
    below = _block(hidden_half, nonce >> _LOW)
    above = _upper(hidden_half)
    local = nonce & ((1 << _LOW) - 1)
    return ([below[d][32 * ((local >> d) ^ 1):][:32].hex() for d in range(_LOW)]
            + [above[d - _LOW][32 * ((nonce >> d) ^ 1):][:32].hex() for d in range(_LOW, DEPTH)])


@functools.lru_cache(maxsize=4096)
def _root(hidden_half: str) -> bytes:
    return _upper(hidden_half)[-1]


def seed_commitment(seed: str, root: str | None = None) -> str:
    """The commitment a revealed seed must match: SHA-256(seed ‖ root), or of the seed alone
    for an epoch without secrets."""
    return hashlib.sha256(bytes.fromhex(seed) + bytes.fromhex(root or "")).hexdigest()


def commitment(seed: str) -> str:
    """What is published before the seed is (the table's stored seed, either size), in hex."""
    if len(seed) == 2 * _HALF:
        return seed_commitment(seed[:_HALF], _root(seed[_HALF:]).hex())
    return seed_commitment(seed)


def revealed(seed: str) -> dict[str, str]:
    """What the end of the epoch publishes: the stream's key, and the secrets' root (never
    the secrets' key)."""
    if len(seed) == 2 * _HALF:
        return {"seed": seed[:_HALF], "root": _root(seed[_HALF:]).hex()}
    return {"seed": seed}


def proof_root(secret: str, nonce: int, proof: list[str]) -> str:
    """The root that ``secret``, as leaf ``nonce``, and its path ``proof`` lead to (hex)."""
    node, index = _sha(bytes.fromhex(secret)), nonce
    for sibling in proof:
        pair = (node + bytes.fromhex(sibling)) if index % 2 == 0 else (bytes.fromhex(sibling) + node)
        node, index = _sha(pair), index // 2
    return node.hex()


def fair_roll(seed: str, room: str, epoch: int, member: str, client: str, nonce: int,
              hidden: bool) -> tuple[FairSource, dict[str, Any]]:
    """The source of a roll's faces and its ``fair`` record; a hidden roll of an epoch with
    secrets mixes in its own (``ValueError`` when its number is past the tree)."""
    fair: dict[str, Any] = {"epoch": epoch, "commitment": commitment(seed), "client": client,
                            "nonce": nonce}
    if hidden and len(seed) == 2 * _HALF:
        if not 0 <= nonce < 1 << DEPTH:
            raise ValueError(f"entry {nonce} is past the {1 << DEPTH:,} entries whose hidden "
                             "rolls have a secret of their own")
        fair["secret"] = _secret(bytes.fromhex(seed[_HALF:]), nonce).hex()
        fair["proof"] = _proof(seed[_HALF:], nonce)
    return FairSource(seed[:_HALF], room, epoch, member, client, nonce, fair.get("secret")), fair


class FairSource(Source):
    """Faces read from the seed's HMAC stream for one roll (every stream of the roll from one)."""

    def __init__(self, seed: str, room: str, epoch: int, member: str, client: str,
                 nonce: int, secret: str | None = None) -> None:
        self._key = bytes.fromhex(seed)
        self._params: dict[str, Any] = {"room": room, "epoch": epoch, "member": member,
                                        "client": client, "nonce": nonce}
        if secret is not None:  # a hidden roll's own secret (the module's docstring)
            self._params["secret"] = secret
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
           sizes: list[int], secret: str | None = None) -> list[int]:
    """The faces of dice of these sizes, in order, for one roll (a hidden one: with its
    ``secret``)."""
    source = FairSource(seed, room, epoch, member, client, nonce, secret)
    return [source.face(s) for s in sizes]
