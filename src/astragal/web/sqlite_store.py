"""The embedded store: rooms, members and the roll log in one SQLite file (``SQLiteStore``)."""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .chain import GENESIS, canonical, seal
from .fair import new_seed
from .store_common import (
    DEFAULT_DB,
    MAX_PAGE,
    Moved,
    NameTaken,
    StoreError,
    Wake,
    _check_join,
    _member_row,
    _signer,
    name_key,
    take_page,
)

__all__ = ["SQLiteStore"]

log = logging.getLogger("astragal.web")

_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS astragal_rooms (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, system TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS astragal_members (
  id TEXT PRIMARY KEY, room_id TEXT NOT NULL REFERENCES astragal_rooms(id),
  name TEXT NOT NULL, name_key TEXT NOT NULL, role TEXT NOT NULL, key_hash TEXT NOT NULL UNIQUE,
  created TEXT NOT NULL, sheet TEXT NOT NULL DEFAULT '{}', UNIQUE (room_id, name_key));
CREATE TABLE IF NOT EXISTS astragal_log (
  room_id TEXT NOT NULL REFERENCES astragal_rooms(id), seq INTEGER NOT NULL,
  hash TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (room_id, seq));
CREATE TABLE IF NOT EXISTS astragal_seeds (
  room_id TEXT NOT NULL REFERENCES astragal_rooms(id), epoch INTEGER NOT NULL,
  seed TEXT NOT NULL, PRIMARY KEY (room_id, epoch));
"""


@contextlib.contextmanager
def _sqlite_errors(what: str) -> Iterator[None]:
    """SQLite's failures as ``StoreError``: a full disk is 507, anything else that stops the
    file from being read or written (read-only, I/O error, locked for too long) is 503."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        why = str(exc)
        code = getattr(exc, "sqlite_errorname", "")
        if code.startswith("SQLITE_FULL") or "full" in why:
            log.error("SQLite: the disk is full (%s): %s", what, why)
            raise StoreError(507, f"the roll log cannot be written: the disk is full ({why}); "
                                  "nothing was stored") from exc
        log.error("SQLite: the roll log cannot %s: %s", what, why)
        tail = "; nothing was stored" if what == "be written" else ""
        raise StoreError(503, f"the roll log cannot {what}: {why}{tail}") from exc
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.IntegrityError):
            raise
        log.error("SQLite cannot %s: %s", what, exc)
        raise StoreError(503, f"the roll log cannot {what}: {exc}") from exc


MAX_GROUP = 256  # appends written in one transaction at most


@dataclass(slots=True)
class _Append:
    room: str
    body: Mapping[str, Any]
    expect: int | None
    done: bool = False
    entry: dict[str, Any] | None = None
    error: BaseException | None = None


class SQLiteStore:
    """The embedded store: one SQLite file in WAL mode, one connection guarded by a lock.

    ``synchronous=FULL``: a roll is answered only once its entry is on the disk, so not even a
    power cut loses an answered roll (a killed process never could: SQLite's WAL recovers).
    """

    def __init__(self, path: str | Path = DEFAULT_DB) -> None:
        self.path = str(path)
        self.sign: Callable[[str, int, str], str] | None = None
        self._lock = threading.Lock()  # the writer's
        self._queue: list[_Append] = []  # appends waiting for the next group commit
        self._queue_lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                                   timeout=10.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SQLITE_SCHEMA)
        # Readers get a connection per thread: in WAL mode they read the last commit without
        # waiting for the writer (whose lock is held through each commit's fsync).
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._closed = False

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise StoreError(503, "the roll log is closed")
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                                   timeout=10.0)
            conn.execute("PRAGMA query_only=ON")
            self._local.conn = conn
            with self._lock:
                self._readers.append(conn)
        return conn

    def _rollback(self) -> None:
        # After a failed COMMIT (a full disk) SQLite may have rolled back already.
        with contextlib.suppress(sqlite3.Error):
            self._db.execute("ROLLBACK")

    def create_room(self, room: Mapping[str, Any], gm: Mapping[str, Any]) -> None:
        with self._lock, _sqlite_errors("be written"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("INSERT INTO astragal_rooms VALUES (?, ?, ?, ?)",
                                 (room["id"], room["name"], room["system"], room["created"]))
                self._insert_member(gm)
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def _insert_member(self, m: Mapping[str, Any], max_members: int | None = None) -> None:
        names = [r[0] for r in self._db.execute(
            "SELECT name FROM astragal_members WHERE room_id = ?", (m["room"],))]
        _check_join(m, names, max_members)
        try:
            self._db.execute(
                "INSERT INTO astragal_members (id, room_id, name, name_key, role, key_hash, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (m["id"], m["room"], m["name"], name_key(m["name"]), m["role"], m["key_hash"],
                 m["created"]))
        except sqlite3.IntegrityError as exc:
            if "name_key" in str(exc):
                raise NameTaken(m["name"]) from None
            raise

    def room(self, room_id: str) -> dict[str, Any] | None:
        with _sqlite_errors("be read"):
            row = self._reader().execute("SELECT id, name, system, created FROM astragal_rooms "
                                   "WHERE id = ?", (room_id,)).fetchone()
        if row is None:
            return None
        return {"id": row[0], "name": row[1], "system": row[2], "created": row[3]}

    def add_member(self, member: Mapping[str, Any], max_members: int | None = None) -> None:
        with self._lock, _sqlite_errors("be written"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._insert_member(member, max_members)
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def member_by_key(self, room_id: str, key_hash: str) -> dict[str, Any] | None:
        with _sqlite_errors("be read"):
            row = self._reader().execute(
                "SELECT id, room_id, name, role, created, sheet FROM astragal_members "
                "WHERE key_hash = ? AND room_id = ?", (key_hash, room_id)).fetchone()
        return None if row is None else _member_row(row)

    def members(self, room_id: str) -> list[dict[str, Any]]:
        with _sqlite_errors("be read"):
            rows = self._reader().execute(
                "SELECT id, name, role FROM astragal_members WHERE room_id = ? "
                "ORDER BY created, rowid", (room_id,)).fetchall()
        return [{"id": r[0], "name": r[1], "role": r[2]} for r in rows]

    def save_sheet(self, member_id: str, sheet: Mapping[str, Any]) -> None:
        with self._lock, _sqlite_errors("be written"):
            self._db.execute("UPDATE astragal_members SET sheet = ? WHERE id = ?",
                             (canonical(sheet), member_id))

    def set_key(self, member_id: str, key_hash: str) -> None:
        with self._lock, _sqlite_errors("be written"):
            self._db.execute("UPDATE astragal_members SET key_hash = ? WHERE id = ?",
                             (key_hash, member_id))

    def remove_member(self, member_id: str) -> None:
        with self._lock, _sqlite_errors("be written"):
            self._db.execute("DELETE FROM astragal_members WHERE id = ?", (member_id,))

    def append(self, room_id: str, body: Mapping[str, Any],
               expect: int | None = None) -> dict[str, Any]:
        """Group commit: the appends waiting when the file is free are written in one
        transaction, and each is answered once that transaction is on the disk. A commit's
        fsync is most of an append's time, so while one is under way the next ones queue and
        share the next fsync (rooms never wait for each other's rolls one by one)."""
        job = _Append(room_id, body, expect)
        with self._queue_lock:
            self._queue.append(job)
        with self._lock:  # the one holding it writes everything queued, this one's too
            while not job.done:  # a group holds at most MAX_GROUP: this one may be in the next
                self._write_queued()
        if job.error is not None:
            raise job.error
        assert job.entry is not None
        return job.entry

    def _write_queued(self) -> None:
        with self._queue_lock:
            jobs, self._queue = self._queue[:MAX_GROUP], self._queue[MAX_GROUP:]
        written: list[_Append] = []
        try:
            with _sqlite_errors("be written"):
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    heads: dict[str, tuple[int, str]] = {}
                    for job in jobs:
                        head = heads.get(job.room)
                        if head is None:
                            last = self._db.execute(
                                "SELECT seq, hash FROM astragal_log WHERE room_id = ? "
                                "ORDER BY seq DESC LIMIT 1", (job.room,)).fetchone()
                            head = (last[0], last[1]) if last else (0, GENESIS)
                        seq, prev = head
                        if job.expect is not None and job.expect != seq + 1:
                            job.error = Moved(seq + 1)
                            continue
                        entry = seal(job.body, seq + 1, prev, _signer(self.sign, job.room))
                        self._db.execute("INSERT INTO astragal_log VALUES (?, ?, ?, ?)",
                                         (job.room, seq + 1, entry["hash"], canonical(entry)))
                        heads[job.room] = (seq + 1, entry["hash"])
                        job.entry = entry
                        written.append(job)
                    self._db.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise
        except BaseException as exc:  # noqa: BLE001 - nothing of the group was stored: each is told so
            for job in written:
                job.entry = None
            for job in jobs:
                if job.entry is None and job.error is None:
                    job.error = exc
        finally:
            for job in jobs:
                job.done = True

    def entries(self, room_id: str, after: int = 0, limit: int = MAX_PAGE) -> list[dict[str, Any]]:
        with _sqlite_errors("be read"):
            rows = self._reader().execute(
                "SELECT body FROM astragal_log WHERE room_id = ? AND seq > ? ORDER BY seq "
                "LIMIT ?", (room_id, after, limit)).fetchall()
        return [json.loads(r[0]) for r in rows]

    def page(self, room_id: str, after: int, limit: int,
             max_bytes: int) -> tuple[list[dict[str, Any]], bool]:
        # SQLite steps one row at a time, so the rows past the page's end are never read (a
        # running sum in SQL read every body of the 500 to size them: 30 MB for a 256 KiB page)
        with _sqlite_errors("be read"), contextlib.closing(self._reader().execute(
                "SELECT body, length(CAST(body AS BLOB)) FROM astragal_log "
                "WHERE room_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                (room_id, after, limit))) as rows:
            return take_page(rows, limit, max_bytes)

    def epoch(self, room_id: str) -> tuple[int, str]:
        with _sqlite_errors("be read"):  # a reader: rolls do not queue behind the writer
            row = self._reader().execute("SELECT epoch, seed FROM astragal_seeds WHERE "
                                         "room_id = ? ORDER BY epoch DESC LIMIT 1",
                                         (room_id,)).fetchone()
        if row is not None:
            return int(row[0]), str(row[1])
        with self._lock, _sqlite_errors("be written"):
            row = self._db.execute("SELECT epoch, seed FROM astragal_seeds WHERE room_id = ? "
                                   "ORDER BY epoch DESC LIMIT 1", (room_id,)).fetchone()
            if row is None:
                self._db.execute("INSERT OR IGNORE INTO astragal_seeds VALUES (?, 1, ?)",
                                 (room_id, new_seed()))
                row = self._db.execute("SELECT epoch, seed FROM astragal_seeds WHERE room_id = ?"
                                       " ORDER BY epoch DESC LIMIT 1", (room_id,)).fetchone()
        return int(row[0]), str(row[1])

    def next_epoch(self, room_id: str, epoch: int) -> tuple[int, str] | None:
        seed = new_seed()
        with self._lock, _sqlite_errors("be written"):
            made = self._db.execute("INSERT OR IGNORE INTO astragal_seeds VALUES (?, ?, ?)",
                                    (room_id, epoch + 1, seed)).rowcount
        return (epoch + 1, seed) if made else None

    def hashes(self, room_id: str, after: int = 0, limit: int = MAX_PAGE) -> list[tuple[int, str]]:
        with _sqlite_errors("be read"):
            rows = self._reader().execute(
                "SELECT seq, hash FROM astragal_log WHERE room_id = ? AND seq > ? ORDER BY seq "
                "LIMIT ?", (room_id, after, limit)).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def head(self, room_id: str) -> tuple[int, str]:
        with _sqlite_errors("be read"):
            row = self._reader().execute("SELECT seq, hash FROM astragal_log WHERE room_id = ? "
                                   "ORDER BY seq DESC LIMIT 1", (room_id,)).fetchone()
        return (int(row[0]), str(row[1])) if row else (0, GENESIS)

    def log_bytes(self, room_id: str) -> int:
        with _sqlite_errors("be read"):
            row = self._reader().execute("SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) "
                                         "FROM astragal_log WHERE room_id = ?",
                                         (room_id,)).fetchone()
        return int(row[0])

    def room_count(self) -> int:
        with _sqlite_errors("be read"):
            return int(self._reader().execute("SELECT count(*) FROM astragal_rooms").fetchone()[0])

    def idle_rooms(self, before: str, limit: int) -> list[str]:
        with _sqlite_errors("be read"):
            rows = self._reader().execute(
                "SELECT r.id FROM astragal_rooms r WHERE coalesce((SELECT json_extract(l.body, "
                "'$.at') FROM astragal_log l WHERE l.room_id = r.id ORDER BY l.seq DESC LIMIT 1),"
                " r.created) < ? LIMIT ?", (before, limit)).fetchall()
        return [r[0] for r in rows]

    def delete_room(self, room_id: str) -> None:
        with self._lock, _sqlite_errors("be written"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for table in ("astragal_log", "astragal_seeds", "astragal_members"):
                    self._db.execute(f"DELETE FROM {table} WHERE room_id = ?",
                                     (room_id,))
                self._db.execute("DELETE FROM astragal_rooms WHERE id = ?", (room_id,))
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def ping(self) -> None:
        """Read the file (``StoreError`` when it cannot be read)."""
        with _sqlite_errors("be read"):
            self._reader().execute("SELECT count(*) FROM astragal_rooms").fetchone()

    def listen(self, wake: Wake) -> None:
        """One process owns the file's live clients; nothing to listen to."""

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()
            readers, self._readers = self._readers, []
        for conn in readers:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
