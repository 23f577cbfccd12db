"""``astragal serve``: the web table on uvicorn, over SQLite (default) or PostgreSQL (``--db``)."""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._errors import InputError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from .caps import Caps

__all__ = ["build", "main", "uvicorn_options"]


def build(db: str | None, caps: Caps | None = None,
          door_rate: tuple[float, int] | None = None, origins: Sequence[str] = ()) -> FastAPI:
    """The app over the store that ``db`` names (a SQLite path, or a postgresql:// URL), signed
    with the key file that every instance on that database shares (``default_key_path``).

    ``caps`` and ``door_rate`` (rooms opened and joins per address) replace the production
    ones: the load tools lift the caps per address, since all their players share 127.0.0.1.
    ``origins``: other sites whose pages may open the live connection (``--allow-origin``).
    """
    from .app import create_app
    from .room import Table
    from .signing import Signer, default_key_path
    from .store import open_store

    try:
        store = open_store(db)
    except ValueError as exc:  # a bad schema name in the URL
        raise InputError(f"--db: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - any driver's failure to open: say which and why
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot open the database {shown(db)}: {why}") from None
    # the table's signing key: its own file, apart from the database (ASTRAGAL_KEY to place it)
    signer = Signer.load_or_create(default_key_path(db))
    table = Table(store, signer=signer, caps=caps, archive=archive_path(db))
    if door_rate is None:
        return create_app(store, table=table, origins=origins)
    return create_app(store, table=table, door_rate=door_rate, origins=origins)


def archive_path(db: str | None) -> Path:
    """Where idle rooms are exported before they are deleted: ``ASTRAGAL_ARCHIVE``, else beside
    an SQLite database (``astragal.db`` → ``astragal.db-archive/``), else ``astragal-archive/``
    in the working folder (as the signing key's file, ``default_key_path``)."""
    from .store_common import DEFAULT_DB

    if os.environ.get("ASTRAGAL_ARCHIVE"):
        return Path(os.environ["ASTRAGAL_ARCHIVE"])
    if db and db.startswith(("postgresql://", "postgres://")):
        return Path("astragal-archive")
    return Path((db or DEFAULT_DB).removeprefix("sqlite:///") + "-archive")


def shown(db: str | None) -> str:
    """The database as it may be printed: a URL's password is hidden."""
    if not db:
        return "astragal.db (SQLite)"
    parts = urlsplit(db)
    if parts.password:
        host = parts.netloc.rpartition("@")[2]
        return parts._replace(netloc=f"{parts.username}:***@{host}").geturl()
    return db


def main(args: argparse.Namespace) -> int:
    """Serve until interrupted; ``args`` has ``host``, ``port`` and ``db``."""
    import uvicorn

    sock = _listen(args.host, args.port)  # before the database or its key file is made
    try:
        app = build(args.db, origins=args.allow_origin)
    except BaseException:
        sock.close()
        raise
    where = shown(args.db)
    print(f"astragal web table on http://{args.host}:{args.port}/  (log: {where}; Ctrl-C stops)",
          file=sys.stderr)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("note: listening beyond this machine; put it behind HTTPS so keys stay secret",
              file=sys.stderr)
    _raise_file_limit()
    proxies = tuple(getattr(args, "trusted_proxy", None) or ())
    if proxies:
        print(f"note: client addresses from X-Forwarded-For, sent by {', '.join(proxies)} only",
              file=sys.stderr)
    config = uvicorn.Config(app, host=args.host, port=args.port,
                            **uvicorn_options(trusted_proxies=proxies))
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def _listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound now: a port already in use is one clear error (exit 2), said
    before anything is written."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family)
    except OSError as exc:
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        raise InputError(f"cannot listen on {host}:{port}: {why}"
                         + (" (another server is using it: choose another --port)"
                            if exc.errno == errno.EADDRINUSE else "")) from None
    sock.set_inheritable(True)
    return sock


def _raise_file_limit() -> None:
    """Open files up to the hard limit: each connection is one (the soft limit is often 1024)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass


CONNECTIONS_PER_ADDRESS = 64  # open TCP connections from one client address
HEADER_SECONDS = 10.0  # a request's line and headers must arrive within this
KEEP_ALIVE_SECONDS = 5.0  # an idle kept-alive connection is closed after this


def uvicorn_options(*, connections_per_address: int = CONNECTIONS_PER_ADDRESS,
                    header_seconds: float = HEADER_SECONDS,
                    keep_alive_seconds: float = KEEP_ALIVE_SECONDS,
                    trusted_proxies: tuple[str, ...] = ()) -> dict[str, Any]:
    """How ``astragal serve`` runs uvicorn (the load and fault tools run it the same way).

    httptools (C) parses requests, with a cap of ``MAX_BODY`` bytes on a request's line and
    headers (``guarded_protocol``): httptools alone reads headers of any size into memory (20 MB
    were accepted), a flood of which would exhaust the server. (h11 caps them itself, but its
    pure-Python parsing and writing were over a tenth of the server's CPU per roll.) WebSocket
    messages are capped at ``MAX_BODY`` too.

    Slow and idle clients: uvicorn closes a kept-alive connection idle for ``keep_alive_seconds``
    but waits for ever for a new connection's first request or for headers sent a byte at a
    time, so the protocol here closes a connection whose request line and headers have not all
    arrived ``header_seconds`` after it opened or after its request began, and refuses more than
    ``connections_per_address`` open connections from one address (a WebSocket counted until
    it closes); the app answers a body that has not arrived within ``BODY_SECONDS`` with 408.

    Proxies: a client's address is the connection's, unless the connection comes from one of
    ``trusted_proxies`` (addresses or networks, ``--trusted-proxy``): then it is the one that
    proxy names in X-Forwarded-For (every cap per address counts the players, not the proxy),
    and the proxy's own connections are not capped per address. A header of that kind from
    anyone else is ignored: it would let a client pick its address.
    """
    from .app import MAX_BODY

    return {"log_level": "warning", "ws_max_size": MAX_BODY,
            "http": guarded_protocol(connections_per_address, header_seconds, trusted_proxies,
                                     MAX_BODY),
            "timeout_keep_alive": keep_alive_seconds,
            "proxy_headers": bool(trusted_proxies),
            "forwarded_allow_ips": ",".join(trusted_proxies)}


_BUSY = (b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
         b"connection: close\r\nretry-after: 5\r\ncontent-length: %d\r\n\r\n%s")
_HEAD_TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: "
                   b"application/json\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s")


def guarded_protocol(per_address: int, header_seconds: float,
                     trusted_proxies: tuple[str, ...] = (),
                     max_head: int = 16 * 1024) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol with a cap of ``max_head`` bytes on a request's line and
    headers, a deadline for them, and a cap on connections per address but a trusted proxy's
    (each server gets its own count)."""
    import ipaddress

    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    proxies = [ipaddress.ip_network(p, strict=False) for p in trusted_proxies]

    def is_proxy(address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in proxies)

    # open connections per address, counted as they open and close (no scan per connection:
    # a thousand open ones made each new one walk them all)
    open_by_address: dict[str, int] = {}
    too_large = (b'{"error":"TooLarge","message":"the request line and headers are over the '
                 b'limit of %d bytes"}' % max_head)

    class GuardedProtocol(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None
        _counted: str | None = None  # the address this connection is counted for
        # Reading a request's line and headers (or waiting for the next request's), and the
        # bytes received since they began. Counted as the bytes arrive, before httptools
        # buffers them: it keeps a header's fragments until the header ends, however long.
        _in_head = True
        _head_bytes = 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else "unknown"
            if proxies and is_proxy(address):  # every player behind it: the app's caps count
                self._start_header_timer()
                return
            if open_by_address.get(address, 0) >= per_address:
                body = (b'{"error":"RateLimited","message":"too many open connections from '
                        b'your address (at most %d)"}' % per_address)
                transport.write(_BUSY % (len(body), body))
                transport.close()
                return
            open_by_address[address] = open_by_address.get(address, 0) + 1
            self._counted = address
            self._start_header_timer()

        def _start_header_timer(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(header_seconds, self._header_timeout)

        def _stop_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def data_received(self, data: bytes) -> None:
            if self._in_head:
                self._head_bytes += len(data)
            super().data_received(data)
            if not self._in_head or not self._head_bytes:
                return  # (a request read whole is being answered: no deadline for that)
            if self._head_bytes > max_head:
                self._in_head = False
                self._stop_header_timer()
                if not self.transport.is_closing():
                    self.transport.write(_HEAD_TOO_LARGE % (len(too_large), too_large))
                    self.transport.close()
            else:  # a request has begun: its line and headers are timed
                self._start_header_timer()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._head_bytes = 0
            self._stop_header_timer()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._in_head = True  # what follows is the next request's

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._stop_header_timer()  # idle now: the keep-alive timeout applies

        def _header_timeout(self) -> None:
            self._header_timer = None
            if self._in_head and not self.transport.is_closing():
                self.transport.close()

        def handle_websocket_upgrade(self) -> None:
            super().handle_websocket_upgrade()
            # The WebSocket's protocol has the connection now, and is told when it closes:
            # it uncounts it (else every live connection ever opened counted against its
            # address until the server restarted, and a page that reconnected 64 times from
            # one address was refused from then on)
            live = self.transport.get_protocol()
            lost = live.connection_lost

            def connection_lost(exc: Exception | None) -> None:
                try:
                    lost(exc)
                finally:
                    self._uncount()

            live.connection_lost = connection_lost  # type: ignore[method-assign]

        def _uncount(self) -> None:
            if (address := self._counted) is not None:
                self._counted = None
                left = open_by_address[address] - 1
                if left:
                    open_by_address[address] = left
                else:
                    del open_by_address[address]  # addresses with nothing open are forgotten

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_header_timer()
            self._uncount()
            super().connection_lost(exc)

    return GuardedProtocol
