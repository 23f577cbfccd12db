"""The stores: appends are atomic and ordered per room, the chain holds under concurrency, logs last."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from astragal.web.chain import GENESIS, canonical, verify_entries
from astragal.web.store import NameTaken, SQLiteStore, Store, open_store, split_schema
from astragal.web.store_common import take_page

from .conftest import PG_URL


def _room(store: Store, rid: str) -> None:
    store.create_room({"id": rid, "name": rid, "system": "jadeclaw", "created": "t"},
                      {"id": f"gm-{rid}", "room": rid, "name": "Mei", "role": "gm",
                       "key_hash": f"k-{rid}", "created": "t"})


def _body(n: int, who: str = "w") -> dict[str, Any]:
    return {"kind": "note", "who": who, "n": n}


def test_appends_are_numbered_and_chained_per_room(store: Store) -> None:
    _room(store, "a")
    _room(store, "b")
    assert store.head("a") == (0, GENESIS)
    a1 = store.append("a", _body(1))
    b1 = store.append("b", _body(1))
    a2 = store.append("a", _body(2))
    assert (a1["id"], a2["id"], b1["id"]) == (1, 2, 1)
    assert a1["prev"] == GENESIS and a2["prev"] == a1["hash"] and b1["prev"] == GENESIS
    assert store.head("a") == (2, a2["hash"])
    assert store.entries("a") == [a1, a2]
    assert store.entries("a", after=1) == [a2]
    assert store.entries("a", limit=1) == [a1]


def test_concurrent_appends_never_fork_or_skip(store: Store) -> None:
    _room(store, "r")
    _room(store, "s")
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for n in range(15):
                store.append("r" if n % 3 else "s", _body(n, f"w{w}"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for rid, count in (("r", 6 * 10), ("s", 6 * 5)):
        entries = store.entries(rid)
        assert [e["id"] for e in entries] == list(range(1, count + 1))
        report = verify_entries(entries, replay=False)
        assert report.ok, report.problems


def test_members_keys_and_sheets(store: Store) -> None:
    _room(store, "r")
    store.add_member({"id": "m1", "room": "r", "name": "Wu", "role": "player", "key_hash": "kw",
                      "created": "t"})
    with pytest.raises(NameTaken):
        store.add_member({"id": "m2", "room": "r", "name": "WU", "role": "player",
                          "key_hash": "kx", "created": "t"})
    assert store.member_by_key("r", "kw")["name"] == "Wu"  # type: ignore[index]
    assert store.member_by_key("other", "kw") is None  # a key works only in its own room
    store.save_sheet("m1", {"stats": {"Will": "d10"}, "macros": {}})
    assert store.member_by_key("r", "kw")["sheet"]["stats"] == {"Will": "d10"}  # type: ignore[index]
    assert [m["name"] for m in store.members("r")] == ["Mei", "Wu"]
    assert store.room("r")["system"] == "jadeclaw"  # type: ignore[index]
    assert store.room("nope") is None


def test_the_sqlite_log_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    first = SQLiteStore(path)
    _room(first, "r")
    written = [first.append("r", _body(n)) for n in range(3)]
    first.close()
    again = open_store(str(path))
    assert again.entries("r") == written and again.head("r") == (3, written[-1]["hash"])
    assert again.append("r", _body(9))["prev"] == written[-1]["hash"]
    again.close()
    assert SQLiteStore(path)._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_postgresql_log_survives_a_new_connection(pg_schema: str) -> None:
    from astragal.web.store import PostgresStore

    first = PostgresStore(f"{PG_URL}?schema={pg_schema}")
    _room(first, "r")
    written = [first.append("r", _body(n)) for n in range(3)]
    first.close()
    again = open_store(f"{PG_URL}?schema={pg_schema}")
    assert again.entries("r") == written
    again.close()


def test_schema_names_are_checked() -> None:
    assert split_schema("postgresql://h/db?schema=abc&sslmode=disable") == (
        "postgresql://h/db?sslmode=disable", "abc")
    assert split_schema("postgresql://h/db")[1] == "public"
    with pytest.raises(ValueError):
        split_schema('postgresql://h/db?schema=x";drop')


def test_a_page_of_entries_ends_at_its_size_as_well_as_its_count(store: Store) -> None:
    # a page of the 500 largest entries took ~50 MB of JSON and ~360 MB to answer: pages end at
    # a size too, with at least one entry, and read on from there they cover the log in order
    _room(store, "a")
    made = [store.append("a", {"kind": "note", "n": n, "pad": "é" * 400}) for n in range(10)]
    size = len(canonical(made[0]).encode())
    assert 900 < size < 1200, size  # "é" is two bytes stored: a page counts bytes, not letters
    assert store.page("a", 0, 500, 1) == (made[:1], True)  # never empty while entries remain
    pages, after, more = [], 0, True
    while more:
        rows, more = store.page("a", after, 500, 2500)
        pages.append(rows)
        after = rows[-1]["id"] if rows else after
    # ~1,050 bytes an entry: each page ends at its third, past 2,500 bytes
    assert [len(p) for p in pages] == [3, 3, 3, 1]
    assert [e for page in pages for e in page] == made
    assert store.page("a", 0, 4, 10**9) == (made[:4], True)  # the count ends it too
    assert store.page("a", 6, 500, 10**9) == (made[6:], False)  # the log's end: no more
    assert store.page("a", 10, 500, 10**9) == ([], False)
    # a page that ends at its size on the log's last entry says more may follow: the next
    # read finds none (reading on is always safe, stopping early never is)
    assert store.page("a", 9, 500, 1) == (made[9:], True)


def test_a_page_reads_no_row_past_its_end() -> None:
    # the rows after the one that reaches the size are never read: a page of the largest
    # entries reads ~256 KiB, not the 500 entries (~50 MB) its count allows
    pulled: list[int] = []

    def rows() -> Iterator[tuple[str, int]]:
        for n in range(500):
            pulled.append(n)
            yield json.dumps({"n": n}), 100_000

    page, more = take_page(rows(), 500, 256 << 10)
    assert [e["n"] for e in page] == [0, 1, 2] and more
    assert pulled == [0, 1, 2]
