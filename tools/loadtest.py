"""Load test of the web table: many players in many rooms rolling at once; nothing may be lost.

Runs three set-ups in turn, each on 127.0.0.1 only, each bounded in time and rolls:

``sqlite``         one app instance over a SQLite file
``postgresql``     one app instance over PostgreSQL (a fresh schema, dropped afterwards)
``postgresql-x2``  two app instances over the same PostgreSQL schema: every player rolls on both
                   in turn and watches on one of them, so entries cross instances by NOTIFY

Every player (the GM too) keeps a live WebSocket and rolls over HTTP at 1.5 rolls per second (the
production limit is 2 per second per player); a mix of public, GM-only and blind rolls in every
system. Then ``loadlib.check`` proves that every accepted roll is in the log exactly once, in one
order every client saw, that the chain verifies and every roll replays from its faces, and that
every client received every entry it may see and none it may not. Rolls per second and latency
percentiles go to ``benchmarks/results/load.txt``.

    python tools/loadtest.py                      # all three, 20 s of rolling each
    python tools/loadtest.py --seconds 60 --rooms 30 --players 6 --only sqlite

Exit status 0 when every check held on every set-up that ran, 1 otherwise.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadlib
from loadlib import Player, Server

RESULTS = loadlib.ROOT / "benchmarks" / "results" / "load.txt"


async def run_load(bases: list[str], rooms: int, players: int, seconds: float, rate: float,
                   seed: int) -> tuple[list[Player], float, dict[str, Any]]:
    """Open the rooms, run the players for ``seconds``, let the live feeds drain; the players."""
    import httpx

    rng = random.Random(seed)
    systems = loadlib.systems_and_rolls()
    names = sorted(systems)
    limits = httpx.Limits(max_connections=400, max_keepalive_connections=400)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        ws_bases = [b.replace("http://", "ws://") for b in bases]
        everyone: list[Player] = []
        for i in range(rooms):
            everyone += await loadlib.open_room(client, bases[i % len(bases)], names[i % len(names)],
                                                players, ws_bases, bases, i)
        done = asyncio.Event()
        hard_stop = time.monotonic() + seconds + 60
        watchers = [asyncio.create_task(loadlib.watch(p, hard_stop, done)) for p in everyone]
        await asyncio.sleep(1.0)  # every live connection is open before the first roll
        start = time.monotonic()
        until = start + seconds
        max_rolls = int(seconds * rate * 2) + 2
        await asyncio.gather(*(loadlib.roller(client, p, systems[p.system], until, rate, rng,
                                              max_rolls) for p in everyone))
        elapsed = time.monotonic() - start
        # Drain: wait until every client has caught up with its room's last entry (bounded).
        heads: dict[str, int] = {}
        for p in everyone:
            if p.role == "gm":
                data = await loadlib.export(client, bases[0], p)
                heads[p.room] = data["entries"][-1]["id"] if data["entries"] else 0
        drain_until = time.monotonic() + 30
        while time.monotonic() < drain_until:
            if all(p.after >= heads[p.room] for p in everyone):
                break
            await asyncio.sleep(0.1)
        drained = time.monotonic() - (max(start, until))
        done.set()
        await asyncio.gather(*watchers, return_exceptions=True)
        verdict = await loadlib.check(client, bases[0], everyone)
    return everyone, elapsed, {"verdict": verdict, "drain_seconds": drained}


def summarize(name: str, players: list[Player], elapsed: float, extra: dict[str, Any],
              rooms: int, per_room: int) -> tuple[list[str], bool]:
    v: loadlib.Verdict = extra["verdict"]
    lat = [r.latency * 1000 for p in players for r in p.rolls if r.status == 201]
    deliver = [x * 1000 for x in loadlib.delivery_latencies(players)]
    pl, pd = loadlib.percentiles(lat), loadlib.percentiles(deliver)
    refused = ", ".join(f"{k}: {n}" for k, n in sorted(v.refused.items())) or "none"
    reconnects = sum(p.reconnects for p in players)
    lines = [
        (f"{name}: {rooms} rooms x {per_room + 1} members ({len(players)} players, each with a "
         f"live WebSocket), {elapsed:.1f} s of rolling"),
        f"  accepted rolls {v.accepted} = {v.accepted / elapsed:.1f} rolls/s; refused {refused}",
        (f"  roll latency (HTTP, ms): p50 {pl['p50']:.1f}  p90 {pl['p90']:.1f}  "
         f"p99 {pl['p99']:.1f}  max {pl['max']:.1f}"),
        (f"  live delivery (roll request -> each WebSocket, ms): p50 {pd['p50']:.1f}  "
         f"p90 {pd['p90']:.1f}  p99 {pd['p99']:.1f}  max {pd['max']:.1f} "
         f"({v.deliveries} deliveries)"),
        (f"  log: {v.entries} entries in {v.rooms} rooms; chain verified, {v.replayed} rolls "
         f"replayed from their faces; live reconnects {reconnects}; caught up "
         f"{extra['drain_seconds']:.1f} s after the last roll"),
        f"  checks: {'PASS - nothing lost, nothing duplicated, one order, every entry delivered' if v.ok else 'FAIL'}",
    ]
    lines += [f"  problem: {p}" for p in v.problems[:20]]
    return lines, v.ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="rolling time per set-up")
    parser.add_argument("--rooms", type=int, default=20)
    parser.add_argument("--players", type=int, default=5, help="players per room (plus the GM)")
    parser.add_argument("--rate", type=float, default=1.5, help="rolls per second per player")
    parser.add_argument("--only", choices=["sqlite", "postgresql", "postgresql-x2"],
                        action="append", help="run only these set-ups")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--append", action="store_true", help="add to --out, do not replace it")
    args = parser.parse_args()
    if args.seconds > 600 or args.rooms * (args.players + 1) > 2000:
        parser.error("bounded: at most 600 s and 2000 players")
    setups = args.only or ["sqlite", "postgresql", "postgresql-x2"]
    load = os.getloadavg()[0]
    report = [(f"astragal web table load test ({time.strftime('%Y-%m-%d')}, "
               f"{os.cpu_count()} cores, Python {platform.python_version()}, load generator on the "
               f"same machine; 127.0.0.1 only; load average {load:.1f} at the start)"),
              (f"command: python tools/loadtest.py --seconds {args.seconds:g} "
               f"--rooms {args.rooms} --players {args.players} --rate {args.rate:g}"), ""]
    all_ok = True
    pg_reason = loadlib.pg_reachable()
    with tempfile.TemporaryDirectory(prefix="astragal-load-") as tmp:
        for setup in setups:
            if setup.startswith("postgresql") and pg_reason:
                report.append(f"{setup}: SKIPPED - PostgreSQL unreachable at {loadlib.PG_URL} "
                              f"({pg_reason})")
                continue
            schema = loadlib.new_pg_schema("load") if setup.startswith("postgresql") else ""
            db = loadlib.pg_db(schema) if schema else str(Path(tmp) / f"{setup}.db")
            n = 2 if setup == "postgresql-x2" else 1
            key = Path(tmp) / f"{setup}.key"  # one key for every instance, as in production
            servers = [Server(db, log=Path(tmp) / f"{setup}-{i}.log", key=key) for i in range(n)]
            try:
                for s in servers:
                    s.start()
                print(f"{setup}: running {args.seconds:g} s ...", file=sys.stderr, flush=True)
                players, elapsed, extra = asyncio.run(run_load(
                    [s.url for s in servers], args.rooms, args.players, args.seconds, args.rate,
                    args.seed))
                lines, ok = summarize(setup, players, elapsed, extra, args.rooms, args.players)
                all_ok &= ok
                report += lines + [""]
                print("\n".join(lines), file=sys.stderr, flush=True)
            finally:
                for s in servers:
                    s.stop()
                if schema:
                    loadlib.drop_pg_schema(schema)
                for s in servers:
                    if s.log and s.log.exists() and s.log.stat().st_size:
                        tail = s.log.read_text(errors="replace").strip().splitlines()[-5:]
                        report += [f"  server log: {line}" for line in tail]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    before = (args.out.read_text(encoding="utf-8") + "\n"
              if args.append and args.out.exists() else "")
    args.out.write_text(before + "\n".join(report).rstrip() + "\n", encoding="utf-8")
    print("\n".join(report))
    print(f"written to {args.out}", file=sys.stderr)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
