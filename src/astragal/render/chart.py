"""Comparing rolls: side-by-side tables and charts (terminal bars, SVG, PNG), all pure but PNG.

A *view* picks what is compared: ``eq`` (P(value)), ``at_least`` (P(value or more)) or ``at_most``.
Each roll is one series; its name is the roll's text.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from fractions import Fraction
from html import escape as _escape
from typing import Any

from .._cells import Shown
from ..odds import Distribution
from ..systems import Odds
from . import fold_ends

__all__ = [
    "VIEWS",
    "cell",
    "compare_rows",
    "fold",
    "format_rows",
    "png_chart",
    "series",
    "svg_chart",
    "terminal_chart",
]


def escape(text: str) -> str:
    """``&``, ``<`` and ``>`` escaped for SVG text (xml.sax.saxutils.escape without its import
    of urllib, http and email: 18 ms of every CLI start)."""
    return _escape(text, quote=False)


VIEWS = {"eq": "P(=)", "at_least": "P(≥)", "at_most": "P(≤)"}
PALETTE = ("#3b6ea8", "#d1495b", "#edae49", "#00798c", "#66a182", "#8d6a9f", "#2e4057")


def _numeric(dist: Distribution) -> bool:
    return all(isinstance(k, (int, float)) and not isinstance(k, bool) for k in dist)


def series(odds: Odds, view: str = "eq", outcomes: bool = False) -> list[tuple[Any, float]]:
    """(value, probability) points of one roll in a view; categories when the value is absent."""
    dist = odds.outcomes if outcomes or not len(odds.distribution) else odds.distribution
    if view == "eq" or not _numeric(dist):
        return list(dist.items())
    rows = dist.tails()
    if view == "at_least":
        return [(k, ge) for k, _, ge, _ in rows]
    return [(k, le) for k, _, _, le in rows]


def _union(all_series: Sequence[list[tuple[Any, float]]]) -> list[Any]:
    keys: dict[Any, None] = {}  # in order of first sight, each once (a list's ``in`` is quadratic)
    for s in all_series:
        for k, _ in s:
            keys.setdefault(k)
    out = list(keys)
    if all(isinstance(k, (int, float)) for k in out):
        out.sort()
    return out


def _fill(s: list[tuple[Any, float]], keys: list[Any], view: str) -> list[float]:
    """The series at every key: a key it lacks has P(=) 0, and in a tail view the tail of the
    nearest value it has on that side (the most of the tails beyond the key, found by bisection:
    scanning the series for every key it lacks is quadratic)."""
    got = dict(s)
    tails = view in ("at_least", "at_most")
    if tails:
        from bisect import bisect_left, bisect_right

        points = sorted((x, p) for x, p in s if isinstance(x, (int, float)))
        xs = [x for x, _ in points]
        best = [p for _, p in points]  # at_least: most from i on; at_most: most up to i
        if view == "at_least":
            for i in range(len(best) - 2, -1, -1):
                best[i] = max(best[i], best[i + 1])
        else:
            for i in range(1, len(best)):
                best[i] = max(best[i], best[i - 1])
    out = []
    for k in keys:
        if k in got:
            out.append(got[k])
        elif tails and isinstance(k, (int, float)):
            if view == "at_least":
                i = bisect_left(xs, k)
                out.append(best[i] if i < len(xs) else 0.0)
            else:
                i = bisect_right(xs, k)
                out.append(best[i - 1] if i else 0.0)
        else:
            out.append(0.0)
    return out


def fold(odds_list: Sequence[Odds], keys: list[Any], outcomes: bool = False) -> tuple[int, int]:
    """(lo, hi): the keys worth showing; far tails of long laws (explosions) are folded as the
    text output folds them (``render.fold_ends``: the values at each end whose P(=) is below
    0.0005% in every series). Categories are never folded."""
    if not all(isinstance(k, (int, float)) for k in keys):
        return 0, len(keys)
    eq = [_fill(series(o, "eq", outcomes), keys, "eq") for o in odds_list]
    return fold_ends([max(ps) for ps in zip(*eq)] if eq else [])


def _number(k: Any) -> Any:
    """An outcome as a JSON/CSV cell: numbers stay numbers, whole floats become ints."""
    if isinstance(k, float) and k.is_integer():
        return int(k)
    return k


def compare_rows(odds_list: Sequence[Odds], view: str = "eq",
                 outcomes: bool = False, numeric: bool = False,
                 exact: bool = False) -> list[list[Any]]:
    """A table: one row per value, one column per roll; the first row is the header.

    Text form (``numeric=False``): probabilities as percentages and a last ``mean`` row. Data
    form (``numeric=True``): outcomes and probabilities as numbers (``exact``: as
    ``fractions.Fraction``), no mean row, every value.
    """
    all_series = [series(o, view, outcomes) for o in odds_list]
    keys = _union(all_series)
    name, labels = _names(odds_list, outcomes)
    header = [f"{name} {VIEWS[view]}", *labels]
    rows: list[list[Any]] = [header]
    if exact:
        filled_exact = [_exact_fill(o, view, outcomes, keys) for o in odds_list]
        for i, k in enumerate(keys):
            rows.append([_number(k)] + [f[i] for f in filled_exact])
        return rows
    filled = [_fill(s, keys, view) for s in all_series]
    if numeric:
        for i, k in enumerate(keys):
            rows.append([_number(k)] + [f[i] for f in filled])
        return rows
    from . import outcome_words

    lo, hi = fold(odds_list, keys, outcomes)
    for i, k in enumerate(keys[lo:hi], lo):
        label = outcome_words(k) if isinstance(k, str) else str(k)
        rows.append([label] + [f"{100 * f[i]:.3f}%" for f in filled])
    if lo or hi < len(keys):
        hidden = len(keys) - (hi - lo)
        note = f"({hidden} values at the ends, each below 0.0005%, not shown)"
        rows.append([note] + [""] * len(odds_list))
    if not outcomes and all(len(o.distribution) and _numeric(o.distribution) for o in odds_list):
        rows.append(["mean"] + [f"{o.distribution.mean():.4f}" for o in odds_list])
    return rows


def _exact_fill(odds: Odds, view: str, outcomes: bool, keys: list[Any]) -> list[Fraction]:
    """The exact probabilities of one roll at ``keys`` in a view (ValueError if it has none)."""
    dist = odds.outcomes if outcomes or not len(odds.distribution) else odds.distribution
    try:
        law = dict(dist.exact())
    except ValueError as exc:
        raise ValueError(f"{odds.input}: {exc}") from None
    if view == "eq" or not _numeric(dist):
        return [law.get(k, Fraction(0)) for k in keys]
    from bisect import bisect_left, bisect_right

    xs = sorted(law)
    upto = [Fraction(0)]  # upto[i]: P(the i lowest values), summed once
    for x in xs:
        upto.append(upto[-1] + law[x])
    if view == "at_least":
        return [upto[-1] - upto[bisect_left(xs, k)] for k in keys]
    return [upto[bisect_right(xs, k)] for k in keys]


def cell(value: Any) -> Any:
    """A table cell as data: a ``Shown`` cell's exact value; else ``"10.0%"`` → 0.1, ``"7"``
    → 7, ``"0.11"`` → 0.11; else as is."""
    if isinstance(value, Shown):
        return value.value
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if text.endswith("%"):
            return float(Fraction(text[:-1]) / 100)
        return int(text)
    except ValueError:
        pass
    try:
        return float(text) if text and text[0] in "+-.0123456789" else value
    except ValueError:
        return value


def _csv_cell(value: Any) -> Any:
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Fraction):
        return str(value)
    return value


def format_rows(rows: Sequence[Sequence[Any]], fmt: str = "text",
                extra: dict[str, Any] | None = None, width: int | None = None) -> str:
    """Rows (header first) as an aligned text table, Markdown, CSV or JSON.

    CSV and JSON carry data: cells that are numbers or percentages in text become numbers
    (probabilities as fractions of 1), exact fractions print as ``"5/36"``; JSON is
    ``{"columns": header, "rows": [...]}`` plus ``extra``.
    """
    if fmt == "markdown":
        def md(c: Any) -> str:
            return str(c).replace("|", "\\|")
        lines = ["| " + " | ".join(md(c) for c in rows[0]) + " |",
                 "|" + "|".join("---" if i == 0 else "---:" for i in range(len(rows[0]))) + "|"]
        lines += ["| " + " | ".join(md(c) for c in r) + " |" for r in rows[1:]]
        return "\n".join(lines)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(rows[0])
        writer.writerows([_csv_cell(cell(c)) for c in r] for r in rows[1:])
        return buf.getvalue().rstrip("\n")
    if fmt == "json":
        body = [[cell(c) if not isinstance(c, Fraction) else str(c) for c in r]
                for r in rows[1:]]
        data: dict[str, Any] = {"columns": list(rows[0]), "rows": body}
        data.update(extra or {})
        return json.dumps(data, indent=2, ensure_ascii=False)
    from . import table_text

    return table_text(rows, width)


def terminal_chart(odds_list: Sequence[Odds], view: str = "eq", outcomes: bool = False,
                   width: int = 40) -> str:
    """Horizontal bars in the terminal, one line per value and roll, scaled to the largest bar."""
    from . import bar

    all_series = [series(o, view, outcomes) for o in odds_list]
    keys, filled = _shown(odds_list, all_series, view, outcomes)
    top = max((p for f in filled for p in f), default=0.0) or 1.0
    names = [_label(k) for k in keys]
    label_w = max((len(k) for k in names), default=1)
    marks = "█▓▒░"
    lines = []
    if len(odds_list) > 1:
        lines += [f"  {marks[i % 4] * 2} {label}"
                  for i, label in enumerate(_names(odds_list, outcomes)[1])]
        lines.append("")
    for i in range(len(keys)):
        for j, f in enumerate(filled):
            label = names[i] if j == 0 else ""
            shown = bar(f[i] / top, width)
            if len(odds_list) > 1:
                shown = shown.replace("█", marks[j % 4])
            lines.append(f"  {label:>{label_w}}  {100 * f[i]:7.3f}%  {shown}")
    return "\n".join(lines)


def svg_chart(odds_list: Sequence[Odds], view: str = "eq", outcomes: bool = False,
              title: str | None = None, width: int = 720, height: int = 400) -> str:
    """A grouped bar chart as standalone SVG: title, axes labels, a legend naming each roll.

    Each bar is a ``rect`` with ``data-series``, ``data-value`` and ``data-p`` attributes, so the
    chart can be read back by a program (the tests do).
    """
    all_series = [series(o, view, outcomes) for o in odds_list]
    keys, filled = _shown(odds_list, all_series, view, outcomes)
    top = max((p for f in filled for p in f), default=0.0)
    y_max = _nice_ceiling(top)
    names = [_label(k) for k in keys]
    left, right, top_m = 64, 16, 48
    n = max(1, len(keys))
    group_w = (width - left - right) / n
    # the x axis' labels: every one when they fit side by side; categories that do not fit are
    # slanted (each is named), numbers that do not fit are shown one in every ``step``
    label_px = _CHAR_PX * max((len(k) for k in names), default=1)
    slanted = all(isinstance(k, str) for k in keys) and label_px + 4 > group_w
    step = 1 if slanted else max(1, math.ceil((label_px + 8) / group_w))
    drop = round(label_px * 0.6) if slanted else 0  # sin 37°: the slanted labels' depth
    bottom = 72 + drop + 18 * len(odds_list)
    height = max(height, top_m + bottom + 120)
    plot_w, plot_h = width - left - right, height - top_m - bottom
    bar_w = max(1.0, group_w * 0.8 / max(1, len(odds_list)))
    value_name, labels = _names(odds_list, outcomes)
    heading = title or _title(odds_list, view)
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">'),
           f'<title>{escape(heading)}</title>',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
           (f'<text x="{width / 2}" y="24" text-anchor="middle" font-size="15" '
           f'font-weight="bold">{escape(heading)}</text>')]
    for t in range(6):  # y axis: percentages
        frac = t / 5
        y = top_m + plot_h * (1 - frac)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                   f'{100 * y_max * frac:.3g}%</text>')
    for j, f in enumerate(filled):
        color = PALETTE[j % len(PALETTE)]
        for i, k in enumerate(keys):
            h = plot_h * (f[i] / y_max) if y_max else 0.0
            x = left + i * group_w + group_w * 0.1 + j * bar_w
            out.append(f'<rect class="bar" x="{x:.2f}" y="{top_m + plot_h - h:.3f}" '
                       f'width="{bar_w:.2f}" height="{h:.3f}" fill="{color}" '
                       f'data-series="{j}" data-value="{escape(str(k))}" data-p="{f[i]!r}">'
                       f'<title>{escape(odds_list[j].input)}: {escape(names[i])} → '
                       f'{100 * f[i]:.3f}%</title></rect>')
    for i, name in enumerate(names):  # x axis: values
        if i % step == 0:
            x = left + (i + 0.5) * group_w
            y = top_m + plot_h + 16
            turn = (f' transform="rotate(-37 {x:.1f} {y})" text-anchor="end"' if slanted
                    else ' text-anchor="middle"')
            out.append(f'<text class="tick" x="{x:.1f}" y="{y}"{turn}>{escape(name)}</text>')
    out.append(f'<line x1="{left}" y1="{top_m + plot_h}" x2="{left + plot_w}" '
               f'y2="{top_m + plot_h}" stroke="#333"/>')
    out.append(f'<text x="{left + plot_w / 2}" y="{top_m + plot_h + 36 + drop}" '
               f'text-anchor="middle">{escape(value_name)}</text>')
    out.append(f'<text transform="translate(16 {top_m + plot_h / 2}) rotate(-90)" '
               f'text-anchor="middle">probability {escape(VIEWS[view])}</text>')
    for j in range(len(odds_list)):  # legend: one entry per roll
        y = top_m + plot_h + 52 + drop + 18 * j
        out.append(f'<rect class="legend" x="{left}" y="{y - 10}" width="12" height="12" '
                   f'fill="{PALETTE[j % len(PALETTE)]}"/>')
        out.append(f'<text class="series-name" x="{left + 18}" y="{y}">{escape(labels[j])}</text>')
    out.append("</svg>")
    return "\n".join(out)


_CHAR_PX = 7  # the width of one character of the 12px sans-serif labels, generously


def _label(k: Any) -> str:
    """A value as a chart labels it: an outcome in words (``overwhelming failure``)."""
    from . import outcome_words

    return outcome_words(k) if isinstance(k, str) else str(_number(k))


def _shown(odds_list: Sequence[Odds], all_series: list[list[tuple[Any, float]]], view: str,
           outcomes: bool) -> tuple[list[Any], list[list[float]]]:
    """The keys a chart shows (far tails folded) and each series' values at them."""
    keys = _union(all_series)
    filled = [_fill(s, keys, view) for s in all_series]
    lo, hi = fold(odds_list, keys, outcomes)
    return keys[lo:hi], [f[lo:hi] for f in filled]


def _names(odds_list: Sequence[Odds], outcomes: bool) -> tuple[str, list[str]]:
    """What the values are called, and each roll's label: the value's name when every roll
    shares it (``total``, ``margin``), else ``value`` and each label names its own (``jc: L7 vs
    L5 (margin)`` beside ``2d6 (total)``: two quantities in one column are said to be two)."""
    if outcomes or not all(len(o.distribution) for o in odds_list):
        return "outcome", [o.input for o in odds_list]
    names = {o.value_name for o in odds_list}
    if len(names) == 1:
        return names.pop(), [o.input for o in odds_list]
    return "value", [f"{o.input} ({o.value_name})" for o in odds_list]


def _title(odds_list: Sequence[Odds], view: str) -> str:
    what = {"eq": "", "at_least": " (at least)", "at_most": " (at most)"}[view]
    if len(odds_list) == 1:
        return f"Exact odds{what}: {odds_list[0].input}"
    return f"Exact odds{what}: {len(odds_list)} rolls compared"


def _nice_ceiling(p: float) -> float:
    """A round upper bound for the y axis (5%, 10%, 20%, 25%, 50%, 100%...)."""
    for c in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0):
        if p <= c:
            return c
    return 1.0


def png_chart(odds_list: Sequence[Odds], path: str, view: str = "eq",
              outcomes: bool = False, title: str | None = None) -> None:
    """Write the grouped bar chart as PNG with matplotlib (the ``plot`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    all_series = [series(o, view, outcomes) for o in odds_list]
    keys, filled = _shown(odds_list, all_series, view, outcomes)
    value_name, labels = _names(odds_list, outcomes)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    n = len(odds_list)
    w = 0.8 / max(1, n)
    for j, f in enumerate(filled):
        xs = [i - 0.4 + w * (j + 0.5) for i in range(len(keys))]
        ax.bar(xs, [100 * p for p in f], width=w, label=labels[j],
               color=PALETTE[j % len(PALETTE)])
    ax.set_xticks(range(len(keys)), [_label(k) for k in keys])
    ax.set_xlabel(value_name)
    ax.set_ylabel(f"probability {VIEWS[view]} (%)")
    ax.set_title(title or _title(odds_list, view))
    ax.legend()
    if len(keys) > 12 or any(len(_label(k)) > 6 for k in keys):
        plt.setp(ax.get_xticklabels(), rotation=45, ha="right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
