"""The web table under load: rolls per second, roll → delivery latency, and the server's CPU per roll.

Real servers (``tools/_serve.py``: ``astragal serve`` with the caps per address lifted, since
every simulated player is on 127.0.0.1) over SQLite and PostgreSQL, and two instances over one
PostgreSQL. Rooms of five (a GM and four players), each with a live WebSocket; rolls are offered
at a steady total rate, spread evenly over the players (open loop), 70 % public, 15 % GM-only,
15 % blind, in every system. The client is ``tools/lightload.py`` (hand-written HTTP/1.1 and
WebSocket frames, nothing parsed while rolling) so that it costs little next to the server it
shares the machine with; its own CPU per roll is printed too.

Figures, per set-up:

* accepted rolls per second (HTTP 201) and the offered rate;
* roll → delivered: from the roll's request to its arrival on each *other* live connection of
  the room that may see it (p50 / p99 / max);
* server CPU per roll: user + system time of the server process(es) from /proc over the rolling
  and the drain, divided by the accepted rolls (CPU time, not the wall clock, so another load on
  the machine does not inflate it); and the cores it used;
* the verdict of ``loadlib.check``: every accepted roll in the log exactly once, the chain and
  signatures verified and every roll replayed, every client's entries in the log's order, every
  entry delivered to exactly those who may see it.

    python benchmarks/bench_web_load.py                 # every set-up, 20 s each
    python benchmarks/bench_web_load.py --only sqlite-100 --seconds 30 --rate 200
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import lightload
import loadlib
from loadlib import Player, Server

RESULTS = loadlib.ROOT / "benchmarks" / "results" / "web_load.txt"
MEMBERS = 5  # a GM and four players
# set-up: (backend, rooms, instances, members of each room watching on another instance)
SETUPS = {
    "sqlite-10": ("sqlite", 10, 1, 0),
    "sqlite-100": ("sqlite", 100, 1, 0),
    "postgresql-10": ("postgresql", 10, 1, 0),
    "postgresql-100": ("postgresql", 100, 1, 0),
    # a room's requests on one instance, as a proxy hashing on the room sends them
    "postgresql-x2-100": ("postgresql", 100, 2, 0),
    # and one member of each room watching on the other instance (NOTIFY carries each roll)
    "postgresql-x2-cross-100": ("postgresql", 100, 2, 1),
}


async def run(servers: list[Server], rooms: int, cross: int, seconds: float, rate: float,
              seed: int) -> dict[str, Any]:
    import httpx

    rng = random.Random(seed)
    systems = loadlib.systems_and_rolls()
    names = sorted(systems)
    bases = [s.url for s in servers]
    async with httpx.AsyncClient(timeout=60) as client:
        everyone: list[Player] = []
        for i in range(rooms):
            home = bases[i % len(bases)]
            members = await loadlib.open_room(client, home, names[i % len(names)], MEMBERS - 1,
                                              [home.replace("http://", "ws://")], [home], i)
            for member in members[len(members) - cross:]:  # watching on the next instance
                member.live_to = bases[(i + 1) % len(bases)].replace("http://", "ws://")
            everyone += members
        for p in everyone:  # each page reads its room on opening (the seed's commitment too:
            # a room's epoch costs its instance one tree of secrets, ~55 ms, when first seen)
            r = await client.get(f"{p.roll_to[0]}/api/rooms/{p.room}/me",
                                 headers={"Authorization": f"Bearer {p.key}"})
            r.raise_for_status()
        done = asyncio.Event()
        sockets = []
        for p in everyone:
            host, _, port = p.live_to.removeprefix("ws://").partition(":")
            sockets.append(lightload.LiveSocket(host, int(port), p))
        keepers = [asyncio.ensure_future(s.keep(done)) for s in sockets]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(s.frames for s in sockets):
            await asyncio.sleep(0.1)  # every socket has its hello before the first roll
        await asyncio.sleep(0.5)
        roller = lightload.Roller(everyone, systems, rate, rng)
        cpu0 = [lightload.server_cpu(s.pid) for s in servers]
        me0 = time.process_time()
        start = time.monotonic()
        elapsed = await roller.run(seconds)
        # drain: until every socket has the last entry its room accepted (bounded)
        last: dict[str, int] = {}
        for p, _, _, status, data in roller.raw:
            if status == 201:
                last[p.room] = max(last.get(p.room, 0), int(data.split(b'"id":', 1)[1]
                                                             .split(b",", 1)[0]))
        drain_until = time.monotonic() + 30
        while time.monotonic() < drain_until:
            if all(s.last() >= last.get(s.player.room, 0) for s in sockets):
                break
            await asyncio.sleep(0.1)
        window = time.monotonic() - start
        cpu = sum(lightload.server_cpu(s.pid) - c for s, c in zip(servers, cpu0, strict=True))
        mine = time.process_time() - me0
        done.set()
        await asyncio.gather(*keepers, return_exceptions=True)
        roller.records()
        for s in sockets:
            s.records()
        verdict = await loadlib.check(client, bases[0], everyone)
    return {"players": everyone, "verdict": verdict, "elapsed": min(elapsed, seconds),
            "window": window, "cpu": cpu, "client_cpu": mine}


def others(players: list[Player]) -> list[float]:
    """Roll → arrival on each other live connection of the room (seconds)."""
    sent = {(p.room, r.body["id"]): (p.member, r.started) for p in players for r in p.rolls
            if r.status == 201 and r.body is not None}
    return [at - t0 for p in players for eid, at in p.seen_at.items()
            if (roll := sent.get((p.room, eid))) is not None and roll[0] != p.member
            for t0 in (roll[1],)]


def line(name: str, rate: float, out: dict[str, Any]) -> tuple[str, bool]:
    v: loadlib.Verdict = out["verdict"]
    d = loadlib.percentiles([x * 1000 for x in others(out["players"])])
    per = v.accepted or 1
    refused = ", ".join(f"{k}: {n}" for k, n in sorted(v.refused.items())) or "none refused"
    text = (f"| {name} | {rate:g} | {v.accepted / out['elapsed']:.1f} | "
            f"{d['p50']:.0f} / {d['p99']:.0f} / {d['max']:.0f} | "
            f"{1000 * out['cpu'] / per:.2f} | {out['cpu'] / out['window']:.2f} | "
            f"{1000 * out['client_cpu'] / per:.2f} | "
            f"{'pass' if v.ok else 'FAIL'} ({v.accepted} rolls, {v.deliveries} deliveries, "
            f"{refused}) |")
    return text, v.ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="rolling time per set-up")
    parser.add_argument("--rate", type=float, default=100.0, help="rolls per second offered")
    parser.add_argument("--only", choices=sorted(SETUPS), action="append")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not 0 < args.seconds <= 600 or not 0 < args.rate <= 2000:
        parser.error("bounded: at most 600 s and 2000 rolls a second")
    pg_reason = loadlib.pg_reachable()
    report = [(f"astragal web table under load ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
               f", {os.cpu_count()} cores, Python {platform.python_version()}; client and "
               f"servers on the same machine, 127.0.0.1; load average {os.getloadavg()[0]:.1f} "
               "at the start)"),
              (f"command: python benchmarks/bench_web_load.py --seconds {args.seconds:g} "
               f"--rate {args.rate:g}"), "",
              ("| set-up (rooms of 5) | offered/s | accepted/s | roll → delivered p50 / p99 / "
               "max (ms) | server CPU per roll (ms) | server cores | client CPU per roll (ms) |"
               " checks |"), "|---|---|---|---|---|---|---|---|"]
    ok = True
    with tempfile.TemporaryDirectory(prefix="astragal-bench-") as tmp:
        for name in args.only or list(SETUPS):
            backend, rooms, n, cross = SETUPS[name]
            if backend == "postgresql" and pg_reason:
                report.append(f"| {name} | skipped: PostgreSQL unreachable ({pg_reason}) |")
                continue
            schema = loadlib.new_pg_schema("bench") if backend == "postgresql" else ""
            db = loadlib.pg_db(schema) if schema else str(Path(tmp) / f"{name}.db")
            servers = [Server(db, log=Path(tmp) / f"{name}-{i}.log", key=Path(tmp) / f"{name}.key")
                       for i in range(n)]
            try:
                for s in servers:
                    s.start()
                print(f"{name}: {args.seconds:g} s at {args.rate:g} rolls/s ...", file=sys.stderr,
                      flush=True)
                out = asyncio.run(run(servers, rooms, cross, args.seconds, args.rate,
                                      args.seed))
                text, good = line(name, args.rate, out)
                ok &= good
                report.append(text)
                print(text, file=sys.stderr, flush=True)
                report += [f"|  | problem: {p} |" for p in out["verdict"].problems[:10]]
            finally:
                for s in servers:
                    s.stop()
                if schema:
                    loadlib.drop_pg_schema(schema)
    report.append(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(report) + "\n", encoding="utf-8")
    print("\n".join(report))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
