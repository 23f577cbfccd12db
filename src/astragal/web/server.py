"""``astragal serve``: the web table on uvicorn, over SQLite (default) or PostgreSQL (``--db``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._errors import InputError

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["build", "main", "uvicorn_options"]


def build(db: str | None) -> FastAPI:
    """The app over the store that ``db`` names (a SQLite path, or a postgresql:// URL)."""
    from .app import create_app
    from .store import open_store

    try:
        store = open_store(db)
    except ValueError as exc:  # a bad schema name in the URL
        raise InputError(f"--db: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - any driver's failure to open: say which and why
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot open the database {shown(db)}: {why}") from None
    return create_app(store)


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

    app = build(args.db)
    where = shown(args.db)
    print(f"astragal web table on http://{args.host}:{args.port}/  (log: {where}; Ctrl-C stops)",
          file=sys.stderr)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("note: listening beyond this machine; put it behind HTTPS so keys stay secret",
              file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, **uvicorn_options())
    return 0


def uvicorn_options() -> dict[str, Any]:
    """How ``astragal serve`` runs uvicorn (the load and fault tools run it the same way).

    h11, not httptools: h11 refuses a request line and headers over ``MAX_BODY`` bytes, while
    httptools reads headers of any size into memory (20 MB were accepted), a flood of which
    would exhaust the server. WebSocket messages are capped at ``MAX_BODY`` too.
    """
    from .app import MAX_BODY

    return {"log_level": "warning", "http": "h11", "ws_max_size": MAX_BODY,
            "h11_max_incomplete_event_size": MAX_BODY, "proxy_headers": False}
