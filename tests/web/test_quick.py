"""A plain roll request is answered before FastAPI (``web/quick.py``): it answers as the route."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .conftest import WEB_EXTRA, Room, auth

pytest.importorskip("fastapi", reason=WEB_EXTRA)

# the quick path takes application/json; FastAPI's route alone reads a +json type as JSON
QUICK, ROUTE = "application/json", "application/vnd.table+json"
SHOWN = ("content-type", "retry-after", "x-content-type-options", "x-frame-options",
         "cache-control")


def _both(client: Any, url: str, body: Any, key: str) -> list[Any]:
    return [client.post(url, content=json.dumps(body),
                        headers={**auth(key), "Content-Type": kind}) for kind in (QUICK, ROUTE)]


def _answer(r: Any) -> tuple[int, Any, dict[str, str]]:
    return r.status_code, r.json(), {h: r.headers[h] for h in SHOWN if h in r.headers}


def test_a_plain_roll_is_answered_as_the_route_answers_it(client: Any, room: Room) -> None:
    url = f"/api/rooms/{room.id}/rolls"
    wu, li, mo = room.join("Wu"), room.join("Li"), room.join("Mo")
    for visibility in ("public", "blind"):
        quick, route = _both(client, url, {"text": "d12 vs d10", "visibility": visibility}, wu)
        assert quick.status_code == route.status_code == 201
        assert quick.json().keys() == route.json().keys()
        assert route.json()["id"] == quick.json()["id"] + 1
        assert _answer(quick)[2] == _answer(route)[2]
    log = room.log(room.gm).json()["entries"]
    assert [(e["who"], e["visibility"]) for e in log] == [("Wu", "public")] * 2 + [
        ("Wu", "blind")] * 2
    refused = [  # (where, body, key): each refusal of the table, both ways
        (url, {"text": "d6"}, "not-a-key"),
        ("/api/rooms/nope/rolls", {"text": "d6"}, wu),
        (url, {"text": "d7 vs d10"}, li),  # no d7 in Jadeclaw: 422 with its span
        (url, {"text": "d6", "client_seed": "tab\there"}, li),
        (url, {"text": "d6", "visibility": "secret"}, li),  # pydantic's, from the route alone
        (url, {"text": 6}, li),
        (url, ["d6"], li),
    ]
    for where, body, key in refused:
        quick, route = _both(client, where, body, key)
        assert quick.status_code >= 400 and _answer(quick) == _answer(route), body
    # a player over their rate of rolls: 429 and when to try again, both ways
    answers = [_both(client, url, {"text": "d6"}, mo) for _ in range(12)]
    limited = [(q, r) for q, r in answers if q.status_code == r.status_code == 429]
    assert limited and all(q.json()["error"] == r.json()["error"] == "RateLimited"
                           and _answer(q)[2].keys() == _answer(r)[2].keys() for q, r in limited)
    assert "retry-after" in _answer(limited[0][0])[2]
