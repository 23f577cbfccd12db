"""``astragal fight``: the attack-table fight tracker on a JSON file (the CLI's file and printing).

Every command reads the file, checks everything, changes a copy and writes it back atomically (a
temporary file, then ``os.replace``), so an error or a crash never leaves a half-written fight:
it is all of the turn or none of it. Changes hold the file's lock, so commands run at once queue
up. The fight itself (combatants, commands, rules) is ``systems/attack/fight.py``.

The commands are listed once, in ``USAGE`` below, which ``astragal fight`` prints.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from .systems.attack.fight import (
    TABLE_KEYS,
    TABLE_SWITCHES,
    Args,
    FightError,
    apply,
    check_fight,
    fight_rules,
    new_fight,
    odds_command,
    states,
)
from .systems.attack.notation import Defender
from .systems.attack.rules import DEFAULTS

__all__ = ["USAGE", "fight_main", "load", "locked", "save"]

USAGE = """usage: astragal fight [--file fight.json] COMMAND ...

new [force] [KEY=VALUE ...] [table=PATH] [critical_table=PATH]
add NAME KEY=VALUE ...            attack weapon class throw crit armor shield parry
                                  luck heal ammo hp (dodge = parry)
set NAME KEY=VALUE ...            the same keys, plus damage and stunned
remove NAME
attack A B [berserk|defensive] [throw] [luck=N] [ammo=N] [--faces F | --seed N] [--json]
odds A B [berserk|defensive] [throw] [luck=N]
pass NAME                         a turn without attacking (last turn's stance ends)
heal NAME [N]                     spend N Heal (default 1): N damage healed
spend NAME luck|heal|ammo [N]     spend a counter outside an attack
option KEY=VALUE ...              change a house rule (or table=PATH) mid-fight
show [--json]    log [--json]
"""
MAX_FIGHT_FILE = 16 * 1024 * 1024  # bytes: a long fight's log is well under 1 MiB


# ------------------------------------------------------------------------------------------------
# The file


def load(path: str) -> dict[str, Any]:
    """Read and check a fight file (a regular file of at most ``MAX_FIGHT_FILE`` bytes)."""
    from ._files import read_text

    try:
        data = json.loads(read_text(path, "fight file", MAX_FIGHT_FILE, FightError))
    except FileNotFoundError:
        raise FightError(f"no fight file {path}: start one with 'astragal fight new'") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        why = str(exc) if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise FightError(f"the fight file {path} is not valid JSON ({why}); it was not changed "
                         "by astragal, which writes it whole or not at all") from None
    return check_fight(data, path)


def save(path: str, data: dict[str, Any]) -> None:
    """Write the fight atomically: a temporary file in the same folder, then ``os.replace``."""
    from ._files import check_replaceable

    check_replaceable(path, "fight file", FightError)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        mode = 0o644
    try:
        fd, tmp = tempfile.mkstemp(prefix=".fight-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise FightError(f"cannot write the fight file {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise FightError(f"cannot write the fight file {path}: {exc.strerror or exc}; it "
                             "is unchanged") from None
        raise


@contextlib.contextmanager
def locked(path: str) -> Iterator[None]:
    """Hold an exclusive lock on the fight file for one read-change-write, across processes.

    ``save`` replaces the file (a new inode), so a process that waited for the lock may hold it
    on the old file: it checks that the path still names the file it locked, and locks again if
    not. Commands that only read need no lock (a replace is atomic). Where ``fcntl`` is missing
    (Windows) nothing is locked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    from ._files import check_replaceable

    check_replaceable(path, "fight file", FightError)
    while True:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            raise FightError(f"no fight file {path}: start one with 'astragal fight new'") from None
        except OSError as exc:
            raise FightError(f"cannot read the fight file {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                yield
                return
        finally:
            os.close(fd)  # closing releases the lock


def _cmd_new(path: str, args: Args) -> str:
    force = False
    for w in args.words:
        if w.lower() in ("force", "--force"):
            force = True
        else:
            raise FightError(f"'new' takes house rules (key=value) and 'force', not '{w}'")
    if os.path.exists(path) and not force:
        raise FightError(f"{path} already exists: 'astragal fight new force' replaces it, or "
                         "use --file for another fight")
    data, said = new_fight([f"{k}={v}" for k, v in args.pairs.items()], args.tables)
    save(path, data)
    return f"New fight in {path}" + (f" ({'; '.join(said)})" if said else "") + \
        ". Add combatants: astragal fight add NAME atk=4 wpn=3 armor=2 shield=1 parry=2"


def _cmd_show(path: str, data: dict[str, Any], args: Args) -> str:
    from .render import table_text, to_json_text

    if args.json:
        return to_json_text(data)
    rules = fight_rules(data)
    lines = [f"Fight {path}: turn {data['turn']}, {len(data['combatants'])} combatant(s)"]
    changed = {k: v for k, v in data["options"].items() if v != DEFAULTS[k]}
    if changed or data.get("attack_table") or data.get("critical_damage_table"):
        lines.append("House rules: " + ", ".join(
            [f"{k}={v}" for k, v in changed.items()]
            + (["own attack table"] if data.get("attack_table") else [])
            + (["own Critical Damage Table"] if data.get("critical_damage_table") else [])))
    if not data["combatants"]:
        lines.append("No combatants yet: astragal fight add NAME atk=4 wpn=3 armor=2 …")
        return "\n".join(lines)
    rows = [["Name", "ATK", "WPN", "Class", "Throw", "Crit", "ARMOR", "SHIELD", "PARRY",
             "Luck", "Heal", "Ammo", "Damage", "Defends with", "State"]]
    for c in data["combatants"]:
        d = Defender(armor=c["armor"], shield=c["shield"], parry=c["parry"], states=states(c))
        n = d.dice_rolled(rules.threw_last_turn_defense)
        state = (["stunned"] if c["stunned"] else []) + \
            [f"{f} last turn" for f in c["last_turn"]]
        if c["hp"] is not None and c["damage"] >= c["hp"]:
            state.insert(0, "down")
        damage = str(c["damage"]) + (f"/{c['hp']}" if c["hp"] is not None else "")
        rows.append([c["name"], str(c["attack"]), str(c["weapon"]), c["class"] or "-",
                     f"+{c['throw_bonus']}", f"{c['crit_bonus']:+d}", str(c["armor"]),
                     str(c["shield"]), str(c["parry"]), str(c["luck"]), str(c["heal"]),
                     "-" if c["ammo"] is None else str(c["ammo"]), damage,
                     f"{n}d6 ({' + '.join(d.pools(rules.threw_last_turn_defense))})",
                     ", ".join(state) or "-"])
    from .cli import terminal_width

    lines.append(table_text(rows, terminal_width()))
    crits = [(c["name"], k) for c in data["combatants"] for k in c["criticals"]]
    for name, k in crits:
        lines.append(f"  {name}: Critical (turn {k['turn']}, from {k['from']}): total "
                     f"{k['total']}" + (f" — {k['result']}" if k.get("result") else ""))
    return "\n".join(lines)


def _cmd_log(data: dict[str, Any], args: Args) -> str:
    from .render import to_json_text

    if args.json:
        return to_json_text(data["log"])
    out = []
    for e in data["log"]:
        what = e["action"]
        if what == "attack":
            out.append(f"{e['turn']:>4}  {e['attacker']} → {e['defender']}: {e['outcome']}, "
                       f"{e['damage']} damage{', stun' if e['stun'] else ''}   "
                       f"[{e['notation']} --faces \"{e['faces']}\"]")
        else:
            rest = {k: v for k, v in e.items() if k not in ("turn", "action")}
            out.append(f"{e['turn']:>4}  {what} " + " ".join(f"{k}={v}" for k, v in rest.items()))
    return "\n".join(out) or "The log is empty."


def fight_main(rest: list[str], file: str) -> int:
    """Run one ``astragal fight`` command on the fight file; prints the result, returns 0.

    User errors raise ``FightError`` (an ``InputError``), and the file is then left unchanged.
    """
    if not rest or rest[0].lower() in ("help", "-h", "--help"):
        print(USAGE)
        return 0
    command, args = rest[0].lower(), Args(rest[1:])
    if command in ("new", "option"):
        _read_tables(args)
    if command == "new":
        args.no_source("new")
        print(_cmd_new(file, args))
        return 0
    read_only: dict[str, Callable[[dict[str, Any], Args], str]] = {
        "odds": odds_command, "log": _cmd_log}
    if command == "show" or command in read_only:
        return _read_only(command, file, args, read_only)
    # Every change is read, made and written under the file's lock: twenty commands run at
    # once queue up, and none overwrites another's turn.
    with locked(file):
        return _change(command, file, args)


def _read_tables(args: Args) -> None:
    """The table files a command names (``table=PATH``, ``critical_table=PATH``), read here: the
    fight keeps each table as data, so the game never opens a file."""
    from ._files import read_json
    from .switches import no_table

    for key, value in args.pairs.items():
        if key in TABLE_KEYS and not no_table(value):
            what = TABLE_SWITCHES[TABLE_KEYS[key]].file
            args.tables[key] = read_json(value, what, FightError)


def _read_only(command: str, file: str, args: Args,
               read_only: dict[str, Callable[[dict[str, Any], Args], str]]) -> int:
    data = load(file)
    work = copy.deepcopy(data)
    if command == "show":
        args.no_pairs("show")
        args.no_source("show")
        print(_cmd_show(file, data, args))
        return 0
    print(read_only[command](work, args))
    return 0


def _change(command: str, file: str, args: Args) -> int:
    work = load(file)
    message, as_json = apply(work, command, args)
    save(file, work)
    if as_json is not None and args.json:
        from .render import to_json_text

        print(to_json_text(as_json))
    else:
        print(message)
    return 0
