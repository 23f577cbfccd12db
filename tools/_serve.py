"""Run the web table as ``astragal serve`` does, for the load and fault tools (127.0.0.1 only).

The one difference: nothing is capped or rate-limited per address (opening rooms, joining,
rolls, stored bytes, live and TCP connections), since every simulated player comes from
127.0.0.1. Rolls and odds keep the production limits per player, and every cap per room holds.

    python tools/_serve.py --port 8765 --db sqlite-file-or-postgresql-url [--caps production]
"""

from __future__ import annotations

import argparse
import logging
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--caps", choices=("loose", "production"), default="loose",
                        help="production: every cap per address too, as `astragal serve`")
    args = parser.parse_args()
    import uvicorn

    from astragal.web.caps import LOOSE
    from astragal.web.server import build, uvicorn_options

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # build signs with the key file every instance on the database shares, as `astragal serve`
    # does (ASTRAGAL_KEY, else beside the SQLite file)
    if args.caps == "production":
        app = build(args.db)
        options = uvicorn_options()
    else:
        app = build(args.db, caps=LOOSE, door_rate=(1e6, 1_000_000))
        options = uvicorn_options(connections_per_address=10**6)
    uvicorn.run(app, host="127.0.0.1", port=args.port, **options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
