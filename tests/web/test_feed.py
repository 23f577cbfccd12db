"""A room's live feed: each entry written once, served only when it knows it holds the newest."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from astragal.web import sqlite_store
from astragal.web.chain import GENESIS
from astragal.web.feed import Feed
from astragal.web.store import SQLiteStore


def _entry(i: int, visibility: str = "public", member: str = "a") -> dict[str, Any]:
    return {"id": i, "room": "r", "member": member, "visibility": visibility, "hash": f"h{i}",
            "roll": {"faces": [i]}}


def _everyone(e: Any) -> dict[str, Any]:
    return dict(e)


def test_a_feed_serves_what_follows_in_order_then_the_head() -> None:
    feed = Feed()
    feed.fill(0, [], feed.version, more=False)  # read once: the log is empty
    for i in (1, 2, 3):
        feed.add(_entry(i))
    served = feed.serve(1, _everyone)
    assert served is not None
    texts, last = served
    assert last == 3 and [json.loads(t)["entry"]["id"] for t in texts[:-1]] == [2, 3]
    assert json.loads(texts[-1]) == {"type": "head", "id": 3, "hash": "h3"}
    assert feed.serve(3, _everyone) == ([], 3)


def test_a_feed_that_may_miss_entries_says_so() -> None:
    feed = Feed()
    assert feed.serve(0, _everyone) is None  # never read: it cannot say what the log holds
    feed.fill(0, [_entry(1)], feed.version, more=False)
    assert feed.serve(0, _everyone) is not None
    feed.touch()  # another instance may have appended
    assert feed.serve(1, _everyone) is None
    feed.fill(1, [_entry(2)], feed.version, more=False)
    assert feed.serve(1, _everyone) is not None
    feed.add(_entry(5))  # 3 and 4 were never given: only what follows 5's run is known
    assert feed.serve(2, _everyone) is None and feed.serve(4, _everyone) is not None


def test_a_blind_roll_reaches_its_roller_as_a_stub_and_nobody_else() -> None:
    feed = Feed()
    feed.fill(0, [_entry(1, "blind", member="roller")], feed.version, more=False)

    def roller(e: Any) -> dict[str, Any]:
        return {"id": e["id"], "hidden": True}

    def other(e: Any) -> None:
        return None

    texts, _ = feed.serve(0, roller) or ([], 0)
    assert json.loads(texts[0]) == {"type": "entry", "entry": {"id": 1, "hidden": True}}
    texts, last = feed.serve(0, other) or ([], 0)
    assert last == 1 and [json.loads(t)["type"] for t in texts] == ["head"]


@pytest.mark.parametrize("group", [1, sqlite_store.MAX_GROUP])
def test_group_committed_appends_keep_each_rooms_chain(tmp_path: Path, group: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # a group of one: every append waiting behind the writer is in a later group than the first
    monkeypatch.setattr(sqlite_store, "MAX_GROUP", group)
    store = SQLiteStore(tmp_path / "g.db")
    rooms = [f"room{i}" for i in range(4)]
    for rid in rooms:
        store.create_room({"id": rid, "name": rid, "system": "dice", "created": "t"},
                          {"id": f"gm-{rid}", "room": rid, "name": "GM", "role": "gm",
                           "key_hash": f"k-{rid}", "created": "t"})

    def write(n: int) -> None:
        for k in range(25):
            store.append(rooms[(n + k) % 4], {"kind": "note", "n": n, "k": k})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for rid in rooms:
        entries = store.entries(rid, 0, 500)
        assert [e["id"] for e in entries] == list(range(1, 51))
        assert [e["prev"] for e in entries] == [GENESIS] + [e["hash"] for e in entries[:-1]]
    store.close()
