"""A fresh server answers its first requests right, however many arrive at once (issue 38, 10).

Each game is imported on its first use; concurrent first requests once raced that import: a
request saw a half-imported game ("partially initialized module", a 500) or none at all ("'dice'
is not an installed system", a 422). Here a fresh ``astragal serve`` process gets, at once and
before anything else has loaded a game, rooms opened in every system and first rolls in every
system's notation.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from astragal.systems import get_system

from .conftest import WEB_EXTRA, free_socket

httpx = pytest.importorskip("httpx", reason=WEB_EXTRA)

SYSTEMS = ["attack", "cofd", "d6skill", "d6system", "dice", "jadeclaw"]  # the built-in games
EXAMPLES = {name: get_system(name).examples for name in SYSTEMS}


def _fresh_server(db: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``astragal serve`` that has loaded no game: it is waited for by /api/health alone."""
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()
    proc = subprocess.Popen(
        [sys.executable, "-m", "astragal.cli", "serve", "--host", "127.0.0.1", "--port",
         str(port), "--db", str(db)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "ASTRAGAL_KEY": str(db) + ".key"})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, "astragal serve exited"
        try:
            if httpx.get(url + "/api/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "astragal serve did not start"
        time.sleep(0.05)


def _first(url: str, system: str, room: tuple[str, str] | None) -> tuple[int, str]:
    """A room opened in ``system`` (no ``room``), or that game's first roll in ``room`` (a room
    of the general notation, made before any game was loaded)."""
    with httpx.Client(base_url=url, timeout=60) as c:
        if room is None:
            r = c.post("/api/rooms", json={"system": system, "name": "t"})
        else:
            room_id, key = room
            r = c.post(f"/api/rooms/{room_id}/rolls", json={"text": f"{system}: "
                                                                 f"{EXAMPLES[system][0]}"},
                       headers={"Authorization": f"Bearer {key}"})
        return r.status_code, r.text


def test_concurrent_first_requests_at_a_fresh_server(tmp_path: Path) -> None:
    """Every system: rooms opened and rolls made at once by the very first requests (no 500,
    no 422)."""
    proc, url = _fresh_server(tmp_path / "table.db")
    try:
        # the rooms the rolls go to: made straight in the database, so no game is loaded
        from astragal.web.store import SQLiteStore

        store = SQLiteStore(tmp_path / "table.db")
        rooms = []
        for _ in range(len(SYSTEMS) * 2):
            room, member, key = _bare_room()
            store.create_room(room, member)
            rooms.append((room["id"], key))
        store.close()
        # per system: two rooms opened, two first rolls (the burst of rooms per address is 30)
        jobs = [(s, None if n < 2 else rooms.pop()) for n in range(4) for s in SYSTEMS]
        with ThreadPoolExecutor(len(jobs)) as pool:
            answers = list(pool.map(lambda job: _first(url, *job), jobs))
        bad = [(s, r is not None, a) for (s, r), a in zip(jobs, answers, strict=True)
               if a[0] != 201]
        assert not bad, bad
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()


def _bare_room() -> tuple[dict[str, str], dict[str, str], str]:
    from astragal.web.basics import _now, key_hash, new_key, new_room_id

    rid, key, now = new_room_id(), new_key(), _now()
    return ({"id": rid, "name": "t", "system": "dice", "created": now},
            {"id": "gm-" + rid, "room": rid, "name": "GM", "role": "gm",
             "key_hash": key_hash(key), "created": now}, key)
