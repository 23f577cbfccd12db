"""The room log's entry format: canonical JSON, the hash chain, and checking a log end to end.

Each entry is a JSON object; its ``hash`` is the SHA-256 of the canonical JSON of every other field,
and its ``prev`` is the hash of the entry before it (``GENESIS`` for the first). Editing, removing
or reordering an entry therefore breaks every link after it. A random ``nonce`` in each entry keeps
the hash of a hidden roll from revealing its faces (a d12 has only 12 faces to try).

Each roll entry also keeps its ``draws``: every face in the order the dice were drawn, with the die
size and the side (stream) it was rolled for. Replaying the draws through the game's rules must give
the stored roll, so a verdict edited together with a recomputed chain is caught as well.

Pure: no I/O. Used by the stores (to build entries), the API (to export) and ``verify-log``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FORMAT",
    "GENESIS",
    "Report",
    "canonical",
    "entry_hash",
    "redact",
    "seal",
    "verify_entries",
    "verify_export",
]

GENESIS = "0" * 64
FORMAT = "astragal-log/1"


def canonical(data: Any) -> str:
    """The one JSON text of a value: sorted keys, no spaces, UTF-8 kept as is."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def entry_hash(entry: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of an entry without its own ``hash``."""
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def seal(body: Mapping[str, Any], seq: int, prev: str) -> dict[str, Any]:
    """The stored entry: ``body`` numbered ``seq``, linked to ``prev``, with its own hash."""
    entry = {**body, "id": seq, "prev": prev}
    entry["hash"] = entry_hash(entry)
    return entry


def redact(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A placeholder for an entry the reader may not see: only its place in the chain."""
    return {"id": entry["id"], "prev": entry["prev"], "hash": entry["hash"], "redacted": True}


@dataclass
class Report:
    """What checking a log found: counts, the head hash, and every problem with its entry id."""

    entries: int = 0
    redacted: int = 0
    replayed: int = 0
    head: str = GENESIS
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        """A human summary, one line each."""
        if self.ok:
            out = [f"ok: {self.entries} entries, the hash chain is intact; head {self.head}"]
            if self.replayed:
                out.append(f"ok: {self.replayed} roll(s) replayed from their faces give the "
                           "stored verdicts")
            if self.redacted:
                out.append(f"note: {self.redacted} hidden "
                           f"{'entry appears' if self.redacted == 1 else 'entries appear'} only as "
                           "links in the chain; their contents could not be checked")
            return out
        return [f"TAMPERED: {p}" for p in self.problems] + [
            f"{len(self.problems)} problem(s) in {self.entries} entries"]


def _replay(entry: Mapping[str, Any]) -> str | None:
    """Re-roll an entry from its recorded draws; None when it matches, else what differs."""
    import astragal  # the rules themselves: a verdict must follow from the faces

    draws = entry.get("draws")
    if not isinstance(draws, list):
        return "its faces (draws) are missing"
    streams: list[list[int]] = []
    for d in draws:
        if (not isinstance(d, list) or len(d) != 3
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in d)
                or not 0 <= d[0] < 64):
            return f"a draw {d!r} is not [side, size, face]"
        while len(streams) <= d[0]:
            streams.append([])
        streams[d[0]].append(d[2])
    try:
        again = astragal.roll(str(entry.get("notation", "")),
                              source=astragal.ScriptedSource(streams),
                              default_system=str(entry.get("system", "")) or None)
    except astragal.InputError as exc:
        return f"its roll cannot be replayed: {exc.message}"
    except astragal.AstragalError as exc:  # a system that is not installed here, say
        return f"its roll cannot be replayed: {exc}"
    if again.to_json() != entry.get("roll"):
        return "its dice and verdict do not follow from its faces under the game's rules"
    return None


def _hash_or_none(entry: Mapping[str, Any]) -> str | None:
    """The entry's hash; None when it holds what no entry can (NaN, a value too deep)."""
    try:
        return entry_hash(entry)
    except (ValueError, TypeError, RecursionError):
        return None


def verify_entries(entries: Iterable[Mapping[str, Any]], *, replay: bool = True) -> Report:
    """Check ids (1, 2, 3…), every hash, every link, and (``replay``) every verdict."""
    report = Report()
    prev = GENESIS
    expected_id = 1
    for n, entry in enumerate(entries, 1):
        report.entries = n
        if not isinstance(entry, Mapping):
            report.problems.append(f"item {n} is not an entry object")
            continue
        eid = entry.get("id")
        where = f"entry {eid}" if isinstance(eid, int) else f"item {n}"
        if eid != expected_id:
            report.problems.append(f"{where}: expected id {expected_id} (an entry is missing, "
                                   "added or out of order)")
        expected_id = (eid if isinstance(eid, int) else expected_id) + 1
        if entry.get("prev") != prev:
            report.problems.append(f"{where}: its link to the entry before does not match "
                                   "(an earlier entry was edited or removed)")
        stated = entry.get("hash")
        if entry.get("redacted") is True and set(entry) == {"id", "prev", "hash", "redacted"}:
            report.redacted += 1
        elif not isinstance(stated, str) or _hash_or_none(entry) != stated:
            report.problems.append(f"{where}: its contents do not match its hash (edited)")
        elif replay and entry.get("kind", "roll") == "roll":
            why = _replay(entry)
            if why is None:
                report.replayed += 1
            else:
                report.problems.append(f"{where}: {why}")
        prev = stated if isinstance(stated, str) else ""
    report.head = prev
    return report


def verify_export(data: Any, *, replay: bool = True) -> Report:
    """Check an exported log (``{"format": "astragal-log/1", "entries": [...]}``)."""
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        report = Report()
        report.problems.append(f"not an astragal log export (expected \"format\": \"{FORMAT}\")")
        return report
    entries = data.get("entries")
    if not isinstance(entries, Sequence) or isinstance(entries, (str, bytes)):
        report = Report()
        report.problems.append("the export has no list of entries")
        return report
    report = verify_entries(entries, replay=replay)
    head = data.get("head")
    if head is not None and head != report.head:
        report.problems.append("the export's stated head hash does not match its last entry "
                               "(entries were cut from the end)")
    return report
