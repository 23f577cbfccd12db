"""Who may do what at the table: one table of powers, read on the parsed action, never its text.

Every action has one entry in ``POWERS``, keyed by (action, what): a route's action, a fight or
turn-order command by the command word its parser read (quoted, upper case or spaced out, it is
the same word; a look-alike letter makes it an unknown command, refused before anything runs),
and seeing an entry of each visibility. Each needs one of three powers:

``GM``      the room's GM alone
``OWNER``   the GM, or the member the thing belongs to: the roller of a roll, whoever added a name
            to the turn order (and so whoever's turn it is), whoever made the last attack
``MEMBER``  anyone in the room

The HTTP routes, the live WebSocket (which only reads: ``see``) and the fight tracker all ask
``allowed`` or ``check`` here; docs/web.md lists the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .basics import Member, TableError

__all__ = ["GM", "MEMBER", "OWNER", "POWERS", "allowed", "check", "commands"]

GM = "the GM"
OWNER = "the GM or its owner"
MEMBER = "any member"

POWERS: Mapping[tuple[str, str], str] = MappingProxyType({
    # seeing a log entry, by its visibility (a blind roll's roller gets a stub: that they
    # rolled, not what, until the GM reveals it, as Foundry's blind rolls)
    ("see", "public"): MEMBER,
    ("see", "gm"): OWNER,
    ("see", "blind"): GM,
    # showing a hidden roll to everyone, by its visibility
    ("reveal", "gm"): OWNER,
    ("reveal", "blind"): GM,
    # the room
    ("epoch", "end"): GM,
    ("member", "rekey"): GM,
    ("member", "remove"): GM,
    # the fight tracker: the GM sets the fight up, anyone plays it
    ("fight", "new"): GM,
    ("fight", "add"): GM,
    ("fight", "set"): GM,
    ("fight", "remove"): GM,
    ("fight", "option"): GM,
    ("fight", "attack"): MEMBER,
    ("fight", "pass"): MEMBER,
    ("fight", "heal"): MEMBER,
    ("fight", "spend"): MEMBER,
    # taking back the last attack (a wrong target, a slip): its attacker's member or the GM
    ("fight", "undo"): OWNER,
    # the turn order: anyone adds a name; a name is removed by whoever added it, the turn moves
    # on by whoever's turn it is (who added the current name); the GM does anything
    ("turns", "add"): MEMBER,
    ("turns", "remove"): OWNER,
    ("turns", "next"): OWNER,
    ("turns", "clear"): GM,
})


def commands(tool: str) -> tuple[str, ...]:
    """The command words of a tool (``fight``, ``turns``), in the table's order."""
    return tuple(what for action, what in POWERS if action == tool)


def allowed(member: Member, action: str, what: str, owner: str | None = None) -> bool:
    """May ``member`` do (action, what) to a thing whose owner is the member ``owner``?"""
    need = POWERS[(action, what)]
    return need == MEMBER or member.is_gm or (need == OWNER and owner is not None and
                                              owner == member.id)


def check(member: Member, action: str, what: str, doing: str, owner: str | None = None,
          owner_words: str = "") -> None:
    """403, naming who may, unless ``member`` may (action, what); ``doing`` says what it is
    (``'new' in the fight``), ``owner_words`` who its owner is (``whoever added Wu``)."""
    if not allowed(member, action, what, owner):
        need = POWERS[(action, what)]
        who = f"the GM or {owner_words}" if need == OWNER and owner_words else "the GM"
        raise TableError(403, "Forbidden", f"only {who} may {doing}")
