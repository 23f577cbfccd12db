"""The anchored log's edges: a log rewritten in the old unsigned format, hostile exports whose
entries are not what entries are, and what a verifier must say about them (exit 1 naming the
entry, or exit 2 for a file that is not a log; never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from astragal.cli import main as cli
from astragal.web.chain import GENESIS, entry_hash
from astragal.web.verify import verify_source

from .test_trust import Room


@pytest.fixture
def room(tmp_path: Path) -> Room:
    return Room(tmp_path)


def as_format_one(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The thief's rewrite in the format written before signatures: every entry hashed whole,
    no commitment, no signature (a chain anyone can build)."""
    out, prev = [], GENESIS
    for e in entries:
        body = {k: v for k, v in e.items() if k not in ("commit", "hash", "sig")}
        body["prev"] = prev
        if body["id"] == 2:
            body["draws"], body["roll"]["dice"][0]["face"] = [[0, 20, 20]], 20
        body["hash"] = entry_hash(body)
        prev = body["hash"]
        out.append(body)
    return out


def test_a_log_rewritten_in_the_unsigned_format_is_caught_by_the_key(room: Room,
                                                                     tmp_path: Path) -> None:
    data = room.table.export(room.gm)
    data["entries"] = as_format_one(data["entries"])
    data["head"] = data["entries"][-1]["hash"]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = verify_source(str(path), key=room.key)
    assert any(p.startswith("entry 9: the log ends in an entry nobody signed")
               for p in report.problems), report.problems
    room.write(as_format_one(room.rows()))  # the same through the database (its key beside it)
    report = verify_source(room.id, room.db)
    assert any(p.startswith("entry 9: the log ends in an entry nobody signed")
               for p in report.problems), report.problems


KEY = "ab" * 32


@pytest.mark.parametrize("entry", [
    {"id": "x", "commit": "a", "hash": "b", "prev": GENESIS},
    {"id": "BIG", "commit": "a", "hash": "b", "prev": GENESIS},
    {"id": True, "commit": "a", "hash": "b", "prev": GENESIS},
    {"id": 1, "commit": "a", "hash": "b", "prev": GENESIS, "kind": "seed", "epoch": 1,
     "seed": "zz", "commitment": {}},
    {"id": 1, "commit": "a", "hash": "b", "prev": GENESIS, "kind": "roll", "draws": [[0, 6, 1]],
     "fair": {"epoch": "1", "nonce": 1, "commitment": []}},
])
def test_entries_that_are_not_entries_are_reported_not_a_traceback(entry: dict[str, Any],
                                                                   tmp_path: Path,
                                                                   capsys: Any) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"format": "astragal-log/2", "room": {"id": "r"}, "key": KEY,
                                "entries": [entry]}).replace('"BIG"', "1e400"),
                    encoding="utf-8")  # 1e400: a number JSON reads as infinity
    assert cli(["verify-log", str(path)]) == 1
    err = capsys.readouterr().err
    assert "TAMPERED" in err and "Traceback" not in err


def test_the_python_check_reproduces_the_trust_vectors() -> None:
    """tests/web/trust_vectors.json (docs/trust.md): canonical JSON, commitments, hashes, a
    signature by a fixed key, and a small signed export the check passes with its counts."""
    from astragal.web.chain import canonical, commitment, header_hash, verify_export
    from astragal.web.signing import Signer, check_signature, head_message

    v = json.loads((Path(__file__).parent / "trust_vectors.json").read_text(encoding="utf-8"))
    for c in v["canonical"]:
        assert canonical(json.loads(c["json"])) == c["canonical"]
    for e in v["entries"]:
        assert commitment(e["entry"]) == e["entry"]["commit"]
        assert header_hash(e["entry"]) == e["entry"]["hash"]
    s = v["signature"]
    signer = Signer(bytes.fromhex(s["private_seed"]))
    assert signer.public == s["public"]
    assert head_message(s["room"], s["id"], s["hash"]).decode() == s["message"]
    assert signer.sign(s["room"], s["id"], s["hash"]) == s["sig"]  # Ed25519 is deterministic
    assert check_signature(s["public"], s["room"], s["id"], s["hash"], s["sig"])
    for name in ("export", "export_32_byte_seeds"):  # the 32-byte seeds: logs written before
        report = verify_export(v[name])
        assert report.ok and (report.signed, report.derived) == (v[f"{name}_signed"],
                                                                v[f"{name}_derived"])
    from astragal.web import fair

    t = v["tree"]
    source, record = fair.fair_roll(t["stored_seed"], t["room"], t["epoch"], t["member"],
                                    t["client"], t["nonce"], hidden=True)
    assert {k: record[k] for k in ("commitment", "secret", "proof")} == {
        k: t[k] for k in ("commitment", "secret", "proof")}
    assert fair.revealed(t["stored_seed"]) == {"seed": t["seed"], "root": t["root"]}
    assert [source.face(s) for s in t["sizes"]] == t["faces"]


def test_huge_receipts_and_exports_are_refused_with_exit_2(room: Room, tmp_path: Path,
                                                           capsys: Any) -> None:
    from astragal.web.verify import MAX_EXPORT, MAX_RECEIPT_COUNT

    many = tmp_path / "many.json"
    many.write_text(json.dumps([{"id": 1, "hash": "x"}] * (MAX_RECEIPT_COUNT + 1)))
    assert cli(["verify-log", room.id, "--db", room.db, "--receipts", str(many)]) == 2
    assert f"holds {MAX_RECEIPT_COUNT + 1:,} receipts" in capsys.readouterr().err
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(MAX_EXPORT + 1)  # sparse: refused by its size before it is read
    assert cli(["verify-log", str(big)]) == 2
    assert "the limit is" in capsys.readouterr().err


def test_the_by_hand_script_in_the_docs_checks_the_vector_export(tmp_path: Path) -> None:
    """docs/trust.md's standard-library script, run on the vectors' export: every entry's hash
    checks, and every revealed roll's faces match (and a forged face shows as DIFFER)."""
    import re
    import subprocess
    import sys

    docs = (Path(__file__).resolve().parents[2] / "docs/trust.md").read_text(encoding="utf-8")
    script = re.search(r"### By hand.*?```python\n(.*?)```", docs, re.DOTALL)
    assert script is not None
    (tmp_path / "check.py").write_text(script.group(1), encoding="utf-8")

    def run(data: dict[str, Any]) -> list[str]:
        (tmp_path / "export.json").write_text(json.dumps(data), encoding="utf-8")
        done = subprocess.run([sys.executable, "check.py", "export.json"], cwd=tmp_path,
                              capture_output=True, text=True, check=True)
        return done.stdout.splitlines()

    vectors = json.loads((Path(__file__).parent / "trust_vectors.json").read_text())
    for export in (vectors["export"], vectors["export_32_byte_seeds"]):
        lines = run(export)
        assert len(lines) == len(export["entries"]) and all("hash ok" in x for x in lines), lines
        assert sum(" match" in x for x in lines) == 3  # the d20, the revealed 2d6 and the 4d6kh3
        assert "secret ok" in lines[2] or export is vectors["export_32_byte_seeds"], lines
        export["entries"][0]["draws"][0][2] = export["entries"][0]["draws"][0][2] % 20 + 1
        assert run(export)[0].endswith("DIFFER")
    of = vectors["export"]["entries"][2]["of"]  # the revealed hidden roll: another secret
    of["fair"]["secret"] = "00" * 32
    assert "secret NOT COMMITTED" in run(vectors["export"])[2]
