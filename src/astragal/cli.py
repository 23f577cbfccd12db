"""The ``astragal`` command line: its words read by argparse, each command run by
``cli_commands``. The only place (with the web app) that prints or exits.

argparse, not typer: the CLI must start faster than a script that imports the peer library, and
the standard library's parser costs nothing to import.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ._digits import digits, signed
from ._errors import AstragalError, InputError, visible
from .cli_commands import (
    DEMO,
    _options,
    _system_flag,
    cmd_demo,
    cmd_fight,
    cmd_luck,
    cmd_odds,
    cmd_roll,
    cmd_rules,
    cmd_serve,
    cmd_systems,
    cmd_table,
    cmd_verify_log,
    terminal_width,
)

__all__ = ["DEMO", "build_parser", "main", "terminal_width"]


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


def _seed(text: str) -> int:
    """A seed: a whole number in ASCII digits (argparse's ``int`` also reads '٣' and '１')."""
    seed = signed(text)
    if seed is None:
        raise argparse.ArgumentTypeError(f"'{text}' is not a seed: give a whole number")
    return seed


def _port(text: str) -> int:
    """A TCP port number (argparse exits 2 with this message otherwise)."""
    if not digits(text.strip()) or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"'{text}' is not a port: give a whole number from 1 "
                                         "to 65535")
    return int(text)


def _network(text: str) -> str:
    """An IP address or network (argparse exits 2 with this message otherwise)."""
    import ipaddress

    try:
        return str(ipaddress.ip_network(text.strip(), strict=False))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an IP address or network: give one "
                                         "such as 127.0.0.1, ::1 or 10.0.0.0/8") from None


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
    r.add_argument("--seed", type=_seed, default=None, help="reproducible random faces")
    r.add_argument("--faces", default=None,
                   help="faces as rolled, actor then opposition: '7,2 / 3,4'")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.add_argument("--luck", action="store_true",
                   help="where the roll fell in its own exact odds ('better than 87%% of rolls')")
    common(r)
    r.set_defaults(func=cmd_roll)

    lk = sub.add_parser("luck", help="a luck report from a room's export: per member and "
                        "session, and a test of fair dice")
    lk.add_argument("export", help="an exported JSON log (the room's Export JSON)")
    lk.add_argument("--json", action="store_true", help="machine-readable output")
    lk.add_argument("--seed", type=_seed, default=0,
                    help="the seed of the randomised percentiles (the report is reproducible)")
    lk.add_argument("--plot", default=None, metavar="FILE.svg",
                    help="also draw each member's histogram of percentiles (SVG)")
    lk.set_defaults(func=cmd_luck)

    o = sub.add_parser("odds", help="exact odds of one roll, or several side by side")
    o.add_argument("text", nargs="+", help="one or more rolls, any systems")
    o.add_argument("--json", action="store_true", help="same as --format json")
    o.add_argument("--format", choices=("text", "markdown", "csv", "json"), default="text",
                   help="text (default), markdown, or data: csv and json carry numbers "
                   "(probabilities as fractions of 1)")
    o.add_argument("--exact", action="store_true",
                   help="exact fractions (\"5/36\") where the law is finite and rational")
    view = o.add_mutually_exclusive_group()  # one view of the values at a time
    view.add_argument("--at-least", action="store_true", help="compare P(value or more)")
    view.add_argument("--at-most", action="store_true", help="compare P(value or less)")
    o.add_argument("--outcomes", action="store_true",
                   help="compare the outcome categories instead of the values")
    o.add_argument("--plot", metavar="FILE", help="also write a chart: FILE.svg or FILE.png")
    common(o)
    o.set_defaults(func=cmd_odds)

    d = sub.add_parser("demo", help="roll an example and show its odds",
                       description="Roll an example, explain every die, and print its exact "
                       "odds.")
    d.add_argument("text", nargs="?", default=None,
                   help=f"the roll to show (default: '{DEMO}')")
    d.add_argument("--seed", type=_seed, default=None, help="reproducible random faces")
    d.set_defaults(func=cmd_demo)

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
    t.set_defaults(func=cmd_table)

    s = sub.add_parser("systems", help="list the games and their prefixes")
    s.set_defaults(func=cmd_systems)

    rb = sub.add_parser("rules", help="a game's rulebook: each rule's ID, statement and switch",
                        description="List the rules a game implements, each under its ID in "
                                    "RULES.md, and its house-rule switches.")
    rb.add_argument("system_name", metavar="SYSTEM", help="a game's name or prefix, e.g. cofd")
    rb.set_defaults(func=cmd_rules)

    sv = sub.add_parser("serve", help="start the web table (needs the web extra)",
                        description="Start the web table: rooms, live rolls and odds.")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default: "
                    "127.0.0.1, this machine only)")
    sv.add_argument("--port", type=_port, default=8000, help="TCP port, 1-65535 (default 8000)")
    sv.add_argument("--db", default=None, help="sqlite file path or postgresql://… URL")
    sv.add_argument("--allow-origin", action="append", metavar="ORIGIN", default=[],
                    help="another site whose pages may open the live connection, such as "
                    "https://table.example.org (repeat for more; the table's own pages always "
                    "may)")
    sv.add_argument("--trusted-proxy", action="append", default=[], type=_network,
                    metavar="ADDRESS", help="a reverse proxy (an IP address or a network such as "
                    "10.0.0.0/8) whose X-Forwarded-For and X-Forwarded-Proto name the real "
                    "client; repeat for several (default: none, every header of that kind is "
                    "ignored)")
    sv.set_defaults(func=cmd_serve)

    vl = sub.add_parser("verify-log", help="check a room log's hash chain, signatures, receipts")
    vl.add_argument("source", help="an exported JSON log file, or a room id with --db")
    vl.add_argument("--db", default=None,
                    help="the database holding the room (sqlite file or postgresql:// URL)")
    vl.add_argument("--key", default=None, help="the table's public key (64 hex digits, shown "
                    "in the room), or a file holding it")
    vl.add_argument("--receipts", default=None, metavar="FILE",
                    help="a player's receipts (downloaded from the room): the log must match")
    vl.set_defaults(func=cmd_verify_log)

    f = sub.add_parser("fight", help="run an attack-table fight: new, add, attack, show",
                       description="A combat tracker for the d6 attack table, kept in a file. "
                       "'astragal fight COMMAND --help' describes one command.",
                       epilog="commands: new, add, set, remove, attack, odds, pass, heal, "
                       "spend, option, show, log")
    f.add_argument("--file", default=None, help="the fight file (JSON; default fight.json)")
    f.add_argument("rest", nargs=argparse.REMAINDER, metavar="COMMAND ...",
                   help="the fight command and its words")
    f.set_defaults(func=cmd_fight)
    return p


_NOTATION_COMMANDS = ("roll", "odds", "demo")


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command (``roll``, ``odds``…)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def _fudge_faces(args: argparse.Namespace) -> None:
    """``--faces -1,0,+1``: a roll of Fudge dice alone may have its faces typed as they show
    (systems/dice/faces.py); every other roll types faces by position, as the API does."""
    if getattr(args, "faces", None) is None or isinstance(args.text, list):
        return
    from . import parse
    from .systems.dice import Expression, Rolls
    from .systems.dice.faces import fudge_positions

    try:
        spec = parse(args.text, options=_options(args.option),
                     default_system=_system_flag(args.system))
    except InputError:
        return  # the roll itself says what is wrong with the text
    if isinstance(spec.spec, (Expression, Rolls)):
        args.faces = fudge_positions(spec.spec, args.faces)


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
        if takes_value:  # joined to its option, so a value such as -1,0,1 is not an option
            out[-1] = f"{out[-1]}={word}" if word.startswith("-") else out[-1]
            if not word.startswith("-"):
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
        _fudge_faces(args)
        return int(args.func(args))
    except InputError as exc:
        print(f"astragal: error\n{exc.pretty()}", file=sys.stderr)
        return 2
    except AstragalError as exc:
        print(f"astragal: error: {visible(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a path the user gave, that no command had its own words for
        if exc.filename is None:
            raise
        print(f"astragal: error: cannot read {exc.filename!r}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
