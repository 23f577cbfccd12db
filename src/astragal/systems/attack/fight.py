"""The combat tracker's fight: combatants, their counters, and the commands that change them.

The defence rules look at last turn (A12, A20), so a fight has state: each combatant's numbers,
their Luck, Heal and Ammo counters (A16), damage taken, stun, and what they did on their last
turn. A fight is a plain JSON-able dict; ``apply`` carries out one command on it. Where it is kept
is not decided here: ``astragal fight`` keeps it in a file (``astragal/fight_cli.py``: read,
change, write back atomically under a lock), the web table in its room's log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..._digits import digits
from ..._errors import FacesError, InputError, OptionError
from ..._limits import DEFAULT_LIMITS
from ...switches import no_table
from .args import Args
from .combatants import (
    FightError,
    apply_fields,
    check_combatant,
    flag_state,
    new_combatant,
)
from .exchange import odds as exchange_odds
from .exchange import roll as exchange_roll
from .notation import Attacker, Defender, Exchange, check
from .rules import (
    BERSERK,
    DEFAULTS,
    DEFENSIVE,
    FILE_OPTIONS,
    NORMAL,
    STUNNED,
    AttackTable,
    CriticalTable,
    Rules,
    attack_table_from_data,
    critical_table_from_data,
    rules_for,
)
from .rules import SWITCHES as _SWITCHES

FORMAT = "astragal fight"
VERSION = 1
TABLE_SWITCHES = {s.name: s for s in _SWITCHES if s.file}


def fight_rules(data: dict[str, Any]) -> Rules:
    """The rules of this fight: its switches and the tables kept in the file."""
    table: AttackTable | None = None
    crit: CriticalTable | None = None
    if data.get("attack_table") is not None:
        table = attack_table_from_data(data["attack_table"], "the fight's attack table")
    if data.get("critical_damage_table") is not None:
        crit = critical_table_from_data(data["critical_damage_table"],
                                        "the fight's Critical Damage Table")
    opts = data["options"]
    for key in opts:
        if key not in DEFAULTS or key in FILE_OPTIONS:
            raise OptionError(f"'{key}' is not a house rule of this game")
    return rules_for(opts, table, crit)


TABLE_KEYS = {"table": "attack_table", "attack_table": "attack_table",
              "critical_table": "critical_damage_table",
              "critical_damage_table": "critical_damage_table"}


def _set_options(data: dict[str, Any], pairs: Sequence[str],
                 tables: Mapping[str, Any] | None = None) -> list[str]:
    """Set house rules (``key=value``) and tables. A table is data: ``tables`` maps its key as
    typed (``table``) to the JSON the caller read from the named file (the command line does;
    the web table reads no files, so it offers none)."""
    said: list[str] = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().lower().replace("-", "_")
        if not sep:
            raise FightError(f"house rules are written key=value, not '{pair}'")
        if key in TABLE_KEYS:
            switch = TABLE_SWITCHES[TABLE_KEYS[key]]
            if no_table(value):
                data[switch.name] = None
            elif tables is None or key not in tables:
                raise FightError(f"{key}={value}: a {switch.file} is a file, and only "
                                 "'astragal fight' on the command line reads files")
            else:
                data[switch.name] = dict(switch.read(tables[key], f"the {switch.file} {value}"))
            said.append(f"{switch.file}: {value if data[switch.name] else 'the default'}")
        elif key in DEFAULTS:
            data["options"][key] = value
            said.append(f"{key}={value}")
        else:
            raise FightError(f"'{key}' is not a house rule of this game; they are "
                             f"{', '.join(sorted(k for k in DEFAULTS if k not in FILE_OPTIONS))}"
                             ", table, critical_table")
    fight_rules(data)  # every value is checked before anything is written
    return said


# --------------------------------------------------------------------------------------------
# Commands


def _find(data: dict[str, Any], name: str) -> dict[str, Any]:
    for c in data["combatants"]:
        if c["name"].lower() == name.lower():
            return c  # type: ignore[no-any-return]
    known = ", ".join(c["name"] for c in data["combatants"]) or "nobody yet"
    raise FightError(f"no combatant '{name}' in this fight (it has {known}); add one first: "
                     f"add {name} atk=4 wpn=3 …")


def _check_name(data: dict[str, Any], name: str) -> None:
    if not name.strip() or name != name.strip() or len(name) > 40 or "=" in name or \
            name.startswith("-") or not name.isprintable() or name.lower() in _COMMAND_WORDS:
        raise FightError(f"'{name}' cannot be a name: names are up to 40 characters, not "
                         "blank, without '=' or spaces around them, and not a command or "
                         "option word")
    if any(c["name"].lower() == name.lower() for c in data["combatants"]):
        raise FightError(f"there is already a combatant called {name}")


def states(c: dict[str, Any]) -> tuple[str, ...]:
    """A12: the defender's state words from the tracker (stun and last turn's flags)."""
    words = [STUNNED] if c["stunned"] else []
    words += [flag_state(f) for f in c["last_turn"]]
    return tuple(words)


def _cmd_add(data: dict[str, Any], args: Args) -> str:
    if len(args.words) != 1:
        raise FightError("add NAME key=value …: one name, such as 'add Anna atk=4 wpn=3'")
    name = args.words[0]
    _check_name(data, name)
    c = new_combatant(name)
    apply_fields(c, [f"{k}={v}" for k, v in args.pairs.items()], allow_state=False)
    data["combatants"].append(c)
    data["log"].append({"turn": data["turn"], "action": "add", "name": name})
    return f"{name} joins the fight: {_summary(c)}"


def _cmd_set(data: dict[str, Any], args: Args) -> str:
    if len(args.words) != 1 or not args.pairs:
        raise FightError("set NAME key=value …, such as 'set Anna shield=0'")
    c = _find(data, args.words[0])
    changed = apply_fields(c, [f"{k}={v}" for k, v in args.pairs.items()], allow_state=True)
    data["log"].append({"turn": data["turn"], "action": "set", "name": c["name"],
                        "changes": {k: c[k] for k in changed}})
    return f"{c['name']}: {_summary(c)}"


def _cmd_remove(data: dict[str, Any], args: Args) -> str:
    args.no_pairs("remove")
    if len(args.words) != 1:
        raise FightError("remove NAME")
    c = _find(data, args.words[0])
    data["combatants"].remove(c)
    data["log"].append({"turn": data["turn"], "action": "remove", "name": c["name"]})
    return f"{c['name']} leaves the fight"


def _spend(c: dict[str, Any], counter: str, n: int, why: str) -> str:
    have = c[counter]
    word = {"luck": "Luck", "heal": "Heal", "ammo": "Ammo"}[counter]
    if have is None:
        raise FightError(f"{c['name']} has no {word} counter; set one with "
                         f"'fight set {c['name']} {counter}=N'")
    if n > have:
        raise FightError(f"{c['name']} has {have} {word} left and cannot spend {n} {why}")
    c[counter] = have - n  # A16: counters go down when spent, never below zero
    return f"{c['name']}: {word} {have} → {c[counter]}"


def _count_arg(text: str, what: str) -> int:
    if not digits(text) or len(text) > 5:
        raise FightError(f"{what} takes a whole number ≥ 0, not '{text}'")
    return int(text)


def _declarations(args: Args, extra: Sequence[str]) -> tuple[str, bool]:
    stance, thrown = NORMAL, False
    for w in extra:
        low = w.lower()
        if low in ("berserk", "defensive", "defensively", "def"):
            if stance != NORMAL:
                raise FightError("declare Berserk or Defensive, not both (A3)")
            stance = BERSERK if low == "berserk" else DEFENSIVE
        elif low in ("throw", "thrown", "throws"):
            thrown = True
        elif low == "normal":
            continue
        else:
            raise FightError(f"'{w}' is not a declaration: berserk, defensive, throw, "
                             "luck=N, ammo=N")
    return stance, thrown


def _exchange(data: dict[str, Any], rules: Rules, a: dict[str, Any], b: dict[str, Any],
              stance: str, thrown: bool, luck: int) -> Exchange:
    attacker = Attacker(attack=a["attack"], weapon=a["weapon"], weapon_class=a["class"],
                        crit_bonus=a["crit_bonus"], thrown=thrown,
                        throw_bonus=a["throw_bonus"], stance=stance, luck=luck)
    defender = Defender(armor=b["armor"], shield=b["shield"], parry=b["parry"],
                        states=states(b))
    inline = tuple(sorted((k, v) for k, v in data["options"].items()
                          if k not in ("stun_duration", "luck_dice") and v != DEFAULTS[k]))
    spec = Exchange(attacker, defender, inline)
    check(spec, rules, DEFAULT_LIMITS, str(spec))
    return spec


def _pair_of(data: dict[str, Any], args: Args, command: str) -> tuple[dict[str, Any],
                                                                       dict[str, Any]]:
    if len(args.words) < 2:
        raise FightError(f"{command} ATTACKER DEFENDER [berserk|defensive] [throw] [luck=N]")
    a, b = _find(data, args.words[0]), _find(data, args.words[1])
    if a is b:
        raise FightError(f"{a['name']} cannot attack themself")
    return a, b


def _cmd_attack(data: dict[str, Any], args: Args) -> tuple[str, dict[str, Any]]:
    rules = fight_rules(data)
    a, b = _pair_of(data, args, "attack")
    stance, thrown = _declarations(args, args.words[2:])
    luck = _count_arg(args.pairs.pop("luck", "0"), "luck")
    ammo_text = args.pairs.pop("ammo", None)
    args.no_pairs("attack")
    notes: list[str] = []
    for who, role in ((a, "attacker"), (b, "target")):  # the GM is told, the attack goes on
        if who["hp"] is not None and who["damage"] >= who["hp"]:
            notes.append(f"warning: the {role} {who['name']} is down ({who['damage']} damage "
                         f"≥ {who['hp']} hp)")
    turn = data["turn"] + 1
    # A-A9: a stun lasts until the stunned combatant's own next turn (switch stun_duration)
    if a["stunned"] and rules.stun_duration == "until_next_turn":
        a["stunned"] = False
        notes.append(f"{a['name']} is no longer stunned")
    if luck:
        if rules.luck_dice == "spent":
            notes.append(_spend(a, "luck", luck, "Luck dice (A4)"))
        elif luck > a["luck"]:
            raise FightError(f"{a['name']} has {a['luck']} Luck dice and cannot declare {luck}")
    ammo = _count_arg(ammo_text, "ammo") if ammo_text is not None else \
        (1 if thrown and a["ammo"] is not None else 0)
    if ammo:
        notes.append(_spend(a, "ammo", ammo, "Ammo"))
    spec = _exchange(data, rules, a, b, stance, thrown, luck)
    text = str(spec)
    try:
        result = exchange_roll(spec, args.source(), rules, DEFAULT_LIMITS, text)
    except FacesError as exc:
        d = spec.defender.dice_rolled(rules.threw_last_turn_defense) if spec.defender else 0
        raise FacesError(f"{exc.message} (faces go 'attack / defence / critical': this attack "
                         f"rolls {spec.attacker.total} attack dice, {b['name']} would roll {d} "
                         "DEFENSE dice, and the critical dice depend on the roll)",
                         exc.text, exc.span) from None
    r = result.result
    before = b["damage"]
    b["damage"] += r["damage"]
    if rules.stun_duration == "one_defence" and b["stunned"] and not r["whiff"]:
        b["stunned"] = False  # A-A9 switch: the stun cost this one defence
    if r["stun"]:
        b["stunned"] = True  # A10
    if r.get("critical_total") is not None:
        b["criticals"].append({"turn": turn, "from": a["name"], "total": r["critical_total"],
                               "result": r.get("critical_result")})
    # A20: this turn's declarations (and a Whiff, A6) shape the attacker's next defence
    a["last_turn"] = [f for f, on in (("berserk", stance == BERSERK),
                                      ("defensive", stance == DEFENSIVE),
                                      ("threw", thrown), ("whiffed", r["whiff"])) if on]
    data["turn"] = turn
    faces = " / ".join(",".join(str(d.face) for d in result.dice if d.group in groups)
                       for groups in (("attack", "luck"), ("defence",), ("critical",)))
    data["log"].append({"turn": turn, "action": "attack", "attacker": a["name"],
                        "defender": b["name"], "notation": text, "faces": faces.rstrip(" /"),
                        "outcome": result.outcome, "damage": r["damage"], "stun": r["stun"],
                        **({"critical_total": r["critical_total"]}
                           if r.get("critical_total") is not None else {})})
    lines = [f"Turn {turn}: {a['name']} attacks {b['name']}"
             + "".join(f", {w}" for w in (stance if stance != NORMAL else "",
                                          "throw" if thrown else "",
                                          f"luck {luck}" if luck else "") if w)]
    lines += notes
    lines += list(result.transcript)
    status = f"{b['name']}: damage {before} → {b['damage']}" if r["damage"] else \
        f"{b['name']}: no damage"
    if b["stunned"]:
        status += ", stunned"
    if b["hp"] is not None and b["damage"] >= b["hp"]:
        status += f" — down ({b['damage']} damage ≥ {b['hp']} hp)"
    lines.append(status)
    return "\n".join(lines), result.to_json()


def odds_command(data: dict[str, Any], args: Args) -> str:
    from ...render import odds_text

    rules = fight_rules(data)
    a, b = _pair_of(data, args, "odds")
    stance, thrown = _declarations(args, args.words[2:])
    luck = _count_arg(args.pairs.pop("luck", "0"), "luck")
    args.no_pairs("odds")
    args.no_source("odds")
    if luck > a["luck"]:
        raise FightError(f"{a['name']} has {a['luck']} Luck dice and cannot declare {luck}")
    if a["stunned"] and rules.stun_duration == "until_next_turn":
        a = {**a, "stunned": False}
    spec = _exchange(data, rules, a, b, stance, thrown, luck)
    result = exchange_odds(spec, rules, DEFAULT_LIMITS, str(spec))
    if args.json:
        from ...render import to_json_text

        return to_json_text(result.to_json())
    return f"{a['name']} attacks {b['name']}\n" + odds_text(result)


def _cmd_pass(data: dict[str, Any], args: Args) -> str:
    args.no_pairs("pass")
    if len(args.words) != 1:
        raise FightError("pass NAME")
    c = _find(data, args.words[0])
    rules = fight_rules(data)
    notes = []
    if c["stunned"] and rules.stun_duration == "until_next_turn":
        c["stunned"] = False
        notes.append(f"{c['name']} is no longer stunned")
    c["last_turn"] = []  # A20: last turn's declarations last one turn
    data["turn"] += 1
    data["log"].append({"turn": data["turn"], "action": "pass", "name": c["name"]})
    return "\n".join([f"Turn {data['turn']}: {c['name']} does not attack"] + notes)


def _cmd_heal(data: dict[str, Any], args: Args) -> str:
    args.no_pairs("heal")
    if not 1 <= len(args.words) <= 2:
        raise FightError("heal NAME [N]")
    c = _find(data, args.words[0])
    n = _count_arg(args.words[1], "heal") if len(args.words) == 2 else 1
    if n == 0:
        raise FightError("heal at least 1")
    if n > c["damage"]:
        raise FightError(f"{c['name']} has {c['damage']} damage; healing {n} would waste Heal "
                         "dice")
    note = _spend(c, "heal", n, "Heal")
    before = c["damage"]
    c["damage"] -= n
    data["log"].append({"turn": data["turn"], "action": "heal", "name": c["name"], "heal": n})
    return f"{note}\n{c['name']}: damage {before} → {c['damage']}"


def _cmd_spend(data: dict[str, Any], args: Args) -> str:
    args.no_pairs("spend")
    if not 2 <= len(args.words) <= 3 or args.words[1].lower() not in ("luck", "heal", "ammo"):
        raise FightError("spend NAME luck|heal|ammo [N]")
    c = _find(data, args.words[0])
    counter = args.words[1].lower()
    n = _count_arg(args.words[2], counter) if len(args.words) == 3 else 1
    note = _spend(c, counter, n, counter)
    data["log"].append({"turn": data["turn"], "action": "spend", "name": c["name"],
                        counter: n})
    return note


def _cmd_option(data: dict[str, Any], args: Args) -> str:
    if args.words or not args.pairs:
        raise FightError("option KEY=VALUE …, such as 'option stun_duration=manual'")
    said = _set_options(data, [f"{k}={v}" for k, v in args.pairs.items()], args.tables)
    data["log"].append({"turn": data["turn"], "action": "option", "set": said})
    return "House rules: " + "; ".join(said)


def _summary(c: dict[str, Any]) -> str:
    parts = [f"ATTACK {c['attack']}", f"WEAPON {c['weapon']}"
             + (f" class {c['class']}" if c["class"] else "")]
    if c["throw_bonus"]:
        parts.append(f"Throw Bonus +{c['throw_bonus']}")
    if c["crit_bonus"]:
        parts.append(f"Crit Bonus {c['crit_bonus']:+d}")
    parts.append(f"ARMOR {c['armor']} SHIELD {c['shield']} PARRY/DODGE {c['parry']}")
    counters = [f"Luck {c['luck']}", f"Heal {c['heal']}"]
    if c["ammo"] is not None:
        counters.append(f"Ammo {c['ammo']}")
    if c["hp"] is not None:
        counters.append(f"hp {c['hp']}")
    if c.get("side"):
        counters.append(f"side {c['side']}")
    return ", ".join(parts + counters)


_COMMAND_WORDS = {"new", "add", "set", "remove", "attack", "odds", "pass", "heal", "spend",
                  "option", "show", "log", "help", "vs", "berserk", "defensive", "throw",
                  "normal", "force"}


CHANGES: dict[str, Callable[[dict[str, Any], Args], str]] = {
    "add": _cmd_add, "set": _cmd_set, "remove": _cmd_remove, "pass": _cmd_pass,
    "heal": _cmd_heal, "spend": _cmd_spend, "option": _cmd_option}


def apply(data: dict[str, Any], command: str, args: Args) -> tuple[str, dict[str, Any] | None]:
    """Carry out one command that changes the fight (on ``data``, in place): its message and, for
    an attack, the roll's JSON. The CLI keeps ``data`` in a file, the web table in its room."""
    if command == "attack":
        return _cmd_attack(data, args)
    if command not in CHANGES:
        raise FightError(f"unknown fight command '{command}': commands are new, add, set, "
                         "remove, attack, odds, pass, heal, spend, option, show, log")
    args.no_source(command)
    return CHANGES[command](data, args), None


def new_fight(options: Sequence[str] = (), tables: Mapping[str, Any] | None = None,
              ) -> tuple[dict[str, Any], list[str]]:
    """An empty fight with house rules (``key=value``; tables as data, see ``_set_options``) and
    what was said about them."""
    data: dict[str, Any] = {"format": FORMAT, "version": VERSION, "turn": 0, "options": {},
                            "attack_table": None, "critical_damage_table": None,
                            "combatants": [], "log": []}
    return data, _set_options(data, options, tables)


_ATTACK_LOGGED = ("attacker", "defender", "notation", "faces", "outcome", "damage", "stun")


def check_fight(data: Any, where: str) -> dict[str, Any]:
    """A fight read from outside (a file), checked whole: its format, combatants and rules."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise FightError(f"{where} is not an astragal fight file (its \"format\" is not "
                         f"\"{FORMAT}\")")
    if data.get("version") != VERSION:
        raise FightError(f"{where} is a fight file of version {data.get('version')!r}; this "
                         f"astragal reads version {VERSION}")
    for key, kind in (("turn", int), ("options", dict), ("combatants", list), ("log", list)):
        if not isinstance(data.get(key), kind) or isinstance(data.get(key), bool):
            raise FightError(f"the fight file {where} is damaged: '{key}' is missing or wrong")
    for i, e in enumerate(data["log"], 1):  # what 'log' prints: a turn, an action, its fields
        if not isinstance(e, dict) or type(e.get("turn")) is not int or \
                not isinstance(e.get("action"), str) or \
                (e["action"] == "attack" and not all(k in e for k in _ATTACK_LOGGED)):
            raise FightError(f"the fight file {where} is damaged: entry {i} of its log is not "
                             "a turn as the tracker writes it")
    data["combatants"] = [check_combatant(c, i) for i, c in enumerate(data["combatants"])]
    names = [c["name"].lower() for c in data["combatants"]]
    if len(set(names)) != len(names):
        raise FightError(f"the fight file {where} is damaged: two combatants share a name")
    try:
        fight_rules(data)
    except InputError as exc:
        raise FightError(f"the fight file {where} has bad house rules or tables: "
                         f"{exc.message}") from None
    return data


__all__ = ["CHANGES", "FORMAT", "VERSION", "Args", "FightError", "apply", "check_fight",
           "fight_rules", "new_fight", "odds_command", "states"]
