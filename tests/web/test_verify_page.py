"""``verify.html``, the self-contained check a group opens from disk with a saved export: it must
reach the verdicts of ``astragal verify-log`` (apart from replaying the games' rules, which only
the Python check does) on an intact room and on every tamper, and reproduce the test vectors.

Needs playwright and Chromium at /usr/bin/chromium (as tests/web/test_browser.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from astragal.web.chain import verify_export
from astragal.web.room import RateLimit

from .test_trust import TAMPERS, Room, _resign
from .test_trust_refusals import REFUSALS

CHROMIUM = os.environ.get("ASTRAGAL_CHROMIUM", "/usr/bin/chromium")
PAGE = Path(__file__).resolve().parents[2] / "src/astragal/web/static/verify.html"
VECTORS = Path(__file__).parent
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"Chromium is not at {CHROMIUM}", allow_module_level=True)
REPLAY = ("do not follow from its faces", "cannot be replayed", "is not [side, size, face]",
          "(draws) are missing", "the fight it leaves")  # only the Python check runs the rules


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def page(browser: Any) -> Iterator[Any]:
    """verify.html opened from disk, as a saved file is."""
    p = browser.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    p.goto(PAGE.as_uri())
    yield p
    assert not errors, errors
    p.close()


@pytest.fixture
def room(tmp_path: Path) -> Room:
    """A room whose epoch 1 has ended: public and hidden rolls, a reveal, then epoch 2."""
    made = Room(tmp_path)
    made.table.roll_limit = made.table.address_rolls = RateLimit(100.0, 100)
    hidden = made.table.roll(made.gm, "d20+1", "gm")
    made.table.reveal(made.gm, hidden["id"])
    made.table.roll(made.wu, "3d6", client_seed="wu's seed")
    made.table.end_epoch(made.gm)
    made.table.roll(made.wu, "d12", client_seed="wu's seed")
    return made


def check(page: Any, tmp_path: Path, export: dict[str, Any], receipts: str | None = None,
          key: str = "") -> dict[str, Any]:
    """Open the files in the page as a person would, press Check; what the page shows."""
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    page.reload()
    page.set_input_files("#export-file", str(path))
    if receipts:
        page.set_input_files("#receipts-file", receipts)
    page.fill("#key", key)
    page.click("#check")
    page.wait_for_selector("body[data-done]")
    return {"verdict": page.inner_text("#verdict"),
            "problems": [t.removeprefix("TAMPERED: ") for t in
                         page.locator("#problems li").all_inner_texts()],
            "summary": page.inner_text("#summary"),
            "rows": page.locator("#entries tbody tr").all_inner_texts()}


def python(export: dict[str, Any], receipts: str | None, key: str | None) -> list[str]:
    from astragal.web.verify import read_receipts

    given, named = read_receipts(receipts)
    report = verify_export(json.loads(json.dumps(export)), key=key or named, receipts=given)
    return sorted(p for p in report.problems if not any(r in p for r in REPLAY))


def test_an_intact_room_checks_in_the_page_as_in_verify_log(page: Any, room: Room,
                                                            tmp_path: Path) -> None:
    receipts = room.receipts(room.wu, tmp_path / "wu.json")
    for viewer in (room.gm, room.wu):  # the player's export holds the GM-only roll as a stub
        export = room.table.export(viewer)
        shown = check(page, tmp_path, export, receipts, room.key)
        report = verify_export(export, key=room.key,
                               receipts=json.loads(Path(receipts).read_text())["receipts"])
        assert report.ok and shown["verdict"] == "Intact", shown
        assert f"{report.signed} entries signed by the table's key {room.key}" in shown["summary"]
        assert f"{report.derived} roll(s) have exactly the faces" in shown["summary"]
        assert f"{report.receipts} receipt(s) match the log" in shown["summary"]
        assert report.derived >= 9 and report.pending == 1
        assert len(shown["rows"]) == len(export["entries"])


def operator_forges_a_face(room: Room) -> Any:
    def tamper(entries: list[dict[str, Any]]) -> None:
        e = entries[1]  # d20+3, rolled in epoch 1 whose seed is revealed
        e["draws"] = [[0, 20, 20 if e["draws"][0][2] != 20 else 19]]
        import astragal

        e["roll"] = astragal.roll(e["notation"], faces=str(e["draws"][0][2])).to_json()
        _resign(room, entries, 1)
    return tamper


def reveal_something_else(room: Room) -> Any:
    def tamper(entries: list[dict[str, Any]]) -> None:
        i = next(n for n, e in enumerate(entries) if e.get("kind") == "reveal")
        entries[i]["of"]["text"] = "d20+10"
        _resign(room, entries, i)
    return tamper


@pytest.mark.parametrize("name", [t[0] for t in TAMPERS] + [
    "the operator forges a face", "a reveal shows something else", "the wrong key",
    "a client seed replaced"])
def test_every_tamper_is_caught_by_the_page_as_by_verify_log(page: Any, room: Room, name: str,
                                                             tmp_path: Path) -> None:
    receipts = room.receipts(room.wu, tmp_path / "wu.json")
    export = room.table.export(room.gm)
    key = room.key
    tampers = {t[0]: t[1] for t in TAMPERS}
    if name in tampers:
        tampers[name](export["entries"])
    elif name == "the operator forges a face":
        operator_forges_a_face(room)(export["entries"])
    elif name == "a reveal shows something else":
        reveal_something_else(room)(export["entries"])
    elif name == "the wrong key":
        from astragal.web.signing import Signer

        key = Signer.generate().public
    else:
        kept = json.loads(Path(receipts).read_text())
        last = export["entries"][-1]
        kept["receipts"][-1].update(client="not wu's seed", commitment=last["fair"]["commitment"])
        Path(receipts).write_text(json.dumps(kept))
    if export["entries"]:
        export["head"] = export["entries"][-1]["hash"]  # a careful forger
    shown = check(page, tmp_path, export, receipts, key)
    expected = python(export, receipts, key)
    assert expected, name  # verify-log catches it without replaying the rules
    assert shown["verdict"].startswith("TAMPERED") and sorted(shown["problems"]) == expected, (
        shown, expected)


def test_the_page_reproduces_the_test_vectors(page: Any) -> None:
    fair = json.loads((VECTORS / "fair_vectors.json").read_text())
    for v in fair:
        faces = page.evaluate("v => astragalVerify.derive(v.seed, v.room, v.epoch, v.member, "
                              "v.client, v.nonce, v.sizes)", v)
        assert faces == v["faces"]
    trust = json.loads((VECTORS / "trust_vectors.json").read_text())
    for c in trust["canonical"]:
        assert page.evaluate("t => astragalVerify.canonical(astragalVerify.parseJSON(t))",
                             c["json"]) == c["canonical"]
    for e in trust["entries"]:
        got = page.evaluate("""async e => {
            const v = astragalVerify, entry = v.parseJSON(e);
            const content = new Map([...entry].filter(([k]) => !["id", "prev", "commit", "hash",
                                                                  "sig"].includes(k)));
            return [await v.H(content), await v.H({id: entry.get("id"), prev: entry.get("prev"),
                    visibility: entry.get("visibility"), commit: entry.get("commit")})];
        }""", json.dumps(e["entry"]))
        assert got == [e["entry"]["commit"], e["entry"]["hash"]]
    for name in ("export", "export_32_byte_seeds"):
        out = page.evaluate("async x => { const r = await astragalVerify.checkLog("
                            "astragalVerify.parseJSON(x), {key: null, receipts: []}); "
                            "return [r.problems, r.signed, r.derived]; }", json.dumps(trust[name]))
        assert out == [[], trust[f"{name}_signed"], trust[f"{name}_derived"]]
    t = trust["tree"]
    got = page.evaluate("async t => [await astragalVerify.proofRoot(t.secret, t.nonce, t.proof), "
                        "await astragalVerify.derive(t.seed, t.room, t.epoch, t.member, t.client, "
                        "t.nonce, t.sizes, t.secret)]", t)
    assert got == [t["root"], t["faces"]]


@pytest.mark.parametrize("content, said", [
    ("{not json", "cannot read the export"), ('{"format": "other"}', "not an astragal log export"),
    ("[" * 5000 + "]" * 5000, "nested too deeply"), ('{"format": "astragal-log/2"}',
                                                     "no list of entries"),
    ('{"format": "astragal-log/2", "entries": [NaN]}', "cannot read the export"),
])
def test_a_file_that_is_not_an_export_is_said_so(page: Any, tmp_path: Path, content: str,
                                                 said: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    page.reload()
    page.set_input_files("#export-file", str(path))
    page.click("#check")
    page.wait_for_selector("body[data-done]")
    shown = page.inner_text("#verdict") + " " + page.inner_text("#problems")
    assert said in shown, shown


# ------------------------------------------------------------------------------------------------
# Served by the table: the room's own link to the page, the player's client seed and receipts


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Any]:
    from astragal.web.app import create_app
    from astragal.web.caps import LOOSE
    from astragal.web.room import Table
    from astragal.web.store import SQLiteStore

    from .conftest import ServerThread

    store = SQLiteStore(tmp_path / "table.db")
    table = Table(store, roll_rate=(100.0, 100), caps=LOOSE)
    with ServerThread(create_app(store, table=table, door_rate=(100.0, 100))) as s:
        s.table = table
        yield s


def test_a_player_sets_a_client_seed_and_checks_the_room_from_its_link(browser: Any, served: Any) -> None:
    from .test_browser import join, open_room, unexpected

    errors: list[str] = []
    gm, link = open_room(browser, served, errors, system="dice")
    wu = join(browser, link, "Wu", errors)
    wu.page.evaluate("document.getElementById('table-panel').open = true")
    wu.page.fill("#client-seed", "bad\u00e9seed")  # not ASCII: refused, said so
    wu.page.press("#client-seed", "Enter")
    assert "printable ASCII" in wu.page.inner_text("#client-seed-error")
    wu.page.fill("#client-seed", "my lucky seed")
    wu.page.press("#client-seed", "Enter")
    wu.roll("d20")
    wu.entry(1).wait_for()
    gm.entry(1).wait_for()
    gm.roll("2d6")
    wu.entry(2).wait_for()
    gm.page.evaluate("document.getElementById('table-panel').open = true")
    gm.page.click("#end-epoch")
    wu.entry(3).wait_for()
    room = served.table.store.entries(wu.page.url.split("/r/")[1].split("#")[0], 0, 10)
    assert room[0]["fair"]["client"] == "my lucky seed"
    kept = wu.page.evaluate("loadReceipts()")
    assert kept[0] == {"id": 1, "hash": room[0]["hash"], "sig": room[0]["sig"],
                       "client": "my lucky seed", "commitment": room[0]["fair"]["commitment"]}
    with wu.context.expect_page() as opened:
        wu.page.click("#verify-link")
    check = opened.value
    check.on("console", lambda msg: errors.append(f"console: {msg.text}")
             if msg.type == "error" else None)
    check.click("#check-room")
    check.wait_for_selector("body[data-done]")
    assert check.inner_text("#verdict") == "Intact", check.inner_text("#problems")
    summary = check.inner_text("#summary")
    assert "2 roll(s) have exactly the faces" in summary and "3 receipt(s) match" in summary
    assert "signed by the table's key" in summary and "the key the export states" not in summary
    assert not unexpected(errors), errors


def test_the_page_warns_when_the_table_rolls_with_another_client_seed(browser: Any, served: Any) -> None:
    from .test_browser import open_room, unexpected

    honest = served.table.roll
    served.table.roll = lambda member, text, visibility="public", who="", client_seed="": honest(
        member, text, visibility, who, "the table's choice")
    errors: list[str] = []
    gm, _ = open_room(browser, served, errors, system="dice")
    gm.roll("d20")
    gm.entry(1).wait_for()
    assert "with another client seed than this page sent" in gm.page.inner_text("#roll-error")
    gm.page.evaluate("document.getElementById('table-panel').open = true")
    with gm.context.expect_page() as opened:
        gm.page.click("#verify-link")
    check = opened.value
    check.click("#check-room")
    check.wait_for_selector("body[data-done]")
    assert check.inner_text("#problems") == (
        "TAMPERED: entry 1: rolled with another client seed than the one the player's page "
        "sent (receipt 1)")
    assert not unexpected(errors), errors


def test_the_page_takes_the_theme_chosen_at_the_table(browser: Any, served: Any) -> None:
    from .test_browser import open_room, unexpected

    errors: list[str] = []
    gm, _ = open_room(browser, served, errors, system="dice")
    page = gm.page
    for _ in range(2):  # the system's light, then dark chosen at the table, then light again
        page.click("#theme-toggle")
        chosen = page.evaluate("document.documentElement.dataset.theme")
        page.evaluate("document.getElementById('table-panel').open = true")
        with gm.context.expect_page() as opened:
            page.click("#verify-link")
        check = opened.value
        check.wait_for_load_state()
        assert check.evaluate("document.documentElement.dataset.theme") == chosen
        background = check.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(22, 22, 24)") == (chosen == "dark"), (chosen, background)
        check.close()
    assert not unexpected(errors), errors


@pytest.mark.parametrize("name", [r[0] for r in REFUSALS])
def test_the_page_refuses_what_it_cannot_check_as_verify_log_does(page: Any, room: Room,
                                                                  name: str,
                                                                  tmp_path: Path) -> None:
    receipts = room.receipts(room.wu, tmp_path / "wu.json")
    export = room.table.export(room.gm)
    tamper, said = next((r[1], r[2]) for r in REFUSALS if r[0] == name)
    tamper(room)(export)
    shown = check(page, tmp_path, export, receipts, room.key)
    expected = python(export, receipts, room.key)
    assert any(p.startswith(said) for p in expected), expected
    assert shown["verdict"].startswith("TAMPERED") and sorted(shown["problems"]) == expected, (
        shown, expected)


# ------------------------------------------------------------------------------------------------
# Fight-tracker attacks: their faces derived from their fair records, as rolls' are


@pytest.fixture
def fight_room(tmp_path: Path) -> Room:
    from .test_trust_fight import FightRoom

    return FightRoom(tmp_path)


def test_a_room_with_attacks_checks_in_the_page_as_in_verify_log(page: Any, fight_room: Room,
                                                                 tmp_path: Path) -> None:
    from .test_trust_fight import attacks

    export = fight_room.table.export(fight_room.gm)
    shown = check(page, tmp_path, export, None, fight_room.key)
    report = verify_export(export, key=fight_room.key)
    assert report.ok and shown["verdict"] == "Intact", shown
    assert f"{report.derived} roll(s) have exactly the faces" in shown["summary"]
    assert f"{report.pending} roll(s) wait for their seed epoch" in shown["summary"]
    first = export["entries"][attacks(export)[0]]
    row = shown["rows"][first["id"] - 1]
    assert f"fight: {first['text']}" in row and "faces derived from the seed" in row, row
    assert " ".join(str(d[2]) for d in first["draws"]) in row


def _attack_tampers() -> list[Any]:
    from .test_trust_fight import ATTACK_TAMPERS

    # the damage signed by the operator, with faces the seed gives: only the rules can tell,
    # and only verify-log runs them (as for any roll's verdict)
    return [pytest.param(t[1], t[2], id=t[0]) for t in ATTACK_TAMPERS if not t[3]]


@pytest.mark.parametrize("make, said", _attack_tampers())
def test_every_tamper_of_an_attack_is_caught_by_the_page_as_by_verify_log(
        page: Any, fight_room: Room, tmp_path: Path, make: Any, said: str) -> None:
    export = fight_room.table.export(fight_room.gm)
    make(fight_room)(export)
    export["head"] = export["entries"][-1]["hash"]
    shown = check(page, tmp_path, export, None, fight_room.key)
    expected = python(export, None, fight_room.key)
    assert any(said in p for p in expected), expected
    assert shown["verdict"].startswith("TAMPERED") and sorted(shown["problems"]) == expected, (
        shown, expected)
