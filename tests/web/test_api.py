"""The HTTP API and the WebSocket, on every store (SQLite always, PostgreSQL when reachable)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import astragal
from astragal.web.chain import verify_export

from .conftest import WEB_EXTRA, Room, auth

pytest.importorskip("fastapi", reason=WEB_EXTRA)
pytest.importorskip("uvicorn", reason=WEB_EXTRA)


def test_open_a_room_join_roll_and_read_the_log(room: Room) -> None:
    assert room.data["room"]["system"] == "jadeclaw"
    assert room.data["gm_link"] == f"/r/{room.id}#key={room.gm}"
    wu = room.join("Wu")
    r = room.roll(wu, "d12 d8 vs 2d10")  # the room's default system: no prefix needed
    assert r.status_code == 201, r.text
    entry = r.json()
    assert entry["id"] == 1 and entry["who"] == "Wu" and entry["system"] == "jadeclaw"
    assert entry["notation"] == "d12 d8 vs 2d10" and entry["visibility"] == "public"
    # The verdict follows from the recorded faces under the game's own rules.
    streams: list[list[int]] = [[], []]
    for side, size, face in entry["draws"]:
        streams[side].append(face)
    again = astragal.roll("d12 d8 vs 2d10", faces=streams, default_system="jadeclaw")
    assert again.to_json(with_steps=False) == entry["roll"] and again.outcome == entry["outcome"]
    assert again.steps and "steps" not in entry["roll"]  # logged without its steps
    assert entry["transcript_text"] == str(again)
    assert entry["verdict"] == again.transcript[-1]
    for key in (room.gm, wu):
        log = room.log(key).json()
        assert [e["id"] for e in log["entries"]] == [1] and log["last"] == 1
        assert log["entries"][0]["hash"] == entry["hash"]
    # A game that records its steps: the log keeps the roll's record without them (they follow
    # from the faces, and older versions' verify-log compare every field of the record)
    cofd = room.roll(wu, "cofd: 5 rote vs 3").json()
    assert "steps" not in cofd["roll"] and cofd["roll"]["dice"]
    assert astragal.roll("cofd: 5 rote vs 3", seed=1).to_json()["steps"]


def test_log_after_id_returns_only_newer_entries(room: Room) -> None:
    wu = room.join("Wu")
    for text in ("d4", "d6", "d8", "d10"):
        assert room.roll(wu, text).status_code == 201
    assert [e["notation"] for e in room.log(wu, after=2).json()["entries"]] == ["d8", "d10"]
    assert room.log(wu, after=4).json() == {"entries": [], "last": 4, "more": False,
                                            "head": None}
    assert room.log(wu, after=3).json()["head"] == room.log(wu).json()["entries"][-1]["hash"]


def test_notation_errors_are_422_with_message_and_span(room: Room) -> None:
    wu = room.join("Wu")
    r = room.roll(wu, "d12 d7 vs 2d10")
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "NotationError" and "d7 is not a Jadeclaw die" in body["message"]
    assert body["text"] == "d12 d7 vs 2d10" and body["span"] == [4, 6]
    assert room.roll(wu, "").json()["error"] == "NotationError"
    too_long = room.roll(wu, "d4 " * 200)
    assert too_long.status_code == 422 and too_long.json()["error"] == "LimitError"
    huge = room.roll(wu, "600d12")
    assert huge.status_code == 422 and "limit" in huge.json()["message"]
    assert room.log(wu).json()["entries"] == []  # nothing was stored


def test_a_prefix_overrides_the_rooms_system(room: Room) -> None:
    wu = room.join("Wu")
    r = room.roll(wu, "nosuch: d6")
    assert r.status_code == 422 and "unknown system 'nosuch'" in r.json()["message"]
    assert r.json()["span"] == [0, 6]


def test_visibility_public_gm_and_blind(client: Any, room: Room) -> None:
    wu, li = room.join("Wu"), room.join("Li")
    assert room.roll(wu, "d12", "public").status_code == 201
    gm_only = room.roll(wu, "d10", "gm").json()
    blind = room.roll(wu, "d8", "blind").json()
    mine = room.roll(room.gm, "d6", "blind").json()
    assert "roll" in gm_only and gm_only["outcome"]
    # The player who rolled blind learns that they rolled, never what.
    assert blind["hidden"] is True
    assert not {"roll", "outcome", "verdict", "draws", "transcript_text", "hash"} & set(blind)

    def seen(key: str) -> dict[int, dict[str, Any]]:
        return {e["id"]: e for e in room.log(key).json()["entries"]}

    assert set(seen(room.gm)) == {1, 2, 3, 4} and all("roll" in e for e in seen(room.gm).values())
    assert set(seen(wu)) == {1, 2, 3} and seen(wu)[3].get("hidden") is True
    assert set(seen(li)) == {1}
    assert [e["notation"] for e in seen(li).values()] == ["d12"] and mine["id"] == 4


def test_nobody_rolls_or_reads_without_their_key(client: Any, room: Room) -> None:
    other = Room(client)
    wu = room.join("Wu")
    url = f"/api/rooms/{room.id}/rolls"
    for headers in ({}, auth("not-a-key"), auth(other.gm), {"Authorization": wu}):
        r = client.post(url, json={"text": "d6"}, headers=headers)
        assert r.status_code == 401 and r.json()["error"] == "Unauthorized"
        assert client.get(f"/api/rooms/{room.id}/log", headers=headers).status_code == 401
    assert client.post("/api/rooms/nope/rolls", json={"text": "d6"},
                       headers=auth(wu)).status_code == 404
    assert client.get("/api/rooms/nope").status_code == 404


def test_keys_are_long_random_and_distinct(client: Any) -> None:
    rooms = [Room(client) for _ in range(3)]
    keys = [r.gm for r in rooms] + [rooms[0].join(f"p{i}") for i in range(3)]
    assert len(set(keys)) == len(keys) and all(len(k) >= 43 for k in keys)
    assert len({r.id for r in rooms}) == 3 and all(len(r.id) >= 16 for r in rooms)


def test_display_names_are_unique_in_a_room_and_checked(room: Room, client: Any) -> None:
    room.join("Wu")
    r = client.post(f"/api/rooms/{room.id}/members", json={"name": " wu "})
    assert r.status_code == 409 and "already called" in r.json()["message"]
    assert client.post(f"/api/rooms/{room.id}/members", json={"name": "  "}).status_code == 422
    assert client.post(f"/api/rooms/{room.id}/members",
                       json={"name": "x" * 41}).status_code == 422
    assert client.post(f"/api/rooms/{room.id}/members",
                       json={"name": "a\u0007b"}).status_code == 422


def test_unknown_or_unwritten_system_is_refused(client: Any) -> None:
    r = client.post("/api/rooms", json={"system": "monopoly"})
    assert r.status_code == 422 and "not an installed system" in r.json()["message"]
    names = {s["name"] for s in client.get("/api/systems").json()}
    assert "jadeclaw" in names


def test_characters_and_macros_are_used_by_name(room: Room, client: Any) -> None:
    wu = room.join("Wu")
    sheet = {"stats": {"Speed": "d10", "Stealth": "d8", "Fast-Talk": "d12", "Will": "d10"},
             "macros": {"sneak": "jc: Speed + Stealth vs routine"}}
    r = client.put(f"/api/rooms/{room.id}/sheet", json=sheet, headers=auth(wu))
    assert r.status_code == 200 and r.json() == sheet
    entry = room.roll(wu, "sneak").json()
    assert entry["text"] == "sneak" and entry["notation"] == "jc: d10 & d8 vs routine"
    assert [d["size"] for d in entry["roll"]["dice"]] == [10, 8, 6, 6]
    entry = room.roll(wu, "Will & Fast-Talk vs 2d10").json()
    assert entry["notation"] == "d10 & d12 vs 2d10"
    # Sheets are per player: the GM has no 'Will'.
    assert room.roll(room.gm, "Will").status_code == 422
    err = room.roll(wu, "Fast-Talk d7").json()
    assert err["span"] == [10, 12] and err["expanded"] == "d12 d7"
    me = client.get(f"/api/rooms/{room.id}/me", headers=auth(wu)).json()
    assert me["sheet"] == sheet and me["member"]["name"] == "Wu"
    assert [m["name"] for m in me["members"]] == ["Mei", "Wu"]
    bad = client.put(f"/api/rooms/{room.id}/sheet", json={"stats": {"d8": "d6"}},
                     headers=auth(wu))
    assert bad.status_code == 422 and "dice notation" in bad.json()["message"]


def test_odds_exact_with_and_without_a_room(room: Room, client: Any) -> None:
    r = client.get("/api/odds", params={"text": "jc: d12 vs d12"})
    assert r.status_code == 200
    body = r.json()
    expected = astragal.odds("jc: d12 vs d12")
    assert body["odds"] == expected.to_json()
    assert body["odds_text"].startswith("Exact odds: jc: d12 vs d12")
    assert abs(sum(body["odds"]["outcomes"].values()) - 1) < 1e-12
    # The page's rows keep the engine's order (negative margins first) and its tail sums.
    dist = expected.distribution
    assert body["value_rows"] == [[str(k), p, dist.at_least(k), dist.at_most(k)]
                                  for k, p in dist.items()]
    assert body["value_rows"][0][0] == "-11"
    assert [r[1] for r in body["outcome_rows"]][:2] == ["Botch", "Overwhelming Failure"]
    wu = room.join("Wu")
    client.put(f"/api/rooms/{room.id}/sheet", json={"stats": {"Will": "d10"}}, headers=auth(wu))
    r = client.get(f"/api/rooms/{room.id}/odds", params={"text": "Will vs d8"}, headers=auth(wu))
    assert r.json()["odds"] == astragal.odds("d10 vs d8", default_system="jadeclaw").to_json()
    bad = client.get("/api/odds", params={"text": "jc: d12 vs d3"})
    assert bad.status_code == 422 and bad.json()["span"] == [11, 13]
    assert client.get("/api/odds", params={"text": "d6"}).status_code == 200  # general notation
    assert client.get("/api/odds", params={"text": "d6", "system": "jc"}).status_code == 200


def test_the_page_draws_the_values_the_text_shows_with_far_tails_folded(client: Any) -> None:
    # 8d6! has 213 values, over half of them a tail below 0.0005%: the page's chart and table
    # draw the rows the text shows (its count of hidden values says how many), the JSON keeps all
    body = client.get("/api/odds", params={"text": "8d6!"}).json()
    lo, hi = body["shown"]
    rows = body["value_rows"]
    shown_text = [line.split()[0] for line in body["odds_text"].splitlines()
                  if line.startswith("  ") and line.split()[0].isdigit()]
    assert [r[0] for r in rows[lo:hi]] == shown_text
    assert f"({len(rows) - (hi - lo)} values at the ends" in body["odds_text"]
    assert hi < len(rows) // 2 and all(r[1] < 5e-6 for r in rows[:lo] + rows[hi:])
    assert rows[lo][1] >= 5e-6 and rows[hi - 1][1] >= 5e-6
    # a short law (28 values) is drawn whole, however small its ends (9d4: 4^-9 at each end)
    short = client.get("/api/odds", params={"text": "9d4"}).json()
    assert short["shown"] == [0, 28] and short["value_rows"][0][1] < 5e-6


def test_a_body_that_is_not_a_json_object_is_named_as_such(client: Any) -> None:
    def message(body: str) -> str:
        r = client.post("/api/rooms", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 422 and r.json()["error"] == "RequestError"
        return str(r.json()["message"])

    assert message("{bad json") == "the body is not valid JSON (it breaks at character 2)"
    assert message('{"name": "x",,}') == "the body is not valid JSON (it breaks at character 14)"
    assert message("[1, 2]").startswith("the body must be a JSON object")
    assert message("") == "the request needs a JSON body"
    assert message('{"name": 5}') == "name: Input should be a valid string"
    # JSON sent without saying so (curl -d sends it as a form): the header is what is missing
    for headers in ({}, {"content-type": "application/x-www-form-urlencoded"}):
        r = client.post("/api/rooms", content='{"name": "x"}', headers=headers)
        assert r.status_code == 422 and "Content-Type: application/json" in r.json()["message"]
    made = client.post("/api/rooms", json={})  # every field has a default (docs/web.md)
    assert made.status_code == 201
    assert (made.json()["room"]["name"], made.json()["room"]["system"],
            made.json()["member"]["name"]) == ("A table", "jadeclaw", "GM")


def test_rolls_per_second_per_player_are_limited_with_a_clear_429(room: Room) -> None:
    wu, li = room.join("Wu"), room.join("Li")
    codes = [room.roll(wu, "d6").status_code for _ in range(12)]
    assert codes[0] == 201 and 429 in codes
    r = room.roll(wu, "d6")
    assert r.status_code == 429
    assert "too many rolls" in r.json()["message"] and int(r.headers["Retry-After"]) >= 1
    assert room.roll(li, "d6").status_code == 201  # per player: Li is not slowed by Wu


def test_request_bodies_over_the_limit_are_413(room: Room, client: Any) -> None:
    wu = room.join("Wu")
    r = client.post(f"/api/rooms/{room.id}/rolls", headers=auth(wu),
                    content=json.dumps({"text": "d6" + " " * 20000}))
    assert r.status_code == 413 and r.json()["error"] == "TooLarge"

    def chunks() -> Any:  # no Content-Length: the limit still holds
        for _ in range(40):
            yield b" " * 1000

    r = client.post(f"/api/rooms/{room.id}/rolls", headers=auth(wu), content=chunks())
    assert r.status_code == 413


def test_bad_json_and_bad_fields_are_clear_422s(room: Room, client: Any) -> None:
    wu = room.join("Wu")
    r = client.post(f"/api/rooms/{room.id}/rolls", headers={**auth(wu),
                    "Content-Type": "application/json"}, content=b"{nope")
    assert r.status_code == 422 and r.json()["error"] == "RequestError"
    r = room.roll(wu, "d6", "secret")
    assert r.status_code == 422 and r.json()["message"].startswith("visibility")


def test_export_json_verifies_and_markdown_escapes(room: Room, client: Any) -> None:
    wu = room.join("<b>Wu|</b>")
    room.roll(wu, "d12 vs d10")
    room.roll(wu, "d8", "blind")
    room.roll(room.gm, "d6", "gm")
    gm_export = client.get(f"/api/rooms/{room.id}/export.json", headers=auth(room.gm)).json()
    report = verify_export(gm_export)
    assert report.ok and report.entries == 3 and report.replayed == 3 and not report.redacted
    wu_export = client.get(f"/api/rooms/{room.id}/export.json", headers=auth(wu)).json()
    report = verify_export(wu_export)
    assert report.ok and report.redacted == 2 and report.head == gm_export["head"]
    assert "draws" not in json.dumps(wu_export["entries"][1:])
    md = client.get(f"/api/rooms/{room.id}/export.md", headers=auth(room.gm))
    assert md.headers["content-type"].startswith("text/markdown")
    assert "&lt;b&gt;Wu\\|&lt;/b&gt;" in md.text and "<b>" not in md.text
    assert md.text.count("\n| ") == 4  # header + 3 entries


def next_of(ws: Any, kind: str) -> dict[str, Any]:
    """The next message of one kind on a live connection (skipping the others)."""
    while True:
        msg: dict[str, Any] = ws.receive_json()
        assert msg["type"] in ("entry", "members", "member", "head"), msg
        if msg["type"] == kind:
            return msg


def next_entry(ws: Any) -> dict[str, Any]:
    return next_of(ws, "entry")["entry"]  # type: ignore[no-any-return]


def test_a_client_that_pinged_and_fell_silent_is_let_go(room: Room, client: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A phone that vanished without a close held its live connection (one of its member's
    few) until TCP gave up: once a client has pinged, silence past SILENT_SECONDS ends it."""
    from starlette.websockets import WebSocketDisconnect

    from astragal.web import live

    monkeypatch.setattr(live, "SILENT_SECONDS", 0.2)
    with client.websocket_connect(f"/api/rooms/{room.id}/live") as ws:
        ws.send_text(json.dumps({"key": room.gm, "after": 0}))
        assert ws.receive_json()["type"] == "hello"
        ws.send_text("ping")
        while (msg := ws.receive_json())["type"] != "pong":
            assert msg["type"] in ("members", "member", "head"), msg
        with pytest.raises(WebSocketDisconnect):  # nothing more said: the table lets it go
            while True:
                ws.receive_json()


def test_websocket_sends_backlog_then_live_entries_filtered_per_reader(room: Room,
                                                                      client: Any) -> None:
    wu, li = room.join("Wu"), room.join("Li")
    room.roll(wu, "d4")
    with client.websocket_connect(f"/api/rooms/{room.id}/live") as ws_li, \
            client.websocket_connect(f"/api/rooms/{room.id}/live") as ws_gm:
        ws_li.send_text(json.dumps({"key": li, "after": 0}))
        ws_gm.send_text(json.dumps({"key": room.gm, "after": 1}))
        assert ws_li.receive_json()["type"] == "hello"
        assert ws_gm.receive_json()["type"] == "hello"
        members = ws_gm.receive_json()
        assert members == {"type": "members", "members": [
            {"id": m["id"], "name": m["name"], "role": m["role"]}
            for m in client.get(f"/api/rooms/{room.id}/me", headers=auth(li)).json()["members"]]}
        assert [m["name"] for m in members["members"]] == ["Mei", "Wu", "Li"]
        assert next_entry(ws_li)["id"] == 1  # the backlog
        room.roll(wu, "d6", "blind")
        room.roll(wu, "d8", "public")
        assert next_entry(ws_gm)["id"] == 2
        assert next_entry(ws_gm)["id"] == 3
        got = next_entry(ws_li)  # the blind roll never reaches Li
        assert got["id"] == 3 and got["notation"] == "d8"
        # Li learns the chain's head, to compare with the GM's; not what is hidden behind it.
        assert next_of(ws_li, "head") == {"type": "head", "id": 3, "hash": got["hash"]}
        room.join("Bo")  # a join reaches everyone as a small delta: the newcomer alone
        assert next_of(ws_gm, "member")["member"]["name"] == "Bo"


def test_websocket_refuses_a_bad_key_or_a_bad_hello(room: Room, client: Any) -> None:
    with client.websocket_connect(f"/api/rooms/{room.id}/live") as ws:
        ws.send_text(json.dumps({"key": "wrong", "after": 0}))
        msg = ws.receive_json()
        assert msg["type"] == "error" and msg["error"] == "Unauthorized"
    with client.websocket_connect(f"/api/rooms/{room.id}/live") as ws:
        ws.send_text("not json")
        assert ws.receive_json()["error"] == "RequestError"
    for after in (-3, 2**70, "1", True):
        with client.websocket_connect(f"/api/rooms/{room.id}/live") as ws:
            ws.send_text(json.dumps({"key": room.gm, "after": after}))
            assert ws.receive_json()["error"] == "RequestError"
    assert room.log(room.gm, after=2**70).status_code == 422


def test_live_connections_per_key_are_capped(room: Room, client: Any) -> None:
    from contextlib import ExitStack

    from astragal.web.app import MAX_LIVE_PER_MEMBER

    with ExitStack() as stack:
        for _ in range(MAX_LIVE_PER_MEMBER):
            ws = stack.enter_context(client.websocket_connect(f"/api/rooms/{room.id}/live"))
            ws.send_text(json.dumps({"key": room.gm, "after": 0}))
            assert ws.receive_json()["type"] == "hello"
        with client.websocket_connect(f"/api/rooms/{room.id}/live") as ws:
            ws.send_text(json.dumps({"key": room.gm, "after": 0}))
            msg = ws.receive_json()
            assert msg["error"] == "RateLimited" and "too many live connections" in msg["message"]


def test_the_api_is_documented_in_openapi(client: Any) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path, method in [("/api/rooms", "post"), ("/api/rooms/{room_id}/members", "post"),
                         ("/api/rooms/{room_id}/rolls", "post"), ("/api/rooms/{room_id}/log", "get"),
                         ("/api/odds", "get"), ("/api/rooms/{room_id}/sheet", "put"),
                         ("/api/rooms/{room_id}/export.json", "get")]:
        assert method in paths[path], path
        assert paths[path][method].get("summary") or paths[path][method].get("description")
    assert "422" in paths["/api/rooms/{room_id}/rolls"]["post"]["responses"]
    assert "WebSocket" in spec["info"]["description"]


def test_the_page_is_served_with_a_strict_content_security_policy(client: Any, room: Room) -> None:
    for path in ("/", f"/r/{room.id}"):
        r = client.get(path)
        assert r.status_code == 200 and "<script src=\"/static/app.js\"" in r.text
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    js = client.get("/static/app.js").text
    assert not re.search(r"\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|eval\(", js)


def test_the_pages_files_are_compressed_and_asked_again_not_sent_again(client: Any,
                                                                       room: Room) -> None:
    """A reload sent every file of the page again, uncompressed (no-store): now they go
    compressed, and a reload that has them gets 304 with no body. Answers with keys or rolls
    in them stay uncompressed and no-store."""
    sizes = {"raw": 0, "sent": 0}
    for name in ("app.js", "style.css", "trust.js"):
        r = client.get(f"/static/{name}", headers={"Accept-Encoding": "gzip"})
        assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
        assert r.headers["cache-control"] == "no-cache" and r.headers["etag"]
        assert "script-src 'self'" in r.headers["content-security-policy"]
        sizes["raw"] += len(r.content)
        sizes["sent"] += int(r.headers["content-length"])
        again = client.get(f"/static/{name}", headers={"If-None-Match": r.headers["etag"],
                                                      "Accept-Encoding": "gzip"})
        assert again.status_code == 304 and again.content == b""
    assert sizes["sent"] * 3 < sizes["raw"], sizes
    for r in (client.get(f"/api/rooms/{room.id}/me", headers={**auth(room.gm),
                                                              "Accept-Encoding": "gzip"}),
              client.get(f"/api/rooms/{room.id}/log", headers={**auth(room.gm),
                                                               "Accept-Encoding": "gzip"})):
        assert r.status_code == 200 and "content-encoding" not in r.headers
        assert r.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("payload", ["<img src=x onerror=alert(1)>", "d6 <script>x</script>"])
def test_user_text_is_stored_as_text(room: Room, payload: str) -> None:
    wu = room.join("Wu")
    r = room.roll(wu, payload)
    assert r.status_code == 422 and r.json()["text"] == payload  # returned as JSON data only


# One example per game: the table is the same for every system the registry has installed.
EXAMPLES = {
    "jadeclaw": ("d12 d8 vs 2d10", {"Will": "d10", "Fast-Talk": "d12"}, "Will + Fast-Talk",
                 "d10 & d12"),
    "cofd": ("manipulation 3+subterfuge 2 -2 9-again", {"Dexterity": 3, "Stealth": 2},
             "Dexterity + Stealth", "3 + 2"),
    "d6system": ("3D+2 vs Moderate", {"Blaster": "4D+1"}, "Blaster vs Moderate",
                 "4D+1 vs Moderate"),
    "attack": ("atk 4 wpn 3 vs armor 1 shield 1", {}, "", ""),
    "d6skill": ("d6+3 vs 6", {"Shooting": 3}, "d6+Shooting vs 6", "d6+3 vs 6"),
    "dice": ("4d6kh3+2", {"Str": 2}, "d20 + Str", "d20 + 2"),
}


@pytest.mark.parametrize("system", sorted(EXAMPLES))
def test_every_installed_system_rolls_and_replays(client: Any, system: str) -> None:
    installed = {s["name"] for s in client.get("/api/systems").json()}
    if system not in installed:
        pytest.skip(f"the {system} system is not installed yet")
    text, stats, with_names, expanded = EXAMPLES[system]
    room = Room(client, system=system)
    wu = room.join("Wu")
    r = room.roll(wu, text)
    assert r.status_code == 201, r.text
    assert r.json()["system"] == system
    if stats:
        client.put(f"/api/rooms/{room.id}/sheet", json={"stats": stats}, headers=auth(wu))
        r = room.roll(wu, with_names)
        assert r.status_code == 201, r.text
        assert r.json()["notation"] == expanded
    odds = client.get(f"/api/rooms/{room.id}/odds", params={"text": text}, headers=auth(wu))
    assert odds.status_code == 200 and odds.json()["system"] == system
    report = verify_export(client.get(f"/api/rooms/{room.id}/export.json",
                                      headers=auth(room.gm)).json())
    assert report.ok and report.replayed == (2 if stats else 1), report.problems


def test_opening_and_joining_rooms_is_limited_per_address(tmp_path: Any) -> None:
    import warnings

    from astragal.web.app import create_app
    from astragal.web.store import SQLiteStore

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    store = SQLiteStore(tmp_path / "doors.db")
    with TestClient(create_app(store, door_rate=(0.01, 3))) as client:
        room = Room(client)
        assert client.post(f"/api/rooms/{room.id}/members", json={"name": "a"}).status_code == 201
        assert client.post(f"/api/rooms/{room.id}/members", json={"name": "b"}).status_code == 201
        r = client.post(f"/api/rooms/{room.id}/members", json={"name": "c"})
        assert r.status_code == 429 and "from this address" in r.json()["message"]
        assert client.post("/api/rooms", json={}).status_code == 429


def test_the_log_is_read_in_pages_of_bounded_size(store: Any) -> None:
    # every entry is still read, in order, page after page; ``more`` says when to read on
    import warnings

    with warnings.catch_warnings():  # starlette's note about its httpx transport
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from astragal.web.app import create_app
    from astragal.web.caps import Caps
    from astragal.web.room import Table

    from .conftest import Room

    table = Table(store, caps=Caps(page_bytes=3000), roll_rate=(1000.0, 1000))
    app = create_app(store, table=table, own_store=False,
                     door_rate=(1000.0, 1000))
    with TestClient(app) as client:
        room = Room(client, system="dice")
        for n in range(1, 9):
            assert room.roll(room.gm, f"{n}d6").status_code == 201
        heads, head = [], store.head
        store.head = lambda room_id: heads.append(room_id) or head(room_id)
        seen, after, pages = [], 0, 0
        while True:
            page = room.log(room.gm, after).json()
            pages += 1
            seen += [e["id"] for e in page["entries"]]
            after = page["last"]
            if not page["more"]:
                break
        assert seen == list(range(1, 9)) and pages > 2
        assert heads == []  # a page says itself whether more may follow: one query a page
