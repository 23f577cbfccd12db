"""Renderers: pure functions from ``Roll`` / ``Odds`` / tables to text and JSON. No I/O here.

A roll's steps (``astragal.dice.steps``) are put into words here: ``render/<game>.py`` holds a
game's words (``cofd.transcript(steps)`` gives a Chronicles of Darkness roll's transcript),
``steps.step_line`` one line per step in any game (the HTML view lists them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dice import Roll
from ..odds import Odds

__all__ = ["bar", "fold_ends", "odds_text", "roll_text", "table_text", "to_json_text"]

FOLD_BELOW = 5e-6  # values at the ends of a long law below this are folded (0.000% in text)
FOLD_FROM = 30  # laws with more values than this fold their ends


def fold_ends(ps: Sequence[float]) -> tuple[int, int]:
    """(lo, hi): the values worth showing of a law whose P(=) in order of value are ``ps``
    (for several laws, the largest of each value's): the far tails of a long law (explosions)
    are folded, the values at each end below 0.0005% (0.000% in text). Short laws (at most
    ``FOLD_FROM`` values) are never folded. The text, the charts and the web table read this."""
    lo, hi = 0, len(ps)
    if hi <= FOLD_FROM:
        return lo, hi
    while lo < hi and ps[lo] < FOLD_BELOW:
        lo += 1
    while hi > lo and ps[hi - 1] < FOLD_BELOW:
        hi -= 1
    return lo, hi

_OUTCOME_WORDS = {
    "botch": "Botch",
    "overwhelming_failure": "Overwhelming Failure",
    "failure": "Failure",
    "tie": "Tie",
    "success": "Success",
    "overwhelming_success": "Overwhelming Success",
    "no_botch": "no Botch",
    "dramatic_failure": "Dramatic Failure",
    "exceptional_success": "Exceptional Success",
    "win": "Win",
    "lose": "Lose",
}


def outcome_words(outcome: str) -> str:
    """A category key in the game's words (``overwhelming_success`` → Overwhelming Success)."""
    return _OUTCOME_WORDS.get(outcome, outcome.replace("_", " ").capitalize())


def bar(p: float, width: int = 30) -> str:
    """A horizontal bar for a probability, in eighths of a character."""
    eighths = round(max(0.0, min(1.0, p)) * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + ("" if rest == 0 else " ▏▎▍▌▋▊▉"[rest])


def roll_text(roll: Roll) -> str:
    """The transcript of a roll, ending with its verdict."""
    return "\n".join(roll.transcript)


def odds_text(odds: Odds) -> str:
    """Outcome categories, then the distribution with at-least / at-most columns and bars."""
    lines = [f"Exact odds: {odds.input}"]
    lines += [f"  {n}" for n in odds.notes]
    width = max((len(outcome_words(k)) for k in odds.outcomes.outcomes()), default=8)
    if len(odds.outcomes):
        lines.append("")
    for k, p in odds.outcomes.items():
        lines.append(f"  {outcome_words(k):<{width}}  {100 * p:7.3f}%  {bar(p)}")
    dist = odds.distribution
    if len(dist):
        lines.append("")
        name = odds.value_name
        lines.append(f"  {name:>7}  {'P(=)':>8}  {'P(>=)':>8}  {'P(<=)':>8}")
        items = dist.tails()
        lo, hi = fold_ends([p for _, p, _, _ in items])  # long tails (explosions)
        hidden = len(items) - (hi - lo)
        items = items[lo:hi]
        for k, p, at_least, at_most in items:
            lines.append(f"  {k!s:>7}  {100 * p:7.3f}%  {100 * at_least:7.3f}%  "
                         f"{100 * at_most:7.3f}%  {bar(p)}")
        if hidden:
            lines.append(f"  ({hidden} values at the ends, each below 0.0005%, not shown; "
                         "--json has them)")
        lines.append(f"  mean {dist.mean():.4f}, standard deviation {dist.std():.4f}")
    if dist.truncated:
        lines.append(f"  (tail cut where the lost probability is {dist.truncated:.1e})")
    for key, value in odds.extra.items():
        if isinstance(value, dict) and value and all(isinstance(v, float) for v in value.values()):
            lines.append("")
            lines.append(f"  {key.replace('_', ' ')}:")
            shown = [(k, p) for k, p in value.items() if p >= 5e-6 or len(value) <= 30]
            own = max((len(outcome_words(k)) for k, _ in shown), default=0)  # this block's
            side = ">" if all(str(k).lstrip("-").isdigit() for k, _ in shown) else "<"
            for k, p in shown:
                lines.append(f"    {outcome_words(k):{side}{own}}  {100 * p:7.3f}%")
            if len(shown) < len(value):
                lines.append(f"    ({len(value) - len(shown)} values below 0.0005% not shown)")
    return "\n".join(lines)


def table_text(rows: Sequence[Sequence[str]], width: int | None = None) -> str:
    """A plain aligned text table; the first row is the header. With ``width`` (a terminal's), a
    table wider than that is cut into blocks of columns, each repeating the first column."""
    # a note (a row with nothing past its first cell, such as "(379 values … not shown)") is
    # printed whole, and does not widen the first column
    def note(n: int, r: Sequence[str]) -> bool:
        return n > 0 and not any(str(c) for c in r[1:])

    widths = [max([len(str(r[i])) for n, r in enumerate(rows) if i < len(r) and not note(n, r)]
                  or [0]) for i in range(len(rows[0]))]
    blocks: list[list[int]] = [[]]
    used = widths[0]
    for i in range(1, len(widths)):
        if width is not None and blocks[-1] and used + 2 + widths[i] > width:
            blocks.append([])
            used = widths[0]
        blocks[-1].append(i)
        used += 2 + widths[i]
    out = []
    for b, block in enumerate(blocks):
        if b:
            out.append("")
        cols = [0, *block]
        for n, row in enumerate(rows):
            if note(n, row):
                out.append(str(row[0]))
                continue
            cells = [(str(row[i]) if i < len(row) else "", widths[i], i) for i in cols]
            out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for c, w, i in cells).rstrip())
            if n == 0:
                out.append("  ".join("-" * widths[i] for i in cols))
    return "\n".join(out)


def to_json_text(data: Any) -> str:
    """Stable, indented JSON."""
    import json

    return json.dumps(data, indent=2, ensure_ascii=False)


def odds_html(odds: Odds) -> str:
    """An HTML table of the outcomes and distribution, with the SVG chart (for notebooks)."""
    from html import escape

    from .chart import compare_rows, svg_chart

    parts = [f"<div><strong>{escape(odds.input)}</strong>"]
    for rows in ([["outcome", "probability"]] + [[outcome_words(k), f"{100 * p:.3f}%"]
                                                  for k, p in odds.outcomes.items()]
                 if len(odds.outcomes) else None,
                 compare_rows([odds]) if len(odds.distribution) else None):
        if rows is None:
            continue
        head = "".join(f"<th>{escape(str(c))}</th>" for c in rows[0])
        body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>"
                       for r in rows[1:])
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    parts.append(svg_chart([odds], width=560, height=320))
    return "".join(parts) + "</div>"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("s") else f"{n} {word}s"


def _result_words(roll: Roll) -> str | None:
    """What a game's roll came to, from its result: ``Result 17 (Critical)``, ``2 hits``,
    ``7 vs 4``, ``2 successes``, ``total 15 vs 10`` (None where the result says no more than
    its category)."""
    r = roll.result
    if "hits" in r:
        return _plural(r["hits"], "hit")
    if r.get("hit") and "damage" in r:
        return f"{r['damage']} damage" + (", stunned" if r.get("stun") else "")
    if "result" in r:
        return f"result {r['result']}" + (" (Critical)" if r.get("critical") else "")
    if "successes" in r:
        return _plural(r["successes"], "success")
    if isinstance(r.get("actor"), dict) and isinstance(r.get("opposition"), dict) \
            and "successes" in r["actor"]:
        return f"{r['actor']['successes']} vs {r['opposition']['successes']} successes"
    if "actor_score" in r:
        if "opposition_score" in r:
            return f"{r['actor_score']} vs {r['opposition_score']}"
        return f"Score {r['actor_score']}"
    if "total" in r:
        against = r.get("difficulty", r.get("opposition_total"))
        return f"total {r['total']}" + (f" vs {against}" if against is not None else "")
    return None


# categories that only say what the result already shows: the headline is the result alone
_IMPLIED = {"no_botch", "no_complication", "nothing"}


def _verdict_words(roll: Roll) -> str:
    """The verdict in a line: ``Success: 2 successes``, ``Result 17 (Critical)``, ``2 hits``,
    ``Total: 15``, ``Totals: 12, 9, 15``."""
    result = roll.result
    if roll.outcome == "total" and "total" in result:
        return f"Total: {result['total']}"
    if roll.outcome == "repeated" and "totals" in result:
        return "Totals: " + ", ".join(str(t) for t in result["totals"])
    said = _result_words(roll) if roll.system != "dice" else None
    if said is None:
        return outcome_words(roll.outcome)
    if roll.outcome in _IMPLIED or roll.outcome == "hit" and "hits" in result:
        return said[:1].upper() + said[1:]
    return f"{outcome_words(roll.outcome)}: {said}"


def _stands(die: Any) -> int:
    """What a die counts in the result, as its rules recorded it: its score where that is not
    its face (CofD's successes, a compounding die's sum), else the face that stands."""
    if die.scored is not None:
        return int(die.scored)
    if die.joined in ("compounded", "exploded", "penetrated"):
        return int(sum(die.faces)) - (len(die.faces) - 1 if die.joined == "penetrated" else 0)
    return int(die.face)


def roll_html(roll: Roll) -> str:
    """A roll for notebooks: the verdict, a table of the dice (every face, kept or dropped,
    crits and fumbles marked), the transcript and, for a game that records them, the steps."""
    from html import escape

    head = ("<tr><th>die</th><th>faces</th><th>counts</th><th>group</th><th>note</th></tr>")
    rows = []
    for d in roll.dice:
        marks = []
        if getattr(d, "crit", False):
            marks.append("critical")
        if getattr(d, "fumble", False):
            marks.append("fumble")
        style = ' style="opacity:0.5;text-decoration:line-through"' if not d.kept else ""
        note = ", ".join(x for x in (d.note, *marks) if x)
        rows.append(f"<tr{style}><td>d{d.size}</td>"
                    f"<td>{escape(' → '.join(str(f) for f in d.faces))}</td>"
                    f"<td><strong>{_stands(d)}</strong></td>"
                    f"<td>{escape(d.group)}{f' (roll {d.repeat})' if d.repeat else ''}</td>"
                    f"<td>{escape(note)}</td></tr>")
    table = (f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
             if rows else "")
    lines = "".join(f"{escape(line)}<br>" for line in roll.transcript)
    steps = ""
    if roll.steps:
        from .steps import step_line

        items = "".join(f"<li>{escape(step_line(s))}</li>" for s in roll.steps)
        steps = f"<details><summary>steps</summary><ol>{items}</ol></details>"
    return (f"<div><div style=\"font-size:1.2em\"><strong>{escape(_verdict_words(roll))}"
            f"</strong> <span style=\"color:#666\">{escape(roll.input)}</span></div>{table}"
            f"<details><summary>transcript</summary><pre>{lines}</pre></details>{steps}</div>")
