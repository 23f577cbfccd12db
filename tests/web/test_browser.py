"""The page in a real browser (Playwright driving Debian's Chromium): a GM and two players roll
together, live; a blind roll reaches only the GM; a reload keeps the log; a bad notation shows its
error under the input; user text is shown as text. Saves a screenshot of the room.

Needs ``pip install playwright`` and Chromium at /usr/bin/chromium (``apt-get install -y
chromium``; never ``playwright install``); skips and says which is missing otherwise. Set
ASTRAGAL_UPDATE_SCREENSHOT=1 to also refresh docs/web-room.png (the README's picture).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from astragal.web.store import SQLiteStore

from .conftest import WEB_EXTRA, ServerThread

pytest.importorskip("fastapi", reason=WEB_EXTRA)
pytest.importorskip("uvicorn", reason=WEB_EXTRA)

from astragal.web.app import create_app  # after the skip: needs the web extra

CHROMIUM = os.environ.get("ASTRAGAL_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
DOCS_PNG = Path(__file__).resolve().parents[2] / "docs" / "web-room.png"
EXPECTED_422 = re.compile(r"console: Failed to load resource: .* status of 422").match
WAIT = 10_000  # ms: generous for a loaded 2-core machine; the tests pass as soon as they can

sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="playwright is not installed: pip install playwright (do not run playwright install; "
           "the tests use Debian's Chromium)")
if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"Chromium is not at {CHROMIUM}: apt-get install -y chromium "
                "(or set ASTRAGAL_CHROMIUM)", allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    db = tmp_path_factory.mktemp("browser") / "table.db"
    with ServerThread(create_app(SQLiteStore(db), door_rate=(100.0, 100))) as s:
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Player:
    """One person at the table: their own browser context (own storage, own key)."""

    def __init__(self, browser: Any, errors: list[str]) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 860})
        self.page = self.context.new_page()
        self.page.set_default_timeout(WAIT)
        self.page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
        self.page.on("console", lambda msg: errors.append(f"console: {msg.text}")
                     if msg.type == "error" else None)

    def entry(self, n: int) -> Any:
        return self.page.locator(f'#log li[data-id="{n}"]')

    def roll(self, text: str, visibility: str = "public") -> None:
        self.page.select_option("#roll-visibility", visibility)
        self.page.fill("#roll-text", text)
        self.page.click("#roll-button")


def open_room(browser: Any, server: ServerThread, errors: list[str], gm_name: str = "Mei",
              room_name: str = "The Jade Court") -> tuple[Player, str]:
    gm = Player(browser, errors)
    gm.page.goto(server.url + "/")
    gm.page.wait_for_selector("#create-system option[value=jadeclaw]", state="attached")
    gm.page.fill("#create-name", room_name)
    gm.page.select_option("#create-system", "jadeclaw")
    gm.page.fill("#create-gm", gm_name)
    gm.page.click("#create-form button[type=submit]")
    gm.page.wait_for_selector("#live.on")
    return gm, gm.page.input_value("#join-link")


def join(browser: Any, link: str, name: str, errors: list[str]) -> Player:
    p = Player(browser, errors)
    p.page.goto(link)
    p.page.fill("#join-name", name)
    p.page.click("#join-form button[type=submit]")
    p.page.wait_for_selector("#live.on")
    return p


def test_three_pages_roll_together_live(browser: Any, server: ServerThread,
                                        tmp_path: Path) -> None:
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
    wu.entry(1).get_by_role("button", name="why?").click()
    assert "Score" in wu.entry(1).locator(".transcript").inner_text()
    wu.entry(1).get_by_role("button", name="odds").click()
    wu.page.wait_for_selector("#odds-panel:not([hidden]) #odds-table tr >> nth=1")
    assert "Success" in wu.page.inner_text("#odds-outcomes")

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
    elsewhere = Player(browser, errors)
    elsewhere.page.goto(gm_link)
    elsewhere.page.wait_for_selector("#live.on")
    assert elsewhere.page.inner_text("#whoami") == "Mei (GM)"
    assert "#" not in elsewhere.page.url
    elsewhere.entry(2).wait_for()
    assert elsewhere.entry(2).locator(".die").count() == 2  # the blind roll, in full
    elsewhere.context.close()

    shot = tmp_path / "web-room.png"
    gm.page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000
    for p in everyone:
        p.context.close()
    assert not [e for e in errors if not EXPECTED_422(e)], errors


def test_user_text_is_shown_as_text_never_as_markup(browser: Any, server: ServerThread) -> None:
    errors: list[str] = []
    evil = '<img src=x onerror="window.pwned=1"><b>Bold</b>'
    gm, link = open_room(browser, server, errors, gm_name="Mei", room_name=evil)
    p = join(browser, link, "<i>Wu</i>", errors)
    p.page.fill("#sheet-stats", "Claws = d8")
    p.page.fill("#sheet-macros", f'x = jc: d4 {evil}')
    p.page.click("#save-sheet")
    p.page.wait_for_selector("#macro-buttons .chip")
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
    gm.context.close()
    p.context.close()
    assert not [e for e in errors if not EXPECTED_422(e)], errors


def test_macros_roll_by_name_and_odds_before_rolling(browser: Any, server: ServerThread,
                                                      tmp_path: Path) -> None:
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
    assert wu.page.locator("#odds-chart .col").count() > 10
    first_row = wu.page.locator("#odds-table tr >> nth=1").inner_text().split()
    assert first_row[0] == "-9" and first_row[2] == "100.00%"  # lowest margin first, P(>=) = 1
    wu.page.click("#roll-button")
    gm.entry(2).wait_for()
    gm.roll("L7 +1b fav vs L8 q=expert:expert", "gm")
    gm.entry(3).wait_for()
    wu.roll("d12 d8 vs 2d10")
    gm.entry(4).wait_for()
    gm.entry(2).get_by_role("button", name="odds").click()
    gm.page.wait_for_selector("#odds-panel:not([hidden]) #odds-table tr >> nth=1")
    shot = tmp_path / "web-room.png"
    gm.page.screenshot(path=str(shot))
    if os.environ.get("ASTRAGAL_UPDATE_SCREENSHOT"):
        shutil.copyfile(shot, DOCS_PNG)
    gm.context.close()
    wu.context.close()
    assert not errors, errors
