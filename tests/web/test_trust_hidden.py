"""Hidden rolls stay hidden after their seed epoch ends, and re-derive exactly once revealed.

A player collects everything their client receives from a real app (HTTP and WebSocket, on
every store): the room, ``/me``, the log, both exports, the luck, the live messages, the answers
to what they may not do. With the epoch's seed revealed, they derive faces as docs/trust.md
says, for every hidden entry under every member, every client seed they have seen and the
notation they know or guess. The same method gives a public roll's faces exactly (so it is the
right method); it gives no hidden roll's faces, the GM's or their own blind roll's. Once the GM
reveals a roll, its faces follow from the seed and the secret its reveal shows.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from astragal.web.chain import verify_export
from astragal.web.fair import derive

from .conftest import WEB_EXTRA, Room, auth

pytest.importorskip("fastapi", reason=WEB_EXTRA)

HIDDEN = "10d20"  # ten faces: a guess that matches by chance has odds 20⁻¹⁰


class Player:
    """One member's client: every response it receives, kept as text."""

    def __init__(self, room: Room, key: str) -> None:
        self.room, self.key, self.texts = room, key, []

    def get(self, path: str, **params: Any) -> Any:
        r = self.room.client.get(f"/api/rooms/{self.room.id}{path}", params=params,
                                 headers=auth(self.key))
        self.texts.append(r.text)
        return r

    def post(self, path: str, body: dict[str, Any]) -> Any:
        r = self.room.client.post(f"/api/rooms/{self.room.id}{path}", json=body,
                                  headers=auth(self.key))
        self.texts.append(r.text)
        return r

    def everything(self) -> list[dict[str, Any]]:
        """Read all a client can; the JSON objects received, the live ones included."""
        self.get("")
        self.get("/me")
        self.get("/log")
        self.get("/export.json")
        self.get("/export.md")
        self.get("/luck")
        self.post("/rolls/2/reveal", {})  # refused: the answer is read too
        self.post("/rolls", {"text": "d20 +", "client_seed": "x"})  # a notation error
        with self.room.client.websocket_connect(f"/api/rooms/{self.room.id}/live") as ws:
            ws.send_text(json.dumps({"key": self.key, "after": 0}))
            last = self.get("/log").json()["last"]
            while True:
                msg = ws.receive_text()
                self.texts.append(msg)
                if json.loads(msg).get("type") == "head" and json.loads(msg)["id"] == last:
                    break
        found: list[dict[str, Any]] = []
        for text in self.texts:
            try:
                found += objects(json.loads(text))
            except ValueError:
                pass  # the Markdown export
        return found


def objects(value: Any) -> list[dict[str, Any]]:
    """Every JSON object inside a value."""
    if isinstance(value, dict):
        return [value] + [o for v in value.values() for o in objects(v)]
    if isinstance(value, list):
        return [o for v in value for o in objects(v)]
    return []


def attack(seen: list[dict[str, Any]], room_id: str, entry_id: int, sizes: list[int]
           ) -> list[list[int]]:
    """Every face list docs/trust.md's derivation gives for entry ``entry_id`` from what was
    seen: each revealed seed, member, client seed (and each secret, were one shown)."""
    seeds = {(o["epoch"], o["seed"]) for o in seen if o.get("kind") == "seed"}
    members = {o["id"] for o in seen if isinstance(o.get("id"), str) and "role" in o}
    members |= {o["member"] for o in seen if isinstance(o.get("member"), str)}
    clients = {o["client"] for o in seen if isinstance(o.get("client"), str)} | {""}
    shown = [o["secret"] for o in seen if isinstance(o.get("secret"), str)]
    return [derive(seed, room_id, epoch, member, client, entry_id, sizes, secret)
            for epoch, seed in seeds for member in members for client in clients
            for secret in [None, *shown]]


def test_no_hidden_roll_is_derived_from_what_a_player_receives(client: Any, store: Any) -> None:
    room = Room(client, system="dice")
    wu, li = room.join("Wu"), room.join("Li")

    def roll(key: str, text: str, visibility: str, seed: str) -> dict[str, Any]:
        r = client.post(f"/api/rooms/{room.id}/rolls", headers=auth(key),
                        json={"text": text, "visibility": visibility, "client_seed": seed})
        assert r.status_code == 201, r.text
        return r.json()  # type: ignore[no-any-return]

    public = roll(wu, HIDDEN, "public", "wu's seed")                  # 1
    roll(room.gm, HIDDEN, "gm", "mei's seed")                         # 2: the GM's GM-only roll
    roll(room.gm, HIDDEN, "blind", "mei's seed")                      # 3: the GM's blind roll
    roll(wu, HIDDEN, "blind", "wu's seed")                            # 4: Wu's own blind roll
    roll(li, HIDDEN, "gm", "li's seed")                               # 5: Li's GM-only roll
    roll(room.gm, "d6", "public", "mei's seed")                       # 6: the GM's seed is public
    ended = client.post(f"/api/rooms/{room.id}/epoch", json={}, headers=auth(room.gm))
    assert ended.status_code == 201, ended.text                       # 7: epoch 1's seed shown
    roll(wu, "d20", "public", "wu's seed")                            # 8: in epoch 2
    truth = {e["id"]: [d[2] for d in e["draws"]] for e in store.entries(room.id, 0, 100)
             if e.get("kind") == "roll"}
    sizes = [20] * 10
    for key, hidden in ((li, (2, 3, 4)), (wu, (2, 3, 4, 5))):
        player = Player(room, key)
        seen = player.everything()
        assert any(o.get("kind") == "seed" and o.get("epoch") == 1 for o in seen)
        # the method is right: it gives a public roll's faces exactly
        assert truth[public["id"]] in attack(seen, room.id, public["id"], sizes)
        for n in hidden:
            assert truth[n] not in attack(seen, room.id, n, sizes), (
                f"entry {n}'s faces derived from what a player received")
        stored = {e["id"]: e for e in store.entries(room.id, 0, 100)}
        text = "\n".join(player.texts)
        for n in hidden:  # neither the secret nor the table's secrets' key reaches them
            assert stored[n]["fair"]["secret"] not in text
        assert not re.search(store.epoch(room.id)[1][64:], text)


def test_a_revealed_hidden_roll_re_derives_exactly(client: Any, store: Any) -> None:
    room = Room(client, system="dice")
    li = room.join("Li")
    hidden = client.post(f"/api/rooms/{room.id}/rolls", headers=auth(room.gm),
                         json={"text": HIDDEN, "visibility": "gm", "client_seed": "s"}).json()
    client.post(f"/api/rooms/{room.id}/epoch", json={}, headers=auth(room.gm))
    shown = client.post(f"/api/rooms/{room.id}/rolls/{hidden['id']}/reveal", json={},
                        headers=auth(room.gm))
    assert shown.status_code == 201, shown.text
    player = Player(room, li)
    seen = player.everything()
    faces = [d[2] for d in hidden["draws"]]
    assert faces in attack(seen, room.id, hidden["id"], [20] * 10)  # with the shown secret
    export = player.get("/export.json").json()
    report = verify_export(export, key=export["key"])
    assert report.ok, report.problems
    assert report.derived == 1  # the revealed hidden roll, by its seed and its own secret
    of = export["entries"][shown.json()["id"] - 1]["of"]
    assert of["fair"]["secret"] == hidden["fair"]["secret"] and len(of["fair"]["proof"]) == 15
