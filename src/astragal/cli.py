"""The ``astragal`` command line. The only place (with the web app) that prints or exits.

argparse, not typer: the CLI must start faster than a script that imports the peer library, and
the standard library's parser costs nothing to import.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from . import odds, roll
from ._errors import AstragalError, InputError, OptionError
from .render import odds_text, roll_text, table_text, to_json_text

DEMO = "jc: L7 +1b fav vs L8 q=expert:expert"


def _tables_help() -> str:
    """Every game's tables, for ``astragal table --help`` (imports the games: only then)."""
    from .systems import get_system, system_names

    out = []
    for name in system_names():
        system = get_system(name)
        tables = getattr(system, "tables", None) or getattr(
            importlib.import_module(type(system).__module__), "TABLES", {})
        if tables:
            out.append(f"{name}: {', '.join(tables)}")
    return "tables: " + "; ".join(out)


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


def _cmd_roll(args: argparse.Namespace) -> int:
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


def _cmd_luck(args: argparse.Namespace) -> int:
    from .luck_report import main as luck_main

    return luck_main(args)


def _exact_json(result: Any) -> dict[str, Any]:
    """An odds' JSON with exact fractions ("5/36") for its outcomes and distribution."""
    data: dict[str, Any] = result.to_json()
    for key, dist in (("outcomes", result.outcomes), ("distribution", result.distribution)):
        if len(dist):
            try:
                data[key] = {str(k): str(p) for k, p in dist.exact()}
            except ValueError as exc:
                raise InputError(f"--exact: {result.input}: {exc}") from None
    data["exact"] = True
    return data


def _cmd_odds(args: argparse.Namespace) -> int:
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
        try:
            rows = compare_rows(results, view, args.outcomes, exact=True)
        except ValueError as exc:
            raise InputError(f"--exact: {exc}") from None
        print(format_rows(rows, fmt))
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
                raise InputError("a PNG chart needs matplotlib: pip install '.[plot]' "
                                 "(or write .svg, which needs nothing)") from None
        elif path.lower().endswith(".svg"):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(svg_chart(results, view, outcomes))
        else:
            raise InputError(f"--plot writes .svg or .png files, not '{path}'")
    except OSError as exc:
        raise InputError(f"--plot: cannot write {path}: {exc.strerror or exc}") from None


def _cmd_demo(args: argparse.Namespace) -> int:
    text = args.text or DEMO
    print(roll_text(roll(text, seed=args.seed)))
    print()
    print(odds_text(odds(text)))
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    from .systems import get_system

    system = get_system(args.system_name)
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


def _cmd_systems(args: argparse.Namespace) -> int:
    from .systems import system_names

    for name, aliases in system_names().items():
        print(f"{name}: prefixes {', '.join(f'{a}:' for a in (name, *aliases))}")
    return 0


def _cmd_rules(args: argparse.Namespace) -> int:
    from .rulebook import rulebook
    from .systems import get_system

    system = get_system(args.system_name)
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
    return 0


def _need_web(what: str) -> None:
    import importlib.util

    for module in ("fastapi", "uvicorn"):
        if importlib.util.find_spec(module) is None:
            raise InputError(f"{what} needs the web extra: pip install '.[web]' "
                             f"({module} is missing)")


def _cmd_serve(args: argparse.Namespace) -> int:
    _need_web("the web table")
    server = importlib.import_module("astragal.web.server")
    return int(server.main(args))


def _cmd_verify_log(args: argparse.Namespace) -> int:
    import os

    source = str(args.source)
    if args.db is None and (source.lower().endswith(".json") or os.sep in source) \
            and not os.path.exists(source):
        raise InputError(f"verify-log: the file {source} is missing (no such file)")
    try:
        log = importlib.import_module("astragal.web.verify")
    except ModuleNotFoundError as exc:
        raise InputError(f"verify-log needs the web extra: pip install '.[web]' "
                         f"({exc.name} is missing)") from None
    return int(log.main(args))


def _cmd_fight(args: argparse.Namespace) -> int:
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


def _port(text: str) -> int:
    """A TCP port number (argparse exits 2 with this message otherwise)."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"'{text}' is not a port: give a whole number from 1 "
                                         "to 65535")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to document the CLI)."""
    p = argparse.ArgumentParser(prog="astragal", description="Roll tabletop RPG dice by the "
                                "game's rules, see why, and get the exact odds.")
    from . import __version__

    p.add_argument("--version", action="version", version=f"astragal {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                        help="a house-rule switch, e.g. -o double_botch=both_botch")
        sp.add_argument("--system", default=None, metavar="NAME",
                        help="the system for text without a prefix (astragal systems "
                        "lists them; default: the general dice notation)")

    r = sub.add_parser("roll", help="roll dice and explain the result")
    r.add_argument("text", help="the roll, e.g. 'jc: d12 d8 vs 2d10'")
    r.add_argument("--seed", type=int, default=None, help="reproducible random faces")
    r.add_argument("--faces", default=None,
                   help="faces as rolled, actor then opposition: '7,2 / 3,4'")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.add_argument("--luck", action="store_true",
                   help="where the roll fell in its own exact odds ('better than 87%% of rolls')")
    common(r)
    r.set_defaults(func=_cmd_roll)

    lk = sub.add_parser("luck", help="a luck report from a room's export: per member and "
                        "session, and a test of fair dice")
    lk.add_argument("export", help="an exported JSON log (the room's Export JSON)")
    lk.add_argument("--json", action="store_true", help="machine-readable output")
    lk.add_argument("--seed", type=int, default=0,
                    help="the seed of the randomised percentiles (the report is reproducible)")
    lk.add_argument("--plot", default=None, metavar="FILE.svg",
                    help="also draw each member's histogram of percentiles (SVG)")
    lk.set_defaults(func=_cmd_luck)

    o = sub.add_parser("odds", help="exact odds of one roll, or several side by side")
    o.add_argument("text", nargs="+", help="one or more rolls, any systems")
    o.add_argument("--json", action="store_true", help="same as --format json")
    o.add_argument("--format", choices=("text", "markdown", "csv", "json"), default="text",
                   help="text (default), markdown, or data: csv and json carry numbers "
                   "(probabilities as fractions of 1)")
    o.add_argument("--exact", action="store_true",
                   help="exact fractions (\"5/36\") where the law is finite and rational")
    o.add_argument("--at-least", action="store_true", help="compare P(value or more)")
    o.add_argument("--at-most", action="store_true", help="compare P(value or less)")
    o.add_argument("--outcomes", action="store_true",
                   help="compare the outcome categories instead of the values")
    o.add_argument("--plot", metavar="FILE", help="also write a chart: FILE.svg or FILE.png")
    common(o)
    o.set_defaults(func=_cmd_odds)

    d = sub.add_parser("demo", help="roll an example and show its odds",
                       description="Roll an example, explain every die, and print its exact "
                       "odds.")
    d.add_argument("text", nargs="?", default=None,
                   help=f"the roll to show (default: '{DEMO}')")
    d.add_argument("--seed", type=int, default=None, help="reproducible random faces")
    d.set_defaults(func=_cmd_demo)

    t = sub.add_parser("table", help="GM tables, e.g. 'table jadeclaw levels'",
                       description="A game's tables, computed exactly.")
    t.add_argument("system_name", metavar="SYSTEM", help="the game (a name or a prefix)")
    t.add_argument("name", nargs="?", default=None, metavar="TABLE",
                   help="which table (default: the game's first)")
    t.add_argument("--json", action="store_true", help="same as --format json")
    t.add_argument("--format", choices=("text", "markdown", "csv", "json"), default="text",
                   help="text (default), markdown, or data: csv and json carry numbers")
    t.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                   help="a house-rule switch the table is computed under")
    t.set_defaults(func=_cmd_table)

    s = sub.add_parser("systems", help="list the games and their prefixes")
    s.set_defaults(func=_cmd_systems)

    rb = sub.add_parser("rules", help="a game's rulebook: each rule's ID, statement and switch",
                        description="List the rules a game implements, each under its ID in "
                                    "RULES.md, and its house-rule switches.")
    rb.add_argument("system_name", metavar="SYSTEM", help="a game's name or prefix, e.g. cofd")
    rb.set_defaults(func=_cmd_rules)

    sv = sub.add_parser("serve", help="start the web table (needs the web extra)",
                        description="Start the web table: rooms, live rolls and odds.")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default: "
                    "127.0.0.1, this machine only)")
    sv.add_argument("--port", type=_port, default=8000, help="TCP port, 1-65535 (default 8000)")
    sv.add_argument("--db", default=None, help="sqlite file path or postgresql://… URL")
    sv.set_defaults(func=_cmd_serve)

    vl = sub.add_parser("verify-log", help="check a room log's hash chain, signatures, receipts")
    vl.add_argument("source", help="an exported JSON log file, or a room id with --db")
    vl.add_argument("--db", default=None,
                    help="the database holding the room (sqlite file or postgresql:// URL)")
    vl.add_argument("--key", default=None, help="the table's public key (64 hex digits, shown "
                    "in the room), or a file holding it")
    vl.add_argument("--receipts", default=None, metavar="FILE",
                    help="a player's receipts (downloaded from the room): the log must match")
    vl.set_defaults(func=_cmd_verify_log)

    f = sub.add_parser("fight", help="run an attack-table fight: new, add, attack, show",
                       description="A combat tracker for the d6 attack table, kept in a file. "
                       "'astragal fight COMMAND --help' describes one command.",
                       epilog="commands: new, add, set, remove, attack, odds, pass, heal, "
                       "spend, option, show, log")
    f.add_argument("--file", default=None, help="the fight file (JSON; default fight.json)")
    f.add_argument("rest", nargs=argparse.REMAINDER, metavar="COMMAND ...",
                   help="the fight command and its words")
    f.set_defaults(func=_cmd_fight)
    return p


_NOTATION_COMMANDS = ("roll", "odds", "demo")


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command (``roll``, ``odds``…)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def _protect_notation(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``astragal roll "-d6"``: a roll that starts with a minus is notation, not an option.

    argparse reads every word that starts with ``-`` as an option, so such a word (one that is
    none of the command's options) is marked with a leading space, which argparse leaves alone
    and the notation reader skips; ``--`` before it works too.
    """
    if not argv or argv[0] not in _NOTATION_COMMANDS:
        return argv
    known = _commands(parser)[argv[0]]._option_string_actions
    out = [argv[0]]
    takes_value = False
    for i, word in enumerate(argv[1:], 1):
        if word == "--":
            out += argv[i:]
            break
        if takes_value:
            out.append(word)
            takes_value = False
            continue
        name = word.split("=", 1)[0]
        action = known.get(name) or (known.get(word[:2]) if word[:2] in known and
                                     not word.startswith("--") else None)
        if action is not None:
            takes_value = action.nargs != 0 and "=" not in word and (
                len(word) == 2 or word.startswith("--"))
            out.append(word)
        elif word.startswith("-") and len(word) > 1 and not (
                word.startswith("--") and word[2:3].isalpha()):  # --bogus: an unknown option
            out.append(" " + word)
        else:
            out.append(word)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; exit 0 on success, 2 on an input error (message on stderr)."""
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["table"] and ("-h" in words or "--help" in words):
        _commands(parser)["table"].epilog = _tables_help()
    args, extra = parser.parse_known_args(_protect_notation(parser, words))
    if extra:  # said with the command's own usage (`astragal roll 4d6 --bogus`)
        command = _commands(parser).get(getattr(args, "command", None) or words[0]) \
            if words else None
        (command or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    text = getattr(args, "text", None)  # take the marks _protect_notation put back off
    if isinstance(text, str) and text.startswith(" -"):
        args.text = text[1:]
    elif isinstance(text, list):
        args.text = [t[1:] if t.startswith(" -") else t for t in text]
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args))
    except InputError as exc:
        print(f"astragal: error\n{exc.pretty()}", file=sys.stderr)
        return 2
    except AstragalError as exc:
        print(f"astragal: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
