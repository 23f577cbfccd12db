"""The load and fault tools' shared parts: servers on 127.0.0.1, simulated players, the checks.

Every loop here is bounded in count and in time and stops by itself; every address is 127.0.0.1.

A *player* (the GM too) keeps one live WebSocket (reconnecting with the last id it saw when it
drops) and rolls over HTTP at a steady pace, within the production limit of 2 rolls per second.
Afterwards ``check`` proves, per room, from the GM's export and every player's records:

1. every accepted roll (HTTP 201) is in the log exactly once, with the roller, time and text it
   was answered with; no entry is in the log that nobody was answered for (except rolls answered
   ``maybe_stored`` when a database connection broke during COMMIT);
2. the hash chain verifies and every roll replays from its faces (``verify_export``);
3. every client saw the entries in one order, the log's: strictly rising ids, each entry equal to
   the log's entry of that id (the same hash), so no two clients can disagree on the order;
4. every client received every entry it may see (public; its own gm rolls; its own blind rolls
   as a stub; all of them for the GM), and none it may not.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("ASTRAGAL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
HOST = "127.0.0.1"

# A roll per system that each player can make (checked against the installed systems first).
ROLLS = {
    "jadeclaw": ["d12 d8 vs 2d10", "d10 d6 vs routine", "L7 +1b vs L5"],
    "cofd": ["5", "6 9-again vs 4", "3 rote"],
    "d6system": ["3D+1 wild vs moderate", "4D vs 2D+2"],
    "attack": ["3d6 vs 2d6", "atk 4 wpn 3 vs armor 2 parry 1"],
    "d6skill": ["d6+3 vs 5", "atk d6+6 vs def d6+3 dmg 4"],
    "dice": ["4d6kh3+2", "2d20kh1+5 >= 15", "d6! + d8"],
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def systems_and_rolls() -> dict[str, list[str]]:
    """Installed systems with the rolls above that they accept."""
    import astragal

    out: dict[str, list[str]] = {}
    for name, rolls in ROLLS.items():
        ok = []
        for text in rolls:
            try:
                astragal.parse(text, default_system=name)
                ok.append(text)
            except Exception:  # noqa: BLE001, S112 - a system not finished: skip its roll
                continue
        if ok:
            out[name] = ok
    return out


# ------------------------------------------------------------------------------------------------
# Servers


class Server:
    """One app instance (``tools/_serve.py``) in its own process on a port of 127.0.0.1."""

    def __init__(self, db: str, port: int | None = None, log: Path | None = None,
                 prefix: list[str] | None = None, caps: str = "loose",
                 key: Path | None = None) -> None:
        # The table's signing key: instances on one database share one key file, as `astragal
        # serve` does (beside a SQLite file by default; PostgreSQL needs one named here, so
        # that no key is written into the working folder)
        if key is None and db.startswith(("postgresql://", "postgres://")):
            raise ValueError("a server on PostgreSQL needs its key file named (key=...)")
        self.key = key
        self.caps = caps
        self.prefix = prefix or []  # e.g. setpriv, to run without the power to ignore modes
        self.db = db
        self.port = port or free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.ws = f"ws://{HOST}:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = log

    def start(self, timeout: float = 30.0) -> Server:
        import httpx

        out = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(
            [*self.prefix, sys.executable, str(ROOT / "tools" / "_serve.py"), "--port", str(self.port),
             "--db", self.db, "--caps", self.caps], stdout=subprocess.DEVNULL, stderr=out,
            cwd=ROOT, env={**os.environ, **({"ASTRAGAL_KEY": str(self.key)} if self.key else {})},
            start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server on {self.port} exited ({self.proc.returncode})")
            try:
                if httpx.get(self.url + "/api/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the server on {self.port} did not start")

    @property
    def pid(self) -> int:
        """The server's process id (its CPU time is read from /proc)."""
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flushing; as a crash or an OOM kill would."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def new_pg_schema(tag: str) -> str:
    return f"astragal_{tag}_{secrets.token_hex(4)}"


def pg_reachable() -> str | None:
    """None when PostgreSQL answers; else why not."""
    try:
        import psycopg

        with psycopg.connect(PG_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return None
    except Exception as exc:  # noqa: BLE001 - any reason: reported and the backend skipped
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"


def drop_pg_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def pg_db(schema: str, url: str = PG_URL) -> str:
    return f"{url}{'&' if '?' in url else '?'}schema={schema}"


# ------------------------------------------------------------------------------------------------
# Players


@dataclass
class Roll:
    status: int
    started: float
    latency: float
    body: dict[str, Any] | None = None
    error: str = ""


@dataclass
class Player:
    room: str
    system: str
    key: str
    member: str
    name: str
    role: str
    roll_to: list[str]  # HTTP base URLs to roll on (round robin)
    live_to: str  # the WS base URL to watch on
    rolls: list[Roll] = field(default_factory=list)
    seen: list[dict[str, Any]] = field(default_factory=list)
    seen_at: dict[int, float] = field(default_factory=dict)
    after: int = 0
    reconnects: int = 0
    live_errors: list[str] = field(default_factory=list)
    head: int = 0


async def open_room(client: Any, base: str, system: str, players: int,
                    live: list[str], roll: list[str], index: int) -> list[Player]:
    r = await client.post(f"{base}/api/rooms", json={"name": f"Load {index}", "system": system,
                                                      "gm_name": "GM"})
    r.raise_for_status()
    made = r.json()
    rid = made["room"]["id"]
    out = [Player(rid, system, made["key"], made["member"]["id"], "GM", "gm", roll,
                  live[index % len(live)])]
    for n in range(players):
        r = await client.post(f"{base}/api/rooms/{rid}/members", json={"name": f"P{n}"})
        r.raise_for_status()
        j = r.json()
        out.append(Player(rid, system, j["key"], j["member"]["id"], f"P{n}", "player", roll,
                          live[(index + n + 1) % len(live)]))
    return out


async def watch(p: Player, stop_at: float, done: asyncio.Event) -> None:
    """Keep a live connection until ``done`` (or ``stop_at``): reconnect and catch up by id."""
    from websockets.asyncio.client import connect

    backoff = 0.2
    while not done.is_set() and time.monotonic() < stop_at:
        try:
            async with connect(f"{p.live_to}/api/rooms/{p.room}/live", compression=None,
                               open_timeout=10, max_size=2**22) as ws:
                await ws.send(json.dumps({"key": p.key, "after": p.after}))
                backoff = 0.2
                while not done.is_set() and time.monotonic() < stop_at:
                    try:
                        raw = await asyncio.wait_for(ws.recv(), timeout=0.5)
                    except TimeoutError:
                        continue
                    msg = json.loads(raw)
                    if msg["type"] == "entry":
                        e = msg["entry"]
                        p.seen.append(e)
                        p.seen_at.setdefault(e["id"], time.monotonic())
                        p.after = max(p.after, e["id"])
                    elif msg["type"] == "head":
                        p.after = max(p.after, msg["id"])
                        p.head = max(p.head, msg["id"])
                    elif msg["type"] == "error":
                        p.live_errors.append(f"{msg.get('error')}: {msg.get('message')}")
                        break
        except Exception as exc:  # noqa: BLE001 - a dropped connection: count it, reconnect
            p.live_errors.append(type(exc).__name__)
        if done.is_set() or time.monotonic() >= stop_at:
            return
        p.reconnects += 1
        await asyncio.sleep(backoff)
        backoff = min(backoff * 2, 2.0)


async def roller(client: Any, p: Player, rolls: list[str], until: float, rate: float,
                 rng: random.Random, max_rolls: int) -> None:
    """Roll at ``rate`` per second (jittered) until ``until``, at most ``max_rolls`` times."""
    await asyncio.sleep(rng.random() / rate)
    n = 0
    while time.monotonic() < until and n < max_rolls:
        n += 1
        vis = rng.choices(["public", "gm", "blind"], [70, 15, 15])[0]
        text = rng.choice(rolls)
        base = p.roll_to[n % len(p.roll_to)]
        t0 = time.monotonic()
        try:
            r = await client.post(f"{base}/api/rooms/{p.room}/rolls",
                                  json={"text": text, "visibility": vis},
                                  headers={"Authorization": f"Bearer {p.key}"}, timeout=15)
            body = r.json() if r.headers.get("content-type", "").startswith("application/json") \
                else None
            p.rolls.append(Roll(r.status_code, t0, time.monotonic() - t0, body,
                                "" if r.status_code == 201 else r.text[:200]))
        except Exception as exc:  # noqa: BLE001 - no answer (the server died): not accepted
            p.rolls.append(Roll(0, t0, time.monotonic() - t0, None, type(exc).__name__))
        await asyncio.sleep(max(0.0, (1.0 / rate) * (0.5 + rng.random()) -
                                (time.monotonic() - t0)))


# ------------------------------------------------------------------------------------------------
# Checks


def may_see(entry: dict[str, Any], p: Player) -> str | None:
    """'full', 'stub' or None: what ``p`` may see of ``entry`` (the rules of room.Table.visible)."""
    vis = entry.get("visibility", "public")
    if vis == "public" or p.role == "gm":
        return "full"
    if entry.get("member") == p.member:
        return "full" if vis == "gm" else "stub"
    return None


@dataclass
class Verdict:
    rooms: int = 0
    entries: int = 0
    accepted: int = 0
    refused: dict[int, int] = field(default_factory=dict)
    maybe_stored: int = 0
    problems: list[str] = field(default_factory=list)
    deliveries: int = 0
    replayed: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


async def export(client: Any, base: str, p: Player) -> dict[str, Any]:
    for _ in range(20):  # exports are rate-limited and a few at once: wait when told to
        r = await client.get(f"{base}/api/rooms/{p.room}/export.json",
                             headers={"Authorization": f"Bearer {p.key}"}, timeout=60)
        if r.status_code not in (429, 503) or "retry-after" not in r.headers:
            break
        await asyncio.sleep(float(r.headers["retry-after"]))
    r.raise_for_status()
    return dict(r.json())


async def check(client: Any, base: str, players: list[Player]) -> Verdict:
    from astragal.web.chain import verify_export

    v = Verdict()
    rooms: dict[str, list[Player]] = {}
    for p in players:
        rooms.setdefault(p.room, []).append(p)
    for rid, members in rooms.items():
        v.rooms += 1
        gm = next(p for p in members if p.role == "gm")
        data = await export(client, base, gm)
        report = verify_export(data)
        v.replayed += report.replayed
        if not report.ok:
            v.problems += [f"room {rid}: {line}" for line in report.lines()]
        log = data["entries"]
        v.entries += len(log)
        by_id = {e["id"]: e for e in log}
        answered: dict[int, tuple[Player, Roll]] = {}
        for p in members:
            for r in p.rolls:
                if r.status == 201 and r.body is not None:
                    v.accepted += 1
                    eid = r.body["id"]
                    e = by_id.get(eid)
                    if eid in answered:
                        v.problems.append(f"room {rid}: entry {eid} was answered twice")
                    answered[eid] = (p, r)
                    if e is None:
                        v.problems.append(f"room {rid}: accepted roll {eid} of {p.name} is "
                                          "not in the log (LOST)")
                    elif (e["member"], e["at"], e["text"]) != (p.member, r.body["at"],
                                                               r.body["text"]):
                        v.problems.append(f"room {rid}: entry {eid} is not the roll "
                                          f"{p.name} was answered with")
                else:
                    v.refused[r.status] = v.refused.get(r.status, 0) + 1
                    if r.body is not None and r.body.get("maybe_stored"):
                        v.maybe_stored += 1
        # A roll whose answer never came (the server was killed) or said "maybe stored" may be
        # in the log without an answer; any other unanswered entry is a fault.
        unsure = sum(1 for p in members for r in p.rolls
                     if r.status == 0 or (r.body is not None and r.body.get("maybe_stored")))
        unanswered = [e["id"] for e in log if e["id"] not in answered]
        if len(unanswered) > unsure:
            v.problems.append(f"room {rid}: {len(unanswered)} entries nobody was answered for: "
                              f"{unanswered[:10]}")
        last = log[-1]["id"] if log else 0
        for p in members:
            ids = [e["id"] for e in p.seen]
            if ids != sorted(set(ids)):
                dup = len(ids) - len(set(ids))
                if ids != sorted(ids) or dup:
                    # A reconnect may resend what was already seen only if the client asked from
                    # an older id; ours always asks from the last one, so any repeat is a fault.
                    v.problems.append(f"room {rid}: {p.name} saw ids out of order or twice "
                                      f"({dup} repeats)")
            want = {e["id"]: kind for e in log if (kind := may_see(e, p)) is not None}
            got = {e["id"]: e for e in p.seen}
            v.deliveries += len(got)
            missing = sorted(set(want) - set(got))
            extra = sorted(set(got) - set(want))
            if missing:
                v.problems.append(f"room {rid}: {p.name} never received {len(missing)} entries "
                                  f"it may see: {missing[:10]} (last log id {last}, "
                                  f"reconnects {p.reconnects})")
            if extra:
                v.problems.append(f"room {rid}: {p.name} received entries it may not see: "
                                  f"{extra[:10]}")
            for eid, e in got.items():
                ref = by_id.get(eid)
                if ref is None:
                    v.problems.append(f"room {rid}: {p.name} received entry {eid} that is not "
                                      "in the log")
                elif want.get(eid) == "full" and e.get("hash") != ref.get("hash"):
                    v.problems.append(f"room {rid}: {p.name}'s entry {eid} differs from the log")
                elif want.get(eid) == "stub" and ("roll" in e or "draws" in e or "nonce" in e):
                    v.problems.append(f"room {rid}: {p.name} received a hidden roll's contents")
    return v


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}
    q = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else \
        [values[0]] * 99
    return {"p50": q[49], "p90": q[89], "p99": q[98], "max": max(values)}


def delivery_latencies(players: list[Player]) -> list[float]:
    """Seconds from a roll's request to its arrival on each other live connection of the room."""
    sent: dict[tuple[str, int], float] = {}
    for p in players:
        for r in p.rolls:
            if r.status == 201 and r.body is not None:
                sent[(p.room, r.body["id"])] = r.started
    out = []
    for p in players:
        for eid, at in p.seen_at.items():
            t0 = sent.get((p.room, eid))
            if t0 is not None and at >= t0:
                out.append(at - t0)
    return out
