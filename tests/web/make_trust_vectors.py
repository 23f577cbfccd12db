"""Write tests/web/trust_vectors.json: canonical JSON, entry hashes, a signature, a hidden roll's
secret and its path to the epoch's root, and a small signed room export (with a hidden roll, its
reveal and an ended seed epoch), made by the table's own code with a fixed key; and the same
export as the table wrote it with 32-byte seeds (before hidden rolls had secrets). Run once: ``PYTHONPATH=src python tests/web/make_trust_vectors.py``; the
tests then check that the Python and the page's code reproduce every value in it."""

from __future__ import annotations

import json
import secrets
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from astragal.web import fair
from astragal.web.chain import canonical, verify_export
from astragal.web.room import Table
from astragal.web.signing import Signer, head_message
from astragal.web.store import SQLiteStore

CANONICAL = [
    {"b": 1, "a": [1, "é"]},
    {"\uffff": 1, "😀": 2, "z": 3, "é": 4, "Z": 5, "": 6},
    {"x": 1.0, "y": 1e-05, "z": 1e16, "w": -0.0, "v": 0.1, "u": 12345678901234567890, "t": -3},
    {"s": 'tab\there "q" back\\ nl\n cr\r ctrl\u0001 del\u007f ls\u2028 ✓'},
    {"e": {}, "l": [], "n": None, "t": True, "f": False, "nest": [[{"b": [], "a": {}}]]},
]
KEY_SEED = bytes(range(32))


def room_export(signer: Signer) -> tuple[dict[str, Any], list[dict[str, Any]], Any]:
    """Wu's export of a small room (the GM's hidden roll a stub, then revealed), every entry."""
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(str(Path(tmp) / "v.db"))
        table = Table(store, signer=signer)
        made = table.create_room("Vectors", "dice", "Mei")
        gm = table.member(made["room"]["id"], made["key"])
        wu = table.member(gm.room, table.join(gm.room, "Wu")["key"])
        table.roll(wu, "d20", client_seed="wu's seed")
        hidden = table.roll(gm, "2d6", "gm", client_seed="mei's seed")
        table.reveal(gm, hidden["id"])
        table.roll(gm, "4d6kh3", client_seed="mei's seed")
        table.end_epoch(gm)
        table.roll(wu, "d100", client_seed="")
        export = table.export(wu)  # the hidden roll is a stub in Wu's export
        whole = table.export(gm)["entries"]
        store.close()
    report = verify_export(export)
    assert report.ok, report.problems
    return export, whole, report


MASTER = bytes(range(64)).hex()  # a table's stored seed: the stream's key, then the secrets' key


def tree_vector() -> dict[str, Any]:
    """A hidden roll's faces from the stream key, its secret and the path to the root."""
    room, epoch, member, client, nonce, sizes = "room", 1, "member", "", 5, [6, 6, 20]
    source, record = fair.fair_roll(MASTER, room, epoch, member, client, nonce, hidden=True)
    shown = fair.revealed(MASTER)
    return {"stored_seed": MASTER, "commitment": record["commitment"], **shown, "room": room,
            "epoch": epoch, "member": member, "client": client, "nonce": nonce,
            "secret": record["secret"], "proof": record["proof"], "sizes": sizes,
            "faces": [source.face(s) for s in sizes]}


def main() -> None:
    signer = Signer(KEY_SEED)
    export, whole, report = room_export(signer)
    with mock.patch("astragal.web.sqlite_store.new_seed", lambda: secrets.token_hex(32)):
        old, _, old_report = room_export(signer)
    first = whole[0]
    data = {
        "note": "made by tests/web/make_trust_vectors.py; see docs/trust.md",
        "canonical": [{"json": json.dumps(v, indent=1, ensure_ascii=False),
                       "canonical": canonical(v)} for v in CANONICAL],
        "entries": [{"entry": e} for e in whole],
        "signature": {"private_seed": KEY_SEED.hex(), "public": signer.public,
                      "room": first["room"], "id": first["id"], "hash": first["hash"],
                      "message": head_message(first["room"], first["id"], first["hash"]).decode(),
                      "sig": first["sig"]},
        "tree": tree_vector(),
        "export": export,
        "export_signed": report.signed,
        "export_derived": report.derived,
        "export_32_byte_seeds": old,
        "export_32_byte_seeds_signed": old_report.signed,
        "export_32_byte_seeds_derived": old_report.derived,
    }
    path = Path(__file__).with_name("trust_vectors.json")
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
