"""``astragal luck export.json``: each member's luck and the session's, from a room's export.

Every roll the export shows whole is placed in its own exact odds (``luck.py``), computed within
the web table's bounds (``WEB_LIMITS``: a roll whose odds the table's Luck panel would refuse is
left out here too, so each distinct roll costs a bounded time); hidden rolls (stubs) and rolls
without an ordered value are counted apart. Exit status 0; 2 when the file
cannot be read.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator
from html import escape
from pathlib import Path
from typing import Any

from . import odds
from ._errors import AstragalError, InputError
from ._limits import WEB_LIMITS
from .dice import Roll
from .luck import FLAG_BELOW, Luck, luck, report

__all__ = ["lucks_of_export", "main", "rolls_of"]

MAX_EXPORT = 1 << 30


def rolls_of(entries: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """The roll entries of a log, each once: a revealed hidden roll is read from its reveal
    (``of``), stubs and entries that are not rolls are left out."""
    seen: set[Any] = set()
    for e in entries:
        if isinstance(e, dict) and e.get("kind") == "reveal" and isinstance(e.get("of"), dict):
            e = e["of"]
        eid = e.get("id") if isinstance(e, dict) else None
        if not isinstance(e, dict) or e.get("kind", "roll") != "roll" or e.get("redacted") \
                or e.get("hidden") or not (eid is None or type(eid) is int) or eid in seen:
            continue  # an id that is not a whole number is no entry of a log
        seen.add(eid)
        yield e


def lucks_of_export(data: Any) -> tuple[dict[str, list[Luck]], int]:
    """Each member's rolls placed in their odds, and how many rolls could not be placed."""
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise InputError("not an astragal log export (no list of entries)")
    by: dict[str, list[Luck]] = {}
    skipped = 0
    cache: dict[tuple[str, str], Any] = {}
    for e in rolls_of(data["entries"]):
        roll_json, notation, system = e.get("roll"), e.get("notation"), e.get("system")
        if not (isinstance(roll_json, dict) and isinstance(notation, str)
                and isinstance(system, str) and isinstance(roll_json.get("result"), dict)):
            skipped += 1
            continue
        key = (notation, system)
        if key not in cache:
            try:
                cache[key] = odds(notation, default_system=system, limits=WEB_LIMITS)
            except AstragalError:
                cache[key] = None
        placed = None
        if cache[key] is not None:
            rolled = Roll(system, notation, str(roll_json.get("outcome", "")),
                          roll_json["result"], (), ())
            placed = luck(rolled, cache[key])
        if placed is None:
            skipped += 1
            continue
        by.setdefault(str(e.get("who", "?")), []).append(placed)
    return by, skipped


def _bars(hist: list[int]) -> str:
    top = max(hist, default=0) or 1
    return " ".join("▁▂▃▄▅▆▇█"[min(7, round(7 * h / top))] for h in hist)


def _text(data: dict[str, Any], skipped: int) -> str:
    lines = [(f"Luck: where each roll fell in its own exact odds (flagged when the test of fair "
              f"dice gives p < {FLAG_BELOW:g})")]
    for name, v in [("session", data["session"]), *data["members"].items()]:
        if not v["rolls"]:
            continue
        lines.append(f"  {name:<16} {v['rolls']:>5} rolls  mean percentile "
                     f"{100 * v['mean_percentile']:5.1f}%  {_bars(v['histogram'])}  p = "
                     f"{v['p_value']:.3g}" + ("  FLAGGED: unlikely under fair dice"
                                              if v["flagged"] else ""))
    if skipped:
        lines.append(f"  ({skipped} roll(s) without an ordered value, or whose odds are too "
                     "heavy, are left out)")
    return "\n".join(lines)


def _svg(data: dict[str, Any]) -> str:
    rows = [("session", data["session"]), *data["members"].items()]
    width, row_h, bar_w = 420, 70, 36
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{row_h * len(rows)}" font-family="sans-serif" font-size="12">')]
    for r, (name, v) in enumerate(rows):
        top = max(v["histogram"], default=0) or 1
        y0 = r * row_h + 55
        out.append(f'<text x="4" y="{r * row_h + 14}">{escape(name)}: {v["rolls"]} rolls, '
                   f'p = {v["p_value"]:.3g}</text>')
        for i, h in enumerate(v["histogram"]):
            height = 36 * h / top
            out.append(f'<rect x="{4 + i * bar_w}" y="{y0 - height:.1f}" width="{bar_w - 4}" '
                       f'height="{height:.1f}" fill="#4a6fa5"><title>{10 * i}–{10 * i + 10}%: '
                       f'{h}</title></rect>')
    out.append("</svg>")
    return "\n".join(out)


def main(args: argparse.Namespace) -> int:
    """Print the report (text or JSON); 0, or an ``InputError`` (exit 2) for a bad file."""
    from ._files import read_text

    try:
        data = json.loads(read_text(args.export, "log export", MAX_EXPORT))
    except FileNotFoundError:
        raise InputError(f"luck: the file {args.export} is missing (no such file)") from None
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InputError(f"luck: cannot read {args.export} as a JSON log export: {why}") from None
    by, skipped = lucks_of_export(data)
    result = report(by, args.seed)
    result["left_out"] = skipped
    if args.plot:
        if not str(args.plot).endswith(".svg"):
            raise InputError("--plot: the luck chart is drawn as SVG: give a .svg file name")
        Path(args.plot).write_text(_svg(result), encoding="utf-8")
    print(json.dumps(result, indent=2) if args.json else _text(result, skipped))
    return 0
