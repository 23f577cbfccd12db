"""``astragal serve``: the web table on uvicorn, over SQLite (default) or PostgreSQL (``--db``)."""

from __future__ import annotations

import argparse
import sys

from .._errors import InputError

__all__ = ["main", "build"]


def build(db: str | None) -> object:
    """The app over the store that ``db`` names (a SQLite path, or a postgresql:// URL)."""
    from .app import create_app
    from .store import open_store

    try:
        store = open_store(db)
    except ValueError as exc:  # a bad schema name in the URL
        raise InputError(f"--db: {exc}") from None
    except Exception as exc:  # the database cannot be opened or reached: say which and why
        raise InputError(f"cannot open the database {db or 'astragal.db'}: "
                         f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}") \
            from None
    return create_app(store)


def main(args: argparse.Namespace) -> int:
    """Serve until interrupted; ``args`` has ``host``, ``port`` and ``db``."""
    import uvicorn

    from .app import MAX_BODY

    app = build(args.db)
    where = args.db or "astragal.db (SQLite)"
    print(f"astragal web table on http://{args.host}:{args.port}/  (log: {where}; Ctrl-C stops)",
          file=sys.stderr)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("note: listening beyond this machine; put it behind HTTPS so keys stay secret",
              file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                ws_max_size=MAX_BODY, h11_max_incomplete_event_size=MAX_BODY,
                proxy_headers=False)
    return 0
