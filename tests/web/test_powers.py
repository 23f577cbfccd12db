"""Who may do what (issue 38, items 2 and 13): one table of powers (``powers.POWERS``), decided on
the parsed command, never its text. Every fight and turn-order command and every route with a
power is walked with every role (the GM, the member it belongs to, another member) and every
spelling trick: quotes, case, spaces of every kind, and look-alike letters, on both stores, over
the real app."""

from __future__ import annotations

from typing import Any

import pytest

from astragal.web.powers import GM, MEMBER, OWNER, POWERS, commands

from .conftest import WEB_EXTRA, Room, auth

pytest.importorskip("fastapi", reason=WEB_EXTRA)

# Each command's text when it can work: the fight as set up by ``_fight_ready``
FIGHT = {"new": "new", "add": "add Troll atk=5 wpn=4 hp=9", "set": "set Orc shield=0",
         "remove": "remove Orc", "option": "option stun_duration=manual",
         "attack": "attack Wu Orc", "pass": "pass Wu", "heal": "heal Orc",
         "spend": "spend Wu luck 1", "undo": "undo"}
# the turn order as set up by ``_turns_ready``: Orc (added by the owner) has the turn
TURNS = {"add": "add Li 3", "remove": "remove Orc", "next": "next", "clear": "clear"}

_CYRILLIC = str.maketrans("aceopxsi", "асеорхѕі")


def spellings(text: str) -> tuple[list[str], list[str]]:
    """(the same command written otherwise, look-alikes of its word that are no command)."""
    word, _, rest = text.partition(" ")
    tail = f" {rest}" if rest else ""
    same = [f'"{word}"{tail}', f"{word.upper()}{tail}", f"{word.title()}{tail}",
            f'"{word.upper()}"{tail}', f"   {word}  {tail}  ", f"\t{word}\t{rest}",
            f"\u00a0{word}\u2003{rest}", f'  "{word}" {tail}']
    alike = [word.translate(_CYRILLIC) + tail if word.translate(_CYRILLIC) != word else
             word[:-1] + "\u0301" + word[-1] + tail,
             "".join(chr(ord(c) - 0x61 + 0xFF41) for c in word) + tail,  # fullwidth
             f'"{word}{word[-1]}"{tail}', f'"{word[0]} {word[1:]}"{tail}',
             word[:1] + "\u0307" + word[1:] + tail]
    return same, alike


def _log_length(room: Room) -> int:
    """The id of the log's last entry."""
    me = room.client.get(f"/api/rooms/{room.id}/me", headers=auth(room.gm))
    return int(me.json()["head"]["id"])


def test_the_table_covers_every_command() -> None:
    """The walk below covers every command of the table, and the table has no other power."""
    assert set(commands("fight")) == set(FIGHT)
    assert set(commands("turns")) == set(TURNS)
    assert set(POWERS.values()) == {GM, OWNER, MEMBER}


@pytest.mark.parametrize("tool", ["fight", "turns"])
def test_every_command_every_role_every_spelling(loose_client: Any, tool: str) -> None:
    room = Room(loose_client, system="attack")
    owner, other = room.join("Wu"), room.join("Bo")
    roles = {"gm": room.gm, "owner": owner, "other": other}
    samples = FIGHT if tool == "fight" else TURNS

    def post(key: str, text: str) -> Any:
        return loose_client.post(f"/api/rooms/{room.id}/{tool}", json={"text": text},
                               headers=auth(key))

    def ready(name: str) -> None:  # the state every sample can work on
        steps = (["new", "add Wu atk=4 wpn=3 luck=2 hp=8", "add Orc atk=3 wpn=2 heal=2 hp=6",
                  "set Orc damage=2"] if tool == "fight" else ["clear"])
        for step in steps:
            assert post(room.gm, step).status_code == 201, step
        if name == "undo":  # the owner's attack, the last fight command: the owner may undo it
            assert post(owner, "attack Wu Orc").status_code == 201
        if tool == "turns":
            assert post(owner, "add Orc 9").status_code == 201
            assert post(other, "add Wu 5").status_code == 201

    walked = 0
    for name, text in samples.items():
        need = POWERS[(tool, name)]
        same, alike = spellings(text)
        for role, key in roles.items():
            may = need == MEMBER or role == "gm" or (need == OWNER and role == "owner")
            for spelled in [text, *same]:
                ready(name)
                before = _log_length(room)
                r = post(key, spelled)
                if may:
                    assert r.status_code == 201, (role, spelled, r.text)
                    assert _log_length(room) == before + 1
                else:
                    assert r.status_code == 403, (role, spelled, r.text)
                    assert r.json()["error"] == "Forbidden"
                    assert _log_length(room) == before
                walked += 1
            for spelled in alike:  # no command at all, for anyone: refused before it runs
                before = _log_length(room)
                r = post(key, spelled)
                assert r.status_code == 422, (role, spelled, r.text)
                assert "unknown" in r.json()["message"], (role, spelled, r.text)
                assert _log_length(room) == before
                walked += 1
    assert walked == len(samples) * 3 * 14


def test_the_quoted_gm_command_of_the_report(loose_client: Any) -> None:
    """The report's attack: a player's ``"new"`` in quotes ran the GM's 'new'."""
    room = Room(loose_client, system="attack")
    wu = room.join("Wu")
    r = loose_client.post(f"/api/rooms/{room.id}/fight", json={"text": '"new"'}, headers=auth(wu))
    assert r.status_code == 403 and "only the GM may 'new'" in r.json()["message"]


def _ids(client: Any, room: Room) -> dict[str, str]:
    members = client.get(f"/api/rooms/{room.id}/me", headers=auth(room.gm)).json()["members"]
    return {m["name"]: m["id"] for m in members}


def test_every_route_with_a_power_every_role(loose_client: Any) -> None:
    """Reveals (GM-only and blind rolls), ending an epoch, a new key, removing a member."""
    room = Room(loose_client)
    owner, other = room.join("Wu"), room.join("Bo")
    roles = {"gm": room.gm, "owner": owner, "other": other}
    for vis in ("gm", "blind"):
        need = POWERS[("reveal", vis)]
        for role, key in roles.items():
            n = room.roll(owner, "d10 vs d8", vis).json()["id"]
            r = loose_client.post(f"/api/rooms/{room.id}/rolls/{n}/reveal", headers=auth(key))
            may = role == "gm" or (need == OWNER and role == "owner")
            assert r.status_code == (201 if may else 403), (vis, role, r.text)
    for role, key in roles.items():
        r = loose_client.post(f"/api/rooms/{room.id}/epoch", headers=auth(key))
        assert r.status_code == (201 if role == "gm" else 403), (role, r.text)
    for role in ("other", "owner", "gm"):
        target = room.join(f"Target{role}")
        tid = _ids(loose_client, room)[f"Target{role}"]
        key = roles[role]
        r = loose_client.post(f"/api/rooms/{room.id}/members/{tid}/key", headers=auth(key))
        assert r.status_code == (200 if role == "gm" else 403), (role, r.text)
        r = loose_client.delete(f"/api/rooms/{room.id}/members/{tid}", headers=auth(key))
        assert r.status_code == (200 if role == "gm" else 403), (role, r.text)
        assert target


def test_a_blind_roll_stays_blind_to_its_roller_until_the_gm_reveals_it(loose_client: Any
                                                                         ) -> None:
    """Foundry's blind roll: the roller knows they rolled, not what, in every way they can
    read it (the answer to the roll, the log, the live connection, the export), and may not
    reveal it; once the GM reveals it, everyone sees it."""
    room = Room(loose_client)
    li = room.join("Li")
    made = room.roll(li, "d10 vs d8", "blind")
    assert made.status_code == 201 and made.json()["hidden"] and "roll" not in made.json()
    n = made.json()["id"]
    secret = str(room.log(room.gm).json()["entries"][0]["verdict"])
    seen = room.log(li).json()["entries"]
    assert seen[0]["hidden"] and "roll" not in seen[0] and "draws" not in seen[0]
    with loose_client.websocket_connect(f"/api/rooms/{room.id}/live") as ws:
        ws.send_json({"key": li, "after": 0})
        got = [ws.receive_json() for _ in range(4)]
    live = next(m["entry"] for m in got if m["type"] == "entry")
    assert live["hidden"] and "roll" not in live
    export = loose_client.get(f"/api/rooms/{room.id}/export.json", headers=auth(li)).text
    assert secret not in export
    r = loose_client.post(f"/api/rooms/{room.id}/rolls/{n}/reveal", headers=auth(li))
    assert r.status_code == 403 and "only the GM may reveal a blind roll" in r.json()["message"]
    assert loose_client.post(f"/api/rooms/{room.id}/rolls/{n}/reveal",
                           headers=auth(room.gm)).status_code == 201
    shown = room.log(li).json()["entries"][-1]
    assert shown["kind"] == "reveal" and shown["of"]["verdict"] == secret
