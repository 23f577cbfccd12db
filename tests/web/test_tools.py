"""The table's tools through the API: examples per game, headlines, sheets checked when saved,
reveal, a new key, removing a member, the fight tracker and the turn order; on every store."""

from __future__ import annotations

from typing import Any

import pytest

import astragal
from astragal.systems import get_system
from astragal.web.chain import verify_export
from astragal.web.tabletools import (
    headline,
    outcome_kind,
    parse_command,
    turns_command,
)

from .conftest import WEB_EXTRA, Room, auth

pytest.importorskip("fastapi", reason=WEB_EXTRA)
pytest.importorskip("uvicorn", reason=WEB_EXTRA)


@pytest.mark.parametrize("system", sorted(astragal.system_names()))
def test_every_example_rolls_in_its_game(system: str) -> None:
    examples = get_system(system).examples
    assert examples, f"{system} offers no example rolls"
    for text in examples:
        astragal.roll(text, default_system=system)  # no InputError


def test_the_headline_is_the_verdict_in_the_games_words() -> None:
    r = astragal.roll("od6: 4D+2 vs moderate", faces="6,3,1,5")
    assert r.transcript[-1].strip().startswith("bonus:")  # the last line is not the verdict
    assert headline(r.outcome, r.transcript) == "Result points +6: Good success"  # not "(D10)"
    r = astragal.roll("ds: d6+2 vs 5", faces="2")
    assert headline(r.outcome, r.transcript) == "4 vs # 5: Failure (not higher than #)"
    r = astragal.roll("dice: 10d10>=8", faces="8,9,1,2,10,3,4,5,6,7")
    assert headline(r.outcome, r.transcript, r.steps) == "3 successes"  # not "Total: 3"
    r = astragal.roll("dice: 10d10>=8+2", faces="8,9,1,2,10,3,4,5,6,7")
    assert headline(r.outcome, r.transcript, r.steps) == "3 + 2 = 5"
    r = astragal.roll("jc: d12 d8 vs 2d10", faces="12,5 / 7,3")
    assert headline(r.outcome, r.transcript) == r.transcript[-1]
    assert outcome_kind(r.outcome) == "critical"  # an Overwhelming Success
    assert [outcome_kind(k) for k in ("success", "failure", "tie", "botch", "total",
                                      "exceptional_success", "whiff", "superior")] == [
        "good", "bad", "neutral", "bad", "neutral", "critical", "bad", "good"]


def test_sheet_values_are_checked_in_the_rooms_game(client: Any) -> None:
    room = Room(client)
    put = lambda body: client.put(f"/api/rooms/{room.id}/sheet", json=body,
                                  headers=auth(room.gm))
    r = put({"stats": {"Speed": "d10", "Claws": "d7"}})
    assert r.status_code == 422
    body = r.json()
    assert body["text"] == "Claws = d7" and body["span"] == [8, 10]
    assert "d7 is not a Jadeclaw die" in body["message"]
    r = put({"stats": {"Speed": "d10"}, "macros": {"run": "jc: Speed vs routine",
                                                    "flee": "run"}})
    assert r.status_code == 422 and "cannot roll another macro" in r.json()["message"]
    assert r.json()["text"] == "flee = run" and r.json()["span"] == [7, 10]
    r = put({"stats": {"Speed": "d10"}, "macros": {"run": "Speed vs rutine"}})
    assert r.status_code == 422 and r.json()["text"] == "run = Speed vs rutine"
    assert put({"stats": {"Speed": "d10", "Dexterity": "3"},
                "macros": {"run": "Speed vs routine", "other": "cofd: 5"}}).status_code == 200
    # a number is a number in any game; a d7 is fine in the general notation
    dice = Room(client, system="dice")
    assert client.put(f"/api/rooms/{dice.id}/sheet", json={"stats": {"Odd": "d7"}},
                      headers=auth(dice.gm)).status_code == 200


def test_reveal_a_hidden_roll(room: Room, client: Any) -> None:
    wu, li = room.join("Wu"), room.join("Li")
    assert room.roll(li, "d10 vs d8", "blind").status_code == 201
    assert room.roll(wu, "d6 vs d6", "gm").status_code == 201
    assert room.roll(wu, "d6 vs d4").status_code == 201
    reveal = lambda key, n: client.post(f"/api/rooms/{room.id}/rolls/{n}/reveal",
                                        headers=auth(key))
    assert reveal(wu, 1).status_code == 403  # not Wu's roll
    assert reveal(wu, 3).status_code == 409  # public already
    assert reveal(wu, 99).status_code == 404
    assert reveal(li, 1).status_code == 403  # a blind roll stays blind to its roller
    r = reveal(room.gm, 1)  # the GM reveals it
    assert r.status_code == 201
    shown = r.json()
    assert shown["kind"] == "reveal" and shown["reveals"] == 1 and shown["visibility"] == "public"
    gm_view = room.log(room.gm).json()["entries"][0]
    assert shown["of"]["roll"] == gm_view["roll"] and shown["of"]["verdict"] == gm_view["verdict"]
    wu_log = room.log(wu).json()["entries"]
    assert [e["id"] for e in wu_log] == [2, 3, 4]  # #1 itself stays hidden; #4 shows it
    assert wu_log[-1]["of"]["roll"] == gm_view["roll"]
    assert reveal(wu, 2).status_code == 201  # the roller reveals their own GM-only roll
    export = client.get(f"/api/rooms/{room.id}/export.json", headers=auth(wu)).json()
    assert verify_export(export).ok
    md = client.get(f"/api/rooms/{room.id}/export.md", headers=auth(wu)).text
    assert "reveals #1" in md


def test_gm_reissues_a_key_and_removes_a_member(room: Room, client: Any) -> None:
    wu, li = room.join("Wu"), room.join("Li")
    members = client.get(f"/api/rooms/{room.id}/me", headers=auth(room.gm)).json()["members"]
    ids = {m["name"]: m["id"] for m in members}
    url = f"/api/rooms/{room.id}/members/{ids['Wu']}"
    assert client.post(url + "/key", headers=auth(li)).status_code == 403  # players may not
    r = client.post(url + "/key", headers=auth(room.gm))
    assert r.status_code == 200
    new = r.json()["key"]
    assert r.json()["link"] == f"/r/{room.id}#key={new}" and new != wu
    assert room.roll(wu, "d6").status_code == 401  # the old key is dead
    assert room.roll(new, "d6").json()["who"] == "Wu"
    assert client.delete(f"/api/rooms/{room.id}/members/{ids['Mei']}",
                         headers=auth(room.gm)).status_code == 409  # not yourself
    assert client.delete(f"/api/rooms/{room.id}/members/{ids['Li']}",
                         headers=auth(new)).status_code == 403
    assert client.delete(f"/api/rooms/{room.id}/members/{ids['Li']}",
                         headers=auth(room.gm)).status_code == 200
    assert room.roll(li, "d6").status_code == 401
    assert client.delete(f"/api/rooms/{room.id}/members/nobody",
                         headers=auth(room.gm)).status_code == 404
    room.join("Li")  # the name is free again
    assert [e["who"] for e in room.log(room.gm).json()["entries"]] == ["Wu"]


def test_a_removed_members_live_connection_ends(room: Room, client: Any) -> None:
    li = room.join("Li")
    members = client.get(f"/api/rooms/{room.id}/me", headers=auth(room.gm)).json()["members"]
    li_id = next(m["id"] for m in members if m["name"] == "Li")
    with client.websocket_connect(f"/api/rooms/{room.id}/live") as ws:
        ws.send_json({"key": li, "after": 0})
        assert ws.receive_json()["type"] == "hello"
        assert ws.receive_json()["type"] == "members"
        ws.send_text("ping")
        assert ws.receive_json() == {"type": "pong"}
        client.delete(f"/api/rooms/{room.id}/members/{li_id}", headers=auth(room.gm))
        last = ws.receive_json()
        while last["type"] != "error":
            last = ws.receive_json()
        assert last["error"] == "Unauthorized"


def test_fight_tracker_uses_the_attack_tables_rules(client: Any) -> None:
    room = Room(client, system="attack", name="Arena")
    wu = room.join("Wu")
    fight = lambda key, text: client.post(f"/api/rooms/{room.id}/fight",
                                          json={"text": text}, headers=auth(key))
    assert fight(wu, "add Troll atk=9").status_code == 403  # the GM sets the fight up
    assert fight(room.gm, "add Wu atk=4 wpn=3 luck=2 hp=8").status_code == 201
    assert fight(room.gm, "add Orc atk=3 wpn=2 armor=2 shield=1 parry=1 hp=6").status_code == 201
    r = fight(room.gm, "attack Wu Nobody")
    assert r.status_code == 422 and r.json()["text"] == "attack Wu Nobody"
    assert fight(wu, "attack Wu Orc faces=6,6,5,4").status_code == 422  # the table rolls
    r = fight(wu, "attack Wu Orc berserk")
    assert r.status_code == 201
    entry = r.json()
    assert entry["kind"] == "fight" and entry["roll"]["system"] == "attack"
    assert "steps" not in entry["roll"]  # logged as a roll is: its steps follow from its faces
    orc = next(c for c in entry["state"]["combatants"] if c["name"] == "Orc")
    assert orc["damage"] == entry["roll"]["result"]["damage"]
    wu_c = next(c for c in entry["state"]["combatants"] if c["name"] == "Wu")
    assert wu_c["last_turn"][:1] == ["berserk"]
    # the tracker reads its state back from the room's log, as a new page would
    r = fight(wu, "spend Wu luck 1")
    assert r.status_code == 201
    assert next(c for c in r.json()["state"]["combatants"] if c["name"] == "Wu")["luck"] == 1
    assert fight(room.gm, "new").json()["state"]["combatants"] == []
    export = client.get(f"/api/rooms/{room.id}/export.json", headers=auth(wu)).json()
    assert verify_export(export).ok


def test_the_last_attack_is_undone_by_whoever_made_it_or_the_gm(loose_client: Any) -> None:
    """A wrong target or a slip: ``undo`` puts the fight back as it was before the last
    attack (damage, stun, last turn, the turn count), while no other fight command came after
    it; the attack, its dice and the undo stay in the log, and the export still verifies."""
    room = Room(loose_client, system="attack", name="Arena")
    wu, bo = room.join("Wu"), room.join("Bo")

    def fight(key: str, text: str) -> Any:
        return loose_client.post(f"/api/rooms/{room.id}/fight", json={"text": text},
                           headers=auth(key))

    for text in ("add Wu atk=4 wpn=3 luck=2 hp=8 side=party",
                 "add Li atk=3 wpn=2 hp=7 side=party", "add Orc atk=5 wpn=4 hp=30 side=foes"):
        assert fight(room.gm, text).status_code == 201
    before = fight(room.gm, "set Orc damage=1").json()["state"]
    assert [c.get("side") for c in before["combatants"]] == ["party", "party", "foes"]
    r = fight(wu, "undo")
    assert r.status_code == 422 and "nothing to undo" in r.json()["message"]
    attacked = fight(wu, "attack Wu Li berserk").json()  # an ally, by mistake
    assert attacked["state"]["combatants"] != before["combatants"]
    r = fight(bo, "undo")
    assert r.status_code == 403 and "only the GM or whoever made it" in r.json()["message"]
    r = fight(wu, "undo")
    assert r.status_code == 201
    undone = r.json()
    assert undone["message"] == "Undone: attack Wu Li berserk (its dice stay in the log)"
    assert "roll" not in undone
    assert undone["state"]["combatants"] == before["combatants"]
    assert undone["state"]["turn"] == before["turn"] and "undo" not in undone["state"]
    assert fight(wu, "undo").status_code == 422  # once
    # the GM takes back a player's attack; any later command ends the undo
    assert fight(wu, "attack Wu Orc").status_code == 201
    assert fight(room.gm, "undo").status_code == 201
    assert fight(wu, "attack Wu Orc").status_code == 201
    assert fight(bo, "pass Orc").status_code == 201
    r = fight(wu, "undo")
    assert r.status_code == 422 and "nothing to undo" in r.json()["message"]
    # a side is one word, and '-' takes it away
    r = fight(room.gm, "set Li side=the_party!")
    assert r.status_code == 422 and "side is one word" in r.json()["message"]
    li = next(c for c in fight(room.gm, "set Li side=-").json()["state"]["combatants"]
              if c["name"] == "Li")
    assert li["side"] is None
    export = loose_client.get(f"/api/rooms/{room.id}/export.json", headers=auth(wu)).json()
    texts = [e["text"] for e in export["entries"] if e.get("kind") == "fight"]
    assert texts.count("undo") == 2 and texts.count("attack Wu Orc") == 2
    report = verify_export(export)
    assert report.ok, report.problems


def turn(state: Any, text: str) -> tuple[str, dict[str, Any]]:
    """A turn-order command as the table runs it: read, then run."""
    return turns_command(state, parse_command("turns", text))


def test_turn_order() -> None:
    _, s = turn(None, "add Wu 14")
    _, s = turn(s, "add Orc 9")
    _, s = turn(s, "add Li 17")
    assert [x["name"] for x in s["order"]] == ["Li", "Wu", "Orc"] and not s["started"]
    msg, s = turn(s, "next")
    assert msg == "Round 1: Li's turn"
    _, s = turn(s, "next")
    _, s = turn(s, "add Ana 20")  # joins mid-round: it stays Wu's turn
    assert s["order"][s["current"]]["name"] == "Wu"
    _, s = turn(s, "remove Wu")
    assert s["order"][s["current"]]["name"] == "Orc"
    msg, s = turn(s, "next")
    assert msg == "Round 2: Ana's turn"
    with pytest.raises(astragal.InputError, match="initiative is a whole number"):
        turn(s, "add Bo x")
    with pytest.raises(astragal.InputError, match="already in the turn order"):
        turn(s, "add li 3")
    with pytest.raises(astragal.InputError, match="from -9999 to 9999, not '99999'"):
        turn(s, "add Bo 99999")
    # a name with spaces, as the page sends it (in double quotes), in and out of the order
    msg, s = turn(s, 'add "Big  Troll" 12')
    assert msg == "Big Troll joins the turn order (12)"
    assert [x["name"] for x in s["order"]] == ["Ana", "Li", "Big Troll", "Orc"]
    msg, s = turn(s, 'remove "big troll"')
    assert msg == "Big Troll leaves the turn order" and len(s["order"]) == 3
    # the page's form with no name and an initiative sends 'add 3': no fighter called "3"
    for text in ("add 3", 'add "" 3', "add Big Troll 12"):
        with pytest.raises(astragal.InputError, match="add NAME"):
            turn(s, text)
    with pytest.raises(astragal.InputError, match="quote is not closed"):
        turn(s, 'add "Big Troll 12')


def test_a_next_that_names_its_turn_ends_only_that_turn() -> None:
    """The page's Next turn names the turn it ends: pressed twice at once, the second finds its
    turn over and changes nothing."""
    _, s = turn(None, "add Wu 14")
    _, s = turn(s, 'add "Big Troll" 9')
    msg, s = turn(s, "next start")
    assert msg == "Round 1: Wu's turn"
    with pytest.raises(astragal.InputError, match="already started"):
        turn(s, "next start")
    msg, s = turn(s, "next 1 wu")
    assert msg == "Round 1: Big Troll's turn"
    with pytest.raises(astragal.InputError, match=r"Round 1: Wu's turn has already ended "
                       r"\(Round 1: Big Troll's turn\)"):
        turn(s, "next 1 Wu")
    msg, s = turn(s, 'next 1 "Big Troll"')
    assert msg == "Round 2: Wu's turn"
    with pytest.raises(astragal.InputError, match="next ROUND NAME"):
        turn(s, "next Wu")


def test_the_fight_tracker_reads_names_as_the_turn_order_does() -> None:
    # one reading of a command's words at the table: double quotes hold a name with spaces,
    # an apostrophe is a letter (the fight tracker took it for a quote: "No closing quotation")
    from astragal.web.tabletools import fight_command, parse_command

    source = astragal.SeededSource(3)
    _, state, _ = fight_command(None, parse_command("fight", "add O'Brien atk=4 wpn=3 hp=8"),
                                source)
    _, state, _ = fight_command(state, parse_command("fight", 'add "Big  Troll" atk=3 wpn=2 '
                                                              'hp=6'), source)
    assert [c["name"] for c in state["combatants"]] == ["O'Brien", "Big Troll"]
    _, turns = turn(None, "add O'Brien 12")
    assert turns["order"][0]["name"] == "O'Brien"
    for command in (turn, lambda s, t: fight_command(s, parse_command("fight", t), source)):
        with pytest.raises(astragal.InputError, match="quote is not closed"):
            command(None, 'add "Big Troll 12')


def test_two_instances_lose_no_fight_or_turn_command(pg_schema: str) -> None:
    """Two app instances on one PostgreSQL (each its own store, locks and state cache) take
    fight and turn-order commands for one room at once: every command is in the final state,
    none ran on a state another instance had already changed."""
    from concurrent.futures import ThreadPoolExecutor

    from astragal.web.room import Table
    from astragal.web.store import PostgresStore

    from .conftest import PG_URL

    url = f"{PG_URL}?schema={pg_schema}"
    a, b = PostgresStore(url), PostgresStore(url)
    try:
        ta, tb = (Table(s, roll_rate=(1000.0, 1000)) for s in (a, b))
        made = ta.create_room("Race", "attack", "Mei")
        rid = made["room"]["id"]
        gms = [t.member(rid, made["key"]) for t in (ta, tb)]
        n = 24

        def command(i: int) -> None:
            table, gm = (ta, gms[0]) if i % 2 else (tb, gms[1])
            if i % 3:
                table.fight(gm, f"add F{i} atk=3 hp=5")
            else:
                table.turns(gm, f"add P{i} {i}")

        with ThreadPoolExecutor(6) as pool:
            list(pool.map(command, range(n)))
        entries = a.entries(rid)
        assert [e["id"] for e in entries] == list(range(1, n + 1))
        last = {e["kind"]: e["state"] for e in entries}
        fighters = {c["name"] for c in last["fight"]["combatants"]}
        assert fighters == {f"F{i}" for i in range(n) if i % 3}
        assert len(last["turns"]["order"]) == len([i for i in range(n) if not i % 3])
    finally:
        a.close()
        b.close()


def test_a_clock_step_back_is_flagged(client: Any) -> None:
    """Issue 38, item 13: when the server's wall clock steps back (an NTP step, a restored VM),
    an entry's `at` runs backwards; such an entry says so (``at_behind``: the latest time
    before it), in the log, the live pages and both exports, and the log still verifies."""
    room = Room(client)
    table = client.app.state.table
    times = iter(["2026-12-01T10:00:00.000Z", "2026-12-01T09:59:00.000Z",
                  "2026-12-01T09:59:30.000Z", "2026-12-01T10:00:05.000Z"])
    table.wall = lambda: next(times)
    assert room.roll(room.gm, "d12 vs d10").status_code == 201
    assert room.roll(room.gm, "d12 vs d10").status_code == 201
    assert client.post(f"/api/rooms/{room.id}/turns", json={"text": "add Wu 3"},
                       headers=auth(room.gm)).status_code == 201
    assert room.roll(room.gm, "d12 vs d10").status_code == 201
    entries = room.log(room.gm).json()["entries"]
    assert [e.get("at_behind") for e in entries] == [
        None, "2026-12-01T10:00:00.000Z", "2026-12-01T10:00:00.000Z", None]
    export = client.get(f"/api/rooms/{room.id}/export.json", headers=auth(room.gm)).json()
    assert verify_export(export).ok
    md = client.get(f"/api/rooms/{room.id}/export.md", headers=auth(room.gm)).text
    assert md.count("(clock behind: after 2026-12-01T10:00:00.000Z)") == 2
