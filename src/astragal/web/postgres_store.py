"""The shared store: rooms in PostgreSQL (``PostgresStore``), for several app instances on one
database; an append sends ``NOTIFY`` so the other instances wake their clients.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .chain import GENESIS, canonical, seal
from .fair import new_seed
from .store_common import (
    MAX_PAGE,
    MEMBERS_NOTE,
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

__all__ = ["PostgresStore", "split_schema"]

log = logging.getLogger("astragal.web")

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,40}$")


def split_schema(url: str) -> tuple[str, str]:
    """Take ``?schema=NAME`` off a PostgreSQL URL (psycopg does not know it): (url, schema)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = "public"
    rest = []
    for k, v in query:
        if k == "schema":
            schema = v
        else:
            rest.append((k, v))
    if not _SCHEMA_NAME.match(schema):
        raise ValueError(f"'{schema}' is not a schema name: lower-case letters, digits and _")
    return urlunsplit(parts._replace(query=urlencode(rest))), schema


class PostgresStore:
    """Rooms in PostgreSQL (psycopg 3): several app instances share them, NOTIFY wakes the others.

    Tables live in ``schema`` (created if missing) so that test runs, or several tables, never
    collide; the NOTIFY channel is named after the schema too.

    When the connection to the server breaks (a restart, a network cut, an administrator ending
    sessions), the idle connections are dropped and the operation is tried once more on a new
    connection when that is safe: every read, and an append that had not reached its COMMIT.
    Otherwise the caller gets a ``StoreError`` (503) that says so, and the next request connects
    afresh: the app recovers by itself once the server answers again.
    """

    def __init__(self, url: str, schema: str | None = None, pool_size: int = 24) -> None:
        import psycopg

        self.sign: Callable[[str, int, str], str] | None = None
        self._psycopg = psycopg
        self.url, url_schema = split_schema(url)
        self.schema = schema or url_schema
        if not _SCHEMA_NAME.match(self.schema):
            raise ValueError(f"'{self.schema}' is not a schema name")
        self.channel = f"astragal_{self.schema}"[:63]
        s = f'"{self.schema}".'
        self._rooms, self._members, self._log = (s + "astragal_rooms", s + "astragal_members",
                                                 s + "astragal_log")
        self._seeds = s + "astragal_seeds"
        self._idle: list[Any] = []
        self._pool_lock = threading.Lock()
        self._pool_size = pool_size
        self._stop = threading.Event()
        self._listener: threading.Thread | None = None
        self.listening = False
        with self._conn() as conn, conn.transaction():
            # Two instances starting at once would race on CREATE … IF NOT EXISTS.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.channel,))
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            conn.execute(f"""CREATE TABLE IF NOT EXISTS {self._rooms} (
              id TEXT PRIMARY KEY, name TEXT NOT NULL, system TEXT NOT NULL,
              created TEXT NOT NULL)""")
            conn.execute(f"""CREATE TABLE IF NOT EXISTS {self._members} (
              id TEXT PRIMARY KEY, room_id TEXT NOT NULL REFERENCES {self._rooms}(id),
              name TEXT NOT NULL, name_key TEXT NOT NULL, role TEXT NOT NULL,
              key_hash TEXT NOT NULL UNIQUE, created TEXT NOT NULL,
              sheet TEXT NOT NULL DEFAULT '{{}}', n BIGSERIAL,
              UNIQUE (room_id, name_key))""")
            conn.execute(f"""CREATE TABLE IF NOT EXISTS {self._log} (
              room_id TEXT NOT NULL REFERENCES {self._rooms}(id), seq INTEGER NOT NULL,
              hash TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (room_id, seq))""")
            conn.execute(f"""CREATE TABLE IF NOT EXISTS {self._seeds} (
              room_id TEXT NOT NULL REFERENCES {self._rooms}(id), epoch INTEGER NOT NULL,
              seed TEXT NOT NULL, PRIMARY KEY (room_id, epoch))""")

    # A small pool: psycopg_pool is a separate package. It keeps up to ``pool_size`` idle
    # connections, enough for the request threads under load (a new connection per request
    # costs PostgreSQL a new server process).
    class _Lease:
        def __init__(self, store: PostgresStore) -> None:
            self.store = store
            self.conn: Any = None

        def __enter__(self) -> Any:
            self.conn = self.store._take()
            return self.conn

        def __exit__(self, *exc: object) -> None:
            self.store._give(self.conn)

    def _conn(self) -> PostgresStore._Lease:
        return PostgresStore._Lease(self)

    def _take(self) -> Any:
        with self._pool_lock:
            while self._idle:
                conn = self._idle.pop()
                if not conn.closed:
                    return conn
        return self._psycopg.connect(self.url, autocommit=True, connect_timeout=5)

    def _give(self, conn: Any) -> None:
        ok = (not conn.closed and conn.info.transaction_status
              == self._psycopg.pq.TransactionStatus.IDLE)
        with self._pool_lock:
            if ok and len(self._idle) < self._pool_size:
                self._idle.append(conn)
                return
        conn.close()

    def _drop_idle(self) -> None:
        """After a broken connection the idle ones are likely broken too: close them all."""
        with self._pool_lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(Exception):
                conn.close()

    def _do(self, what: str, work: Callable[[Any, dict[str, bool]], Any]) -> Any:
        """Run ``work(conn, state)``; on a broken connection try once more when that is safe.

        ``work`` sets ``state["committing"]`` just before its transaction commits: a failure
        after that point may or may not have been committed, so it is never repeated.
        """
        psycopg = self._psycopg
        for attempt in (1, 2):
            state = {"committing": False}
            try:
                conn = self._take()
            except psycopg.OperationalError as exc:
                self._drop_idle()
                log.error("PostgreSQL: cannot connect to %s: %s", what, _first_line(exc))
                raise StoreError(503, f"the database cannot be reached ({_first_line(exc)}); "
                                      "nothing was stored: try again in a moment") from exc
            try:
                result = work(conn, state)
            except (psycopg.errors.DiskFull, psycopg.errors.OutOfMemory) as exc:
                self._give(conn)
                log.error("PostgreSQL: out of space to %s: %s", what, _first_line(exc))
                raise StoreError(507, f"the roll log cannot be written: the database is out of "
                                      f"space ({_first_line(exc)}); nothing was stored") from exc
            except psycopg.errors.ReadOnlySqlTransaction as exc:
                self._give(conn)
                log.error("PostgreSQL: read-only, cannot %s: %s", what, _first_line(exc))
                raise StoreError(503, f"the roll log cannot be written: the database is "
                                      f"read-only ({_first_line(exc)}); nothing was stored"
                                 ) from exc
            except psycopg.OperationalError as exc:
                with contextlib.suppress(Exception):
                    conn.close()
                self._drop_idle()
                if state["committing"]:
                    log.error("PostgreSQL: the connection broke while committing (%s): %s",
                              what, _first_line(exc))
                    raise StoreError(503, "the database connection broke while the roll was "
                                          "being stored: it may or may not be in the log; "
                                          "reload the log before rolling again",
                                     maybe_stored=True) from exc
                if attempt == 1:
                    log.warning("PostgreSQL: a connection broke (%s); trying a new one",
                                _first_line(exc))
                    continue
                log.error("PostgreSQL: cannot %s: %s", what, _first_line(exc))
                raise StoreError(503, f"the database cannot be reached ({_first_line(exc)}); "
                                      "nothing was stored: try again in a moment") from exc
            except BaseException:
                self._give(conn)
                raise
            self._give(conn)
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    def create_room(self, room: Mapping[str, Any], gm: Mapping[str, Any]) -> None:
        def work(conn: Any, state: dict[str, bool]) -> None:
            with conn.transaction():
                conn.execute(f"INSERT INTO {self._rooms} VALUES (%s, %s, %s, %s)",
                             (room["id"], room["name"], room["system"], room["created"]))
                self._insert_member(conn, gm)
                state["committing"] = True

        self._do("open a room", work)

    def _insert_member(self, conn: Any, m: Mapping[str, Any],
                       max_members: int | None = None) -> None:
        try:
            with conn.transaction():
                # The room row's lock makes the check and the insert one step per room.
                conn.execute(f"SELECT 1 FROM {self._rooms} WHERE id = %s FOR UPDATE",
                             (m["room"],))
                names = [r[0] for r in conn.execute(
                    f"SELECT name FROM {self._members} WHERE room_id = %s", (m["room"],))]
                _check_join(m, names, max_members)
                conn.execute(
                    f"INSERT INTO {self._members} (id, room_id, name, name_key, role, key_hash, "
                    "created) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    (m["id"], m["room"], m["name"], name_key(m["name"]), m["role"],
                     m["key_hash"], m["created"]))
                # Other instances refresh the room's list of members.
                conn.execute("SELECT pg_notify(%s, %s)", (self.channel,
                                                          MEMBERS_NOTE + m["room"]))
        except self._psycopg.errors.UniqueViolation as exc:
            if "name_key" in str(exc):
                raise NameTaken(m["name"]) from None
            raise

    def room(self, room_id: str) -> dict[str, Any] | None:
        row = self._do("read a room", lambda conn, _: conn.execute(
            f"SELECT id, name, system, created FROM {self._rooms} WHERE id = %s",
            (room_id,)).fetchone())
        if row is None:
            return None
        return {"id": row[0], "name": row[1], "system": row[2], "created": row[3]}

    def add_member(self, member: Mapping[str, Any], max_members: int | None = None) -> None:
        def work(conn: Any, state: dict[str, bool]) -> None:
            state["committing"] = True  # one transaction: a retry could add the member twice
            self._insert_member(conn, member, max_members)

        self._do("add a member", work)

    def member_by_key(self, room_id: str, key_hash: str) -> dict[str, Any] | None:
        row = self._do("read a member", lambda conn, _: conn.execute(
            f"SELECT id, room_id, name, role, created, sheet FROM {self._members} "
            "WHERE key_hash = %s AND room_id = %s", (key_hash, room_id)).fetchone())
        return None if row is None else _member_row(row)

    def members(self, room_id: str) -> list[dict[str, Any]]:
        rows = self._do("read the members", lambda conn, _: conn.execute(
            f"SELECT id, name, role FROM {self._members} WHERE room_id = %s ORDER BY n",
            (room_id,)).fetchall())
        return [{"id": r[0], "name": r[1], "role": r[2]} for r in rows]

    def save_sheet(self, member_id: str, sheet: Mapping[str, Any]) -> None:
        # Replacing a sheet with the same sheet twice is harmless: safe to repeat.
        self._do("save a sheet", lambda conn, _: conn.execute(
            f"UPDATE {self._members} SET sheet = %s WHERE id = %s",
            (canonical(sheet), member_id)))

    def set_key(self, member_id: str, key_hash: str) -> None:
        self._do("replace a key", lambda conn, _: self._change_member(
            conn, f"UPDATE {self._members} SET key_hash = %s WHERE id = %s RETURNING room_id",
            (key_hash, member_id)))

    def remove_member(self, member_id: str) -> None:
        self._do("remove a member", lambda conn, _: self._change_member(
            conn, f"DELETE FROM {self._members} WHERE id = %s RETURNING room_id", (member_id,)))

    def _change_member(self, conn: Any, sql: str, args: tuple[str, ...]) -> None:
        """A new key or a removal, and in the same transaction the NOTIFY that makes every
        instance re-check its live connections' keys (delivered on commit: the old key is
        dead by then). Safe to repeat: the same key again, or no such member any more."""
        with conn.transaction():
            row = conn.execute(sql, args).fetchone()
            if row is not None:
                conn.execute("SELECT pg_notify(%s, %s)", (self.channel, MEMBERS_NOTE + row[0]))

    def append(self, room_id: str, body: Mapping[str, Any],
               expect: int | None = None) -> dict[str, Any]:
        sealed: list[dict[str, Any]] = []

        def work(conn: Any, state: dict[str, bool]) -> dict[str, Any]:
            sealed.clear()
            with conn.transaction():
                # Lock the room row: appends to one room queue here, other rooms do not wait.
                if conn.execute(f"SELECT 1 FROM {self._rooms} WHERE id = %s FOR UPDATE",
                                (room_id,)).fetchone() is None:
                    raise KeyError(room_id)
                last = conn.execute(f"SELECT seq, hash FROM {self._log} WHERE room_id = %s "
                                    "ORDER BY seq DESC LIMIT 1", (room_id,)).fetchone()
                seq, prev = (last[0], last[1]) if last else (0, GENESIS)
                if expect is not None and expect != seq + 1:
                    raise Moved(seq + 1)
                entry = seal(body, seq + 1, prev, _signer(self.sign, room_id))
                conn.execute(f"INSERT INTO {self._log} VALUES (%s, %s, %s, %s)",
                             (room_id, seq + 1, entry["hash"], canonical(entry)))
                # Delivered on commit only, so a woken instance always finds the entry.
                # "room id": an instance that holds the entry already (its own) skips the read
                conn.execute("SELECT pg_notify(%s, %s)", (self.channel, f"{room_id} {seq + 1}"))
                sealed.append(entry)
                state["committing"] = True
            return entry

        try:
            return self._do("store a roll", work)  # type: ignore[no-any-return]
        except StoreError as exc:
            if not exc.maybe_stored or not sealed:
                raise
            # The connection broke during COMMIT: find out on a new one. Locking the room row
            # waits until the old transaction has ended (committed, or aborted when the server
            # saw its client go), so the answer is final.
            entry = sealed[0]

            def find(conn: Any, state: dict[str, bool]) -> bool:
                with conn.transaction():
                    # Bounded: a server that never saw its client go would hold the lock long.
                    conn.execute("SET LOCAL lock_timeout = '5s'")
                    conn.execute(f"SELECT 1 FROM {self._rooms} WHERE id = %s FOR UPDATE",
                                 (room_id,))
                    return conn.execute(
                        f"SELECT 1 FROM {self._log} WHERE room_id = %s AND seq = %s AND "
                        "hash = %s", (room_id, entry["id"], entry["hash"])).fetchone() is not None

            try:
                stored = self._do("check a roll", find)
            except StoreError:
                raise exc from None
            if stored:
                log.warning("PostgreSQL: the roll %s/%s was stored before the connection broke",
                            room_id, entry["id"])
                return entry
            raise StoreError(503, "the database connection broke while the roll was being "
                                  "stored, and it was not stored: try again") from exc

    def entries(self, room_id: str, after: int = 0, limit: int = MAX_PAGE) -> list[dict[str, Any]]:
        rows = self._do("read the log", lambda conn, _: conn.execute(
            f"SELECT body FROM {self._log} WHERE room_id = %s AND seq > %s ORDER BY seq "
            "LIMIT %s", (room_id, after, limit)).fetchall())
        return [json.loads(r[0]) for r in rows]

    def page(self, room_id: str, after: int, limit: int,
             max_bytes: int) -> tuple[list[dict[str, Any]], bool]:
        # The server sends only the rows that can be in the page: those with fewer than
        # max_bytes before them (octet_length reads a stored value's size, not the value)
        rows = self._do("read the log", lambda conn, _: conn.execute(
            f"SELECT body, size FROM (SELECT body, seq, octet_length(body) AS size, "
            "SUM(octet_length(body)) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) AS upto "
            f"FROM {self._log} WHERE room_id = %s AND seq > %s ORDER BY seq LIMIT %s) AS page "
            "WHERE upto - size < %s ORDER BY seq", (room_id, after, limit, max_bytes)).fetchall())
        return take_page(rows, limit, max_bytes)

    def epoch(self, room_id: str) -> tuple[int, str]:
        def work(conn: Any, _: dict[str, bool]) -> tuple[int, str]:
            with conn.transaction():
                conn.execute(f"INSERT INTO {self._seeds} SELECT %s, 1, %s WHERE NOT EXISTS "
                             f"(SELECT 1 FROM {self._seeds} WHERE room_id = %s) "
                             "ON CONFLICT DO NOTHING", (room_id, new_seed(), room_id))
                row = conn.execute(f"SELECT epoch, seed FROM {self._seeds} WHERE room_id = %s "
                                   "ORDER BY epoch DESC LIMIT 1", (room_id,)).fetchone()
            return int(row[0]), str(row[1])

        return self._do("read the seed", work)  # type: ignore[no-any-return]

    def next_epoch(self, room_id: str, epoch: int) -> tuple[int, str] | None:
        seed = new_seed()
        made = self._do("start an epoch", lambda conn, _: conn.execute(
            f"INSERT INTO {self._seeds} VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (room_id, epoch + 1, seed)).rowcount)
        return (epoch + 1, seed) if made else None

    def hashes(self, room_id: str, after: int = 0, limit: int = MAX_PAGE) -> list[tuple[int, str]]:
        rows = self._do("read the log", lambda conn, _: conn.execute(
            f"SELECT seq, hash FROM {self._log} WHERE room_id = %s AND seq > %s ORDER BY seq "
            "LIMIT %s", (room_id, after, limit)).fetchall())
        return [(int(r[0]), str(r[1])) for r in rows]

    def head(self, room_id: str) -> tuple[int, str]:
        row = self._do("read the log", lambda conn, _: conn.execute(
            f"SELECT seq, hash FROM {self._log} WHERE room_id = %s ORDER BY seq DESC LIMIT 1",
            (room_id,)).fetchone())
        return (int(row[0]), str(row[1])) if row else (0, GENESIS)

    def log_bytes(self, room_id: str) -> int:
        row = self._do("read the log", lambda conn, _: conn.execute(
            f"SELECT coalesce(sum(octet_length(body)), 0) FROM {self._log} WHERE room_id = %s",
            (room_id,)).fetchone())
        return int(row[0])

    def room_count(self) -> int:
        row = self._do("count the rooms", lambda conn, _: conn.execute(
            f"SELECT count(*) FROM {self._rooms}").fetchone())
        return int(row[0])

    def idle_rooms(self, before: str, limit: int) -> list[str]:
        rows = self._do("read the rooms", lambda conn, _: conn.execute(
            f"SELECT r.id FROM {self._rooms} r WHERE coalesce((SELECT l.body::jsonb ->> 'at' "
            f"FROM {self._log} l WHERE l.room_id = r.id ORDER BY l.seq DESC LIMIT 1), "
            "r.created) < %s LIMIT %s", (before, limit)).fetchall())
        return [r[0] for r in rows]

    def delete_room(self, room_id: str) -> None:
        def work(conn: Any, _: dict[str, bool]) -> None:  # safe to repeat: gone is gone
            with conn.transaction():
                for table in (self._log, self._seeds, self._members):
                    conn.execute(f"DELETE FROM {table} WHERE room_id = %s", (room_id,))
                conn.execute(f"DELETE FROM {self._rooms} WHERE id = %s", (room_id,))

        self._do("delete a room", work)

    def ping(self) -> None:
        """Ask the server a trivial question (``StoreError`` when it does not answer)."""
        self._do("answer", lambda conn, _: conn.execute("SELECT 1").fetchone())

    def listen(self, wake: Wake) -> None:
        """Start a thread that LISTENs on the channel and calls ``wake(room_id)`` per NOTIFY."""
        if self._listener is not None:
            return
        self._listener = threading.Thread(target=self._listen, args=(wake,),
                                          name="astragal-listen", daemon=True)
        self._listener.start()

    def _listen(self, wake: Wake) -> None:
        backoff = 0.5
        while not self._stop.is_set():
            try:
                with self._psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f'LISTEN "{self.channel}"')
                    if backoff > 0.5:
                        log.warning("PostgreSQL: listening for other instances' rolls again")
                    self.listening = True
                    wake(None)  # anything appended while we were not listening
                    backoff = 0.5
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.25, stop_after=64):
                            wake(note.payload or None)
            except self._psycopg.Error as exc:
                self.listening = False
                if self._stop.is_set():
                    return
                log.warning("PostgreSQL: lost the LISTEN connection (%s); live updates from "
                            "other instances pause, retrying in %.1f s (clients also re-read "
                            "the log every few seconds)", _first_line(exc), backoff)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 10.0)

    def close(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.join(timeout=5)
        self._drop_idle()

    def drop_schema(self) -> None:
        """Remove the schema and everything in it (tests clean up with this)."""
        with self._conn() as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
