"""The table's own signing key: every entry of every room is signed with it (Ed25519).

A signature covers the room, the entry's number and its hash, which covers everything before it
(the hash chain), so one signed entry vouches for the whole log up to it. A player keeps the
signed entries they have seen (receipts); whoever holds the database but not the key cannot
append, forge, reseal or replace an entry, and cannot cut the log shorter than a receipt shows.

The key is a file of its own, kept apart from the database (``ASTRAGAL_KEY``, else beside the
SQLite file as ``<db>.key``, else ``astragal-server.key``), created on first start, readable by
its owner only. Its public half is shown in the room and in every export.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._errors import InputError
from .chain import canonical

__all__ = ["HEAD_FORMAT", "Signer", "check_signature", "default_key_path", "head_message"]

HEAD_FORMAT = "astragal-head/1"
_KEY_BYTES = 32


def head_message(room: str, entry_id: int, entry_hash: str) -> bytes:
    """The bytes a signature covers: the room, the entry's number and its hash."""
    return canonical({"format": HEAD_FORMAT, "room": room, "id": entry_id,
                      "hash": entry_hash}).encode("utf-8")


def default_key_path(db: str | None) -> Path:
    """Where the key lives: ``ASTRAGAL_KEY``, else beside an SQLite database, else the cwd."""
    if os.environ.get("ASTRAGAL_KEY"):
        return Path(os.environ["ASTRAGAL_KEY"])
    if db and db.startswith(("postgresql://", "postgres://")):
        return Path("astragal-server.key")
    return Path((db or "astragal.db").removeprefix("sqlite:///") + ".key")


class Signer:
    """An Ed25519 private key: signs entries; ``public`` is its public key in hex."""

    def __init__(self, seed: bytes) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        self.public = self._key.public_key().public_bytes_raw().hex()

    @classmethod
    def generate(cls) -> Signer:
        """A new key (tests, and a table without a key file)."""
        return cls(os.urandom(_KEY_BYTES))

    @classmethod
    def load_or_create(cls, path: Path) -> Signer:
        """The key in ``path`` (hex of its 32-byte seed), created there (mode 0600) if missing."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            try:
                text = path.read_text(encoding="ascii").strip()
                seed = bytes.fromhex(text)
            except (OSError, ValueError, UnicodeDecodeError) as exc:
                raise InputError(f"the table's signing key {path} cannot be read: {exc}") from None
            if len(seed) != _KEY_BYTES:
                raise InputError(f"the table's signing key {path} is not a 32-byte key") from None
            return cls(seed)
        seed = os.urandom(_KEY_BYTES)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(seed.hex() + "\n")
        return cls(seed)

    def sign(self, room: str, entry_id: int, entry_hash: str) -> str:
        """The signature (hex) of entry ``entry_id`` of ``room`` with hash ``entry_hash``."""
        return self._key.sign(head_message(room, entry_id, entry_hash)).hex()


def check_signature(public: str, room: str, entry_id: int, entry_hash: str,
                    signature: object) -> bool:
    """Whether ``signature`` is the key ``public``'s signature of that entry."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if not isinstance(signature, str) or len(signature) != 128:
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public))
        key.verify(bytes.fromhex(signature), head_message(room, entry_id, entry_hash))
    except (InvalidSignature, ValueError):
        return False
    return True
