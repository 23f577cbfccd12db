"""The load and fault tools' verdict can fail: each kind of loss or leak is caught.

``tools/loadlib.check`` is what says "nothing lost" in RELIABILITY.md. Here it judges a real log
(made through the app) together with players' records that are then spoiled one way at a time: an
accepted roll missing from the log, an entry delivered twice or out of order, an entry a client
never got, a hidden roll delivered to a player, a log edited after the fact.
"""

from __future__ import annotations

import asyncio
import copy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web table needs the web extra")

from astragal.web.app import create_app
from astragal.web.caps import LOOSE
from astragal.web.room import Table
from astragal.web.store import SQLiteStore

from .conftest import test_client

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import loadlib


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[Any]]:
    """A room's export and its three players' faithful records of a small game."""
    store = SQLiteStore(tmp_path_factory.mktemp("check") / "c.db")
    app = create_app(store, table=Table(store, roll_rate=(1e6, 10**6), caps=LOOSE),
                     door_rate=(1e6, 10**6))
    with test_client(app) as c:
        made = c.post("/api/rooms", json={"system": "dice", "gm_name": "GM"}).json()
        rid = made["room"]["id"]
        gm = loadlib.Player(rid, "dice", made["key"], made["member"]["id"], "GM", "gm", [], "")
        players = [gm]
        for name in ("Wu", "Li"):
            j = c.post(f"/api/rooms/{rid}/members", json={"name": name}).json()
            players.append(loadlib.Player(rid, "dice", j["key"], j["member"]["id"], name,
                                          "player", [], ""))
        for i, vis in enumerate(["public", "gm", "blind", "public", "blind", "gm", "public"]):
            p = players[i % 3]
            r = c.post(f"/api/rooms/{rid}/rolls", headers={"Authorization": f"Bearer {p.key}"},
                       json={"text": "2d6", "visibility": vis})
            p.rolls.append(loadlib.Roll(r.status_code, 0.0, 0.01, r.json()))
        data = c.get(f"/api/rooms/{rid}/export.json",
                     headers={"Authorization": f"Bearer {gm.key}"}).json()
        for p in players:
            p.seen = c.get(f"/api/rooms/{rid}/log",
                           headers={"Authorization": f"Bearer {p.key}"}).json()["entries"]
    return data, players


def _judge(data: dict[str, Any], players: list[Any]) -> loadlib.Verdict:
    async def export(client: Any, base: str, p: Any) -> dict[str, Any]:
        return data

    saved = loadlib.export
    loadlib.export = export  # type: ignore[assignment]
    try:
        return asyncio.run(loadlib.check(None, "", players))
    finally:
        loadlib.export = saved


def test_a_faithful_record_passes(recorded: tuple[dict[str, Any], list[Any]]) -> None:
    data, players = recorded
    v = _judge(data, players)
    assert v.ok, v.problems
    assert v.accepted == 7 and v.entries == 7 and v.replayed == 7


def _drop_last_entry(d: dict[str, Any], ps: list[Any]) -> None:
    d["entries"].pop()
    d["head"] = d["entries"][-1]["hash"]


def _deliver_twice(d: dict[str, Any], ps: list[Any]) -> None:
    ps[1].seen.append(ps[1].seen[0])


def _reorder(d: dict[str, Any], ps: list[Any]) -> None:
    ps[0].seen[0], ps[0].seen[1] = ps[0].seen[1], ps[0].seen[0]


def _miss_one(d: dict[str, Any], ps: list[Any]) -> None:
    ps[2].seen.pop()


def _leak_hidden(d: dict[str, Any], ps: list[Any]) -> None:
    hidden = next(e for e in d["entries"] if e["visibility"] == "blind")
    ps[2 if hidden["member"] != ps[2].member else 1].seen.append(hidden)
    ps[2].seen.sort(key=lambda e: e["id"])


def _edit_log(d: dict[str, Any], ps: list[Any]) -> None:
    d["entries"][2]["verdict"] = "a critical success"


def _answer_unknown(d: dict[str, Any], ps: list[Any]) -> None:
    ps[1].rolls.append(loadlib.Roll(201, 0.0, 0.01, {**ps[1].rolls[0].body, "id": 99}))


@pytest.mark.parametrize(("spoil", "expect"), [
    (_drop_last_entry, "LOST"), (_deliver_twice, "twice"), (_reorder, "out of order"),
    (_miss_one, "never received"), (_leak_hidden, "may not see"), (_edit_log, "TAMPERED"),
    (_answer_unknown, "not in the log")])
def test_every_kind_of_loss_or_leak_is_caught(recorded: tuple[dict[str, Any], list[Any]],
                                             spoil: Callable[..., None], expect: str) -> None:
    data, players = copy.deepcopy(recorded)
    spoil(data, players)
    v = _judge(data, players)
    assert not v.ok and any(expect in p for p in v.problems), v.problems


def test_the_load_tools_instances_on_one_database_sign_with_one_key(tmp_path: Path) -> None:
    # The two-instance load run failed with "signature is not the table's": each instance of
    # the tools' server had a key of its own, where `astragal serve` shares the key file.
    import httpx

    from astragal.web.chain import verify_export

    db = str(tmp_path / "two.db")
    servers = [loadlib.Server(db, log=tmp_path / f"{i}.log") for i in range(2)]
    try:
        for s in servers:
            s.start()
        made = httpx.post(f"{servers[0].url}/api/rooms",
                          json={"system": "dice", "gm_name": "GM"}).json()
        room, auth = made["room"]["id"], {"Authorization": f"Bearer {made['key']}"}
        for s in servers:  # a roll stored by each instance
            assert httpx.post(f"{s.url}/api/rooms/{room}/rolls", json={"text": "2d6"},
                              headers=auth).status_code == 201
        keys = {httpx.get(f"{s.url}/api/rooms/{room}/me", headers=auth).json()["key"]
                for s in servers}
        export = httpx.get(f"{servers[0].url}/api/rooms/{room}/export.json", headers=auth).json()
    finally:
        for s in servers:
            s.stop()
    assert len(keys) == 1
    report = verify_export(export)
    assert report.ok and report.signed == 2, report.lines()
