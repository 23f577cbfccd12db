"""``verify-log`` is bounded by what it reads (issue 38, item 12): it reads an export one entry at
a time, refuses what is too big to check with a clear error naming it (exit 2, no traceback), and
stops reading a log after ``MAX_PROBLEMS`` problems. ``benchmarks/bench_verify_log.py`` measures
it on crafted exports of 70 and 250 MiB (docs/performance.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from astragal.cli import main as cli
from astragal.web import chain, export_file
from astragal.web.chain import seal
from astragal.web.verify import verify_source

from .test_trust import Room, reseal

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def room(tmp_path: Path) -> Room:
    return Room(tmp_path)


def write(path: Path, members: list[tuple[str, Any]]) -> str:
    """An export with its members in this order (json.dumps keeps it)."""
    path.write_text(json.dumps(dict(members)), encoding="utf-8")
    return str(path)


def copies(room: Room, n: int) -> list[dict[str, Any]]:
    """``n`` entries copied from the room's public rolls under new ids and nonces, chained with
    valid hashes (no valid signature)."""
    model = [{k: v for k, v in e.items() if k not in ("id", "prev", "commit", "hash", "sig")}
             for e in room.table.export(room.gm)["entries"] if e.get("visibility") == "public"]
    out: list[dict[str, Any]] = []
    for i in range(1, n + 1):
        body = model[i % len(model)]
        out.append(seal({**body, "fair": {**body["fair"], "nonce": i}}, i,
                        out[-1]["hash"] if out else "0" * 64))
    return out


def test_the_members_after_the_entries_are_read_first(room: Room, tmp_path: Path) -> None:
    """An export whose room, key and head come after its entries (not as the table writes it)
    checks as the table's own does: intact, every signature checked; and a tamper is caught."""
    data = room.table.export(room.gm)
    path = write(tmp_path / "late.json", [("entries", data["entries"]), *[
        (k, v) for k, v in data.items() if k != "entries"]])
    report = verify_source(path, key=room.key)
    assert report.ok and report.signed == len(data["entries"]), report.problems
    data["entries"][3]["text"] = "d20+10"
    reseal(data["entries"], 3)
    path = write(tmp_path / "late.json", [("entries", data["entries"]), *[
        (k, v) for k, v in data.items() if k != "entries"]])
    assert any(p.startswith("entry 4: its signature is not the table's")
               for p in verify_source(path, key=room.key).problems)


@pytest.mark.parametrize("cap, text, said", [
    ("MAX_ENTRY", '{"format": "astragal-log/2", "entries": [{"id": 1, "text": "%s"}]}' % (
        "x" * 5000), "item 1 of its entries is over 4,096 characters of JSON"),
    ("MAX_ENTRIES", '{"format": "astragal-log/2", "entries": [' + ",".join(["{}"] * 20) + "]}",
     "holds more than 10 entries"),
    ("MAX_MEMBER", '{"format": "astragal-log/2", "room": {"id": "%s"}, "entries": []}' % (
        "r" * 5000), 'the member "room" is over 4,096 characters'),
])
def test_what_is_too_big_to_check_is_named(tmp_path: Path, capsys: Any, monkeypatch: Any,
                                           cap: str, text: str, said: str) -> None:
    monkeypatch.setattr(export_file, cap, 10 if cap == "MAX_ENTRIES" else 4096)
    monkeypatch.setattr(export_file, "_PIECE", 1000)  # read in small pieces, as a big file is
    path = tmp_path / "big.json"
    path.write_text(text, encoding="utf-8")
    assert cli(["verify-log", str(path)]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err


@pytest.mark.parametrize("text, said", [
    ('{"format": "astragal-log/2", "format": "astragal-log/2", "entries": []}',
     'the member "format" is given twice'),
    ('{"format": "astragal-log/2", "entries": [{}, ]}', "Expecting value"),
    ('{"format": "astragal-log/2", "entries": []} []', "extra text after the export"),
    ('{"format": "astragal-log/2", "entries": [{"id": 1}]', "expected"),
])
def test_a_malformed_export_read_in_pieces_is_an_input_error(tmp_path: Path, capsys: Any,
                                                             monkeypatch: Any, text: str,
                                                             said: str) -> None:
    monkeypatch.setattr(export_file, "_PIECE", 7)
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    assert cli(["verify-log", str(path)]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err


def test_read_in_small_pieces_an_export_checks_the_same(room: Room, tmp_path: Path,
                                                        monkeypatch: Any) -> None:
    data = room.table.export(room.gm)
    data["room"]["name"] = "Ünïcödé table 🎲"  # characters of several bytes cut between pieces
    path = write(tmp_path / "x.json", list(data.items()))
    whole = chain.verify_export(json.loads(Path(path).read_text()), key=room.key)
    monkeypatch.setattr(export_file, "_PIECE", 5)
    pieces = verify_source(path, key=room.key)
    assert whole.problems == pieces.problems and whole.signed == pieces.signed


def test_a_log_with_too_many_problems_is_read_no_further(room: Room, tmp_path: Path,
                                                         monkeypatch: Any) -> None:
    monkeypatch.setattr(chain, "MAX_PROBLEMS", 20)
    data = room.table.export(room.gm)
    entries = copies(room, 200)  # each: a signature that is not the table's
    path = write(tmp_path / "x.json", [*[(k, v) for k, v in data.items() if k != "entries"],
                                       ("entries", entries)])
    report = verify_source(path)
    assert report.problems[-1] == ("entry 20: the check stopped here, after 20 problems; the "
                                   "rest of the log was not read")
    assert report.entries == 20 and len(report.problems) == 21


def _peak_rss_mib(path: str, src: Path = ROOT / "src") -> float:
    """verify-log's peak resident memory (MiB) on ``path``, in a process of its own."""
    # VmHWM, the process's own high-water mark (ru_maxrss starts at the forking parent's)
    code = ("import sys\nfrom astragal.cli import main\nmain(['verify-log', sys.argv[1]])\n"
            "print(next(line.split()[1] for line in open('/proc/self/status')\n"
            "           if line.startswith('VmHWM:')), file=sys.__stderr__)")
    run = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                         env={"PYTHONPATH": f"{src}:{ROOT}", "PATH": "/usr/bin:/bin"},
                         check=False)
    return int(run.stderr.strip().splitlines()[-1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads Linux's VmHWM")
def test_memory_grows_less_than_the_export(room: Room, tmp_path: Path) -> None:
    """A crafted export of about 16 MiB whose every check passes (no key to check signatures
    with): verify-log holds one entry at a time and what the seed epochs need, not the export
    parsed whole (five times its size before: 109 MiB more on this one; now about 17)."""
    data = {k: v for k, v in room.table.export(room.gm).items() if k != "entries"}
    small = write(tmp_path / "small.json", [*data.items(), ("key", None),
                                            ("entries", copies(room, 10))])
    entries = copies(room, 16_000)
    big = tmp_path / "big.json"
    write(big, [*data.items(), ("key", None), ("head", entries[-1]["hash"]),
                ("entries", entries)])
    del entries
    size = big.stat().st_size / (1 << 20)
    assert size > 12
    report = verify_source(str(big))
    assert report.ok and report.pending == 16_000, report.problems[:3]
    grew = _peak_rss_mib(str(big)) - _peak_rss_mib(small)
    assert grew < size, (grew, size)
