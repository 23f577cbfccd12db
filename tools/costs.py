"""Replay the outside attack on a real server and measure what one request, or one address, costs.

Phase A runs the server as ``astragal serve`` does (every cap, per address too); phase B lifts the
caps per address (``tools/_serve.py --caps loose``) to fill a room to its cap quickly from one
address, then exports it ten times at once. Figures: the CPU time of the server and its odds
workers (from /proc, children included), the server's peak resident memory (VmHWM), statuses.

    python tools/costs.py          # about two minutes; writes benchmarks/results/costs.txt
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadlib

RESULTS = loadlib.ROOT / "benchmarks" / "results" / "costs.txt"
TICK = os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry))
    return [pid, *kids]


def cpu_seconds(pid: int) -> float:
    """CPU time of the server, its live children, and its reaped children."""
    total = 0.0
    for n, p in enumerate(_tree(pid)):
        try:
            with open(f"/proc/{p}/stat", encoding="ascii") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(f[11]) + int(f[12]) + (int(f[13]) + int(f[14]) if n == 0 else 0)) / TICK
    return total


def memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (MiB) of the server, and the largest VmHWM among its odds workers."""
    out: dict[str, float] = {"worker_hwm": 0.0}
    for n, p in enumerate(_tree(pid)):
        try:
            with open(f"/proc/{p}/status", encoding="ascii") as fh:
                status = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        rss, hwm = (int(status[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))
        if n == 0:
            out.update(rss=rss, hwm=hwm)
        else:
            out["worker_hwm"] = max(out["worker_hwm"], hwm)
    return out


HEAVY = ["d60000ro<59999", "d60001ro<59998", "d1000000", "d999998", "d999999!", "100d2!kh1",
         "180d20!kh1", "500d100!kh250", "d700000", "d500000", "d300000", "d250000", "d150000",
         "d100000!", "jc: 60d12 damage", "cofd: 500 8-again rote", "at: atk 0 wpn 999 luck 9",
         "d130000", "d70000"]


async def phase_a(lines: list[str]) -> None:
    import httpx

    folder = Path(tempfile.mkdtemp(prefix="astragal-costs-"))
    server = loadlib.Server(str(folder / "a.db"), log=folder / "a.log", caps="production").start()
    assert server.proc is not None
    pid = server.proc.pid
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as c:
            made = (await c.post("/api/rooms", json={"system": "dice", "gm_name": "Mei"})).json()
            rid, gm = made["room"]["id"], made["key"]
            auth = {"Authorization": f"Bearer {gm}"}
            await c.get("/api/odds", params={"text": "2d6"})  # a worker up
            # 1. The odds amplifier: 19 heavy inputs at 1.9/s from one address, with an
            #    ordinary roll every second beside them.
            cpu0, statuses, worst = cpu_seconds(pid), {}, (0.0, "")
            latencies: list[float] = []

            async def ordinary() -> None:
                for _ in range(12):
                    t = time.monotonic()
                    r = await c.post(f"/api/rooms/{rid}/rolls", headers=auth,
                                     json={"text": "2d6"})
                    if r.status_code == 201:
                        latencies.append(time.monotonic() - t)
                    await asyncio.sleep(1.0)

            async def heavy() -> None:
                nonlocal worst
                for text in HEAVY:
                    before = cpu_seconds(pid)
                    r = await c.get("/api/odds", params={"text": text})
                    statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                    spent = cpu_seconds(pid) - before
                    worst = max(worst, (spent, text))
                    await asyncio.sleep(1 / 1.9)

            start = time.monotonic()
            await asyncio.gather(ordinary(), heavy())
            lines.append(f"odds amplifier: {len(HEAVY)} heavy inputs at 1.9/s from one address "
                         f"in {time.monotonic() - start:.1f} s: statuses {dict(sorted(statuses.items()))}; "
                         f"CPU used by the server and its odds workers {cpu_seconds(pid) - cpu0:.1f} s "
                         f"(worst single request {worst[0]:.2f} s: {worst[1]!r})")
            lines.append(f"  ordinary rolls beside it: {len(latencies)} answered, latency max "
                         f"{max(latencies) * 1000:.0f} ms, median "
                         f"{sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms")
            mem = memory(pid)
            lines.append(f"  memory: server peak {mem['hwm']:.0f} MiB, largest odds worker peak "
                         f"{mem['worker_hwm']:.0f} MiB (each worker's address space is capped "
                         "at 1 GiB)")
            # 2. Members from one address.
            codes = [(await c.post(f"/api/rooms/{rid}/members", json={"name": f"P{i}"}))
                     .status_code for i in range(29)]
            lines.append(f"29 joins from one address: {codes.count(201)} accepted, "
                         f"{codes.count(429)} refused 429 (per address), "
                         f"{codes.count(507)} refused 507 (room full)")
        # 3. 1,100 connections from one address that never send a byte.
        socks, refused = [], 0
        for _ in range(1100):
            try:
                socks.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
            except OSError:
                refused += 1
        await asyncio.sleep(1.0)
        open_now = answered_429 = 0
        for s in socks:
            s.setblocking(False)
            try:
                answered_429 += s.recv(16, socket.MSG_PEEK).startswith(b"HTTP/1.1 429")
            except BlockingIOError:
                open_now += 1  # nothing to read: held open, waiting for a request
            except OSError:
                pass
        other = socket.create_connection(("127.0.0.1", server.port),
                                         source_address=("127.0.0.2", 0), timeout=10)
        other.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        health = other.recv(64).split(b"\r\n")[0].decode()
        other.close()
        t = time.monotonic()
        while time.monotonic() - t < 30:
            still = 0
            for s in socks:
                try:
                    if s.recv(1, socket.MSG_PEEK) != b"":
                        still += 0
                except BlockingIOError:
                    still += 1
                except OSError:
                    pass
            if still <= 0:
                break
            await asyncio.sleep(0.5)
        lines.append(f"1,100 idle connections from one address: {open_now} held open after 1 s, "
                     f"{answered_429} answered 429 and closed, {refused} not accepted; "
                     f"/api/health from another address: "
                     f"{health}; every idle one closed {time.monotonic() - t + 1:.0f} s after "
                     "opening (header timeout 10 s)")
        for s in socks:
            s.close()
    finally:
        server.stop()


async def phase_b(lines: list[str]) -> None:
    import httpx

    folder = Path(tempfile.mkdtemp(prefix="astragal-costs-"))
    server = loadlib.Server(str(folder / "b.db"), log=folder / "b.log").start()
    assert server.proc is not None
    pid = server.proc.pid
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as c:
            made = (await c.post("/api/rooms", json={"system": "cofd", "gm_name": "Mei"})).json()
            rid, gm = made["room"]["id"], made["key"]
            keys = [gm] + [(await c.post(f"/api/rooms/{rid}/members", json={"name": f"P{i}"}))
                           .json()["key"] for i in range(9)]
            start, codes, n = time.monotonic(), {}, 0
            while time.monotonic() - start < 120:
                key = keys[n % len(keys)]
                n += 1
                r = await c.post(f"/api/rooms/{rid}/rolls", headers={
                    "Authorization": f"Bearer {key}"}, json={"text": "500 8-again rote"})
                codes[r.status_code] = codes.get(r.status_code, 0) + 1
                if r.status_code == 507:
                    break
                if r.status_code == 429:
                    await asyncio.sleep(float(r.headers.get("retry-after", "1")))
            size = sum(os.path.getsize(p) for p in folder.glob("b.db*"))
            lines.append(f"filling one room with `cofd: 500 8-again rote`: {codes} in "
                         f"{time.monotonic() - start:.0f} s; the database is {size / 2**20:.0f} MiB")
            before = memory(pid)

            async def export(key: str) -> tuple[int, int]:
                r = await c.get(f"/api/rooms/{rid}/export.json",
                                headers={"Authorization": f"Bearer {key}"})
                return r.status_code, len(r.content)

            t = time.monotonic()
            got = await asyncio.gather(*(export(k) for k in keys))
            after = memory(pid)
            ok = [b for s, b in got if s == 200]
            lines.append(f"ten exports at once of that room: statuses "
                         f"{sorted(s for s, _ in got)}, {len(ok)} of "
                         f"{(max(ok) if ok else 0) / 2**20:.0f} MiB each in "
                         f"{time.monotonic() - t:.1f} s; server resident memory {before['rss']:.0f}"
                         f" MiB before, peak {after['hwm']:.0f} MiB (was {before['hwm']:.0f} MiB)")

            t = time.monotonic()
            pages = await asyncio.gather(*(c.get(f"/api/rooms/{rid}/log?limit=500", headers={
                "Authorization": f"Bearer {gm}"}) for _ in range(8)))
            lines.append(f"eight `/log?limit=500` at once: statuses "
                         f"{sorted(r.status_code for r in pages)}, "
                         f"{max(len(r.content) for r in pages) / 2**10:.0f} KiB each at most, in "
                         f"{time.monotonic() - t:.1f} s; server peak {memory(pid)['hwm']:.0f} MiB")
            await _silent_sockets(lines, server.url, rid, keys, pid)
    finally:
        server.stop()


async def _silent_sockets(lines: list[str], url: str, rid: str, keys: list[str],
                          pid: int) -> None:
    """32 live connections (the most one address may hold) that say hello and never read."""
    import base64
    import json
    import struct

    host, port = url.split("//", 1)[1].rsplit(":", 1)
    before, cpu = memory(pid)["rss"], cpu_seconds(pid)
    socks = []
    for n in range(32):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a client that reads nothing
        s.connect((host, int(port)))
        s.sendall((f"GET /api/rooms/{rid}/live HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
                   f"{base64.b64encode(os.urandom(16)).decode()}\r\n\r\n").encode())
        await asyncio.sleep(0.05)
        hello = json.dumps({"key": keys[n % len(keys)], "after": 0}).encode()
        mask = os.urandom(4)
        s.sendall(bytes([0x81, 0xFE]) + struct.pack(">H", len(hello)) + mask
                  + bytes(b ^ mask[i % 4] for i, b in enumerate(hello)))
        socks.append(s)
    await asyncio.sleep(10)
    after = memory(pid)["rss"]
    for s in socks:
        s.close()
    lines.append(f"32 live connections that never read, to that room: server resident memory "
                 f"{before:.0f} MiB before, {after:.0f} MiB after 10 s "
                 f"(+{(after - before) / 32:.1f} MiB a connection); CPU "
                 f"{cpu_seconds(pid) - cpu:.1f} s")


def main() -> int:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines: list[str] = [f"# tools/costs.py, {when}, load average {os.getloadavg()[0]:.1f}"]
    asyncio.run(phase_a(lines))
    asyncio.run(phase_b(lines))
    text = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
