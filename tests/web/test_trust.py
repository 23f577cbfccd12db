"""A log nobody can quietly rewrite: every tamper a database thief or an export editor can try is
caught by ``astragal verify-log``, through the database and through exports, naming the entry.

The table signs every entry with its own key (kept beside the database, not in it); a player's
page keeps the signed entries it saw (receipts). A thief without the key can edit, cut, append
and reseal, but a resealed entry has no valid signature, and a cut log no longer reaches the
receipts.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from astragal.cli import main as cli
from astragal.web.chain import canonical, redact, seal
from astragal.web.room import Member, Table
from astragal.web.signing import Signer, default_key_path
from astragal.web.store import SQLiteStore
from astragal.web.verify import verify_source

ROLLS = [("jc: d12 d8 vs 2d10", "public"), ("d20+3", "public"), ("3d6", "gm"),
         ("jc: d8 vs d6", "public"), ("cofd: 5", "public"), ("d10", "public"),
         ("4d6kh3", "public"), ("2d6", "public"), ("od6: 3D vs moderate", "public")]


class Room:
    """A room in an SQLite file whose table signs with the key beside it, and a player's view."""

    def __init__(self, tmp: Path) -> None:
        self.db = str(tmp / "table.db")
        self.store = SQLiteStore(self.db)
        signer = Signer.load_or_create(default_key_path(self.db))
        self.table = Table(self.store, signer=signer)
        made = self.table.create_room("A table", "dice", "Mei")
        self.id = made["room"]["id"]
        self.gm = self.table.member(self.id, made["key"])
        joined = self.table.join(self.id, "Wu")
        self.wu = self.table.member(self.id, joined["key"])
        for n, (text, visibility) in enumerate(ROLLS):
            who = self.wu if n % 2 else self.gm
            self.table.roll(who, text, visibility if who is self.gm else "public")
        self.key = signer.public

    def receipts(self, viewer: Member, path: Path) -> str:
        """What the viewer's page keeps: the signed entries it has seen, as a receipts file."""
        entries = self.table.log(viewer)["entries"]
        kept = [{"id": e["id"], "hash": e["hash"], "sig": e["sig"]} for e in entries if "sig" in e]
        path.write_text(json.dumps({"format": "astragal-receipts/1", "room": self.id,
                                    "key": self.key, "receipts": kept}), encoding="utf-8")
        return str(path)

    def rows(self) -> list[dict[str, Any]]:
        with sqlite3.connect(self.db) as conn:
            return [json.loads(r[0]) for r in conn.execute(
                "SELECT body FROM astragal_log WHERE room_id = ? ORDER BY seq", (self.id,))]

    def write(self, entries: list[dict[str, Any]], *, hashes: dict[int, str] | None = None) -> None:
        """Replace the room's log in the database (the thief's edit)."""
        with sqlite3.connect(self.db) as conn:
            conn.execute("DELETE FROM astragal_log WHERE room_id = ?", (self.id,))
            for e in entries:
                column = (hashes or {}).get(e["id"], e.get("hash"))
                conn.execute("INSERT INTO astragal_log VALUES (?, ?, ?, ?)",
                             (self.id, e["id"], column, canonical(e)))


def reseal(entries: list[dict[str, Any]], start: int, key: Signer | None = None) -> None:
    """Recompute commitments, hashes and links from ``start`` on, as a thief would; signed with
    the thief's own key (or not at all): not the table's."""
    prev = entries[start - 1]["hash"] if start else "0" * 64
    for i in range(start, len(entries)):
        body = {k: v for k, v in entries[i].items()
                if k not in ("id", "prev", "commit", "hash", "sig")}
        room = body.get("room", "")
        entries[i] = seal(body, entries[i]["id"], prev,
                          (lambda n, h, r=room: key.sign(r, n, h)) if key else None)
        prev = entries[i]["hash"]


def forge_faces(entries: list[dict[str, Any]]) -> None:
    """Choose entry 2's faces (a natural 20) and reseal everything after."""
    e = entries[1]
    forged = 20 if e["draws"][0][2] != 20 else 1  # a face the seed did not give
    e["draws"] = [[0, 20, forged]]
    e["roll"]["dice"][0]["face"] = forged
    reseal(entries, 1)


def make_up_a_roll(entries: list[dict[str, Any]]) -> None:
    fake = {k: v for k, v in entries[-1].items() if k not in ("id", "prev", "commit", "hash",
                                                              "sig")}
    fake["nonce"] = "f" * 32
    entries.append(seal(fake, entries[-1]["id"] + 1, entries[-1]["hash"],
                        lambda n, h: Signer.generate().sign(fake["room"], n, h)))


def make_blind(entries: list[dict[str, Any]]) -> None:
    entries[3]["visibility"] = "blind"
    reseal(entries, 3)


def into_a_note(entries: list[dict[str, Any]]) -> None:
    e = entries[3]
    for k in ("roll", "draws", "outcome", "verdict", "transcript_text", "notation"):
        e.pop(k, None)
    e.update(kind="note", text="nothing happened")
    reseal(entries, 3)


def public_to_stub(entries: list[dict[str, Any]]) -> None:
    entries[3] = redact(entries[3])


# (name, tamper, words the report must contain, including the entry it names)
TAMPERS: list[tuple[str, Callable[[list[dict[str, Any]]], Any], str]] = [
    ("delete the last entry", lambda log: log.pop(), "entry 9: a receipt shows it"),
    ("delete the last six", lambda log: log.__delitem__(slice(-6, None)),
     "entry 9: a receipt shows it"),
    ("delete every entry", lambda log: log.clear(), "entry 1: a receipt shows it"),
    ("replace a public roll with a stub", public_to_stub, "entry 4:"),
    ("forge faces and reseal", forge_faces, "entry 2: its signature is not the table's"),
    ("append a made-up roll", make_up_a_roll, "entry 10: its signature is not the table's"),
    ("turn a public roll blind", make_blind, "entry 4: its signature is not the table's"),
    ("turn a roll into a note", into_a_note, "entry 4: its signature is not the table's"),
]


@pytest.fixture
def room(tmp_path: Path) -> Room:
    return Room(tmp_path)


def test_an_untouched_log_verifies_with_signatures_and_receipts(room: Room, tmp_path: Path,
                                                              capsys: Any) -> None:
    receipts = room.receipts(room.wu, tmp_path / "wu.json")
    report = verify_source(room.id, room.db, receipts=receipts)
    assert report.ok, report.problems
    assert report.signed == len(ROLLS) + 0 and report.receipts == len(ROLLS) - 1  # 1 GM-only
    assert cli(["verify-log", room.id, "--db", room.db, "--receipts", receipts,
                "--key", room.key]) == 0
    out = capsys.readouterr().out
    assert f"signed by the table's key {room.key}" in out and "receipt(s) match" in out


@pytest.mark.parametrize("name, tamper, expect", TAMPERS, ids=[t[0] for t in TAMPERS])
def test_every_tamper_through_the_database_is_caught(room: Room, tmp_path: Path, name: str,
                                                     tamper: Any, expect: str) -> None:
    receipts = room.receipts(room.wu, tmp_path / "wu.json")
    entries = room.rows()
    tamper(entries)
    room.write(entries)
    report = verify_source(room.id, room.db, receipts=receipts)
    assert not report.ok
    if name == "replace a public roll with a stub":  # the database keeps entries whole
        expect = "entry 4: only a stub is stored"
    assert any(expect in p for p in report.problems), report.problems


def test_editing_only_the_hash_column_is_caught(room: Room) -> None:
    room.write(room.rows(), hashes={5: "e" * 64})
    report = verify_source(room.id, room.db)
    assert any("entry 5: its hash column does not match" in p for p in report.problems)


@pytest.mark.parametrize("name, tamper, expect", TAMPERS, ids=[t[0] for t in TAMPERS])
def test_every_tamper_through_an_export_is_caught(room: Room, tmp_path: Path, name: str,
                                                  tamper: Any, expect: str,
                                                  capsys: Any) -> None:
    receipts = room.receipts(room.wu, tmp_path / "wu.json")
    data = room.table.export(room.gm)
    tamper(data["entries"])
    data["head"] = data["entries"][-1]["hash"] if data["entries"] else "0" * 64  # a careful thief
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    if name == "replace a public roll with a stub":
        expect = "entry 4: a public entry is shown as a stub"
    assert cli(["verify-log", str(path), "--receipts", receipts, "--key", room.key]) == 1
    err = capsys.readouterr().err
    assert f"TAMPERED: {expect}" in err or any(expect in line for line in err.splitlines()), err


def test_an_export_edited_in_its_hash_alone_is_caught(room: Room, tmp_path: Path) -> None:
    data = room.table.export(room.gm)
    data["entries"][4]["hash"] = "e" * 64
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = verify_source(str(path))
    assert any(p.startswith("entry 5: its contents do not match its hash") for p in report.problems)


def test_a_players_export_shows_hidden_rolls_as_stubs_that_still_check(room: Room,
                                                                       tmp_path: Path) -> None:
    data = room.table.export(room.wu)  # the GM-only roll is a stub for Wu
    assert sum(1 for e in data["entries"] if e.get("redacted")) == 1
    path = tmp_path / "wu-export.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = verify_source(str(path), key=room.key)
    assert report.ok and report.redacted == 1 and report.signed == len(ROLLS)


def test_the_wrong_key_fails_every_signature(room: Room, tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(room.table.export(room.gm)), encoding="utf-8")
    other = Signer.generate().public
    report = verify_source(str(path), key=other)
    assert "another signing key" in report.problems[-1]
    assert sum("signature is not the table's" in p for p in report.problems) == len(ROLLS)


@pytest.mark.parametrize("content, expect", [
    ("{not json", "cannot read"), ('{"format": "other"}', "not a receipts file"),
    ("[1, 2]", "receipt 1 is not a receipt"), ('"x" * 3', "cannot read"),
])
def test_malformed_receipts_are_clear_errors(room: Room, tmp_path: Path, content: str,
                                             expect: str, capsys: Any) -> None:
    bad = tmp_path / "receipts.json"
    bad.write_text(content, encoding="utf-8")
    code = cli(["verify-log", room.id, "--db", room.db, "--receipts", str(bad)])
    err = capsys.readouterr().err
    assert expect in err and code == (1 if "receipt 1" in expect else 2)


def test_a_bad_key_argument_is_a_clear_error(room: Room, capsys: Any) -> None:
    assert cli(["verify-log", room.id, "--db", room.db, "--key", "not-a-key"]) == 2
    assert "64 hex digits" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------
# Provably fair faces: committed seeds, client seeds, nonces, revealed seeds


def _independent_faces(seed: str, params: dict[str, Any], sizes: list[int]) -> list[int]:
    """docs/trust.md's derivation written again from its words, as a re-implementer would."""
    import hashlib
    import hmac

    stream, block, out = b"", 0, []
    for size in sizes:
        k = 1
        while 256 ** k < size:
            k += 1
        while True:
            while len(stream) < k:
                msg = json.dumps({**params, "block": block}, sort_keys=True,
                                 separators=(",", ":"), ensure_ascii=False).encode()
                stream += hmac.new(bytes.fromhex(seed), msg, hashlib.sha256).digest()
                block += 1
            x, stream = int.from_bytes(stream[:k], "big"), stream[k:]
            if x < 256 ** k - (256 ** k) % size:
                out.append(x % size + 1)
                break
    return out


def test_the_faces_follow_the_documented_stream() -> None:
    from astragal.web.fair import commitment, derive

    vectors = json.loads((Path(__file__).parent / "fair_vectors.json").read_text())
    for v in vectors:
        params = {k: v[k] for k in ("room", "epoch", "member", "client", "nonce")}
        assert commitment(v["seed"]) == v["commitment"]
        assert derive(v["seed"], **params, sizes=v["sizes"]) == v["faces"]
        assert _independent_faces(v["seed"], params, v["sizes"]) == v["faces"]


def test_a_hidden_rolls_secret_follows_the_documented_tree() -> None:
    """docs/trust.md's secrets written again from its words: the secret of entry n, its path to
    the root, the commitment over the stream's key and the root, and the faces with it."""
    import hashlib
    import hmac

    t = json.loads((Path(__file__).parent / "trust_vectors.json").read_text())["tree"]
    stream_key, secrets_key = t["stored_seed"][:64], bytes.fromhex(t["stored_seed"][64:])
    secret = hmac.new(secrets_key, str(t["nonce"]).encode(), hashlib.sha256).digest()
    assert (stream_key, secret.hex()) == (t["seed"], t["secret"])
    node, index = hashlib.sha256(secret).digest(), t["nonce"]
    for sibling in map(bytes.fromhex, t["proof"]):
        node = hashlib.sha256(node + sibling if index % 2 == 0 else sibling + node).digest()
        index //= 2
    assert node.hex() == t["root"] and len(t["proof"]) == 15
    assert hashlib.sha256(bytes.fromhex(t["seed"] + t["root"])).hexdigest() == t["commitment"]
    params = {k: t[k] for k in ("room", "epoch", "member", "client", "nonce", "secret")}
    assert _independent_faces(t["seed"], params, t["sizes"]) == t["faces"]


def test_the_table_gives_each_hidden_roll_the_documented_secret_and_path() -> None:
    """What the table puts in a hidden roll's record is the tree vector's secret and path, and
    at every kind of place in the tree (the first and last entries, either side of where the
    table's kept levels meet the ones it makes again) the path leads to the root the epoch's
    end reveals."""
    from astragal.web.fair import DEPTH, fair_roll, new_seed, proof_root, revealed

    t = json.loads((Path(__file__).parent / "trust_vectors.json").read_text())["tree"]
    _, fair = fair_roll(t["stored_seed"], t["room"], t["epoch"], t["member"], t["client"],
                        t["nonce"], hidden=True)
    assert (fair["secret"], fair["proof"], fair["commitment"]) == (
        t["secret"], t["proof"], t["commitment"])
    for seed in (t["stored_seed"], new_seed()):
        root = revealed(seed)["root"]
        for nonce in (0, 1, 62, 63, 64, 65, 127, 128, 4095, 4096, 20_000, 2**DEPTH - 1):
            _, fair = fair_roll(seed, "r", 1, "m", "c", nonce, hidden=True)
            assert proof_root(fair["secret"], nonce, fair["proof"]) == root, nonce
        assert len(fair["proof"]) == DEPTH


def test_seeded_faces_are_uniform() -> None:
    """Rejection sampling leaves no bias: a d6, a d10, a d20 and a d100 over many draws (chi-square,
    false alarm 1e-7 each)."""
    from scipy.stats import chisquare

    from astragal.web.fair import FairSource, new_seed

    for size, draws in ((6, 60_000), (10, 60_000), (20, 60_000), (100, 100_000)):
        src = FairSource(new_seed(), "r", 1, "m", "c", 1)
        counts = [0] * size
        for _ in range(draws):
            counts[src.face(size) - 1] += 1
        assert chisquare(counts).pvalue > 1e-7, (size, counts)


class FairRoom(Room):
    """A room whose faces come from its committed seed (no source given to the table)."""


@pytest.fixture
def fair_room(tmp_path: Path) -> Room:
    return FairRoom(tmp_path)


def test_every_face_is_derived_again_once_the_epoch_ends(fair_room: Room, tmp_path: Path) -> None:
    room = fair_room
    before = verify_source(room.id, room.db)
    assert before.ok and before.pending == len(ROLLS) and before.derived == 0
    assert all(e["fair"]["nonce"] == e["id"] for e in room.rows())
    with pytest.raises(Exception, match="only the GM"):
        room.table.end_epoch(room.wu)
    ended = room.table.end_epoch(room.gm)
    assert ended["kind"] == "seed" and ended["next"] == 2
    room.table.roll(room.wu, "d20", client_seed="my own seed")  # epoch 2, not revealed yet
    after = verify_source(room.id, room.db)
    assert after.ok, after.problems
    assert after.derived == len(ROLLS) and after.pending == 1
    data = room.table.export(room.wu)  # the player's export: the GM-only roll is a stub
    path = tmp_path / "wu.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = verify_source(str(path), key=room.key)
    assert report.ok and report.derived == len(ROLLS) - 1


def _resign(room: Room, entries: list[dict[str, Any]], start: int) -> None:
    """The operator's forgery: with the table's own key, so only the seed can tell."""
    signer = Signer.load_or_create(default_key_path(room.db))
    reseal(entries, start, signer)


def test_a_face_chosen_by_the_operator_is_caught_by_the_revealed_seed(fair_room: Room) -> None:
    room = fair_room
    room.table.end_epoch(room.gm)
    entries = room.rows()
    e = entries[1]  # d20+3: make it a natural 20 (a 1, when the seed already gave a 20)
    forged = 20 if e["draws"][0][2] != 20 else 1
    e["draws"] = [[0, 20, forged]]
    import astragal

    e["roll"] = astragal.roll(e["notation"], faces=str(forged)).to_json()
    e["outcome"], e["verdict"] = e["roll"]["outcome"], e["roll"]["transcript"][-1]
    _resign(room, entries, 1)
    room.write(entries)
    report = verify_source(room.id, room.db)
    assert any(p.startswith("entry 2: its faces are not the ones epoch 1's seed gives")
               for p in report.problems), report.problems
    assert report.signed == len(entries)  # the signatures alone could not tell


def test_a_revealed_seed_that_breaks_its_commitment_is_caught(fair_room: Room) -> None:
    room = fair_room
    room.table.end_epoch(room.gm)
    entries = room.rows()
    entries[-1]["seed"] = "00" * 32
    _resign(room, entries, len(entries) - 1)
    room.write(entries)
    report = verify_source(room.id, room.db)
    assert any("the revealed seed does not match its commitment" in p for p in report.problems)


def test_a_roll_tried_again_shows_as_a_nonce_that_is_not_its_number(fair_room: Room) -> None:
    room = fair_room
    entries = room.rows()
    entries[4]["fair"]["nonce"] = 99
    _resign(room, entries, 4)
    room.write(entries)
    report = verify_source(room.id, room.db)
    assert any(p.startswith("entry 5: its nonce is not its number") for p in report.problems)
