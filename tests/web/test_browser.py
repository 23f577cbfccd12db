"""The page in a real browser (Playwright driving Debian's Chromium), as a group would use it: a GM
and two players in three browsers, on desktops and phones, in light and dark.

Covers: rolling together live; a blind roll reaching only the GM; the layout at 360, 390, 768 and
1280 px (no horizontal scroll, every control visible and clickable, the roll bar at the bottom on
phones); dice tiles drawn from each roll's record; the verdict as the headline, coloured; the
table's tools (colours, theme, new-rolls marker, unread count, history, repeat, quick buttons,
visibility sign, reveal, new link, remove, examples, sheet checks, connection states, long text);
the fight tracker and turn order; axe-core (from npm, injected by the test, never served by the
page) on the start page and a busy room: no serious or critical violation.

Needs ``pip install playwright`` and Chromium at /usr/bin/chromium (``apt-get install -y
chromium``; never ``playwright install``); skips and says which is missing otherwise. Screenshots
of the room (phone and desktop, light and dark) go to $ASTRAGAL_SCREENSHOTS, else to a temporary
directory printed at the end of the run; ASTRAGAL_UPDATE_SCREENSHOT=1 also copies them to docs/.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import astragal
from astragal import Source
from astragal._rng import make_source
from astragal.web.store import SQLiteStore

from .conftest import WEB_EXTRA, ServerThread

pytest.importorskip("fastapi", reason=WEB_EXTRA)
pytest.importorskip("uvicorn", reason=WEB_EXTRA)

from astragal.web.app import create_app  # after the skip: needs the web extra
from astragal.web.caps import LOOSE
from astragal.web.room import Table

CHROMIUM = os.environ.get("ASTRAGAL_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
DOCS = Path(__file__).resolve().parents[2] / "docs"
EXPECTED = re.compile(r"console: Failed to load resource: .* status of (422|409|403)").match
WAIT = 10_000  # ms: generous for a loaded 2-core machine; the tests pass as soon as they can
WIDTHS = (360, 390, 768, 1280)
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 860}

sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="playwright is not installed: pip install playwright (do not run playwright install; "
           "the tests use Debian's Chromium)")
if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"Chromium is not at {CHROMIUM}: apt-get install -y chromium "
                "(or set ASTRAGAL_CHROMIUM)", allow_module_level=True)

# Faces for the next rolls, in order (a roll takes one script; none left: the OS's randomness).
SCRIPT: list[str] = []


def scripted() -> Source | None:
    """Typed faces for the next roll; none: the room's seeded faces (the table's own)."""
    return make_source(None, SCRIPT.pop(0)) if SCRIPT else None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    db = tmp_path_factory.mktemp("browser") / "table.db"
    store = SQLiteStore(db)
    # every page comes from 127.0.0.1: the per-address caps (tested in tests/reliability) would
    # throttle a module of tests that rolls fast, so only the per-room and per-request caps hold
    table = Table(store, source=scripted, roll_rate=(100.0, 100), caps=LOOSE)
    with ServerThread(create_app(store, table=table, door_rate=(100.0, 100))) as s:
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    where = os.environ.get("ASTRAGAL_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    yield path
    print(f"\nscreenshots of the web table: {path}")


class Player:
    """One person at the table: their own browser context (own storage, own key)."""

    def __init__(self, browser: Any, errors: list[str], viewport: dict[str, int] = DESKTOP,
                 scheme: str = "light", **extra: Any) -> None:
        mobile = viewport["width"] < 700
        self.context = browser.new_context(viewport=viewport, color_scheme=scheme,
                                           is_mobile=mobile, has_touch=mobile, **extra)
        self.page = self.context.new_page()
        self.page.set_default_timeout(WAIT)
        self.page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
        self.page.on("console", lambda msg: errors.append(f"console: {msg.text}")
                     if msg.type == "error" else None)

    def entry(self, n: int) -> Any:
        return self.page.locator(f'#log li[data-id="{n}"]')

    def roll(self, text: str, visibility: str = "public", faces: str | None = None) -> None:
        if faces is not None:
            SCRIPT.append(faces)
        self.page.select_option("#roll-visibility", visibility)
        self.page.fill("#roll-text", text)
        self.page.click("#roll-button")

    def last_id(self) -> int:
        return int(self.page.locator("#log li").last.get_attribute("data-id"))

    def close(self) -> None:
        self.context.close()


def open_room(browser: Any, server: ServerThread, errors: list[str], gm_name: str = "Mei",
              room_name: str = "The Jade Court", system: str = "jadeclaw",
              **extra: Any) -> tuple[Player, str]:
    gm = Player(browser, errors, **extra)
    gm.page.goto(server.url + "/")
    gm.page.wait_for_selector(f"#create-system option[value={system}]", state="attached")
    gm.page.fill("#create-name", room_name)
    gm.page.select_option("#create-system", system)
    gm.page.fill("#create-gm", gm_name)
    gm.page.click("#create-form button[type=submit]")
    gm.page.wait_for_selector("#live.on")
    return gm, gm.page.input_value("#join-link")


def join(browser: Any, link: str, name: str, errors: list[str], **extra: Any) -> Player:
    p = Player(browser, errors, **extra)
    p.page.goto(link)
    p.page.fill("#join-name", name)
    p.page.click("#join-form button[type=submit]")
    p.page.wait_for_selector("#live.on")
    return p


def as_member(browser: Any, link: str, errors: list[str], **extra: Any) -> Player:
    """Open a personal link (``/r/<room>#key=…``) in a fresh browser."""
    p = Player(browser, errors, **extra)
    p.page.goto(link)
    p.page.wait_for_selector("#live.on")
    return p


def unexpected(errors: list[str]) -> list[str]:
    return [e for e in errors if not EXPECTED(e)]


# ------------------------------------------------------------------------------------------------
# Rolling together


def test_three_pages_roll_together_live(browser: Any, server: ServerThread) -> None:
    errors: list[str] = []
    gm, link = open_room(browser, server, errors)
    assert re.fullmatch(re.escape(server.url) + r"/r/[A-Za-z0-9_-]{16,}", link)
    wu = join(browser, link, "Wu", errors)
    li = join(browser, link, "Li", errors)
    everyone = (gm, wu, li)

    wu.roll("d12 d8 vs 2d10")  # the room is Jadeclaw: no prefix
    for p in everyone:
        p.entry(1).wait_for()
        assert "Wu" in p.entry(1).inner_text()
        assert p.entry(1).locator(".die").count() == 4
    verdict = gm.entry(1).locator(".verdict").inner_text()
    assert verdict and verdict == wu.entry(1).locator(".verdict").inner_text()

    li.roll("d10 vs d8", "blind")
    gm.entry(2).wait_for()
    assert gm.entry(2).locator(".die").count() == 2 and "GM only" in gm.entry(2).inner_text()
    li.entry(2).wait_for()
    assert "only the GM sees" in li.entry(2).inner_text()
    assert li.entry(2).locator(".die").count() == 0

    gm.roll("d6 vs d6")  # a later public roll: once Wu has it, Wu has had every chance at #2
    wu.entry(3).wait_for()
    assert wu.entry(2).count() == 0
    assert "d10 vs d8" not in wu.page.content()

    # The transcript and the odds are one click away.
    wu.entry(1).locator("button", has_text="why?").click()
    assert "Score" in wu.entry(1).locator(".transcript").inner_text()
    wu.entry(1).get_by_role("button", name="odds").click()
    wu.page.wait_for_selector("#odds-panel:not([hidden]) .odds-table tr >> nth=1")
    assert "Success" in wu.page.inner_text("#odds-panel .odds-outcomes")

    # A reload keeps the log (and the player: the key stays in this browser).
    wu.page.reload()
    wu.page.wait_for_selector("#live.on")
    wu.entry(3).wait_for()
    assert [wu.entry(n).count() for n in (1, 2, 3)] == [1, 0, 1]
    assert wu.page.inner_text("#whoami") == "Wu"

    # A bad notation shows the error under the input, with a caret under the mistake.
    wu.roll("d12 d7 vs 2d10")
    wu.page.wait_for_selector("#roll-error .err-msg")
    error = wu.page.inner_text("#roll-error")
    assert "d7 is not a Jadeclaw die" in error
    assert "    ^^" in error
    assert wu.page.input_value("#roll-text") == "d12 d7 vs 2d10"  # kept to fix

    # The GM's own link opens the room as the GM on another device; the key leaves the URL.
    gm_link = gm.page.input_value("#gm-link")
    assert gm_link.startswith(link + "#key=")
    elsewhere = as_member(browser, gm_link, errors)
    assert elsewhere.page.inner_text("#whoami") == "Mei (GM)"
    assert "#" not in elsewhere.page.url
    elsewhere.entry(2).wait_for()
    assert elsewhere.entry(2).locator(".die").count() == 2  # the blind roll, in full
    elsewhere.close()
    for p in everyone:
        p.close()
    assert not unexpected(errors), errors


def test_user_text_is_shown_as_text_never_as_markup(browser: Any, server: ServerThread) -> None:
    errors: list[str] = []
    evil = '<img src=x onerror="window.pwned=1"><b>Bold</b>'
    gm, link = open_room(browser, server, errors, gm_name="Mei", room_name=evil)
    p = join(browser, link, "<i>Wu</i>", errors)
    p.page.fill("#sheet-stats", "Claws = d8")
    p.page.fill("#sheet-macros", f"x = jc: d4 {evil}")
    p.page.click("#save-sheet")
    p.page.wait_for_selector("#sheet-error .err-msg")  # checked on save: shown as text
    assert evil in p.page.inner_text("#sheet-error")
    p.roll(f"d6 {evil}")
    p.page.wait_for_selector("#roll-error .err-msg")
    gm.roll("d6 vs d4")
    p.entry(1).wait_for()
    for page in (gm.page, p.page):
        assert page.evaluate("window.pwned") is None
        assert page.locator("main img, main b, main i, header img, header b").count() == 0
    assert p.page.inner_text("#room-title") == evil
    gm.page.wait_for_selector("#members li >> nth=1")  # joins reach the others live
    assert "<i>Wu</i>" in gm.page.inner_text("#members")
    assert evil in p.page.inner_text("#roll-error")
    gm.close()
    p.close()
    assert not unexpected(errors), errors


def test_macros_roll_by_name_and_odds_before_rolling(browser: Any, server: ServerThread) -> None:
    errors: list[str] = []
    gm, link = open_room(browser, server, errors, room_name="Mai Li's Heist")
    wu = join(browser, link, "Wu", errors)
    wu.page.fill("#sheet-stats", "Speed = d10\nStealth = d8\nFast-Talk = d12\nWill = d10")
    wu.page.fill("#sheet-macros", "sneak = jc: Speed + Stealth vs routine")
    wu.page.click("#save-sheet")
    wu.page.get_by_role("button", name="sneak").click()
    gm.entry(1).wait_for()
    assert "jc: d10 & d8 vs routine" in gm.entry(1).inner_text()
    wu.page.fill("#roll-text", "Fast-Talk & Will vs 2d10")
    wu.page.click("#odds-button")
    wu.page.wait_for_selector("#odds-panel:not([hidden])")
    assert wu.page.inner_text("#odds-of") == "d12 & d10 vs 2d10"
    assert wu.page.locator("#odds-panel .odds-chart .col").count() > 10
    first_row = wu.page.locator("#odds-panel .odds-table tr >> nth=1").inner_text().split()
    assert first_row[0] == "-9" and first_row[2] == "100.00%"  # lowest margin first, P(>=) = 1
    # outcome bars take the verdict's colours
    assert wu.page.locator("#odds-panel .odds-outcomes .fill.tone-good").count() >= 1
    assert wu.page.locator("#odds-panel .odds-outcomes .fill.tone-bad").count() >= 2
    wu.page.click("#roll-button")
    gm.entry(2).wait_for()
    # on a phone, odds as text keep one row a line (they wrapped): the box scrolls sideways
    li = join(browser, link, "Li", errors, viewport=PHONE)
    li.page.fill("#roll-text", "jc: d12 d10 d8 vs 2d10")
    li.page.click("#odds-button")
    li.page.wait_for_selector("#odds-panel:not([hidden])")
    li.page.locator("#odds-panel details summary").click()
    rows = li.page.locator("#odds-panel .odds-text").evaluate(
        "n => Math.round((n.clientHeight - parseFloat(getComputedStyle(n).paddingTop)"
        " - parseFloat(getComputedStyle(n).paddingBottom)) / parseFloat(getComputedStyle(n).lineHeight))")
    lines = li.page.locator("#odds-panel .odds-text").evaluate("n => n.textContent.split('\\n').length")
    assert rows == lines, (rows, lines)
    # the next odds keep "as text" as the player left it: open
    li.page.fill("#roll-text", "jc: d12 vs d8")
    li.page.click("#odds-button")
    li.page.wait_for_function("() => document.querySelector('#odds-of').textContent === "
                              "'jc: d12 vs d8'")
    assert li.page.locator("#odds-panel details").evaluate("n => n.open")
    assert "jc: d12 vs d8" in li.page.inner_text("#odds-panel .odds-text")
    li.close()
    gm.close()
    wu.close()
    assert not errors, errors


# ------------------------------------------------------------------------------------------------
# Layout: 360 to 1280 px


def busy_room(browser: Any, server: ServerThread, errors: list[str]) -> tuple[Player, Player,
                                                                              Player, str]:
    """A GM and two players after a few rounds of play, in every kind of roll."""
    gm, link = open_room(browser, server, errors, room_name="The Jade Court")
    wu = join(browser, link, "Wu", errors)
    li = join(browser, link, "Li", errors)
    plays = [(wu, "d12 d8 vs 2d10", "public", "12,5 / 7,3"),
             (li, "d10 d8 -1p vs routine", "public", "9,2,4,3 / 5,2"),
             (gm, "L7 +1b fav vs L8", "gm", None),
             (li, "d10 vs d8", "blind", None),
             (wu, "cofd: 5", "public", "10,8,3,10,2,9,1"),
             (li, "od6: 3D wild vs moderate", "public", "4,2,6,5"),
             (wu, "dice: 2d20kh1+5", "public", "20,7"),
             (gm, "dice: 6x 4d6kh3", "public", None),
             (li, "dice: 4dF+1", "public", "3,2,1,3"),
             (wu, "d12 d10 vs 2d8", "public", "3,2 / 8,6")]
    for n, (p, text, vis, faces) in enumerate(plays, 1):
        p.roll(text, vis, faces)
        gm.entry(n).wait_for()
    gm.page.fill("#turns-name", "Wu")
    gm.page.fill("#turns-init", "14")
    gm.page.click("#turns-form button[type=submit]")
    gm.page.wait_for_selector("#turns li")
    gm.page.fill("#turns-name", "Li")
    gm.page.fill("#turns-init", "9")
    gm.page.click("#turns-form button[type=submit]")
    gm.page.wait_for_selector("#turns li >> nth=1")
    wu.page.wait_for_selector("#turn-now:not([hidden])")
    return gm, wu, li, gm.page.input_value("#gm-link")


CONTROLS = ("header button, #room button, #room input, #room select, #room textarea, "
            "#room summary")


def check_layout(p: Player, width: int) -> None:
    page = p.page
    scroll = page.evaluate("[document.documentElement.scrollWidth, document.body.scrollWidth]")
    assert max(scroll) <= width, f"{width}px: the page is {scroll} wide (horizontal scroll)"
    # Every control that is shown: inside the screen's width, and clickable (not covered).
    controls = page.locator(CONTROLS)
    checked = 0
    for i in range(controls.count()):
        c = controls.nth(i)
        if not c.is_visible():
            continue
        # the entries repeat the same few buttons: check those of the last two entries
        if c.evaluate("n => !!n.closest('#log li') && "
                      "n.closest('#log li').nextElementSibling?.nextElementSibling != null"):
            continue
        box = c.bounding_box()
        assert box is not None
        assert box["x"] >= -0.5 and box["x"] + box["width"] <= width + 0.5, \
            f"{width}px: {c.evaluate('n => n.outerHTML.slice(0, 80)')} is off the screen {box}"
        c.click(trial=True, timeout=3000)
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_layout_fits_every_width_and_screenshots(browser: Any, server: ServerThread,
                                                 shots: Path, scheme: str) -> None:
    errors: list[str] = []
    gm, wu, li, gm_link = busy_room(browser, server, errors)
    wu_link = wu.page.input_value("#gm-link")
    for width in WIDTHS:
        height = 844 if width < 700 else 900
        view = as_member(browser, gm_link, errors, viewport={"width": width, "height": height},
                         scheme=scheme)
        view.entry(10).wait_for()
        page = view.page
        assert page.evaluate("document.documentElement.dataset.theme") == scheme  # system's
        check_layout(view, width)
        bar = page.locator("#roll-form").bounding_box()
        panels = page.locator("details.panel")
        opened = [panels.nth(i).evaluate("n => n.open") for i in range(panels.count())]
        if width <= 640:  # phones: the roll bar is at the bottom of the screen, panels folded
            assert abs(bar["y"] + bar["height"] - height) <= 1, (width, bar)
            assert not any(opened)
        else:
            assert bar["y"] + bar["height"] <= height
        if width <= 900:
            assert not any(opened)
        else:
            assert all(opened[:4])
        # Odds on a phone: the panel comes into view (not below the fold)
        page.fill("#roll-text", "d12 d8 vs 2d10")
        page.click("#odds-button")
        page.wait_for_selector("#odds-panel:not([hidden]) .odds-table tr >> nth=1")
        page.wait_for_function("() => { const r = document.getElementById('odds-panel')"
                               ".getBoundingClientRect(); return r.top >= -1 && "
                               "r.top < innerHeight * 0.6; }")
        page.click("#odds-close")
        page.fill("#roll-text", "")
        if width in (390, 1280):
            page.evaluate("window.scrollTo(0, 0)")
            if width == 390:  # the end of the log, above the roll bar
                page.locator("#log li").last.evaluate("n => n.scrollIntoView({block: 'end'})")
            else:
                page.evaluate("const l = document.getElementById('log'); "
                              "l.scrollTop = l.scrollHeight")
            name = f"web-room-{'phone' if width == 390 else 'desktop'}-{scheme}.png"
            page.screenshot(path=str(shots / name))
            assert (shots / name).stat().st_size > 10_000
            if os.environ.get("ASTRAGAL_UPDATE_SCREENSHOT"):
                shutil.copyfile(shots / name, DOCS / name)
        # the last roll's "why?" opens its working on screen, above the phone's roll bar (it
        # opened under it, below the window)
        last = page.locator("#log li:has(button:text-is('why?'))").last
        last.locator("button", has_text="why?").click()
        shown = last.locator(".transcript")
        page.wait_for_function("n => { const r = n.getBoundingClientRect(); return r.height > 0 "
                               "&& r.bottom <= document.getElementById('roll-form')"
                               ".getBoundingClientRect().top + 1 && r.bottom <= innerHeight; }",
                               arg=shown.element_handle(), timeout=3000)
        view.close()
    # a player's phone, in the same run
    phone = as_member(browser, wu_link, errors, viewport=PHONE, scheme=scheme)
    phone.entry(10).wait_for()
    check_layout(phone, PHONE["width"])
    phone.close()
    for p in (gm, wu, li):
        p.close()
    assert not unexpected(errors), errors


# ------------------------------------------------------------------------------------------------
# Dice tiles and verdicts


def tiles(entry: Any) -> list[dict[str, Any]]:
    return entry.locator(".die").evaluate_all(
        "ns => ns.map(n => ({face: n.querySelector('.face').textContent, "
        "size: n.querySelector('.size').textContent, cls: n.className, "
        "said: n.querySelector('.sr-only').textContent, "
        "struck: [...n.querySelectorAll('.face s')].map(s => s.textContent)}))")


def test_dice_tiles_show_what_happened(browser: Any, server: ServerThread) -> None:
    errors: list[str] = []
    gm, _ = open_room(browser, server, errors, room_name="Dice", system="dice")
    n = 0

    def roll(text: str, faces: str | None) -> Any:
        nonlocal n
        gm.roll(text, faces=faces)
        n += 1
        gm.entry(n).wait_for()
        return gm.entry(n)

    # CofD: the exploded 10s show their new dice, every success is marked
    e = roll("cofd: 4", "10,8,10,3,2,9")  # the pool, then the 10s' new dice
    t = tiles(e)
    assert [x["face"] for x in t] == ["10+2", "8", "10+9", "3"]
    assert ["success" in x["cls"] for x in t] == [True, True, True, False]
    assert "10 then exploded: 2" in t[0]["said"] and "counts 1" in t[0]["said"]
    assert e.locator(".verdict").inner_text() == "4 successes: Success"
    assert "tone-good" in e.locator(".verdict").get_attribute("class")

    # re-rolls: the first face struck, the one that stands after it
    t = tiles(roll("8d6r<3", "1,4,5,2,6,3,3,4,6,6"))
    assert t[0]["face"] == "1→4" and t[0]["struck"] == ["1"]
    # r<3 is the re-roll's compare, not a target: no die is a success
    assert not any("success" in x["cls"] or "success" in x["said"] for x in t)
    assert "re-rolled to 4" in t[0]["said"] and "natural 1" not in t[0]["said"]
    assert [x["face"] for x in t[1:]] == ["5", "2→6", "3", "3", "4", "6", "6"]

    # exploding dice: the extra die is there
    t = tiles(roll("4d6!", "6,6,2,3,1,5"))
    assert len(t) == 6 and sum("explosion" in x["said"] for x in t) == 2

    # keep highest: the dropped die is struck and said to be dropped; a natural 20 is marked
    t = tiles(roll("2d20kh1+5", "20,3"))
    # the engine's crit flag when it gives one, else the natural maximum
    assert "crit" in t[0]["cls"].split() and "critical" in t[0]["said"]
    assert "critical" in gm.entry(n).locator(".verdict .nat").inner_text()  # the verdict too
    assert "dropped" in t[1]["cls"] and "dropped, does not count" in t[1]["said"]
    assert gm.entry(n).locator(".die.dropped .face").evaluate(
        "n => getComputedStyle(n).textDecorationLine") == "line-through"

    t = tiles(roll("d20", "1"))
    assert "fumble" in t[0]["cls"] and "fumble" in t[0]["said"]

    # successes against a target
    t = tiles(roll("10d10>=8", "8,9,1,2,10,3,4,5,6,7"))
    assert [i for i, x in enumerate(t) if "success" in x["cls"]] == [0, 1, 4]

    # Fudge dice: + / − / blank, the faces' names (not numbers of a d3)
    t = tiles(roll("4dF", "1,2,3,3"))
    assert [x["face"] for x in t] == ["−", "blank", "+", "+"] and {x["size"] for x in t} == {""}
    assert "counts -1" in t[0]["said"] and "blank" in t[1]["said"]

    # six rolls: six rows
    e = roll("6x 4d6kh3", None)
    assert e.locator(".rep").count() == 6
    assert [e.locator(".rep").nth(i).locator(".die").count() for i in range(6)] == [4] * 6
    assert e.locator(".rep .die.dropped").count() == 6
    # each die in the row of its own roll, from the record: here the rolls differ in dice
    e = roll("2x (1d4)d6", "1,5,3,2,2,2")
    assert [e.locator(".rep").nth(i).locator(".die .face").all_inner_texts()
            for i in range(2)] == [["1", "5"], ["3", "2", "2", "2"]]

    # a Jadeclaw contest: each side in its own labelled group; a Penalty's discarded roll struck
    e = roll("jc: d12 d8 -1p vs 2d10", "12,4,4,2 / 7,10")
    groups = e.locator(".dice-group[role=group]")
    assert [groups.nth(i).get_attribute("aria-label") for i in range(3)] == [
        "Actor, roll 1 (discarded)", "Actor, roll 2", "Opposition"]
    assert groups.nth(0).locator(".die.dropped").count() == 2
    assert groups.nth(1).locator(".die.dropped").count() == 0
    assert "tone-critical" not in e.get_attribute("class")
    assert "tone-bad" in e.get_attribute("class")  # an Overwhelming Failure

    # a Favored re-roll: the 1 struck, the new face after it
    t = tiles(roll("jc: d12 d8 fav vs d6", "7,1,5 / 3"))
    assert t[1]["struck"] == ["1"] and t[1]["face"] == "1→5" and "Favored" in t[1]["said"]

    # the D6 System: the Wild Die's explosion, and the verdict is the success level
    e = roll("od6: 3D wild vs 10", "4,2,6,5")
    t = tiles(e)
    assert t[2]["face"] == "6+5" and "wild" in t[2]["cls"]
    assert e.locator(".dice-group").nth(1).get_attribute("aria-label") == "Actor: Wild Die"
    assert e.locator(".verdict").inner_text() == "Result points +7: Good success"
    e = roll("od6: 4D+2 vs moderate", "6,3,1,5")
    assert "Good success" in e.locator(".verdict").inner_text()
    assert "bonus" not in e.locator(".verdict").inner_text()

    # the attack table: a Whiff is bad, a critical is critical
    e = roll("at: atk 4 wpn 3", "1,2,3")
    assert "tone-bad" in e.get_attribute("class")  # a Whiff
    assert "Whiffs" in e.locator(".verdict").inner_text()
    gm.close()
    assert not unexpected(errors), errors


def shown_values(entry: Any, successes: bool = False) -> list[int]:
    """What each tile counts, as a player reads it: nothing when struck out; a tile's own
    "⇒ n"; in a count of ``successes`` a success's 1, a failure's −1, else 0; else the faces it
    shows added up (a re-roll's struck faces not), less a penetration's −1."""
    return entry.locator(".die").evaluate_all(
        "(ns, successes) => ns.map(n => { if (n.classList.contains('dropped')) return 0;"
        " const w = n.querySelector('.worth'); if (w) return Number(w.textContent.slice(1));"
        " if (successes) return n.classList.contains('success') ? 1"
        " : n.classList.contains('failure') ? -1 : 0;"
        " const f = n.querySelector('.face').cloneNode(true);"
        " f.querySelectorAll('s, .step, .less').forEach(x => x.remove());"
        " const less = n.querySelectorAll('.face .less').length;"
        " return f.textContent.split('+').reduce((a, x) => a + Number(x), 0) - less; })",
        successes)


def number_in(text: str) -> int:
    return int(re.search(r"-?\d+", text).group(0))


@pytest.mark.parametrize(("viewport", "scheme"), [(PHONE, "dark"), (DESKTOP, "light")])
def test_tiles_add_up_to_the_total_and_mark_what_happened(browser: Any, server: ServerThread,
                                                          shots: Path, viewport: dict[str, int],
                                                          scheme: str) -> None:
    """Exploding, compounding and penetrating dice, CofD's 10-again and the Wild Die: the tiles
    add up to the total the verdict says, and the dice an explosion added are marked."""
    errors: list[str] = []
    gm, _ = open_room(browser, server, errors, room_name="Facts", system="dice",
                      viewport=viewport, scheme=scheme)
    n = 0

    def roll(text: str, faces: str) -> Any:
        nonlocal n
        gm.roll(text, faces=faces)
        n += 1
        gm.entry(n).wait_for()
        return gm.entry(n)

    e = roll("4d6!", "6,6,2,3,1,5")  # two explosions: 6 → 6 → 2
    assert sum(shown_values(e)) == number_in(e.locator(".verdict").inner_text()) == 23
    assert e.locator(".die.added").count() == 2
    assert e.locator(".die.added .sr-only").first.inner_text().find("explosion") > 0

    e = roll("3d6!!", "6,1,4,5")  # compounding: one die worth 7
    t = tiles(e)
    assert [x["face"] for x in t] == ["6+1", "4", "5"] and not t[0]["struck"]
    assert "re-rolled" not in t[0]["said"] and "natural 1" not in t[0]["said"]
    assert sum(shown_values(e)) == number_in(e.locator(".verdict").inner_text()) == 16

    e = roll("2d6!p", "6,6,2,3")  # penetrating: each added die counts one less
    assert e.locator(".die.added .less").count() == 2
    assert sum(shown_values(e)) == number_in(e.locator(".verdict").inner_text()) == 15

    e = roll("10d10>=8f1", "8,9,1,2,10,3,4,5,6,1")  # successes less failures
    assert e.locator(".verdict").inner_text().startswith("1 success")
    assert sum(shown_values(e, successes=True)) == number_in(e.locator(".verdict").inner_text()) == 1
    assert e.locator(".die.failure").count() == 2

    e = roll("cofd: 4", "10,8,10,10,3,2,9")  # 10-again: the third die's chain is two successes
    assert sum(shown_values(e, successes=True)) == number_in(e.locator(".verdict").inner_text()) == 5
    assert e.locator(".die").nth(3).locator(".worth").inner_text() == "⇒2"

    e = roll("od6: 3D wild vs 10", "4,2,6,5")  # the Wild Die's six adds and rolls again: 17
    assert [x["face"] for x in tiles(e)] == ["4", "2", "6+5"]
    assert sum(shown_values(e)) == 17
    assert "+7" in e.locator(".verdict").inner_text()  # 17 against 10

    e = roll("ds: d6+3", "6,6,2")  # a Critical: the 6s explode, its verdict says so
    assert sum(shown_values(e)) + 3 == number_in(e.locator(".verdict").inner_text()) == 17
    assert "crit" in tiles(e)[0]["cls"].split() and e.locator(".die.added").count() == 2
    assert "Critical" in e.locator(".verdict").inner_text()

    e = roll("4d6kh3+4d6kh3+4d6kh3", "6,5,4,1,3,3,2,2,6,6,6,6")  # three terms, three rows
    groups = e.locator(".dice-group")
    assert groups.count() == 3
    assert [groups.nth(i).locator(".die").count() for i in range(3)] == [4, 4, 4]
    assert [groups.nth(i).get_attribute("aria-label") for i in range(3)] == [
        "4d6kh3 = 15", "4d6kh3 = 8", "4d6kh3 = 18"]
    gm.page.locator("#log li").last.scroll_into_view_if_needed()
    name = f"web-dice-{'phone' if viewport is PHONE else 'desktop'}-{scheme}.png"
    gm.page.screenshot(path=str(shots / name), full_page=True)
    if os.environ.get("ASTRAGAL_UPDATE_SCREENSHOT"):
        shutil.copyfile(shots / name, DOCS / name)
    gm.close()
    assert not unexpected(errors), errors


def readd(cell: str) -> int:
    """The Markdown export's dice cell added up again, as a reader would: each die's worth after
    "=" where it says one, else the face that stands (a re-roll's last, a chain's sum); a
    dropped die counts nothing."""
    total = 0
    for die in cell.split(", "):
        face, *marks = die.split(" ")
        shown = face.split(":", 1)[1]
        if "dropped" in marks:
            continue
        if "=" in shown:
            total += int(shown.split("=")[1])
        else:
            total += sum(int(x) for x in shown.split("→")[-1].split("+"))
    return total


@pytest.mark.parametrize(("viewport", "scheme"), [(PHONE, "dark"), (DESKTOP, "light")])
def test_the_markdown_export_adds_up(browser: Any, server: ServerThread,
                                     viewport: dict[str, int], scheme: str) -> None:
    """Every counted face is in the Markdown export's dice, and re-added they make the verdict's
    number; the verdict is the game's verdict (the D6 System's level, not its bonus line)."""
    errors: list[str] = []
    gm, _ = open_room(browser, server, errors, room_name="Ledger", system="dice",
                      viewport=viewport, scheme=scheme)
    plays = [("3d6!!", "6,1,4,5", 16), ("4d6!", "6,6,2,3,1,5", 23), ("2d6!p", "6,6,2,3", 15),
             ("8d6r<3", "1,4,5,2,6,3,3,4,6,6", 37), ("4d6kh3", "6,5,4,1", 15),
             ("10d10>=8f1", "8,9,1,2,10,3,4,5,6,1", 1), ("cofd: 10", "10,10,8,9,1,2,3,4,5,6,8,3", 5),
             ("cofd: chance", "8", 0), ("od6: 3D wild vs 10", "4,2,6,5", 17),
             ("ds: d6+3", "6,6,2", 14), ("ds: d6+3", "1,4", 1), ("4dF", "1,2,3,3", 1)]
    for n, (text, faces, _) in enumerate(plays, 1):
        gm.roll(text, faces=faces)
        gm.entry(n).wait_for()
    gm.page.evaluate("document.getElementById('table-panel').open = true")
    with gm.page.expect_download() as got:
        gm.page.click("#export-md")
    rows = [line.split(" | ") for line in Path(got.value.path()).read_text(
        encoding="utf-8").splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == len(plays)
    for row, (text, _, total) in zip(rows, plays):
        dice, verdict = row[4], row[5]
        assert readd(dice) == total, (text, dice)
        if text.startswith("od6"):
            assert number_in(verdict.replace("+", "")) == 17 - 10, (text, verdict)
        elif text.startswith("ds:"):  # the die and the skill: its result is the last number
            assert int(re.findall(r"\d+", verdict)[-1]) == total + 3, (text, verdict)
        elif text != "cofd: chance":
            assert number_in(verdict) == total, (text, verdict)
    assert "bonus" not in rows[8][5] and "Good success" in rows[8][5]
    gm.close()
    assert not unexpected(errors), errors


# ------------------------------------------------------------------------------------------------
# The table's tools


def test_table_tools(browser: Any, server: ServerThread) -> None:
    errors: list[str] = []
    gm, link = open_room(browser, server, errors)
    wu = join(browser, link, "Wu", errors)
    li = join(browser, link, "Li", errors, viewport=PHONE)

    # the room's own examples: placeholder and suggestions in Jadeclaw, quick buttons
    assert wu.page.get_attribute("#roll-text", "placeholder") == "e.g. d12 d8 vs 2d10"
    assert "L7 +1b vs L8" in wu.page.locator("#roll-examples option").evaluate_all(
        "ns => ns.map(n => n.value)")
    wu.page.fill("#roll-text", "d12 d8 vs 2d10")
    wu.page.get_by_role("button", name="+1 Bonus").click()
    assert wu.page.input_value("#roll-text") == "d12 d8 +1b vs 2d10"
    wu.page.get_by_role("button", name="+1 Bonus").click()
    wu.page.get_by_role("button", name="+1 Penalty").click()
    assert wu.page.input_value("#roll-text") == "d12 d8 +2b -1p vs 2d10"

    # an error about a roll's text goes once the text is changed
    li.roll("d12 vs d7")
    li.page.wait_for_selector("#roll-error .err-msg")
    li.page.locator("#roll-text").press_sequentially("x")
    li.page.wait_for_function("() => !document.querySelector('#roll-error .err-msg')")

    # a colour per member
    wu.roll("d6 vs d6")
    li.roll("d8 vs d6")
    gm.entry(2).wait_for()
    colours = [gm.entry(i).locator(".who").evaluate("n => getComputedStyle(n).color")
               for i in (1, 2)]
    assert colours[0] != colours[1]

    # the next roll's audience is shown before rolling
    wu.page.select_option("#roll-visibility", "blind")
    assert wu.page.is_visible("#roll-note") and "blind" in wu.page.inner_text("#roll-note")
    assert wu.page.inner_text("#roll-button") == "Roll blind"
    wu.page.select_option("#roll-visibility", "gm")
    assert "GM and you" in wu.page.inner_text("#roll-note")
    wu.page.select_option("#roll-visibility", "public")
    assert not wu.page.is_visible("#roll-note")

    # reading older rolls: a marker, not a jump; the unread count in a background tab's title
    for i in range(3, 12):
        gm.roll(f"d{4 + 2 * (i % 5)} vs d6")
        wu.entry(i).wait_for()
    wu.page.evaluate("document.getElementById('log').scrollTop = 0")
    wu.page.evaluate("Object.defineProperty(document, 'hidden', {value: true, "
                     "configurable: true})")
    gm.roll("d12 vs d4")
    wu.entry(12).wait_for()
    assert wu.page.evaluate("document.getElementById('log').scrollTop") == 0
    assert wu.page.is_visible("#new-rolls")
    assert wu.page.title().startswith("(1) The Jade Court")
    assert "Mei rolled d12 vs d4" in wu.page.inner_text("#announce")
    wu.page.evaluate("Object.defineProperty(document, 'hidden', {value: false, "
                     "configurable: true}); document.dispatchEvent(new Event('visibilitychange'))")
    assert wu.page.title() == "The Jade Court · astragal"
    wu.page.click("#new-rolls")
    assert not wu.page.is_visible("#new-rolls")
    assert wu.entry(12).is_visible()
    li.entry(12).wait_for()

    # history per room, kept on the device: up and down after a reload
    wu.page.reload()
    wu.page.wait_for_selector("#live.on")
    wu.page.focus("#roll-text")
    wu.page.keyboard.press("ArrowUp")
    assert wu.page.input_value("#roll-text") == "d6 vs d6"
    wu.page.keyboard.press("ArrowDown")
    assert wu.page.input_value("#roll-text") == ""
    # the backlog is not announced again on load
    assert wu.page.inner_text("#announce") == ""

    # repeat this roll (on a phone scrolled back, the new-rolls marker leaves every entry's
    # links free to tap)
    li.page.evaluate("window.scrollTo(0, 0)")
    wu.entry(1).get_by_role("button", name="again").click()
    gm.entry(13).wait_for()
    assert gm.entry(13).locator(".text").inner_text() == "d6 vs d6"
    marker = li.page.locator("#new-rolls")
    marker.wait_for()
    box = marker.bounding_box()
    links = li.page.locator("#log .tools button")
    for i in range(links.count()):
        link = links.nth(i).bounding_box()
        if link is None:
            continue
        assert (link["x"] + link["width"] <= box["x"] or box["x"] + box["width"] <= link["x"]
                or link["y"] + link["height"] <= box["y"]
                or box["y"] + box["height"] <= link["y"]), (link, box)

    # a long paste: a warning, and nothing cut or rolled
    long = "d6 + " * 120 + "d6"
    wu.page.fill("#roll-text", long)
    assert wu.page.is_visible("#roll-warning") and "602 characters" in wu.page.inner_text(
        "#roll-warning")
    wu.page.click("#roll-button")  # the warning is the one message: no error repeats it
    assert wu.page.is_visible("#roll-warning") and "at most 500" in wu.page.inner_text(
        "#roll-warning")
    assert wu.page.inner_text("#roll-error") == ""
    assert wu.page.input_value("#roll-text") == long
    assert gm.entry(14).count() == 0

    # reveal a hidden roll: the GM any, a player their own GM-only roll (a blind roll stays
    # blind to its roller)
    li.roll("d10 vs d8", "blind", faces="9 / 2")
    gm.entry(14).wait_for()
    assert li.entry(14).get_by_role("button", name="reveal to all").count() == 0
    gm.entry(14).get_by_role("button", name="reveal to all").click()
    wu.entry(15).wait_for()
    assert "revealed Li's blind roll #14" in wu.entry(15).inner_text()
    assert wu.entry(15).locator(".die").count() == 2
    assert wu.entry(15).locator(".verdict").inner_text() == "9 vs 2: margin +7 → Overwhelming Success"
    wu.roll("d8 vs d8", "gm")
    gm.entry(16).wait_for()
    assert li.entry(16).count() == 0
    wu.entry(16).get_by_role("button", name="reveal to all").click()
    li.entry(17).wait_for()
    assert "revealed Wu's GM + roller roll #16" in li.entry(17).inner_text()
    assert wu.entry(16).get_by_role("button", name="reveal to all").count() == 0
    for p in (gm, wu, li):
        p.close()
    assert not unexpected(errors), errors


@pytest.mark.parametrize(("viewport", "scheme"), [(PHONE, "light"), (DESKTOP, "dark")])
def test_again_keeps_who_sees_the_roll(browser: Any, server: ServerThread,
                                      viewport: dict[str, int], scheme: str) -> None:
    """"again" on a blind or a GM-only entry rolls it for the same eyes, whatever the roll bar
    says now (after a reload it says everyone), and its button says who will see it."""
    errors: list[str] = []
    gm, link = open_room(browser, server, errors, room_name="Loot", system="dice",
                         viewport=viewport, scheme=scheme)
    wu = join(browser, link, "Wu", errors, viewport=viewport, scheme=scheme)
    li = join(browser, link, "Li", errors)
    gm.roll("d100", "blind")
    gm.entry(1).wait_for()
    wu.roll("d20", "gm")
    wu.entry(2).wait_for()
    for p in (gm, wu):
        p.page.reload()
        p.page.wait_for_selector("#live.on")
        assert p.page.input_value("#roll-visibility") == "public"
    button = gm.entry(1).locator("button", has_text="again")
    assert button.inner_text() == "again (GM only)"
    assert button.get_attribute("aria-label") == "roll d100 again, seen by GM only"
    button.click()
    gm.entry(3).wait_for()
    assert gm.entry(3).get_attribute("data-visibility") == "blind"
    button = wu.entry(2).locator("button", has_text="again")
    assert button.inner_text() == "again (GM + roller)"
    assert "seen by the GM and you" in button.get_attribute("aria-label")
    button.click()
    wu.entry(4).wait_for()
    gm.entry(4).wait_for()
    assert wu.entry(4).get_attribute("data-visibility") == "gm"
    gm.roll("d6")  # public: once Li has it, Li has had every chance at #3 and #4
    li.entry(5).wait_for()
    assert li.page.locator("#log li").count() == 1
    assert wu.entry(3).count() == 0
    for p in (gm, wu, li):
        p.close()
    assert not unexpected(errors), errors


@pytest.mark.parametrize(("viewport", "scheme"), [(PHONE, "dark"), (DESKTOP, "light")])
def test_a_new_personal_link_opened_in_the_same_tab_takes_effect(
        browser: Any, server: ServerThread, viewport: dict[str, int], scheme: str) -> None:
    """The tab shows the room as Wu; the GM's link (the same page, another ``#key=``) opened in
    it opens the room as the GM, and the key leaves the address bar."""
    errors: list[str] = []
    gm, link = open_room(browser, server, errors, room_name="Links", system="dice")
    gm_link = gm.page.input_value("#gm-link")
    wu = join(browser, link, "Wu", errors, viewport=viewport, scheme=scheme)
    assert wu.page.inner_text("#whoami") == "Wu"
    wu.page.goto(gm_link)
    wu.page.wait_for_function("() => document.getElementById('whoami').textContent === 'Mei (GM)'")
    wu.page.wait_for_selector("#live.on")
    assert "#key=" not in wu.page.url
    assert wu.page.locator("#end-epoch").get_attribute("hidden") is None  # the GM's tool
    gm.close()
    wu.close()
    assert not unexpected(errors), errors


def test_gm_gives_a_new_link_and_removes_a_member(browser: Any, server: ServerThread) -> None:
    errors: list[str] = []
    gm, link = open_room(browser, server, errors)
    wu = join(browser, link, "Wu", errors)
    li = join(browser, link, "Li", errors)
    gm.page.wait_for_selector("#members li >> nth=2")
    gm.page.on("dialog", lambda d: d.accept())
    # Wu lost their key: the GM makes a new link; the old key stops working at once
    gm.page.get_by_role("button", name="new link for Wu").click()
    gm.page.wait_for_selector("#member-link-box:not([hidden])")
    new_link = gm.page.input_value("#member-link")
    assert new_link.startswith(link + "#key=")
    wu.page.wait_for_selector("#live.off")
    assert "no longer opens this room" in wu.page.inner_text("#roll-error")
    back = as_member(browser, new_link, errors)
    assert back.page.inner_text("#whoami") == "Wu"
    back.roll("d6 vs d6")
    gm.entry(1).wait_for()
    assert "Wu" in gm.entry(1).inner_text()
    # The GM removes Li: Li's key stops working; Li's name is free again
    gm.page.get_by_role("button", name="remove Li").click()
    li.page.wait_for_selector("#live.off")
    gm.page.wait_for_function("() => document.querySelectorAll('#members li').length === 2")
    li.page.reload()
    li.page.wait_for_selector("#join:not([hidden])")
    assert "no longer opens this room" in li.page.inner_text("#join-error")
    # players see no GM buttons
    assert back.page.get_by_role("button", name="remove Li").count() == 0
    for p in (gm, wu, li, back):
        p.close()
    assert not [e for e in unexpected(errors) if "401" not in e], errors


def test_sheets_checked_when_saved(browser: Any, server: ServerThread) -> None:
    errors: list[str] = []
    gm, _link = open_room(browser, server, errors)
    p = gm.page
    p.fill("#sheet-stats", "Speed = d10\nClaws = d7")
    p.click("#save-sheet")
    p.wait_for_selector("#sheet-error .err-msg")
    assert p.inner_text("#sheet-error").splitlines() == [
        "Claws = d7", "        ^^",
        "character: Claws: d7 is not a Jadeclaw die: sizes are d4, d6, d8, d10, d12"]
    p.fill("#sheet-stats", "Speed = d10")
    p.fill("#sheet-macros", "run = jc: Speed vs routine\nflee = run")
    p.click("#save-sheet")
    p.wait_for_selector("#sheet-error .err-msg")
    assert "a macro cannot roll another macro" in p.inner_text("#sheet-error")
    assert p.inner_text("#sheet-error").splitlines()[:2] == ["flee = run", "       ^^^"]
    p.fill("#sheet-macros", "run = jc: Speed vs routine")
    p.click("#save-sheet")
    p.wait_for_selector("#sheet-saved:has-text('saved')")
    # "damage" and "dmg" are names a macro may take (a stat may not: it is read inside rolls)
    p.fill("#sheet-macros", "run = jc: Speed vs routine\ndamage = jc: d8 vs d6\ndmg = jc: d6 vs d6")
    p.click("#save-sheet")
    p.wait_for_selector("#macro-buttons button:text-is('dmg')")
    assert p.inner_text("#sheet-error") == ""
    before = p.locator("#log li").count()
    p.click("#macro-buttons button:text-is('damage')")
    p.wait_for_function("n => document.querySelectorAll('#log li').length > n", arg=before)
    assert p.locator("#log li").last.locator(".hint").inner_text() == "→ jc: d8 vs d6"
    # the Character and Macros text areas have labels
    assert p.get_by_label("Character", exact=True).count() == 1
    assert p.get_by_label("Macros", exact=True).count() == 1
    # a room in the general notation: its own placeholder, and adv/dis
    other, _ = open_room(browser, server, errors, room_name="Dungeon", system="dice")
    assert other.page.get_attribute("#roll-text", "placeholder") == "e.g. d20+5"
    other.page.fill("#roll-text", "d20+5")
    other.page.get_by_role("button", name="adv (").click()
    assert other.page.input_value("#roll-text") == "2d20kh1+5"
    other.page.get_by_role("button", name="dis (").click()
    assert other.page.input_value("#roll-text") == "2d20kl1+5"
    # with no d20 in the text, a d20 with advantage and then the text: notation that rolls
    for typed, made in (("d200+1", "2d20kh1 + d200+1"), ("+3", "2d20kh1 +3")):
        other.page.fill("#roll-text", typed)
        other.page.get_by_role("button", name="adv (").click()
        assert other.page.input_value("#roll-text") == made
        assert astragal.parse(made)
    # the start page chooses no game for you
    start = Player(browser, errors)
    start.page.goto(server.url + "/")
    start.page.wait_for_selector("#create-system option[value=dice]", state="attached")
    assert start.page.input_value("#create-system") == ""
    start.page.select_option("#create-system", "cofd")
    assert "5 9-again" in start.page.inner_text("#create-examples")
    for x in (gm, other, start):
        x.close()
    assert not unexpected(errors), errors


def test_quick_odds_on_the_start_page(browser: Any, server: ServerThread, shots: Path) -> None:
    # the same odds view as the room's panel: bars, chart, table; it fits a phone; an error
    # never sits above the odds of the text before it; a long law's far tails are folded
    errors: list[str] = []
    for viewport in (PHONE, DESKTOP):
        start = Player(browser, errors, viewport=viewport)
        page = start.page
        page.goto(server.url + "/")
        page.fill("#home-odds-text", "2d20kh1+5 >= 15")
        page.click("#home-odds-form button[type=submit]")
        page.wait_for_selector("#home-odds:not([hidden]) .odds-table tr >> nth=1")
        assert "2d20kh1+5 >= 15" in page.inner_text("#home-odds h3")
        assert "Success" in page.inner_text("#home-odds .odds-outcomes")
        width = viewport["width"]
        scroll = page.evaluate("[document.documentElement.scrollWidth, document.body.scrollWidth]")
        assert max(scroll) <= width, scroll
        for part in ("#home-odds .odds-outcomes", "#home-odds .odds-chart",
                     "#home-odds .odds-table"):
            box = page.locator(part).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (part, box)
        if width == PHONE["width"]:
            page.screenshot(path=str(shots / "web-start-odds-phone.png"), full_page=True)
        page.fill("#home-odds-text", "1d6+")
        page.click("#home-odds-form button[type=submit]")
        page.wait_for_selector("#home-odds-error:not(:empty)")
        assert page.locator("#home-odds").is_hidden()
        page.fill("#home-odds-text", "8d6!")
        page.click("#home-odds-form button[type=submit]")
        page.wait_for_selector("#home-odds:not([hidden]) .odds-folded:not([hidden])")
        assert page.inner_text("#home-odds-error") == ""
        rows = page.locator("#home-odds .odds-table tr").count() - 1
        cols = page.locator("#home-odds .odds-chart .col").count()
        note = page.inner_text("#home-odds .odds-folded")
        hidden = int(note.split()[0])
        assert rows == cols and rows + hidden == 213, (rows, hidden)  # 8 .. 220, all there
        assert "from 8 to 220 in all" in note
        start.close()
    assert not unexpected(errors), errors


def test_connection_states_and_server_down(browser: Any, tmp_path: Path) -> None:
    errors: list[str] = []
    store = SQLiteStore(tmp_path / "down.db")
    server = ServerThread(create_app(store, door_rate=(100.0, 100)))
    with server:
        gm, _ = open_room(browser, server, errors)
        assert gm.page.inner_text("#live") == "live"
    # the server is gone: plain words, not "Failed to fetch"
    gm.page.wait_for_selector("#live.wait")
    assert gm.page.inner_text("#live") in ("reconnecting…", "offline: waiting for the network…")
    gm.page.fill("#roll-text", "d6 vs d6")
    gm.page.click("#roll-button")
    gm.page.wait_for_selector("#roll-error .err-msg")
    text = gm.page.inner_text("#roll-error")
    assert "cannot be reached" in text and "Failed to fetch" not in text
    gm.close()
    assert not [e for e in errors if "ERR_CONNECTION_REFUSED" not in e
                and "WebSocket" not in e], errors


class StallProxy:
    """A TCP proxy in front of the table that can hold every byte, both ways (a stalled line:
    nothing is refused or closed, nothing arrives), then let it all through. ``flowing`` holds
    every connection; ``ws_flowing`` the WebSocket ones alone, so a test can let the line come
    back for plain requests first (as when the page's reconnect waits out its back-off)."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        self.flowing = threading.Event()
        self.flowing.set()
        self.ws_flowing = threading.Event()
        self.ws_flowing.set()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            self.open += [client, server]
            gates = [self.flowing]  # what this connection's bytes wait for (shared both ways)
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b, gates, a is client),
                                 daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, gates: list[threading.Event],
              upstream: bool) -> None:
        first = upstream
        try:
            while True:
                data = src.recv(65536)
                if first and b"upgrade: websocket" in data.lower():
                    gates.append(self.ws_flowing)
                first = False
                for gate in list(gates):
                    gate.wait()  # held: this piece waits here, the rest in the socket
                if not data:
                    dst.shutdown(socket.SHUT_WR)
                    return
                dst.sendall(data)
        except OSError:
            return

    def close(self) -> None:
        self.flowing.set()
        self.ws_flowing.set()
        self.listener.close()
        for sock in self.open:
            with contextlib.suppress(OSError):
                sock.close()


@pytest.mark.parametrize(("viewport", "scheme"), [(PHONE, "dark"), (DESKTOP, "light")])
def test_a_stalled_line_is_said_down_and_catches_up(browser: Any, server: ServerThread,
                                                    shots: Path, viewport: dict[str, int],
                                                    scheme: str) -> None:
    """Every byte held (no close, no error: the browser's closing handshake would wait a
    minute): the page says the line is down within 10 s, a roll made meanwhile shows as
    pending; once the line is back it is live within 10 s, with what was rolled meanwhile, and
    the pending roll went once. The line comes back for the held roll first and for the live
    connection a moment later (the page's reconnect in its back-off): the roll's answer, the
    newest entry, must not make the new connection start after the entry rolled meanwhile."""
    errors: list[str] = []
    proxy = StallProxy(server.port)
    try:
        gm, link = open_room(browser, server, errors, room_name="Stall", system="dice")
        wu_link = link.replace(server.url, proxy.url)
        wu = join(browser, wu_link, "Wu", errors, viewport=viewport, scheme=scheme)
        wu.roll("d4")
        gm.entry(1).wait_for()
        proxy.flowing.clear()
        proxy.ws_flowing.clear()
        wu.page.wait_for_selector("#live.wait", timeout=10_000)
        assert wu.page.inner_text("#live") == "reconnecting…"
        gm.roll("d6")  # at the table meanwhile
        gm.entry(2).wait_for()
        wu.roll("d8")  # held on the line
        wu.page.wait_for_selector("#pending li")
        assert "d8" in wu.page.inner_text("#pending") and \
            wu.page.inner_text("#roll-button") == "sending…"
        name = f"web-stalled-{'phone' if viewport is PHONE else 'desktop'}-{scheme}.png"
        wu.page.screenshot(path=str(shots / name))
        if os.environ.get("ASTRAGAL_UPDATE_SCREENSHOT"):
            shutil.copyfile(shots / name, DOCS / name)
        proxy.flowing.set()  # the held roll arrives and is answered; the live line still held
        wu.entry(3).wait_for(timeout=10_000)
        assert wu.page.locator("#pending li").count() == 0
        assert wu.page.inner_text("#live") == "reconnecting…"
        proxy.ws_flowing.set()
        wu.page.wait_for_selector("#live.on", timeout=10_000)
        wu.entry(2).wait_for(timeout=10_000)
        wu.entry(3).wait_for(timeout=10_000)
        gm.entry(3).wait_for()
        assert wu.page.locator("#pending li").count() == 0
        gm.roll("d10")  # later: the d8 went once, not twice
        gm.entry(4).wait_for()
        wu.entry(4).wait_for()
        for p in (gm, wu):
            texts = p.page.locator("#log li code.text").all_inner_texts()
            assert texts == ["d4", "d6", "d8", "d10"], texts
        gm.close()
        wu.close()
    finally:
        proxy.close()
    assert not [e for e in unexpected(errors) if "WebSocket" not in e], errors


@pytest.mark.parametrize(("viewport", "scheme"), [(PHONE, "light"), (DESKTOP, "dark")])
def test_two_next_turn_presses_at_once_advance_one_turn(browser: Any, server: ServerThread,
                                                        viewport: dict[str, int],
                                                        scheme: str) -> None:
    """Next turn pressed twice before the first press is answered: one turn passes, on every
    page, the GM's other device too (each press names the turn it ends)."""
    errors: list[str] = []
    gm, link = open_room(browser, server, errors, room_name="Turns", system="dice",
                         viewport=viewport, scheme=scheme)
    other = as_member(browser, gm.page.input_value("#gm-link"), errors)
    wu = join(browser, link, "Wu", errors)
    for p in (gm, other):
        p.page.evaluate("document.getElementById('turns-panel').open = true")
    for name, init in (("Wu", "14"), ("Li", "9"), ("Orc", "5")):
        gm.page.fill("#turns-name", name)
        gm.page.fill("#turns-init", init)
        gm.page.click("#turns-form button[type=submit]")
        gm.page.wait_for_selector(f"#turns li:has-text('{name}')")
    gm.page.click("#turns-next")
    for p in (gm, other, wu):
        p.page.wait_for_selector("#turn-now:has-text(\"Round 1: Wu's turn\")")
    answers: list[int] = []  # the three presses' answers, from either page
    for p in (gm, other):
        p.page.on("response", lambda r: answers.append(r.status)
                  if r.url.endswith("/turns") and r.request.method == "POST" else None)
    # a double press: the second before the first is answered (as a double tap)
    gm.page.evaluate("() => { const b = document.getElementById('turns-next'); b.click(); "
                     "b.click(); }")
    for _ in range(WAIT // 100):
        if len(answers) >= 2:
            break
        gm.page.wait_for_timeout(100)
    assert sorted(answers) == [201, 422], answers  # one press ended the turn
    said = gm.page.inner_text("#turns-error") + other.page.inner_text("#turns-error")
    assert "Round 1: Wu's turn has already ended" in said
    gm.roll("d6")  # a later entry: once every page has it, each has every turn entry before it
    for p in (gm, other, wu):
        p.page.wait_for_selector("#log li code.text:text-is('d6')")
        assert p.page.inner_text("#turn-now") == "Round 1: Li's turn"
        assert p.page.locator("#log li[data-kind=turns]").count() == 5  # 3 adds, start, one next
    for p in (gm, other, wu):
        p.close()
    assert not unexpected(errors), errors


def test_keyboard_and_screen_reader_basics(browser: Any, server: ServerThread) -> None:
    # a player with the keyboard only: one's own roll and the odds are said (the status
    # region), the Roll button keeps the focus, Escape closes the odds and the focus returns to
    # what opened them, Copy keeps the focus, the log's buttons say which roll they act on;
    # on a phone, a focused button is never under the roll bar
    errors: list[str] = []
    gm, link = open_room(browser, server, errors, system="dice", room_name="Keys")
    page = gm.page
    page.fill("#roll-text", "d20+3")
    page.focus("#roll-button")
    page.keyboard.press("Space")
    gm.entry(1).wait_for()
    page.wait_for_function("() => document.getElementById('announce').textContent"
                           ".startsWith('You rolled d20+3: ')")
    assert page.evaluate("document.activeElement.id") == "roll-button"
    page.fill("#roll-text", "2d20kh1 >= 15")
    page.focus("#odds-button")
    page.keyboard.press("Enter")
    page.wait_for_selector("#odds-panel:not([hidden])")
    page.wait_for_function("() => document.getElementById('announce').textContent"
                           ".startsWith('Odds of 2d20kh1 >= 15: Success')")
    page.keyboard.press("Escape")
    assert page.locator("#odds-panel").is_hidden()
    assert page.evaluate("document.activeElement.id") == "odds-button"
    odds = gm.entry(1).get_by_role("button", name="odds of d20+3")
    assert gm.entry(1).get_by_role("button", name="roll d20+3 again").count() == 1
    assert gm.entry(1).get_by_role("button", name="why: Mei's d20+3").count() == 1
    odds.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#odds-panel:not([hidden])")
    page.click("#odds-close")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "odds of d20+3"
    # a roll refused: the roll box says it is invalid, described by the error, until edited
    page.fill("#roll-text", "2d6+")
    page.keyboard.press("Enter")
    page.wait_for_selector("#roll-error .err-msg")
    assert page.get_attribute("#roll-text", "aria-invalid") == "true"
    assert "roll-error" in page.get_attribute("#roll-text", "aria-describedby").split()
    page.fill("#roll-text", "2d6+1")
    assert page.get_attribute("#roll-text", "aria-invalid") is None
    # the panels' ▸ and the names' ● are drawn, not read aloud; the quick buttons say what
    # they do beside their short words
    said = page.locator("body").aria_snapshot()  # what a screen reader is given
    assert "▸" not in said and "▾" not in said and "●" not in said, said[:400]
    assert page.get_by_role("button", name="adv (advantage").count() == 1
    page.focus("#copy-join")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('announce').textContent"
                           ".startsWith('The join link is')")
    assert page.evaluate("document.activeElement.id") == "copy-join"
    for n in range(2, 8):
        gm.roll(f"d{n + 4}")
        gm.entry(n).wait_for()
    phone = join(browser, link, "Pia", errors, viewport=PHONE)
    phone.entry(7).wait_for()
    # the first Tab in the room reaches the link past the log to the roll box, and it works
    phone.page.reload()  # the page as it opens: the keyboard at its start
    phone.page.wait_for_selector("#live.on")
    phone.entry(7).wait_for()
    phone.page.keyboard.press("Tab")
    assert phone.page.evaluate("document.activeElement.id") == "skip-to-roll"
    assert phone.page.locator("#skip-to-roll").bounding_box()["y"] >= 0  # shown when focused
    phone.page.keyboard.press("Enter")
    assert phone.page.evaluate("document.activeElement.id") == "roll-text"
    bar = phone.page.locator("#roll-form").bounding_box()
    phone.page.evaluate("window.scrollTo(0, 0)")
    phone.page.focus("#log")
    checked = 0
    for _ in range(40):  # Tab through the log's buttons, as a keyboard user moves
        phone.page.keyboard.press("Tab")
        box = phone.page.evaluate("(() => { const n = document.activeElement; if "
                                  "(!n.closest('#log') || n.id === 'log') return null; "
                                  "const r = n.getBoundingClientRect(); return [r.top, r.bottom, "
                                  "n.getAttribute('aria-label')]; })()")
        if box is None:
            break
        assert box[1] <= bar["y"] + 1, (box, bar)  # above the roll bar, in sight
        checked += 1
    assert checked >= 15
    phone.close()
    gm.close()
    assert not unexpected(errors), errors


def test_a_roll_the_busy_log_turned_away_is_sent_again(browser: Any, tmp_path: Path) -> None:
    # 503 Busy: other rolls took the log's next places eight times over and this one was not
    # stored; the page sends it again (twice) before it shows the player an error
    from astragal.web.basics import TableError

    class Jammed(Table):
        jams = 0

        def roll(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            if self.jams:
                self.jams -= 1
                raise TableError(503, "Busy", "the room's log is too busy to take this roll: "
                                 "try again", retry_after=1)
            return super().roll(*args, **kwargs)

    errors: list[str] = []
    store = SQLiteStore(tmp_path / "busy.db")
    table = Jammed(store, roll_rate=(100.0, 100), caps=LOOSE)
    with ServerThread(create_app(store, table=table, door_rate=(100.0, 100))) as server:
        gm, _ = open_room(browser, server, errors, system="dice")
        table.jams = 2
        gm.roll("1d20+5")
        gm.entry(1).wait_for()
        assert table.jams == 0 and gm.page.inner_text("#roll-error") == ""
        assert gm.page.input_value("#roll-text") == ""  # rolled: the box is cleared
        table.jams = 3  # busy three times running: now the player is told
        gm.roll("2d6")
        gm.page.wait_for_selector("#roll-error .err-msg")
        assert "too busy" in gm.page.inner_text("#roll-error")
        assert gm.page.locator("#log li").count() == 1
        gm.close()
    assert not [e for e in errors if "status of 503" not in e], errors


# ------------------------------------------------------------------------------------------------
# Fight tracker (attack table) and turn order (any game)


def fight_room(browser: Any, server: ServerThread, errors: list[str],
               fighters: tuple[str, ...]) -> tuple[Player, str]:
    """An attack room whose GM (on a desktop) added ``fighters`` (fight commands)."""
    gm, link = open_room(browser, server, errors, room_name="Arena", system="attack")
    for cmd in fighters:
        gm.page.fill("#fight-text", cmd)
        gm.page.click("#fight-form button[type=submit]")
        gm.page.wait_for_function("() => document.getElementById('fight-text').value === ''")
    return gm, link


def in_view(page: Any, selector: str) -> bool:
    """Whether the element is wholly on the screen, above the phone's fixed roll bar."""
    return bool(page.evaluate(
        "s => { const r = document.querySelector(s).getBoundingClientRect(); "
        "const bar = document.getElementById('roll-form'); const fixed = "
        "getComputedStyle(bar).position === 'fixed'; const bottom = fixed ? "
        "bar.getBoundingClientRect().top : innerHeight; "
        "return r.height > 0 && r.top >= 0 && r.bottom <= bottom; }", selector))


@pytest.mark.parametrize(("viewport", "scheme"), [({"width": 1280, "height": 800}, "light"),
                                                  (PHONE, "dark")])
def test_the_fight_tracker_beside_the_log_or_one_tap_away(browser: Any, server: ServerThread,
                                                          shots: Path, viewport: dict[str, int],
                                                          scheme: str) -> None:
    """A fight under way, the log long: on a desktop the tracker sits beside the log, its
    first fighter's attack on the screen with the log and the roll bar (it started 1,487 px
    down the side column); on a phone, from the end of the log, one tap brings it on screen."""
    errors: list[str] = []
    gm, link = fight_room(browser, server, errors, (
        "add Wu atk=4 wpn=3 armor=1 hp=8 side=party", "add Li atk=3 wpn=2 armor=1 hp=7 side=party",
        "add Orc atk=3 wpn=2 armor=2 hp=6 side=foes"))
    for n in range(4, 12):
        gm.roll("at: 3d6 vs 2d6")
        gm.entry(n).wait_for()
    wu = join(browser, link, "Wu", errors, viewport=viewport, scheme=scheme)
    wu.entry(11).wait_for()
    page = wu.page
    attack = "#fighters tr[data-name=Wu] .fighter-actions button"
    if viewport["width"] > 900:
        page.evaluate("window.scrollTo(0, 0)")
        assert in_view(page, "#fight-panel summary") and in_view(page, attack)
        assert in_view(page, "#roll-form") and in_view(page, "#log")
        log = page.locator("#log").bounding_box()
        assert page.locator("#fight-panel").bounding_box()["x"] >= log["x"] + log["width"]
        assert page.is_hidden("#to-fight")  # nothing to go to: it is in sight
    else:
        page.locator("#log li").last.evaluate("n => n.scrollIntoView({block: 'end'})")
        assert not in_view(page, attack)
        page.click("#to-fight")  # the roll bar's button, on screen wherever the log is read
        page.wait_for_function("() => document.getElementById('fight-panel').open")
        page.wait_for_function(f"() => {{ const r = document.querySelector({attack!r})"
                               ".getBoundingClientRect(); return r.top >= 0 && r.bottom <= "
                               "document.getElementById('roll-form').getBoundingClientRect()"
                               ".top; }")
        assert page.evaluate("document.activeElement.closest('#fight-panel') !== null")
    name = f"web-fight-{'phone' if viewport is PHONE else 'desktop'}-{scheme}.png"
    page.screenshot(path=str(shots / name))  # as the player sees it, before the layout's walk
    if os.environ.get("ASTRAGAL_UPDATE_SCREENSHOT"):
        shutil.copyfile(shots / name, DOCS / name)
    check_layout(wu, viewport["width"])
    gm.close()
    wu.close()
    assert not unexpected(errors), errors


@pytest.mark.parametrize(("viewport", "scheme"), [(DESKTOP, "dark"), (PHONE, "light")])
def test_an_attack_aims_at_the_other_side_and_the_last_one_undoes(
        browser: Any, server: ServerThread, shots: Path, viewport: dict[str, int],
        scheme: str) -> None:
    """Each fighter's attack aims at a standing fighter of the other side (it aimed at the
    first other fighter: Wu at Li, an ally); whoever made the last attack sees its undo, which
    puts the fight back; another player does not."""
    errors: list[str] = []
    gm, link = fight_room(browser, server, errors, (
        "add Wu atk=4 wpn=3 hp=8 side=party", "add Li atk=3 wpn=2 hp=7 side=party",
        "add Orc atk=3 wpn=2 armor=1 hp=30 side=foes", "add Goblin atk=2 wpn=2 hp=4 side=foes"))
    wu = join(browser, link, "Wu", errors, viewport=viewport, scheme=scheme)
    li = join(browser, link, "Li", errors)
    page = wu.page
    if viewport is PHONE:
        page.click("#to-fight")
    aims = "ns => ns.map(n => n.value)"
    row = page.locator("#fighters tr[data-name=Wu]")
    target = row.get_by_label("Wu attacks whom")
    assert page.locator("#fighters select[aria-label$='attacks whom']").evaluate_all(aims) == \
        ["Orc", "Orc", "Wu", "Wu"]
    assert "party" in row.locator("td.name").inner_text()
    row.get_by_role("button", name="attack: Wu").click()
    gm.page.wait_for_selector("#log li[data-kind=fight]:has-text('attack Wu Orc')")
    undo = page.locator("#fight-undo")
    undo.wait_for()
    assert undo.inner_text() == "undo attack Wu Orc"
    li.page.wait_for_selector("#log li[data-kind=fight]:has-text('attack Wu Orc')")
    assert li.page.is_hidden("#fight-undo")  # not Li's attack
    name = f"web-fight-undo-{'phone' if viewport is PHONE else 'desktop'}-{scheme}.png"
    undo.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / name))
    if os.environ.get("ASTRAGAL_UPDATE_SCREENSHOT"):
        shutil.copyfile(shots / name, DOCS / name)
    undo.click()
    gm.page.wait_for_selector("#log li[data-kind=fight]:has-text('Undone: attack Wu Orc')")
    gm.page.wait_for_function("() => document.querySelector('#fighters tr[data-name=Orc] "
                              "td[data-label=Damage]').innerText === '0/30'")
    page.wait_for_selector("#fight-undo", state="hidden")
    # the Orc falls: the Goblin, the other side still standing, is aimed at next
    gm.page.fill("#fight-text", "set Orc damage=30")
    gm.page.click("#fight-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#fighters tr[data-name=Orc]')"
                           ".innerText.includes('down')")
    assert target.input_value() == "Goblin"
    # a target picked stays picked when the tracker is rebuilt
    target.select_option("Li")
    li.page.locator("#fighters tr[data-name=Goblin]").get_by_role("button", name="pass").click()
    page.wait_for_selector("#log li[data-kind=fight]:has-text('pass Goblin')")
    assert row.get_by_label("Wu attacks whom").input_value() == "Li"
    for p in (gm, wu, li):
        p.close()
    assert not unexpected(errors), errors


def test_fight_tracker_and_turn_order(browser: Any, server: ServerThread) -> None:
    errors: list[str] = []
    gm, link = open_room(browser, server, errors, room_name="Arena", system="attack",
                         accept_downloads=True,
                         permissions=["clipboard-read", "clipboard-write"])
    # the join link, copied to the clipboard as the button says
    gm.page.evaluate("document.getElementById('share-panel').open = true")
    gm.page.click("#copy-join")
    gm.page.wait_for_selector("#copy-join:has-text('Copied')")
    assert gm.page.evaluate("navigator.clipboard.readText()") == link
    wu = join(browser, link, "Wu", errors)
    li = join(browser, link, "Li", errors, viewport=PHONE)
    assert gm.page.evaluate("document.getElementById('fight-panel').open")
    for cmd in ("add Wu atk=4 wpn=3 armor=1 luck=2 heal=1 hp=8",
                "add Orc atk=3 wpn=2 armor=2 shield=1 parry=1 heal=2 hp=6"):
        gm.page.fill("#fight-text", cmd)
        gm.page.click("#fight-form button[type=submit]")
        gm.page.wait_for_function("() => document.getElementById('fight-text').value === ''")
    wu.page.wait_for_selector("#fighters tr >> nth=2")
    assert "Orc" in wu.page.inner_text("#fighters")
    # a player may not add fighters; the error says why
    wu.page.evaluate("document.getElementById('fight-panel').open = true")
    wu.page.fill("#fight-text", "add Troll atk=9")
    wu.page.click("#fight-form button[type=submit]")
    wu.page.wait_for_selector("#fight-error .err-msg")
    assert "only the GM" in wu.page.inner_text("#fight-error")
    # Wu attacks the Orc from the tracker, berserk, with the table's rules
    SCRIPT.append("6,6,5,4 / 1,2,3,4")  # a double 6: 3 damage and a stun (A7, A10)
    row = wu.page.locator("#fighters tr[data-name=Wu]")
    row.get_by_label("Wu's stance").select_option("berserk")
    row.get_by_role("button", name="attack: Wu").focus()  # with the keyboard
    wu.page.keyboard.press("Enter")
    li.page.wait_for_selector("#log li[data-kind=fight] .die")
    # the tracker was rebuilt with the new state: the keyboard is still on Wu's attack
    wu.page.wait_for_function("() => document.activeElement.getAttribute('aria-label') === "
                              "'attack: Wu' && document.activeElement.closest('#fighters')")
    attack = li.page.locator("#log li[data-kind=fight]").last
    assert "attack Wu Orc berserk" in attack.inner_text()
    assert attack.locator(".dice-group").count() >= 2
    state = gm.page.locator("#fighters tr[data-name=Orc]").inner_text()
    assert "berserk" in gm.page.locator("#fighters tr[data-name=Wu]").inner_text()
    assert "3/6" in state and "stunned" in state
    assert "Hit! 3 damage" in attack.locator(".verdict").inner_text()
    # on a desktop the tracker sits in the side column: a card a fighter there too, nothing
    # scrolls sideways (its ten columns were cut off at the column's edge)
    assert gm.page.viewport_size["width"] > 900
    assert gm.page.locator("#fighters tr.head").is_hidden()
    assert gm.page.locator("#fight-panel .table-scroll").evaluate(
        "n => n.scrollWidth <= n.clientWidth")
    # the state is the room's: a reload (and another page) reads it back
    gm.page.reload()
    gm.page.wait_for_selector("#live.on")
    gm.page.wait_for_selector("#fighters tr >> nth=2")
    assert gm.page.locator("#fighters tr[data-name=Orc]").inner_text() == state
    # the Orc's turn passes (its stun ends with it), then it spends a Heal die on its damage
    li.page.evaluate("document.getElementById('fight-panel').open = true")
    orc = li.page.locator("#fighters tr[data-name=Orc]")
    # on the phone each fighter is a card: its numbers labelled, its buttons on the screen
    # without scrolling sideways
    damage = orc.locator("td[data-label=Damage]")
    assert damage.inner_text() == "3/6"
    assert "Damage" in damage.evaluate("n => getComputedStyle(n, '::before').content")
    assert li.page.locator("#fighters tr.head").is_hidden()
    width = li.page.viewport_size["width"]
    for name in ("attack", "pass", "heal"):
        box = orc.get_by_role("button", name=name).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, name
    orc.get_by_role("button", name="pass").click()
    li.page.wait_for_function("() => !document.querySelector('#fighters tr[data-name=Orc]')"
                              ".innerText.includes('stunned')")
    assert "Orc does not attack" in gm.page.locator("#log li[data-kind=fight]").last.inner_text()
    orc.get_by_role("button", name="heal").click()
    wu.page.wait_for_function("() => document.querySelector('#fighters tr[data-name=Orc]')"
                              ".innerText.includes('2/6')")
    cells = wu.page.locator("#fighters tr[data-name=Orc] td").all_inner_texts()
    assert cells[4] == "1" and cells[6] == "2/6"  # Heal 2 → 1, damage 3 → 2
    assert wu.page.locator("#fighters tr[data-name=Wu]").get_by_role("button", name="heal").count() == 0
    # turn order, for any game
    wu.page.evaluate("document.getElementById('turns-panel').open = true")
    for name, init in (("Wu", "14"), ("Orc", "9"), ("Li", "17")):
        wu.page.fill("#turns-name", name)
        wu.page.fill("#turns-init", init)
        wu.page.click("#turns-form button[type=submit]")
        wu.page.wait_for_selector(f"#turns li:has-text('{name}')")
    assert wu.page.locator("#turns li").all_inner_texts()[0].startswith("Li")
    # a name with spaces, and a name of 40 letters with none: the phone's page stays its width
    long = "X" * 40
    for name, init in (("Big Troll", "12"), (long, "3")):
        wu.page.fill("#turns-name", name)
        wu.page.fill("#turns-init", init)
        wu.page.click("#turns-form button[type=submit]")
        wu.page.wait_for_selector(f"#turns li:has-text('{name}')")
    li.page.evaluate("document.getElementById('turns-panel').open = true")
    li.page.wait_for_selector(f"#turns li:has-text('{long}')")
    # Li added none of these names: no × for them, and only the GM clears the order
    assert li.page.get_by_role("button", name=f"remove {long} from the turn order").count() == 0
    assert li.page.is_hidden("#turns-clear") and wu.page.is_hidden("#turns-clear")
    # ... and a roll by a member whose name is 40 letters with no space
    yan = join(browser, link, "Y" * 40, errors)
    # typed faces, as the attack's: a room whose rolls mix the seed's faces and typed ones
    # does not verify (the typed ones could be anyone's choice), and the export is checked below
    yan.roll("at: 3d6 vs 2d6", faces="3,4,5 / 2,6")
    li.page.wait_for_selector(f"#log li .who:has-text('{'Y' * 40}')")
    yan.close()
    check_layout(li, PHONE["width"])
    assert "Big Troll" in li.page.inner_text("#turns")
    for name in ("Big Troll", long):
        wu.page.get_by_role("button", name=f"remove {name} from the turn order").click()
        wu.page.wait_for_function(f"() => !document.getElementById('turns').innerText"
                                  f".includes({name!r})")
    assert "Li goes first" in li.page.inner_text("#turn-now")
    wu.page.click("#turns-next")
    li.page.wait_for_selector("#turn-now:has-text('Round 1')")
    assert li.page.inner_text("#turn-now") == "Round 1: Li's turn"
    gm.page.click("#turns-next")
    li.page.wait_for_selector("#turn-now:has-text('Wu')")
    assert li.page.inner_text("#turn-now") == "Round 1: Wu's turn"
    assert li.page.locator("#turns li.current").text_content().startswith("Wu")
    # clearing the order asks first, then clears it for everyone
    gm.page.evaluate("document.getElementById('turns-panel').open = true")
    gm.page.once("dialog", lambda d: d.dismiss())
    gm.page.click("#turns-clear")
    assert gm.page.locator("#turns li").count() == 3
    gm.page.once("dialog", lambda d: d.accept())
    gm.page.click("#turns-clear")
    li.page.wait_for_function("() => !document.querySelectorAll('#turns li').length")
    assert li.page.is_hidden("#turn-now") and gm.page.is_hidden("#turns-clear")

    # the log exported as JSON verifies with the table's own checker; as Markdown it reads
    from astragal.web.chain import verify_export

    gm.page.evaluate("document.getElementById('table-panel').open = true")
    with gm.page.expect_download() as got:
        gm.page.click("#export-json")
    assert got.value.suggested_filename.endswith(".json")
    data = json.loads(Path(got.value.path()).read_text(encoding="utf-8"))
    report = verify_export(data)
    assert report.ok and report.entries == len(data["entries"]) >= 10, report.problems
    assert [e["kind"] for e in data["entries"]].count("turns") == 10
    with gm.page.expect_download() as got:
        gm.page.click("#export-md")
    md = Path(got.value.path()).read_text(encoding="utf-8")
    assert "Arena" in md and "attack Wu Orc berserk" in md and "heal Orc" in md
    for p in (gm, wu, li):
        p.close()
    assert not unexpected(errors), errors


# ------------------------------------------------------------------------------------------------
# Accessibility: axe-core, from npm, injected by the test (the page never serves it)


@pytest.fixture(scope="session")
def axe_source() -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the accessibility check needs axe-core from npm")
    cache = Path(os.environ.get("ASTRAGAL_AXE_CACHE",
                                Path.home() / ".cache" / "astragal-tests" / "axe"))
    script = cache / "node_modules" / "axe-core" / "axe.min.js"
    if not script.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "install", "--prefix", str(cache), "--no-save",
                               "--no-audit", "--no-fund", "axe-core@4"],
                              capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0 or not script.is_file():
            pytest.skip(f"axe-core could not be installed from npm: {done.stderr[-300:]}")
    return script.read_text(encoding="utf-8")


def axe(page: Any, source: str) -> list[str]:
    page.add_script_tag(content=source)
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' ' +
                                                (n.failureSummary || '').slice(0, 160))}));
    }""")
    return [json.dumps(v) for v in result if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_accessibility_axe(browser: Any, server: ServerThread, axe_source: str,
                           scheme: str) -> None:
    errors: list[str] = []
    gm, wu, li, gm_link = busy_room(browser, server, errors)
    found: dict[str, list[str]] = {}
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        start = Player(browser, errors, viewport=viewport, scheme=scheme, bypass_csp=True)
        start.page.goto(server.url + "/")
        start.page.wait_for_selector("#create-system option[value=dice]", state="attached")
        # with the quick odds of a long law shown (chart, table, the folded tails' note)
        start.page.fill("#home-odds-text", "8d6!")
        start.page.click("#home-odds-form button[type=submit]")
        start.page.wait_for_selector("#home-odds:not([hidden]) .odds-folded:not([hidden])")
        found[f"start page, {name}"] = axe(start.page, axe_source)
        start.close()
        room = as_member(browser, gm_link, errors, viewport=viewport, scheme=scheme,
                         bypass_csp=True)
        room.entry(10).wait_for()
        room.page.locator("#log li").first.locator("button", has_text="why?").click()
        room.page.fill("#roll-text", "d12 d10 vs 2d8")  # and the odds panel open
        room.page.click("#odds-button")
        room.page.wait_for_selector("#odds-panel:not([hidden]) .odds-table tr >> nth=1")
        found[f"busy room, {name}"] = axe(room.page, axe_source)
        room.close()
    for p in (gm, wu, li):
        p.close()
    bad = {k: v for k, v in found.items() if v}
    assert not bad, json.dumps(bad, indent=1)
    assert not unexpected(errors), errors


def test_pages_keep_receipts_that_check_the_log(browser: Any, server: ServerThread,
                                                tmp_path: Path) -> None:
    """Each page keeps the signed entries it saw; the receipts file it downloads checks an
    export offline, and catches the export cut short."""
    from astragal.web.verify import verify_source

    errors: list[str] = []
    gm, link = open_room(browser, server, errors, system="dice")
    wu = join(browser, link, "Wu", errors)
    for n, text in enumerate(["d20", "2d6", "d8", "3d4"], 1):
        gm.roll(text, "gm" if n == 3 else "public")
        gm.entry(n).wait_for()
    wu.entry(4).wait_for()
    key = gm.page.get_attribute("#signing-key", "title")
    assert key and len(key) == 64
    for p in (gm, wu):
        p.page.evaluate("document.getElementById('table-panel').open = true")
    # the dice seed: committed in the room, revealed by the GM, and then every face checks
    assert wu.page.inner_text("#seed-epoch") == "1" and not wu.page.is_visible("#end-epoch")
    committed = wu.page.get_attribute("#seed-commitment", "title")
    gm.page.click("#end-epoch")
    wu.entry(5).wait_for()
    assert "Seed epoch 1 ended" in wu.entry(5).inner_text()
    assert wu.page.inner_text("#seed-epoch") == "2"
    assert wu.page.get_attribute("#seed-commitment", "title") != committed
    with wu.page.expect_download() as got:
        wu.page.click("#export-receipts")
    receipts = tmp_path / "wu-receipts.json"
    got.value.save_as(receipts)
    kept = json.loads(receipts.read_text())
    assert kept["key"] == key and [r["id"] for r in kept["receipts"]] == [1, 2, 4, 5]  # not 3
    with gm.page.expect_download() as got:
        gm.page.click("#export-json")
    export = tmp_path / "export.json"
    got.value.save_as(export)
    report = verify_source(str(export), key=key, receipts=str(receipts))
    assert report.ok and report.receipts == 4 and report.signed == 5, report.problems
    assert report.derived == 4  # every face of epoch 1 follows from its revealed seed
    cut = json.loads(export.read_text())
    cut["entries"] = cut["entries"][:2]
    cut["head"] = cut["entries"][-1]["hash"]
    export.write_text(json.dumps(cut))
    report = verify_source(str(export), key=key, receipts=str(receipts))
    assert any("entry 5: a receipt shows it" in p for p in report.problems)
    assert not unexpected(errors), errors
    for p in (gm, wu):
        p.close()


# ------------------------------------------------------------------------------------------------
# Luck


def test_luck_panel_places_each_roll_and_reports_each_player(browser: Any, server: ServerThread,
                                                             shots: Path) -> None:
    errors: list[str] = []
    gm, link = open_room(browser, server, errors, room_name="Lucky", system="dice")
    wu = join(browser, link, "Wu", errors)
    plays = [(wu, "d20", "20"), (gm, "3d6", "1,1,2"), (wu, "2d20kh1+5", "7,12"),
             (gm, "jc: d12 d8 vs 2d10", "12,5 / 7,3"), (wu, "d20", "1")]
    for n, (p, text, faces) in enumerate(plays, 1):
        p.roll(text, "public", faces)
        gm.entry(n).wait_for()
    for width, height in ((390, 844), (1280, 900)):
        view = as_member(browser, wu.page.input_value("#gm-link"), errors,
                         viewport={"width": width, "height": height})
        page = view.page
        view.entry(len(plays)).wait_for()
        page.locator("#luck-panel summary").click()
        page.wait_for_selector("#luck-body .luck-row >> nth=2")  # everyone, Wu and Mei
        rows = page.locator("#luck-body .luck-row")
        assert "Everyone" in rows.nth(0).inner_text()
        assert "5 rolls" in rows.nth(0).inner_text()  # a contest is placed by its margin
        # each roll's line says where it fell, as the table's API says
        page.wait_for_selector('#log li[data-id="1"] .luck')
        link = wu.page.input_value("#gm-link")
        room_id, key = link.split("/r/")[1].split("#key=")
        asked = urllib.request.Request(f"{server.url}/api/rooms/{room_id}/luck",
                                       headers={"Authorization": f"Bearer {key}"})
        with urllib.request.urlopen(asked, timeout=30) as answer:
            api = json.loads(answer.read())
        assert page.locator('#log li[data-id="1"] .luck').inner_text() == \
            f"luck {round(100 * api['entries']['1']['percentile'])}%"
        assert page.locator('#log li[data-id="1"] .luck').inner_text() == "luck 98%"  # a 20
        assert page.locator('#log li[data-id="5"] .luck').inner_text() == "luck 3%"  # a 1
        check_layout(view, width)
        page.locator("#luck-panel").scroll_into_view_if_needed()
        name = f"web-luck-{'phone' if width == 390 else 'desktop'}.png"
        page.screenshot(path=str(shots / name))
        if os.environ.get("ASTRAGAL_UPDATE_SCREENSHOT"):
            shutil.copyfile(shots / name, DOCS / name)
        view.close()
    for p in (gm, wu):
        p.close()
    assert not unexpected(errors), errors
