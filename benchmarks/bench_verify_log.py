"""``astragal verify-log`` on crafted exports: peak memory and CPU time by what it reads.

Writes crafted exports of about ``--mib`` MiB each into a temporary folder (deleted after), then
runs ``astragal verify-log FILE`` on each in a fresh process under ``/usr/bin/time -v`` and prints
its exit status, CPU seconds (user + system), peak RSS and the last line it wrote. Shapes:

- ``rolls``: a real room's public rolls (of every game, with their ``fair`` records) copied over
  and over under new ids and nonces, chained again with valid hashes, the export stating no key:
  every check runs on every entry (hash, commitment, the rules' replay, the seed epochs) and
  passes, each roll held until the log is read (its epoch never ends);
- ``forged``: the same with the table's key stated and no valid signature: a problem an entry;
- ``one-entry``: one roll whose ``draws`` list fills the file;
- ``stubs``: the smallest entries there are, hidden-roll stubs, one after another;
- ``deep``: one entry nested 100,000 lists deep.

Run: ``python benchmarks/bench_verify_log.py [--mib 70] [--shapes rolls,stubs] [--src OTHER/src]``
(``--src``: run an earlier version's verify-log on the same files, e.g. ``git archive COMMIT src``
unpacked). Written to ``benchmarks/results/verify_log.txt`` as well.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _room(tmp: Path) -> dict[str, Any]:
    """A real room's export: its entries as the table signed them."""
    from astragal.web.room import RateLimit, Table
    from astragal.web.signing import Signer, default_key_path
    from astragal.web.store import SQLiteStore

    db = str(tmp / "table.db")
    table = Table(SQLiteStore(db), signer=Signer.load_or_create(default_key_path(db)))
    table.roll_limit = table.address_rolls = RateLimit(1e6, 10**6)
    made = table.create_room("A table", "dice", "Mei")
    gm = table.member(made["room"]["id"], made["key"])
    wu = table.member(made["room"]["id"], table.join(made["room"]["id"], "Wu")["key"])
    for text in ("d20+3", "4d6kh3", "jc: d12 d8 vs 2d10", "cofd: 7 rote", "od6: 3D vs moderate",
                 "10d10!", "2d6"):
        table.roll(wu, text, client_seed="wu's seed")
    hidden = table.roll(gm, "3d6", "gm")
    table.reveal(gm, hidden["id"])
    for text in ("add Wu atk=4 wpn=3 luck=2 hp=8", "add Orc atk=3 wpn=2 armor=1 hp=30",
                 "attack Wu Orc", "attack Orc Wu"):
        table.fight(gm, text)
    table.end_epoch(gm)
    return table.export(gm)


def _write(path: Path, header: dict[str, Any], entries: Any) -> None:
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps(header, separators=(",", ":"))[:-1] + ',"entries":[')
        for n, e in enumerate(entries):
            f.write(("," if n else "") + json.dumps(e, separators=(",", ":"), ensure_ascii=False))
        f.write("]}")


def craft(shape: str, path: Path, size: int, tmp: Path) -> None:
    from astragal.web.chain import seal

    base = _room(tmp)
    header = {k: v for k, v in base.items() if k != "entries"}
    if shape in ("rolls", "forged"):
        model = [{k: v for k, v in e.items() if k not in ("id", "prev", "commit", "hash", "sig")}
                 for e in base["entries"] if e.get("kind", "roll") == "roll"
                 and e.get("visibility") == "public"]
        per = sum(len(json.dumps(e)) for e in model) / len(model) + 300
        if shape == "rolls":
            header["key"] = None  # nothing to check signatures with: every other check passes

        def rolls() -> Any:
            prev = "0" * 64
            for n in range(1, int(size / per) + 1):
                body = model[n % len(model)]
                body = {**body, "fair": {**body["fair"], "nonce": n}}
                e = seal(body, n, prev)
                e["sig"] = "ab" * 64
                prev = e["hash"]
                yield e
        for e in rolls():
            header["head"] = e["hash"]
        _write(path, header, rolls())
    elif shape == "one-entry":
        e = next(x for x in base["entries"] if x.get("kind", "roll") == "roll")
        e = {**e, "draws": [[0, 6, 3]] * (size // 8)}
        _write(path, header, [e])
    elif shape == "stubs":
        stub = {"id": 1, "prev": "0" * 64, "visibility": "gm", "commit": "c" * 64,
                "hash": "d" * 64, "sig": "ab" * 64, "redacted": True}
        count = size // (len(json.dumps(stub, separators=(",", ":"))) + 1)
        _write(path, header, ({**stub, "id": n} for n in range(1, count + 1)))
    elif shape == "deep":
        path.write_text(json.dumps(header)[:-1] + ', "entries": [' + "[" * 100_000 +
                        "]" * 100_000 + "]}", encoding="utf-8")
    else:
        raise SystemExit(f"unknown shape {shape!r}")


def measure(path: Path, src: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
    run = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "astragal", "verify-log",
                          str(path)], check=False, capture_output=True, text=True, env=env)
    stats = dict(re.findall(r"^\s*([^:\n]+): (.*)$", run.stderr, re.MULTILINE))
    cpu = float(stats["User time (seconds)"]) + float(stats["System time (seconds)"])
    said = [line for line in (run.stdout + run.stderr).splitlines()
            if line.strip() and not line.startswith(("\t", "Command exited"))]
    return {"exit": run.returncode, "cpu_s": round(cpu, 1),
            "peak_mib": round(int(stats["Maximum resident set size (kbytes)"]) / 1024),
            "said": said[-1][:150] if said else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=70.0)
    parser.add_argument("--src", type=Path, default=ROOT / "src",
                        help="the astragal sources to run verify-log from (an earlier version's)")
    parser.add_argument("--shapes", default="rolls,forged,one-entry,stubs,deep")
    args = parser.parse_args()
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for shape in args.shapes.split(","):
            path = tmp / f"{shape}.json"
            (tmp / shape).mkdir()
            craft(shape, path, int(args.mib * (1 << 20)), tmp / shape)
            got = measure(path, args.src)
            line = (f"{shape:10} {path.stat().st_size / (1 << 20):6.1f} MiB  exit {got['exit']}  "
                    f"{got['cpu_s']:6.1f} CPU-s  peak {got['peak_mib']:5} MiB  {got['said']}")
            print(line, flush=True)
            lines.append(line)
            path.unlink()
    with (ROOT / "benchmarks/results/verify_log.txt").open("a", encoding="utf-8") as out:
        out.write(f"# verify-log from {args.src}, {args.mib:g} MiB exports\n"
                  + "\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
