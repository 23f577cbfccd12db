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


def _options(pairs: Sequence[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep:
            raise OptionError(f"options are written key=value, not '{pair}'")
        out[key.strip()] = value.strip()
    return out


def _cmd_roll(args: argparse.Namespace) -> int:
    result = roll(args.text, seed=args.seed, faces=args.faces, options=_options(args.option),
                  default_system=args.system)
    print(to_json_text(result.to_json()) if args.json else roll_text(result))
    return 0


def _cmd_odds(args: argparse.Namespace) -> int:
    results = [odds(t, options=_options(args.option), default_system=args.system)
               for t in args.text]
    view = "at_least" if args.at_least else "at_most" if args.at_most else "eq"
    fmt = "json" if args.json else args.format
    if args.plot:
        _plot(results, args.plot, view, args.outcomes)
    if fmt == "json":
        data = [r.to_json() for r in results]
        print(to_json_text(data[0] if len(data) == 1 else data))
    elif fmt == "text" and len(results) == 1 and view == "eq" and not args.outcomes:
        print(odds_text(results[0]))
    elif fmt == "text":
        from .render.chart import compare_rows, terminal_chart

        print(table_text(compare_rows(results, view, args.outcomes)))
        print()
        print(terminal_chart(results, view, args.outcomes))
    else:
        from .render.chart import compare_rows, format_rows

        print(format_rows(compare_rows(results, view, args.outcomes), fmt))
    return 0


def _plot(results: list[Any], path: str, view: str, outcomes: bool) -> None:
    from ._files import check_replaceable
    from .render.chart import png_chart, svg_chart

    if path.lower().endswith((".png", ".svg")):
        check_replaceable(path, "chart file")  # a FIFO would block, a device is no chart
    if path.lower().endswith(".png"):
        try:
            png_chart(results, path, view, outcomes)
        except ModuleNotFoundError:
            raise InputError("a PNG chart needs matplotlib: pip install 'astragal[plot]' "
                             "(or write .svg, which needs nothing)") from None
    elif path.lower().endswith(".svg"):
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(svg_chart(results, view, outcomes))
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror}") from None
    else:
        raise InputError(f"--plot writes .svg or .png files, not '{path}'")


def _cmd_demo(args: argparse.Namespace) -> int:
    text = args.text or DEMO
    print(roll_text(roll(text, seed=args.seed)))
    print()
    print(odds_text(odds(text)))
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    from .systems import get_system

    system = get_system(args.system_name)
    tables = getattr(importlib.import_module(type(system).__module__), "TABLES", {})
    name = args.name or (next(iter(tables)) if tables else "")
    if name not in tables:
        known = ", ".join(tables) or "none"
        raise InputError(f"no table '{name}' for {system.title}: tables are {known}")
    rows = tables[name](_options(args.option))
    fmt = "json" if args.json else args.format
    if fmt == "json":
        print(to_json_text({"system": system.name, "table": name, "rows": rows}))
    else:
        from .render.chart import format_rows

        print(format_rows(rows, fmt))
    return 0


def _cmd_systems(args: argparse.Namespace) -> int:
    from .systems import system_names

    for name, aliases in system_names().items():
        print(f"{name}: prefixes {', '.join(f'{a}:' for a in (name, *aliases))}")
    return 0


def _need_web(what: str) -> None:
    import importlib.util

    for module in ("fastapi", "uvicorn"):
        if importlib.util.find_spec(module) is None:
            raise InputError(f"{what} needs the web extra: pip install 'astragal[web]' "
                             f"({module} is missing)")


def _cmd_serve(args: argparse.Namespace) -> int:
    _need_web("the web table")
    server = importlib.import_module("astragal.web.server")
    return int(server.main(args))


def _cmd_verify_log(args: argparse.Namespace) -> int:
    try:
        log = importlib.import_module("astragal.web.verify")
    except ModuleNotFoundError as exc:
        raise InputError(f"verify-log needs the web extra: pip install 'astragal[web]' "
                         f"({exc.name} is missing)") from None
    return int(log.main(args))


def _cmd_fight(args: argparse.Namespace) -> int:
    fight = importlib.import_module("astragal.systems.attack")
    return int(fight.fight_main(list(args.rest), args.file))


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
        sp.add_argument("--system", default=None, help="system for text without a prefix")

    r = sub.add_parser("roll", help="roll dice and explain the result")
    r.add_argument("text", help="the roll, e.g. 'jc: d12 d8 vs 2d10'")
    r.add_argument("--seed", type=int, default=None, help="reproducible random faces")
    r.add_argument("--faces", default=None,
                   help="faces as rolled, actor then opposition: '7,2 / 3,4'")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    common(r)
    r.set_defaults(func=_cmd_roll)

    o = sub.add_parser("odds", help="exact odds of one roll, or several side by side")
    o.add_argument("text", nargs="+", help="one or more rolls, any systems")
    o.add_argument("--json", action="store_true", help="same as --format json")
    o.add_argument("--format", choices=("text", "markdown", "csv", "json"), default="text")
    o.add_argument("--at-least", action="store_true", help="compare P(value or more)")
    o.add_argument("--at-most", action="store_true", help="compare P(value or less)")
    o.add_argument("--outcomes", action="store_true",
                   help="compare the outcome categories instead of the values")
    o.add_argument("--plot", metavar="FILE", help="also write a chart: FILE.svg or FILE.png")
    common(o)
    o.set_defaults(func=_cmd_odds)

    d = sub.add_parser("demo", help="roll an example and show its odds")
    d.add_argument("text", nargs="?", default=None)
    d.add_argument("--seed", type=int, default=None)
    d.set_defaults(func=_cmd_demo)

    t = sub.add_parser("table", help="GM tables, e.g. 'table jadeclaw levels'")
    t.add_argument("system_name", metavar="SYSTEM")
    t.add_argument("name", nargs="?", default=None, metavar="TABLE")
    t.add_argument("--json", action="store_true", help="same as --format json")
    t.add_argument("--format", choices=("text", "markdown", "csv", "json"), default="text")
    t.add_argument("-o", "--option", action="append", metavar="KEY=VALUE")
    t.set_defaults(func=_cmd_table)

    s = sub.add_parser("systems", help="list the games and their prefixes")
    s.set_defaults(func=_cmd_systems)

    sv = sub.add_parser("serve", help="start the web table (needs the web extra)")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=_port, default=8000, help="TCP port, 1-65535 (default 8000)")
    sv.add_argument("--db", default=None, help="sqlite file path or postgresql://… URL")
    sv.set_defaults(func=_cmd_serve)

    vl = sub.add_parser("verify-log", help="check a room log's hash chain")
    vl.add_argument("source", help="an exported JSON log file, or a room id with --db")
    vl.add_argument("--db", default=None)
    vl.set_defaults(func=_cmd_verify_log)

    f = sub.add_parser("fight", help="run an attack-table fight: new, add, attack, show")
    f.add_argument("--file", default="fight.json", help="the fight file (JSON)")
    f.add_argument("rest", nargs=argparse.REMAINDER)
    f.set_defaults(func=_cmd_fight)
    return p


_NOTATION_COMMANDS = ("roll", "odds", "demo")


def _protect_notation(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``astragal roll "-d6"``: a roll that starts with a minus is notation, not an option.

    argparse reads every word that starts with ``-`` as an option, so such a word (one that is
    none of the command's options) is marked with a leading space, which argparse leaves alone
    and the notation reader skips; ``--`` before it works too.
    """
    if not argv or argv[0] not in _NOTATION_COMMANDS:
        return argv
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    known = sub.choices[argv[0]]._option_string_actions
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
        elif word.startswith("-") and len(word) > 1:
            out.append(" " + word)
        else:
            out.append(word)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; exit 0 on success, 2 on an input error (message on stderr)."""
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(_protect_notation(parser, words))
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
