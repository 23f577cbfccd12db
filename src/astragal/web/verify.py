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
        unreadable = None
        while True:
            after = entries[-1]["id"] if entries else 0
            try:
                page = store.entries(room_id, after, MAX_PAGE)
            except (ValueError, RecursionError) as exc:  # a row that is not JSON (or too deep)
                why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
                unreadable = (f"an entry after id {after} is not a JSON log entry ({why}): the "
                              "database was written by something other than astragal")
                break
            if any(not isinstance(e, dict) or not isinstance(e.get("id"), int) for e in page):
                unreadable = f"an entry after id {after} is not a JSON log entry object"
                break
            entries += page
            if len(page) < MAX_PAGE:
                break
    finally:
        store.close()
    report = verify_entries(entries)
    if unreadable:
        report.problems.append(unreadable)
    return report


MAX_EXPORT = 1 << 30  # bytes: a room at the web table's log cap exports well under this


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def verify_source(source: str, db: str | None = None) -> Report:
    """Check an export file, or a room in the database."""
    from .._files import read_text

    path = Path(source)
    if path.exists() and not path.is_file() or source == "-":
        read_text(source, "log export", MAX_EXPORT)  # names what it is: a device, a FIFO…
    if path.is_file():
        try:
            data = json.loads(read_text(source, "log export", MAX_EXPORT),
                              parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise InputError(f"cannot read {source} as a JSON log export: {why}") from None
        return verify_export(data)
    return _from_db(source, db)


def main(args: argparse.Namespace) -> int:
    """Print what was found; 0 intact, 1 altered (input errors go to the CLI: 2)."""
    report = verify_source(args.source, args.db)
    for line in report.lines():
        print(line, file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 1
