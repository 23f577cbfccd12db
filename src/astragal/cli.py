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
    result = odds(args.text, options=_options(args.option), default_system=args.system)
    print(to_json_text(result.to_json()) if args.json else odds_text(result))
    return 0


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
    if args.json:
        print(to_json_text({"system": system.name, "table": name, "rows": rows}))
    else:
        print(table_text(rows))
    return 0


def _cmd_systems(args: argparse.Namespace) -> int:
    from .systems import system_names

    for name, aliases in system_names().items():
        print(f"{name}: prefixes {', '.join(f'{a}:' for a in (name, *aliases))}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        server = importlib.import_module("astragal.web.server")
    except ModuleNotFoundError as exc:
        raise InputError(f"the web table needs the web extra: pip install 'astragal[web]' "
                         f"({exc.name} is missing)") from None
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to document the CLI)."""
    p = argparse.ArgumentParser(prog="astragal", description="Roll tabletop RPG dice by the "
                                "game's rules, see why, and get the exact odds.")
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

    o = sub.add_parser("odds", help="exact odds of a roll")
    o.add_argument("text")
    o.add_argument("--json", action="store_true")
    common(o)
    o.set_defaults(func=_cmd_odds)

    d = sub.add_parser("demo", help="roll an example and show its odds")
    d.add_argument("text", nargs="?", default=None)
    d.add_argument("--seed", type=int, default=None)
    d.set_defaults(func=_cmd_demo)

    t = sub.add_parser("table", help="GM tables, e.g. 'table jadeclaw levels'")
    t.add_argument("system_name", metavar="SYSTEM")
    t.add_argument("name", nargs="?", default=None, metavar="TABLE")
    t.add_argument("--json", action="store_true")
    t.add_argument("-o", "--option", action="append", metavar="KEY=VALUE")
    t.set_defaults(func=_cmd_table)

    s = sub.add_parser("systems", help="list the games and their prefixes")
    s.set_defaults(func=_cmd_systems)

    sv = sub.add_parser("serve", help="start the web table (needs the web extra)")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8000)
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; exit 0 on success, 2 on an input error (message on stderr)."""
    parser = build_parser()
    args = parser.parse_args(argv)
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
