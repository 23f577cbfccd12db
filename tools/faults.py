"""Fault injection for the web table: kill it, cut its database, fill or lock its disk; lose nothing.

Scenarios (127.0.0.1 only; each bounded in time and rolls, each stops by itself):

``kill-sqlite``, ``kill-postgresql``
    Players roll and watch live while the server is killed with SIGKILL twice and restarted on
    the same port. Every roll that was answered 201 must be in the log; the chain must verify
    (and, on SQLite, ``PRAGMA integrity_check`` pass: no half-written entry); every client must
    reconnect and catch up by its last id. Rolls whose answer never came may or may not be in
    the log (the client did not learn either way), which is the most any server can promise.
``pg-cut``
    Two app instances reach PostgreSQL through a TCP proxy on 127.0.0.1. Mid-load the proxy
    first drops every connection (as ``pg_terminate_backend`` or a failover would), then refuses
    connections for four seconds. The app must say so (503 with a reason, ``/api/health`` 503,
    its log), recover by itself, and lose nothing.
``disk-full``
    The SQLite file lives on a tiny tmpfs (mounting needs root) that is filled up mid-load: rolls
    must get a clear 507, never a 201 that is not in the log, and work again once space is freed.
``read-only``
    The SQLite file is read-only to the server (the server runs without CAP_DAC_OVERRIDE, so file
    modes bind even as root): rolls must get a clear 503 and nothing may be half-stored; reads
    keep working; with write access back, rolling works again.

    python tools/faults.py                    # every scenario
    python tools/faults.py --only pg-cut

Writes ``benchmarks/results/faults.txt``; exit status 0 when every scenario held.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadlib
from loadlib import Player, Server

RESULTS = loadlib.ROOT / "benchmarks" / "results" / "faults.txt"
SCENARIOS = ["kill-sqlite", "kill-postgresql", "pg-cut", "disk-full", "read-only"]


# ------------------------------------------------------------------------------------------------
# Load with faults on a schedule


async def load_with(bases: list[str], rooms: int, players: int, seconds: float,
                    faults: list[tuple[float, Callable[[], Any]]], seed: int = 3
                    ) -> tuple[list[Player], loadlib.Verdict, list[str]]:
    """Run players for ``seconds`` while ``faults`` fire at their times; then drain and check."""
    import httpx

    rng = random.Random(seed)
    systems = loadlib.systems_and_rolls()
    names = sorted(systems)
    events: list[str] = []
    async with httpx.AsyncClient(timeout=15) as client:
        ws_bases = [b.replace("http://", "ws://") for b in bases]
        everyone: list[Player] = []
        for i in range(rooms):
            everyone += await loadlib.open_room(client, bases[i % len(bases)],
                                                names[i % len(names)], players, ws_bases, bases, i)
        done = asyncio.Event()
        hard_stop = time.monotonic() + seconds + 90
        watchers = [asyncio.create_task(loadlib.watch(p, hard_stop, done)) for p in everyone]
        await asyncio.sleep(1.0)
        start = time.monotonic()

        fired: list[tuple[float, float, str]] = []

        async def injector() -> None:
            for at, fault in faults:
                await asyncio.sleep(max(0.0, start + at - time.monotonic()))
                t0 = time.monotonic()
                result = fault()
                if asyncio.iscoroutine(result):
                    result = await result
                fired.append((t0, time.monotonic(), str(result)))

        await asyncio.gather(injector(), *(loadlib.roller(
            client, p, systems[p.system], start + seconds, 1.5, rng, int(seconds * 3) + 2)
            for p in everyone))
        # What each fault cost the players: refusals from its start until the next fault, and
        # how long until rolls were accepted again.
        for k, (t0, t1, what) in enumerate(fired):
            end = fired[k + 1][0] if k + 1 < len(fired) else start + seconds
            window = [r for p in everyone for r in p.rolls if t0 <= r.started < end]
            bad: dict[str, int] = {}
            for r in window:
                if r.status != 201:
                    label = "no answer" if r.status == 0 else str(r.status)
                    bad[label] = bad.get(label, 0) + 1
            back = min((r.started for r in window if r.status == 201 and r.started >= t1),
                       default=None)
            costs = ", ".join(f"{n} x {k2}" for k2, n in sorted(bad.items())) or "none refused"
            again = f"; accepted again {back - t0:.1f} s after it began" if back else ""
            events.append(f"t={t0 - start:5.1f} s: {what} -> {len(window)} rolls tried until "
                          f"the next fault: {costs}{again}")
        # Drain: every client catches up with its room's last entry (bounded).
        heads: dict[str, int] = {}
        for p in everyone:
            if p.role == "gm":
                for _ in range(50):
                    try:
                        data = await loadlib.export(client, bases[0], p)
                        break
                    except Exception:  # noqa: BLE001 - the server is still coming back
                        await asyncio.sleep(0.2)
                heads[p.room] = data["entries"][-1]["id"] if data["entries"] else 0
        t0 = time.monotonic()
        while time.monotonic() < t0 + 45 and not all(p.after >= heads[p.room] for p in everyone):
            await asyncio.sleep(0.1)
        events.append(f"every client caught up {time.monotonic() - t0:.1f} s after the last "
                      "roll" if all(p.after >= heads[p.room] for p in everyone)
                      else "NOT every client caught up within 45 s")
        done.set()
        await asyncio.gather(*watchers, return_exceptions=True)
        verdict = await loadlib.check(client, bases[0], everyone)
    return everyone, verdict, events


def describe(name: str, players: list[Player], v: loadlib.Verdict, events: list[str]) -> list[str]:
    statuses: dict[int, int] = {}
    for p in players:
        for r in p.rolls:
            statuses[r.status] = statuses.get(r.status, 0) + 1
    shown = ", ".join(f"{'no answer' if k == 0 else k}: {n}" for k, n in sorted(statuses.items()))
    reasons = sorted({(r.body or {}).get("message", r.error)[:110] for p in players
                      for r in p.rolls if r.status not in (0, 201)})
    lines = [f"{name}: {len(players)} players in {v.rooms} rooms; answers {shown}"]
    lines += [f"  {e}" for e in events]
    lines += [f"  refusal said: {m}" for m in reasons[:4]]
    lines += [(f"  log: {v.entries} entries; {v.accepted} accepted rolls all in the log once; "
               f"chain verified, {v.replayed} replayed; live reconnects "
               f"{sum(p.reconnects for p in players)}"),
              f"  checks: {'PASS - nothing lost' if v.ok else 'FAIL'}"]
    lines += [f"  problem: {p}" for p in v.problems[:15]]
    return lines


def verify_cli(db: str, rooms: list[str]) -> list[str]:
    """``astragal verify-log ROOM --db DB`` for each room: problems (empty when all intact)."""
    bad = []
    for rid in rooms:
        r = subprocess.run([sys.executable, "-m", "astragal.cli", "verify-log", "--db", db, "--", rid],
                           capture_output=True, text=True, timeout=120, cwd=loadlib.ROOT,
                           check=False)
        if r.returncode != 0:
            bad.append(f"verify-log {rid}: exit {r.returncode}: {(r.stdout + r.stderr)[-300:]}")
    return bad


def integrity(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def server_log(log: Path, needle: str, n: int = 3) -> list[str]:
    if not log.exists():
        return []
    lines = [x for x in log.read_text(errors="replace").splitlines() if needle in x]
    return [f"  server log: {x[:160]}" for x in lines[:n]]


# ------------------------------------------------------------------------------------------------
# Scenarios


def kill(backend: str, tmp: Path, seconds: float) -> tuple[list[str], bool]:
    schema = loadlib.new_pg_schema("kill") if backend == "postgresql" else ""
    db = loadlib.pg_db(schema) if schema else str(tmp / "kill.db")
    log = tmp / f"kill-{backend}.log"
    server = Server(db, log=log, key=tmp / f"kill-{backend}.key").start()
    restarts: list[float] = []

    async def crash_and_restart() -> str:
        server.kill()
        t0 = time.monotonic()
        await asyncio.sleep(0.5)
        await asyncio.to_thread(server.start)
        restarts.append(time.monotonic() - t0)
        return f"SIGKILL, restarted on the same port; serving again after {restarts[-1]:.1f} s"

    try:
        players, v, events = asyncio.run(load_with(
            [server.url], rooms=6, players=4, seconds=seconds,
            faults=[(seconds * 0.3, crash_and_restart), (seconds * 0.65, crash_and_restart)]))
    finally:
        server.stop()
    rooms = sorted({p.room for p in players})
    problems = verify_cli(db, rooms)
    if not schema:
        state = integrity(Path(db))
        events.append(f"PRAGMA integrity_check: {state}")
        if state != "ok":
            problems.append(f"integrity_check: {state}")
    events.append(f"astragal verify-log on every room from the database: "
                  f"{'intact' if not problems else 'PROBLEMS'}")
    v.problems += problems
    if schema:
        loadlib.drop_pg_schema(schema)
    return describe(f"kill-{backend} (SIGKILL x2 mid-load)", players, v, events), v.ok


class Proxy:
    """A TCP proxy on 127.0.0.1 in front of PostgreSQL that can drop or refuse connections."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = loadlib.free_port()
        self.server: asyncio.AbstractServer | None = None
        self.writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, loadlib.HOST, self.port,
                                                 reuse_address=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_r, up_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        self.writers |= {writer, up_w}

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            with contextlib.suppress(Exception):
                w.close()

        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))
        self.writers -= {writer, up_w}

    def drop_all(self) -> int:
        n = len(self.writers) // 2
        for w in list(self.writers):
            with contextlib.suppress(Exception):
                w.transport.abort()
        self.writers.clear()
        return n

    async def stop_listening(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
            self.server = None


def pg_cut(tmp: Path, seconds: float) -> tuple[list[str], bool]:
    from urllib.parse import urlsplit

    parts = urlsplit(loadlib.PG_URL)
    schema = loadlib.new_pg_schema("cut")
    logs = [tmp / f"cut-{i}.log" for i in range(2)]
    health: list[str] = []

    async def scenario() -> tuple[list[Player], loadlib.Verdict, list[str]]:
        import httpx

        proxy = Proxy((parts.hostname or "127.0.0.1", parts.port or 5432))
        await proxy.start()
        via = parts._replace(netloc=f"{parts.username}@{loadlib.HOST}:{proxy.port}").geturl()
        servers = [Server(loadlib.pg_db(schema, via), log=logs[i], key=tmp / "cut.key")
                   for i in range(2)]
        for s in servers:
            await asyncio.to_thread(s.start)

        def drop() -> str:
            return f"dropped all {proxy.drop_all()} PostgreSQL connections (as a failover would)"

        async def outage() -> str:
            n = proxy.drop_all()
            await proxy.stop_listening()
            t0 = time.monotonic()
            async with httpx.AsyncClient(timeout=5) as c:
                await asyncio.sleep(1.0)
                r = await c.get(servers[0].url + "/api/health")
                health.append(f"/api/health during the outage: {r.status_code} {r.text[:140]}")
                await asyncio.sleep(max(0.0, 4.0 - (time.monotonic() - t0)))
            await proxy.start()
            async with httpx.AsyncClient(timeout=5) as c:
                for _ in range(100):
                    r = await c.get(servers[0].url + "/api/health")
                    if r.status_code == 200:
                        break
                    await asyncio.sleep(0.1)
                health.append(f"/api/health {time.monotonic() - t0 - 4.0:.1f} s after the "
                              f"database came back: {r.status_code}")
            return f"dropped {n} connections and refused new ones for 4.0 s, then let them in"

        try:
            return await load_with([s.url for s in servers], rooms=6, players=4,
                                   seconds=seconds,
                                   faults=[(seconds * 0.25, drop), (seconds * 0.5, outage)])
        finally:
            for s in servers:
                await asyncio.to_thread(s.stop)
            await proxy.stop_listening()
            proxy.drop_all()

    try:
        players, v, events = asyncio.run(scenario())
    finally:
        loadlib.drop_pg_schema(schema)
    events += health
    lines = describe("pg-cut (2 instances; connections dropped, then PostgreSQL unreachable 4 s)",
                     players, v, events)
    for log in logs:
        lines += server_log(log, "PostgreSQL", 2)
    return lines, v.ok


def _roll_until(base: str, rid: str, key: str, stop: Callable[[Any], bool], limit: int,
                seconds: float) -> list[Any]:
    import httpx

    out = []
    until = time.monotonic() + seconds
    with httpx.Client(timeout=15) as c:
        for i in range(limit):
            if time.monotonic() > until:
                break
            r = c.post(f"{base}/api/rooms/{rid}/rolls", headers={"Authorization": f"Bearer {key}"},
                       json={"text": "4d6kh3+2 # " + "x" * 300, "visibility": "public"})
            out.append(r)
            if stop(r):
                break
            time.sleep(0.55)  # the production limit: 2 rolls per second per player
    return out


def _new_room(base: str) -> tuple[str, str]:
    import httpx

    r = httpx.post(f"{base}/api/rooms", json={"system": "dice"}, timeout=10)
    r.raise_for_status()
    return r.json()["room"]["id"], r.json()["key"]


def _log_ids(base: str, rid: str, key: str) -> list[int]:
    import httpx

    r = httpx.get(f"{base}/api/rooms/{rid}/export.json",
                  headers={"Authorization": f"Bearer {key}"}, timeout=30)
    r.raise_for_status()
    return [e["id"] for e in r.json()["entries"]]


def disk_full(tmp: Path, seconds: float) -> tuple[list[str], bool]:
    if os.geteuid() != 0:
        return ["disk-full: SKIPPED - mounting a tmpfs needs root"], True
    mnt = tmp / "tiny"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)],
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return [f"disk-full: SKIPPED - cannot mount a tmpfs: {r.stderr.strip()}"], True
    log = tmp / "full.log"
    problems: list[str] = []
    lines: list[str] = []
    try:
        db = mnt / "full.db"
        server = Server(str(db), log=log).start()
        try:
            rid, gm = _new_room(server.url)
            before = _roll_until(server.url, rid, gm, lambda r: False, 3, 5)
            free = shutil.disk_usage(mnt).free
            filler = mnt / "filler"
            with open(filler, "wb") as f:  # leave about 60 KB: a few dozen rolls
                f.write(b"\0" * max(0, free - 60_000))
            refusals = [0]

            def five_refusals(r: Any) -> bool:
                refusals[0] += r.status_code != 201
                return refusals[0] >= 5

            rolls = _roll_until(server.url, rid, gm, five_refusals, 400, seconds)
            filler.unlink()
            after = _roll_until(server.url, rid, gm, lambda r: False, 3, 5)
            ids = _log_ids(server.url, rid, gm)
        finally:
            server.stop()
        accepted = [r.json()["id"] for r in before + rolls + after if r.status_code == 201]
        refused = [r for r in rolls if r.status_code != 201]
        codes = sorted({r.status_code for r in refused})
        lines.append(f"disk-full (SQLite on a 3 MiB tmpfs, filled mid-run): {len(accepted)} rolls "
                     f"accepted, {len(refused)} refused with {codes}")
        if not refused or codes != [507]:
            problems.append(f"expected 507 once the disk was full, got {codes}")
        else:
            lines.append(f"  refusal said: {refused[0].json()['message'][:150]}")
        if ids != accepted:
            problems.append(f"the log {ids[-5:]} is not exactly the accepted rolls "
                            f"{accepted[-5:]} (a silent drop or a half-stored roll)")
        if not after or any(r.status_code != 201 for r in after):
            problems.append("rolling did not work again once space was freed")
        else:
            lines.append("  space freed: rolling works again at once (3 of 3 accepted)")
        state = integrity(db)
        lines.append(f"  log: {len(ids)} entries = exactly the accepted rolls; "
                     f"PRAGMA integrity_check: {state}")
        problems += [] if state == "ok" else [f"integrity_check: {state}"]
        problems += verify_cli(str(db), [rid])
        lines += server_log(log, "full", 1)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)
    lines.append(f"  checks: {'PASS - a clear 507, nothing lost, nothing half-stored' if not problems else 'FAIL'}")
    lines += [f"  problem: {p}" for p in problems]
    return lines, not problems


def read_only(tmp: Path, seconds: float) -> tuple[list[str], bool]:
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return ["read-only: SKIPPED - needs root and setpriv (to drop CAP_DAC_OVERRIDE)"], True
    db = tmp / "ro" / "ro.db"
    db.parent.mkdir()
    log = tmp / "ro.log"
    problems: list[str] = []
    server = Server(str(db), log=log).start()
    try:
        rid, gm = _new_room(server.url)
        first = _roll_until(server.url, rid, gm, lambda r: False, 3, 5)
    finally:
        server.stop()
    db.chmod(0o444)
    no_override = ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
                   "--bounding-set=-dac_override,-dac_read_search"]
    server = Server(str(db), log=log, prefix=no_override).start()
    try:
        refused = _roll_until(server.url, rid, gm, lambda r: False, 4, seconds)
        reads = _log_ids(server.url, rid, gm)
    finally:
        server.stop()
    db.chmod(0o644)
    server = Server(str(db), log=log).start()
    try:
        again = _roll_until(server.url, rid, gm, lambda r: False, 3, 5)
        ids = _log_ids(server.url, rid, gm)
    finally:
        server.stop()
    codes = sorted({r.status_code for r in refused})
    accepted = [r.json()["id"] for r in first + again if r.status_code == 201]
    lines = [(f"read-only (the SQLite file mode 0444; the server without CAP_DAC_OVERRIDE): "
              f"{len(refused)} rolls refused with {codes}; the log still reads "
              f"({len(reads)} entries)")]
    if codes != [503]:
        problems.append(f"expected 503 for a read-only database, got {codes}")
    else:
        lines.append(f"  refusal said: {refused[0].json()['message'][:150]}")
    if ids != accepted:
        problems.append(f"the log {ids} is not exactly the accepted rolls {accepted}")
    if any(r.status_code != 201 for r in again):
        problems.append("rolling did not work again with write access back")
    lines.append(f"  write access back: {sum(r.status_code == 201 for r in again)} of "
                 f"{len(again)} rolls accepted; log = exactly the {len(accepted)} accepted "
                 f"rolls; integrity_check {integrity(db)}")
    problems += verify_cli(str(db), [rid])
    lines += server_log(log, "readonly", 1)
    lines.append(f"  checks: {'PASS - a clear 503, nothing lost, nothing half-stored' if not problems else 'FAIL'}")
    lines += [f"  problem: {p}" for p in problems]
    return lines, not problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=SCENARIOS, action="append")
    parser.add_argument("--seconds", type=float, default=16.0, help="load time per scenario")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.seconds > 300:
        parser.error("bounded: at most 300 s per scenario")
    chosen = args.only or SCENARIOS
    pg_reason = loadlib.pg_reachable()
    report = [f"astragal web table fault injection ({time.strftime('%Y-%m-%d')}; 127.0.0.1 only)",
              f"command: python tools/faults.py --seconds {args.seconds:g}", ""]
    ok_all = True
    with tempfile.TemporaryDirectory(prefix="astragal-faults-") as d:
        tmp = Path(d)
        for name in chosen:
            print(f"{name} ...", file=sys.stderr, flush=True)
            if name in ("kill-postgresql", "pg-cut") and pg_reason:
                lines, ok = [f"{name}: SKIPPED - PostgreSQL unreachable ({pg_reason})"], True
            elif name == "kill-sqlite":
                lines, ok = kill("sqlite", tmp, args.seconds)
            elif name == "kill-postgresql":
                lines, ok = kill("postgresql", tmp, args.seconds)
            elif name == "pg-cut":
                lines, ok = pg_cut(tmp, args.seconds)
            elif name == "disk-full":
                lines, ok = disk_full(tmp, args.seconds)
            else:
                lines, ok = read_only(tmp, args.seconds)
            ok_all &= ok
            report += lines + [""]
            print("\n".join(lines), file=sys.stderr, flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(report).rstrip() + "\n", encoding="utf-8")
    print(f"written to {args.out}", file=sys.stderr)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
