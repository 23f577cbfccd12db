"""What each command of the ``astragal`` command line does (``cli.py`` reads the words and
calls these): roll, odds, demo, table, systems, rules, serve, verify-log, fight, luck."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from . import odds, roll
from ._errors import InputError, OptionError
from .render import odds_text, roll_text, table_text, to_json_text

DEMO = "jc: L7 +1b fav vs L8 q=expert:expert"


def terminal_width() -> int | None:
    """The terminal's width when printing to one (wide tables are cut into blocks of columns
    to fit); None when the output goes to a file or a pipe, which get whole rows."""
    import shutil

    if not sys.stdout.isatty():
        return None
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def _options(pairs: Sequence[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep:
            raise OptionError(f"options are written key=value, not '{pair}'")
        out[key.strip()] = value.strip()
    return out


def _system_flag(name: str | None) -> str | None:
    """``--system NAME``: an unknown name is an error about the flag, not about the notation."""
    if name is None:
        return None
    from .systems import get_system

    try:
        return get_system(name).name
    except InputError as exc:
        raise InputError(f"--system {name}: {exc.message}", f"--system {name}",
                         (9, 9 + len(name))) from None


def cmd_roll(args: argparse.Namespace) -> int:
    result = roll(args.text, seed=args.seed, faces=args.faces, options=_options(args.option),
                  default_system=_system_flag(args.system))
    found = None
    if args.luck:
        from .luck import luck

        found = luck(result, odds(args.text, options=_options(args.option),
                                  default_system=_system_flag(args.system)))
    if args.json:
        data = result.to_json()
        if args.luck:
            data["luck"] = found.to_json() if found is not None else None
        print(to_json_text(data))
        return 0
    print(roll_text(result))
    if args.luck:
        print(f"Luck: {found.words()} (P(worse) {100 * found.worse:.1f}%, P(the same) "
              f"{100 * found.same:.1f}%)" if found is not None
              else "Luck: this roll has no ordered value to place in its odds")
    return 0


def cmd_luck(args: argparse.Namespace) -> int:
    from .luck_report import main as luck_main

    return luck_main(args)


def _no_exact_form(dist: Any) -> str | None:
    """Why a distribution has no exact form, or None if it has one."""
    try:
        dist.exact()
    except ValueError as exc:
        return str(exc)
    return None


def _exact_json(result: Any) -> dict[str, Any]:
    """An odds' JSON with exact fractions ("5/36") for its outcomes and distribution (and its
    mean); where only the outcomes are exact (an infinite law), ``exact`` says "outcomes" and
    ``inexact`` says why the distribution is not."""
    from fractions import Fraction

    data: dict[str, Any] = result.to_json()
    data["exact"] = True
    for key, dist in (("outcomes", result.outcomes), ("distribution", result.distribution)):
        if not len(dist):
            continue
        why = _no_exact_form(dist)
        if why is None:
            law = dist.exact()
            data[key] = {str(k): str(p) for k, p in law}
            if key == "distribution" and all(isinstance(k, int) for k, _ in law):
                data["mean"] = str(sum((k * p for k, p in law), Fraction(0)))
        elif key == "distribution" and len(result.outcomes) and data["exact"] is True:
            data["exact"] = "outcomes"
            data["inexact"] = f"{result.value_name}: {why}"
        else:
            raise InputError(f"--exact: {result.input}: {why}")
    return data


def _worded(rows: list[list[Any]]) -> list[list[Any]]:
    """A table for a person: its outcome categories in the game's words (Overwhelming Success,
    not overwhelming_success); data formats keep the keys."""
    from .render import outcome_words

    return [rows[0]] + [[outcome_words(r[0]) if isinstance(r[0], str) else r[0], *r[1:]]
                        for r in rows[1:]]


def cmd_odds(args: argparse.Namespace) -> int:
    system = _system_flag(args.system)
    results = []
    for i, text in enumerate(args.text, 1):
        try:
            results.append(odds(text, options=_options(args.option), default_system=system))
        except InputError as exc:
            if len(args.text) > 1 and not text.strip():  # which of the rolls compared
                raise type(exc)(f"roll {i} of {len(args.text)}: {exc.message}", exc.text,
                                exc.span) from None
            raise
    view = "at_least" if args.at_least else "at_most" if args.at_most else "eq"
    fmt = "json" if args.json else args.format
    if args.outcomes:
        for r in results:
            if not len(r.outcomes):
                raise InputError(f"--outcomes: '{r.input}' has no outcome categories, only "
                                 f"the distribution of its {r.value_name}; leave out "
                                 "--outcomes, or ask a question such as '2d6 >= 8'")
    if args.plot:
        _plot(results, args.plot, view, args.outcomes)
    if fmt == "text" and len(results) == 1 and view == "eq" and not args.outcomes \
            and not args.exact:  # the common case: no chart module (json, html) to import
        print(odds_text(results[0]))
        return 0
    from .render.chart import compare_rows, format_rows

    if fmt == "json":
        data = [_exact_json(r) if args.exact else r.to_json() for r in results]
        print(to_json_text(data[0] if len(data) == 1 else data))
    elif args.exact:
        # an infinite law whose outcomes are exact (CofD's 10-again): the outcomes as fractions
        infinite = [r for r in results if len(r.outcomes) and len(r.distribution)
                    and _no_exact_form(r.distribution) and not _no_exact_form(r.outcomes)]
        # one roll with categories and a value, read by a person: both, as the odds without
        # --exact show them (a contest's Success and its margins)
        both = (len(results) == 1 and view == "eq" and not args.outcomes and not infinite
                and fmt in ("text", "markdown") and len(results[0].outcomes) > 0
                and len(results[0].distribution) > 0)
        try:
            tables = [compare_rows(results, view, True, exact=True)] if both else []
            tables.append(compare_rows(results, view, args.outcomes or bool(infinite),
                                       exact=True))
        except ValueError as exc:
            raise InputError(f"--exact: {exc}") from None
        print("\n\n".join(format_rows(_worded(rows) if fmt in ("text", "markdown") else rows,
                                      fmt) for rows in tables))
        if infinite and not args.outcomes and fmt == "text":
            print(f"(the outcomes are shown: the law of the {infinite[0].value_name} has "
                  f"{_no_exact_form(infinite[0].distribution)})")
    elif fmt == "text" and len(results) == 1 and view == "eq" and not args.outcomes:
        print(odds_text(results[0]))
    elif fmt == "text":
        from .render.chart import terminal_chart

        print(table_text(compare_rows(results, view, args.outcomes)))
        print()
        print(terminal_chart(results, view, args.outcomes))
    else:
        print(format_rows(compare_rows(results, view, args.outcomes, numeric=fmt == "csv"),
                          fmt))
    return 0


def _plot(results: list[Any], path: str, view: str, outcomes: bool) -> None:
    from ._files import check_replaceable
    from .render.chart import png_chart, svg_chart

    if path.lower().endswith((".png", ".svg")):
        check_replaceable(path, "chart file")  # a FIFO would block, a device is no chart
    try:
        if path.lower().endswith(".png"):
            try:
                png_chart(results, path, view, outcomes)
            except ModuleNotFoundError:
                raise InputError("a PNG chart needs matplotlib: pip install 'astragal[plot]' "
                                 "(or write .svg, which needs nothing)") from None
        elif path.lower().endswith(".svg"):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(svg_chart(results, view, outcomes))
        else:
            raise InputError(f"--plot writes .svg or .png files, not '{path}'")
    except OSError as exc:
        raise InputError(f"--plot: cannot write {path}: {exc.strerror or exc}") from None


def cmd_demo(args: argparse.Namespace) -> int:
    text = args.text or DEMO
    print(roll_text(roll(text, seed=args.seed)))
    print()
    print(odds_text(odds(text)))
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from .systems import get_system

    system = get_system(args.system_name.strip().removesuffix(":"))  # as listed: 'jc:'
    tables = getattr(system, "tables", None) or getattr(
        importlib.import_module(type(system).__module__), "TABLES", {})
    name = args.name or (next(iter(tables)) if tables else "")
    if name not in tables:
        known = ", ".join(tables) or "none"
        raise InputError(f"no table '{name}' for {system.title}: tables are {known}")
    rows = tables[name](_options(args.option))
    fmt = "json" if args.json else args.format
    from .render.chart import format_rows

    if fmt == "json":  # {"system", "table", "columns": header, "rows": numbers}
        print(format_rows(rows, "json", {"system": system.name, "table": name}))
    else:
        print(format_rows(rows, fmt, width=terminal_width()))
    return 0


def cmd_systems(args: argparse.Namespace) -> int:
    from .systems import system_names

    for name, aliases in system_names().items():
        print(f"{name}: prefixes {', '.join(f'{a}:' for a in (name, *aliases))}")
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    from .rulebook import readings, rulebook
    from .systems import get_system

    system = get_system(args.system_name.strip().removesuffix(":"))  # as listed: 'jc:'
    book = rulebook(system.name)
    if not book:
        print(f"{system.title}: no rules are registered in the rulebook yet")
        return 0
    print(f"{system.title}: {len(book)} rules (RULES.md)")
    for r in book:
        print(f"  {r.id:<6} {r.statement}  [{r.function.__module__}.{r.function.__name__}]")
    switches = getattr(system, "switches", ())
    if switches:
        print("switches:")
        for sw in switches:
            default = str(sw.default).lower() if isinstance(sw.default, bool) else \
                sw.default if sw.default != "" else '""'
            print(f"  {sw.name}={default}  ({sw.allowed()}; {sw.rule}) {sw.help}")
    taken = readings(system.name)
    if taken:
        print("readings (where the text can be read two ways; RULES.md gives the sentences):")
        for taken_one in taken:
            print(f"  {taken_one.id:<6} {taken_one.text}")
    return 0


def _need_web(what: str) -> None:
    import importlib.util

    for module in ("fastapi", "uvicorn"):
        if importlib.util.find_spec(module) is None:
            raise InputError(f"{what} needs the web extra: pip install 'astragal[web]' "
                             f"({module} is missing)")


def cmd_serve(args: argparse.Namespace) -> int:
    _need_web("the web table")
    server = importlib.import_module("astragal.web.server")
    return int(server.main(args))


def cmd_verify_log(args: argparse.Namespace) -> int:
    import os

    source = str(args.source)
    if args.db is None and (source.lower().endswith(".json") or os.sep in source) \
            and not os.path.exists(source):
        raise InputError(f"verify-log: the file {source} is missing (no such file)")
    if args.db is None and os.path.isfile(source):
        with open(source, "rb") as f:
            database = f.read(16) == b"SQLite format 3\x00"
        if database:  # the table's database itself, not a log exported from it
            raise InputError(f"verify-log: {source} is the table's database, not an exported "
                             f"log: name the room in it, astragal verify-log --db {source} ROOM_ID")
    try:
        log = importlib.import_module("astragal.web.verify")
    except ModuleNotFoundError as exc:
        raise InputError(f"verify-log needs the web extra: pip install 'astragal[web]' "
                         f"({exc.name} is missing)") from None
    return int(log.main(args))


def cmd_fight(args: argparse.Namespace) -> int:
    rest = list(args.rest)
    if len(rest) > 1 and any(w in ("-h", "--help", "help") for w in rest[1:]):
        usage = importlib.import_module("astragal.fight_cli").USAGE
        lines = [ln for ln in usage.splitlines() if ln.startswith(rest[0].lower() + " ")]
        if lines:  # `fight attack --help`: that command's line of the usage
            print(usage.splitlines()[0].replace("COMMAND ...", "") + "\n\n" + "\n".join(lines))
            return 0
    fight = importlib.import_module("astragal.fight_cli")
    return int(fight.fight_main(*_fight_file(rest, args.file)))


def _fight_file(rest: list[str], file: str | None) -> tuple[list[str], str]:
    """``--file PATH`` may also come after the fight command (``fight show --file f.json``), as
    ``--faces`` and ``--seed`` do; given twice it is an error."""
    words: list[str] = []
    given = None
    i = 0
    while i < len(rest):
        w = rest[i]
        if w == "--file" or w.startswith("--file="):
            if w == "--file" and i + 1 >= len(rest):
                raise OptionError("--file needs the fight file's path")
            if given is not None:
                raise OptionError("the fight file is given twice (--file)")
            given = w.partition("=")[2] if "=" in w else rest[i + 1]
            i += 1 if "=" in w else 2
            continue
        words.append(w)
        i += 1
    if given is not None and file is not None:
        raise OptionError("the fight file is given twice (--file)")
    return words, given or file or "fight.json"
