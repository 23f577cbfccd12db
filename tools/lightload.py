"""A light load client for the web table: plain HTTP/1.1 and WebSocket frames on asyncio.

The load tools share the machine with the server they measure, so the client must cost little
next to it: here a roll is one keep-alive request written by hand and a live message is one
frame cut out of the socket's bytes, stamped with its arrival time and kept as bytes. Nothing is
parsed while the rolls run; ``LiveSocket.records`` and ``Roller.records`` turn everything into
``loadlib``'s players afterwards, so that ``loadlib.check`` proves the same four things it
proves for the full client (nothing lost or duplicated, one order, every entry delivered to
exactly those who may see it).

Only what the web table speaks is understood: responses with a Content-Length, unfragmented
server frames (uvicorn sends each message as one frame), pings (answered), and close.
"""

from __future__ import annotations

import asyncio
import heapq
import json
import random
import time
from dataclasses import dataclass, field

import loadlib
from loadlib import Player, Roll

KEEP_IDLE = 4.0  # the server closes a kept-alive connection idle for 5 s: reopen before that


class Http:
    """One keep-alive HTTP/1.1 connection to ``host:port``."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.used = 0.0

    async def request(self, head: bytes, body: bytes) -> tuple[int, bytes]:
        """Send one request (``head`` ends with the blank line); the status and the body."""
        now = time.monotonic()
        if self.writer is None or now - self.used > KEEP_IDLE:
            self.close()
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None and self.writer is not None
        self.writer.write(head + body)
        top = await self.reader.readuntil(b"\r\n\r\n")
        status = int(top[9:12])
        length = 0
        keep = True
        for line in top.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                keep = False
        data = await self.reader.readexactly(length) if length else b""
        self.used = time.monotonic()
        if not keep:
            self.close()
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class LiveSocket(asyncio.Protocol):
    """One live WebSocket of a player: every text frame kept as (arrival time, bytes)."""

    def __init__(self, host: str, port: int, player: Player) -> None:
        self.host, self.port, self.player = host, port, player
        self.frames: list[tuple[float, bytes]] = []
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.upgraded = False
        self.closed = asyncio.get_running_loop().create_future()
        self.reconnects = 0

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        self.buffer.clear()
        self.upgraded = False
        if self.closed.done():
            self.closed = loop.create_future()
        await loop.create_connection(lambda: self, self.host, self.port)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(
            f"GET /api/rooms/{self.player.room}/live HTTP/1.1\r\nHost: {self.host}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            .encode())

    def _send(self, opcode: int, payload: bytes) -> None:
        # a client's frames are masked; a mask of zeros leaves the payload as it is
        n = len(payload)
        size = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
        assert self.transport is not None
        self.transport.write(bytes([0x80 | opcode]) + size + b"\0\0\0\0" + payload)

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        buf = self.buffer
        buf += data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            if b" 101 " not in buf[:end]:
                self.player.live_errors.append(bytes(buf[:end]).decode(errors="replace"))
                assert self.transport is not None
                self.transport.close()
                return
            del buf[:end + 4]
            self.upgraded = True
            self._send(1, json.dumps({"key": self.player.key, "after": self.last()}).encode())
        while len(buf) >= 2:
            opcode, n, at = buf[0] & 15, buf[1] & 127, 2
            if n == 126:
                if len(buf) < 4:
                    return
                n, at = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                if len(buf) < 10:
                    return
                n, at = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) < at + n:
                return
            payload = bytes(buf[at:at + n])
            del buf[:at + n]
            if opcode == 1:
                self.frames.append((now, payload))
            elif opcode == 9:
                self._send(10, payload)
            elif opcode == 8:
                assert self.transport is not None
                self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def last(self) -> int:
        """The last entry id received (for a reconnect: the server sends only what follows)."""
        for _, raw in reversed(self.frames):
            message = json.loads(raw)
            if message.get("type") == "entry":
                return int(message["entry"]["id"])
            if message.get("type") == "head":
                return int(message["id"])
        return 0

    async def keep(self, done: asyncio.Event) -> None:
        """Stay connected until ``done``: reconnect (from the last id seen) when dropped."""
        while not done.is_set():
            try:
                await self.open()
                waiter = asyncio.ensure_future(done.wait())
                await asyncio.wait({waiter, self.closed}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
            except OSError as exc:
                self.player.live_errors.append(type(exc).__name__)
            if done.is_set():
                break
            self.reconnects += 1
            await asyncio.sleep(0.2)
        if self.transport is not None:
            self.transport.close()

    def records(self) -> None:
        """The frames as the player's ``seen``, ``seen_at``, ``after``, ``live_errors``."""
        p = self.player
        p.reconnects = self.reconnects
        for at, raw in self.frames:
            message = json.loads(raw)
            kind = message.get("type")
            if kind == "entry":
                e = message["entry"]
                p.seen.append(e)
                p.seen_at.setdefault(e["id"], at)
                p.after = max(p.after, e["id"])
            elif kind == "head":
                p.after = max(p.after, message["id"])
                p.head = max(p.head, message["id"])
            elif kind == "error":
                p.live_errors.append(f"{message.get('error')}: {message.get('message')}")


@dataclass
class Roller:
    """Rolls at a steady offered rate, spread evenly over the players (open loop: a roll is sent
    on time whether or not the player's last one was answered)."""

    players: list[Player]
    rolls: dict[str, list[str]]
    rate: float
    rng: random.Random
    raw: list[tuple[Player, float, float, int, bytes]] = field(default_factory=list)
    idle: dict[int, list[Http]] = field(default_factory=dict)

    async def run(self, seconds: float) -> float:
        """Roll for ``seconds``; the seconds it took until every roll was answered."""
        start = time.monotonic()
        per_player = self.rate / len(self.players)
        queue = [(start + (i + self.rng.random()) / self.rate, i)
                 for i in range(len(self.players))]
        heapq.heapify(queue)
        tasks: set[asyncio.Task[None]] = set()
        while queue:
            at, i = heapq.heappop(queue)
            if at >= start + seconds:
                break
            if (wait := at - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            task = asyncio.ensure_future(self._roll(self.players[i]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            heapq.heappush(queue, (at + 1.0 / per_player, i))
        if tasks:
            await asyncio.wait(tasks, timeout=60)
        return time.monotonic() - start

    async def _roll(self, p: Player) -> None:
        vis = self.rng.choices(["public", "gm", "blind"], [70, 15, 15])[0]
        body = json.dumps({"text": self.rng.choice(self.rolls[p.system]),
                           "visibility": vis}).encode()
        url = p.roll_to[0]
        host, _, port = url.removeprefix("http://").partition(":")
        head = (f"POST /api/rooms/{p.room}/rolls HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: Bearer {p.key}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        pool = self.idle.setdefault(id(p), [])
        conn = pool.pop() if pool else Http(host, int(port))
        t0 = time.monotonic()
        try:
            status, data = await asyncio.wait_for(conn.request(head, body), timeout=30)
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as exc:
            conn.close()
            self.raw.append((p, t0, time.monotonic() - t0, 0, type(exc).__name__.encode()))
            return
        self.raw.append((p, t0, time.monotonic() - t0, status, data))
        pool.append(conn)

    def records(self) -> None:
        """Each answer as a ``loadlib.Roll`` of its player."""
        for p, t0, latency, status, data in self.raw:
            body = json.loads(data) if status and data[:1] == b"{" else None
            p.rolls.append(Roll(status, t0, latency, body,
                                "" if status == 201 else data[:200].decode(errors="replace")))
        for pool in self.idle.values():
            for conn in pool:
                conn.close()


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used, from /proc (all its threads)."""
    import os

    fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()  # noqa: SIM115
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


__all__ = ["Http", "LiveSocket", "Roller", "loadlib", "server_cpu"]
