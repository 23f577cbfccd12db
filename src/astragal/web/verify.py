"""``astragal verify-log``: check a room log's hash chain, and replay every roll from its faces.

The source is an exported JSON log file (``/api/rooms/{id}/export.json``), or a room id read
straight from the database (``--db``; SQLite ./astragal.db by default). Exit status: 0 the log is
intact, 1 it was altered (each problem is printed with its entry id), 2 it could not be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._errors import InputError
from .chain import Report, verify_entries, verify_export

__all__ = ["main", "verify_source"]


def _from_db(room_id: str, db: str | None) -> Report:
    from .store import DEFAULT_DB, MAX_PAGE, open_store

    if not (db or "").startswith(("postgresql://", "postgres://")):
        path = (db or DEFAULT_DB).removeprefix("sqlite:///")
        if not Path(path).is_file():
            raise InputError(f"'{room_id}' is not a file, and there is no database at {path} "
                             "(give --db)", room_id, (0, len(room_id)))
    try:
        store = open_store(db)
    except Exception as exc:  # noqa: BLE001 - any driver's failure to open: say why
        raise InputError(f"cannot open the database: {exc}") from None
    try:
        if store.room(room_id) is None:
            raise InputError(f"no room '{room_id}' in the database", room_id, (0, len(room_id)))
        entries: list[dict[str, Any]] = []
        while True:
            page = store.entries(room_id, entries[-1]["id"] if entries else 0, MAX_PAGE)
            entries += page
            if len(page) < MAX_PAGE:
                break
    finally:
        store.close()
    return verify_entries(entries)


def verify_source(source: str, db: str | None = None) -> Report:
    """Check an export file, or a room in the database."""
    path = Path(source)
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read {source} as a JSON log export: {exc}") from None
        return verify_export(data)
    return _from_db(source, db)


def main(args: argparse.Namespace) -> int:
    """Print what was found; 0 intact, 1 altered (input errors go to the CLI: 2)."""
    report = verify_source(args.source, args.db)
    for line in report.lines():
        print(line, file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 1
