"""``astragal verify-log``: check a room log's hash chain, and replay every roll from its faces.

The source is an exported JSON log file (``/api/rooms/{id}/export.json``), or a room id read
straight from the database (``--db``; SQLite ./astragal.db by default). Every entry's signature
is checked with the table's public key (``--key``; else the export's own, or the one beside the
database), and ``--receipts`` holds a player's receipts (the signed entries their page saw): a log
cut shorter, or rewritten, no longer matches them. In the database every entry is kept whole, so
a stub there is a problem. Exit status: 0 the log is intact, 1 it was altered (each problem is
printed with its entry id), 2 it could not be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._errors import InputError
from .chain import FORMAT, Report, verify_entries, verify_export
from .export_file import MAX_EXPORT, Entries, ExportFile

__all__ = ["main", "verify_source"]


MAX_RECEIPTS = 16 << 20  # bytes: a full room's receipts (20,000 entries) are about 8 MiB
MAX_RECEIPT_COUNT = 100_000  # a page keeps at most 20,000; each costs a signature check


def read_key(text: str | None) -> str | None:
    """A public key given as 64 hex digits, or a file holding them."""
    if text is None:
        return None
    from .._files import read_text

    value = text.strip()
    if len(value) != 64 or any(c not in "0123456789abcdefABCDEF" for c in value):
        if not Path(text).is_file():
            raise InputError(f"--key: give the table's public key (64 hex digits, shown in the "
                             f"room and in exports) or a file holding it, not {text[:80]!r}")
        value = read_text(text, "key file", 4096).strip()
        if len(value) != 64 or any(c not in "0123456789abcdefABCDEF" for c in value):
            raise InputError(f"--key: {text} does not hold a public key (64 hex digits)")
    return value.lower()


def read_receipts(path: str | None) -> tuple[list[Any], str | None]:
    """A player's receipts file: ``{"format": "astragal-receipts/1", "room", "key", "receipts"}``
    (or a bare list of receipts). Returns the receipts and the key it names."""
    if path is None:
        return [], None
    from .._files import read_text

    try:
        data = json.loads(read_text(path, "receipts file", MAX_RECEIPTS),
                          parse_constant=_no_constant)
    except FileNotFoundError:
        raise InputError(f"--receipts: the file {path} is missing (no such file)") from None
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InputError(f"--receipts: cannot read {path} as JSON: {why}") from None
    if isinstance(data, dict) and data.get("format") == "astragal-receipts/1" and isinstance(
            data.get("receipts"), list):
        key = data.get("key")
        receipts, named = list(data["receipts"]), key if isinstance(key, str) else None
    elif isinstance(data, list):
        receipts, named = data, None
    else:
        receipts = None
    if receipts is not None:
        if len(receipts) > MAX_RECEIPT_COUNT:
            raise InputError(f"--receipts: {path} holds {len(receipts):,} receipts; a page keeps "
                             f"at most 20,000 per room, and this reads at most "
                             f"{MAX_RECEIPT_COUNT:,}")
        return receipts, named
    raise InputError(f"--receipts: {path} is not a receipts file (expected \"format\": "
                     "\"astragal-receipts/1\" and a list of receipts)")


def _key_beside(db: str | None) -> str | None:
    """The public half of the key the table keeps beside its database, if it is there."""
    from .signing import Signer, default_key_path

    path = default_key_path(db)
    if not path.is_file():
        return None
    return Signer.load_or_create(path).public


def _from_db(room_id: str, db: str | None, key: str | None = None,
             receipts: list[Any] | None = None) -> Report:
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
        column: dict[int, str] = {}
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
        after = 0
        while True:
            hashes = store.hashes(room_id, after, MAX_PAGE)
            column.update(hashes)
            if len(hashes) < MAX_PAGE:
                break
            after = hashes[-1][0]
    finally:
        store.close()
    key = key or _key_beside(db)
    report = verify_entries(entries, trust_stubs=False, room=room_id, key=key,
                            receipts=receipts or ())
    for entry in entries:  # the hash column the next entry links to, against the entry itself
        if column.get(entry["id"]) != entry.get("hash"):
            report.problems.append(f"entry {entry['id']}: its hash column does not match the "
                                   "entry (edited)")
    if unreadable:
        report.problems.append(unreadable)
    return report


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_HEADER = ("format", "room", "key", "head")  # what checking the entries needs first


def _from_file(source: str, key: str | None, receipts: list[Any]) -> Report:
    """Check an export file read one entry at a time (``export_file``): its members before
    ``entries`` as the table writes them; when some come after, the entries are read again."""
    header: dict[str, Any] = {}
    report: Report | None = None
    listed = False
    for again in (False, True):
        with ExportFile(source) as f:
            for name, value in f.members():
                if not isinstance(value, Entries):
                    header[name] = value
                elif again or all(k in header for k in _HEADER):
                    report = verify_export({**header, "entries": value}, key=key,
                                           receipts=receipts)
                else:  # read through unchecked: the members after it come first
                    listed = all(True for _ in value)
        if report is not None or not listed:
            break
    if not ("format" in header or "entries" in header or listed):
        # some other JSON, not an export that was altered: an input error, not TAMPERED
        raise InputError(f"{source} is not an astragal log export (a JSON object with "
                         f"\"format\": \"{FORMAT}\" and its \"entries\"; a room's "
                         "export is /api/rooms/ROOM/export.json)")
    return report if report is not None else verify_export(header, key=key, receipts=receipts)


def verify_source(source: str, db: str | None = None, key: str | None = None,
                  receipts: str | None = None) -> Report:
    """Check an export file, or a room in the database, with a key and receipts."""
    from .._files import read_text

    key = read_key(key)
    given, receipts_key = read_receipts(receipts)
    key = key or receipts_key
    path = Path(source)
    if path.exists() and not path.is_file() or source == "-":
        read_text(source, "log export", MAX_EXPORT)  # names what it is: a device, a FIFO…
    if path.is_file():
        return _from_file(source, key, given)
    return _from_db(source, db, key, given)


def main(args: argparse.Namespace) -> int:
    """Print what was found; 0 intact, 1 altered (input errors go to the CLI: 2)."""
    report = verify_source(args.source, args.db, getattr(args, "key", None),
                           getattr(args, "receipts", None))
    for line in report.lines():
        print(line, file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 1
