"""The d6 attack-table game's data (seed 003; RULES.md §4, §6): the table's columns, the attack
table and the Critical Damage Table (the shipped defaults are package data files a GM can
replace), and the house-rule switches. The rules themselves are ``rules.py``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

from ..._digits import digits
from ..._errors import OptionError
from ..._records import Record
from ...switches import Switch, resolve

# --------------------------------------------------------------------------------------------
# The table's columns (A5–A9)

DIE = 6  # every die of this game is a d6
WHIFF_AT_OR_BELOW = 3  # A6
WHIFF = "3 or less"
HIT_COLUMNS = ("one 4", "double 4", "one 5", "double 5", "one 6", "double 6", "three+ 6s")
TRIPLE_COLUMNS = ("three+ 4s", "three+ 5s")  # A-A4: read only with triple_non_six=own_column
COLUMNS = (WHIFF, *HIT_COLUMNS)
MATCH = "match"  # A11: as many 6s as the attacker's dice showing the highest face

# The seed's own shorthand for the columns (its table header writes "4-4", "6-6-6+").
CODES: dict[str, str] = {
    "4": "one 4", "4-4": "double 4", "5": "one 5", "5-5": "double 5", "6": "one 6",
    "6-6": "double 6", "6-6-6": "three+ 6s", "4-4-4": "three+ 4s", "5-5-5": "three+ 5s",
}
COLUMN_CODES = {name: code for code, name in CODES.items()}

# A12's first-match order; the state names are the vectors' own words.
STUNNED = "stunned"
BERSERK_LAST_TURN = "berserk_last_turn"
DEFENSIVE_LAST_TURN = "defensive_last_turn"
THREW_LAST_TURN = "threw_last_turn"
WHIFFED_LAST_TURN = "whiffed_last_turn"
DEFENCE_STATES = (STUNNED, BERSERK_LAST_TURN, DEFENSIVE_LAST_TURN, THREW_LAST_TURN,
                  WHIFFED_LAST_TURN)
ARMOR, SHIELD, PARRY = "ARMOR", "SHIELD", "PARRY/DODGE"
ALL_POOLS = (ARMOR, SHIELD, PARRY)

NORMAL, BERSERK, DEFENSIVE = "normal", "berserk", "defensive"
STANCES = (NORMAL, BERSERK, DEFENSIVE)


# --------------------------------------------------------------------------------------------
# The attack table as data (A-A1..A-A3: the reconstruction is the default)


class Column(Record):
    """One hit column of the attack table: damage, stun, 6s to block, Critical Strike or not."""

    name: str
    damage: int
    stun: bool
    block: int | str | None  # 6s needed; MATCH; None = cannot be blocked
    critical: bool = False

    def sixes_to_block(self, count: int) -> int | None:
        """A11: the 6s the defender needs against ``count`` dice showing the highest face."""
        return count if self.block == MATCH else self.block  # type: ignore[return-value]


class AttackTable(Record):
    """The attack table's hit columns (the Whiff column has no entries: A6)."""

    columns: tuple[Column, ...]

    def column(self, name: str) -> Column:
        """The named hit column."""
        for c in self.columns:
            if c.name == name:
                return c
        raise OptionError(f"the attack table has no column '{name}' (needed by "
                          f"triple_non_six=own_column)")

    def has(self, name: str) -> bool:
        """Whether the table has the named column."""
        return any(c.name == name for c in self.columns)


class CriticalRow(Record):
    """One row of the GM's Critical Damage Table (A14)."""

    low: int
    high: int | None
    result: str
    damage: int = 0

    def covers(self, total: int) -> bool:
        return total >= self.low and (self.high is None or total <= self.high)

    @property
    def span(self) -> str:
        if self.high is None:
            return f"{self.low}+"
        return str(self.low) if self.high == self.low else f"{self.low}–{self.high}"


class CriticalTable(Record):
    """The Critical Damage Table (A14): not in the seed, so empty unless the GM gives one."""

    rows: tuple[CriticalRow, ...] = ()

    def lookup(self, total: int) -> CriticalRow | None:
        """The row covering ``total``, or None."""
        for row in self.rows:
            if row.covers(total):
                return row
        return None


def _packaged(name: str) -> Any:
    return json.loads(resources.files("astragal").joinpath("data", name).read_text("utf-8"))


def _comment(key: str) -> bool:
    return key.startswith("_") or key == "about"


def _whole(value: Any, where: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or value > 10**6:
        raise OptionError(f"{where} must be a whole number ≥ {low}, not {json.dumps(value)}")
    return value


def _check_format(data: Any, fmt: str, where: str) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise OptionError(f"{where}: expected a JSON object with \"format\": \"{fmt}\"")
    if data.get("format") != fmt:
        raise OptionError(f"{where}: \"format\" must be \"{fmt}\"")
    if data.get("version", 1) != 1:
        raise OptionError(f"{where}: version {data.get('version')!r} is not known (only 1)")
    return data


def attack_table_from_data(data: Any, where: str = "the attack table") -> AttackTable:
    """Read and check an attack table in the documented JSON form (docs/attack.md)."""
    data = _check_format(data, "astragal attack table", where)
    for key in data:
        if key not in ("format", "version", "columns") and not _comment(key):
            raise OptionError(f"{where}: unknown key \"{key}\"")
    cols = data.get("columns")
    if not isinstance(cols, dict):
        raise OptionError(f"{where}: \"columns\" must be an object of column name → entry")
    out: list[Column] = []
    for name, entry in cols.items():
        if _comment(name):
            continue
        if name not in HIT_COLUMNS and name not in TRIPLE_COLUMNS:
            raise OptionError(f"{where}: \"{name}\" is not a column; columns are "
                              f"{', '.join(HIT_COLUMNS + TRIPLE_COLUMNS)}")
        here = f"{where}, column \"{name}\""
        if not isinstance(entry, dict):
            raise OptionError(f"{here}: expected an object with damage, stun and block")
        for key in entry:
            if key not in ("damage", "stun", "block", "critical") and not _comment(key):
                raise OptionError(f"{here}: unknown key \"{key}\"")
        for key in ("damage", "stun", "block"):
            if key not in entry:
                raise OptionError(f"{here}: \"{key}\" is missing")
        damage = _whole(entry["damage"], f"{here}: damage")
        stun, critical = entry["stun"], entry.get("critical", False)
        if not isinstance(stun, bool) or not isinstance(critical, bool):
            raise OptionError(f"{here}: stun and critical are true or false")
        out.append(Column(name, damage, stun, _block_value(entry["block"], here), critical))
    missing = [c for c in HIT_COLUMNS if c not in {col.name for col in out}]
    if missing:
        raise OptionError(f"{where}: column(s) {', '.join(missing)} missing")
    order = HIT_COLUMNS + TRIPLE_COLUMNS
    return AttackTable(tuple(sorted(out, key=lambda c: order.index(c.name))))


def _block_value(value: Any, here: str) -> int | str | None:
    if value is None or value == MATCH:
        return value  # type: ignore[no-any-return]
    return _whole(value, f"{here}: block (or \"match\", or null)", low=1)


def critical_table_from_data(data: Any, where: str = "the Critical Damage Table") -> CriticalTable:
    """Read and check a Critical Damage Table in the documented JSON form (docs/attack.md)."""
    data = _check_format(data, "astragal critical damage table", where)
    for key in data:
        if key not in ("format", "version", "rows") and not _comment(key):
            raise OptionError(f"{where}: unknown key \"{key}\"")
    rows = data.get("rows", [])
    if not isinstance(rows, list):
        raise OptionError(f"{where}: \"rows\" must be a list")
    out: list[CriticalRow] = []
    for i, row in enumerate(rows, 1):
        here = f"{where}, row {i}"
        if not isinstance(row, dict):
            raise OptionError(f"{here}: expected an object with min, max, result")
        for key in row:
            if key not in ("min", "max", "result", "damage") and not _comment(key):
                raise OptionError(f"{here}: unknown key \"{key}\"")
        if "min" not in row or "result" not in row:
            raise OptionError(f"{here}: \"min\" and \"result\" are required")
        low = row["min"]
        if isinstance(low, bool) or not isinstance(low, int) or abs(low) > 10**6:
            raise OptionError(f"{here}: min must be a whole number")
        high = row.get("max")
        if high is not None and (isinstance(high, bool) or not isinstance(high, int)
                                 or high < low or high > 10**6):
            raise OptionError(f"{here}: max must be a whole number ≥ min, or null for 'and up'")
        if not isinstance(row["result"], str) or len(row["result"]) > 500:
            raise OptionError(f"{here}: result must be text (at most 500 characters)")
        damage = _whole(row.get("damage", 0), f"{here}: damage")
        out.append(CriticalRow(low, high, row["result"], damage))
    out.sort(key=lambda r: r.low)
    for a, b in itertools.pairwise(out):
        if a.high is None or a.high >= b.low:
            raise OptionError(f"{where}: rows {a.span} and {b.span} overlap")
    return CriticalTable(tuple(out))


@lru_cache(maxsize=1)
def default_attack_table() -> AttackTable:
    """The shipped attack table: RULES.md's reconstruction (A-A1..A-A3)."""
    return attack_table_from_data(_packaged("attack_table.json"), "the shipped attack table")


@lru_cache(maxsize=1)
def default_critical_table() -> CriticalTable:
    """The shipped Critical Damage Table: empty (A14)."""
    return critical_table_from_data(_packaged("critical_damage_table.json"))


# --------------------------------------------------------------------------------------------
# House-rule switches (§6)

def _text(name: str, value: object) -> str:
    """A switch written in the seed's own shorthand (columns, classes), read by the rules."""
    if not isinstance(value, str):
        raise OptionError(f"option {name} takes text, not {value!r}")
    return value.strip()


def _class_map_text(name: str, value: object) -> str:
    text = _text(name, value)
    _parse_class_map(text)  # checked now, so a bad map is refused wherever it is given
    return text


SWITCHES = (
    Switch("attack_table", "", "A-A1", "the attack table (JSON, docs/attack.md); default: the "
           "shipped reconstruction", file="attack table",
           parse=lambda where, data: attack_table_from_data(data, where)),
    Switch("damage_by_column", "", "A-A1", "damage per hit column, e.g. 1/1/2/2/3/3/3 (one 4 … "
           "three+ 6s)", parse=_text),
    Switch("stun_columns", "", "A-A2", "the columns that stun, e.g. 4-4/5-5/6-6/6-6-6, or none",
           parse=_text),
    Switch("sixes_to_block_by_column", "", "A-A3", "6s to block per hit column, e.g. "
           "1/2/1/2/1/2/match ('-' = cannot be blocked)", parse=_text),
    Switch("critical_damage_table", "", "A14", "the GM's Critical Damage Table (JSON); default: "
           "none, the total is reported", file="Critical Damage Table",
           parse=lambda where, data: critical_table_from_data(data, where)),
    Switch("crit_dice_subtract", "dice_rolled", "A-A5", "critical dice minus the defender's dice "
           "rolled, or minus the 6s rolled", choices=("dice_rolled", "sixes_rolled")),
    Switch("triple_non_six", "double", "A-A4", "three 4s or 5s read as a double, or their own "
           "column", choices=("double", "own_column")),
    Switch("threw_last_turn_defense", "full", "A-A6", "defence dice after throwing a weapon",
           choices=("full", "armor_shield", "armor")),
    Switch("zero_attack_dice", "whiff", "A-A8", "no attack dice left: a Whiff, or no attack",
           choices=("whiff", "cannot_attack")),
    Switch("weapon_class_crit_dice", "C:1/D:2", "A13", "extra critical dice per weapon class "
           "(others +0)", parse=_class_map_text),
    Switch("stun_duration", "until_next_turn", "A-A9", "how long a stun lasts (fight tracker)",
           choices=("until_next_turn", "one_defence", "manual")),
    Switch("luck_dice", "spent", "A-A9", "a Luck die is spent when used, or kept (fight "
           "tracker)", choices=("spent", "kept")),
)
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SWITCHES}
CHOICES: dict[str, tuple[str, ...]] = {s.name: s.choices for s in SWITCHES if s.choices}
FILE_OPTIONS = tuple(s.name for s in SWITCHES if s.file)


class Rules(Record):
    """Everything an exchange needs besides the dice: the tables and the switches' values."""

    table: AttackTable
    critical_table: CriticalTable
    crit_dice_subtract: str = "dice_rolled"
    triple_non_six: str = "double"
    threw_last_turn_defense: str = "full"
    zero_attack_dice: str = "whiff"
    class_crit_dice: tuple[tuple[str, int], ...] = (("C", 1), ("D", 2))
    stun_duration: str = "until_next_turn"
    luck_dice: str = "spent"

    def crit_dice_for(self, weapon_class: str | None) -> int:
        """A13, A17: extra critical dice of a weapon class (C +1, D +2, others 0)."""
        return dict(self.class_crit_dice).get((weapon_class or "").upper(), 0)


def _split(value: str) -> list[str]:
    return [p.strip() for p in value.replace(",", "/").split("/") if p.strip()]


def _column_name(code: str, key: str) -> str:
    c = code.lower().replace("_", " ").replace("+", "")
    if c in CODES:
        return CODES[c]
    for name in HIT_COLUMNS + TRIPLE_COLUMNS:
        if c in (name, name.replace("+", "")):
            return name
    raise OptionError(f"option {key}: '{code}' is not a column; write columns as the seed does: "
                      f"{', '.join(CODES)}")


def _parse_class_map(value: str) -> tuple[tuple[str, int], ...]:
    out: dict[str, int] = {}
    for part in _split(value):
        cls, sep, n = part.partition(":")
        cls = cls.strip().upper()
        if not sep or not (len(cls) == 1 and cls.isalpha()) or not digits(n.strip().lstrip("+")) \
                or len(n) > 4:
            raise OptionError(f"option weapon_class_crit_dice: write class letters and extra "
                              f"critical dice as C:1/D:2, not '{part}'")
        out[cls] = int(n.strip().lstrip("+"))
    return tuple(sorted(out.items()))


def _override_table(table: AttackTable, options: Mapping[str, Any]) -> AttackTable:
    cols = {c.name: c for c in table.columns}
    names = list(HIT_COLUMNS) + [n for n in TRIPLE_COLUMNS if n in cols]
    if options.get("damage_by_column"):
        values = _split(options["damage_by_column"])
        if len(values) != len(names):
            raise OptionError(f"option damage_by_column gives {len(values)} values for the "
                              f"{len(names)} hit columns ({', '.join(names)})")
        for name, v in zip(names, values):
            if not digits(v) or len(v) > 6:
                raise OptionError(f"option damage_by_column: '{v}' is not a whole number ≥ 0")
            c = cols[name]
            cols[name] = Column(c.name, int(v), c.stun, c.block, c.critical)
    if options.get("stun_columns"):
        value = options["stun_columns"]
        stunning = set() if value.strip().lower() == "none" else {
            _column_name(v, "stun_columns") for v in _split(value)}
        for name in names:
            c = cols[name]
            cols[name] = Column(c.name, c.damage, name in stunning, c.block, c.critical)
    if options.get("sixes_to_block_by_column"):
        values = _split(options["sixes_to_block_by_column"])
        if len(values) != len(names):
            raise OptionError(f"option sixes_to_block_by_column gives {len(values)} values for "
                              f"the {len(names)} hit columns ({', '.join(names)})")
        for name, v in zip(names, values):
            block: int | str | None
            if v.lower() == MATCH:
                block = MATCH
            elif v in ("-", "none"):
                block = None
            elif digits(v) and len(v) <= 6 and int(v) >= 1:
                block = int(v)
            else:
                raise OptionError(f"option sixes_to_block_by_column: '{v}' is not a number of "
                                  f"6s ≥ 1, 'match' or '-' (cannot be blocked)")
            c = cols[name]
            cols[name] = Column(c.name, c.damage, c.stun, block, c.critical)
    return AttackTable(tuple(cols[n] for n in names))


def _key(value: Any) -> Any:
    """A switch's value as part of a cache key (a table given as data: its canonical JSON)."""
    return json.dumps(value, sort_keys=True) if isinstance(value, Mapping) else value


def rules_for(options: Mapping[str, Any], table: AttackTable | None = None,
              critical_table: CriticalTable | None = None) -> Rules:
    """The rules an exchange runs under: the switches (defaults overlaid, each read by its
    ``Switch``) and the two tables, given as data (``attack_table`` / ``critical_damage_table``:
    the JSON the command line or the API read from the GM's file), or as ``table`` /
    ``critical_table`` (the fight tracker keeps them in its fight), which win.
    """
    if table is None and critical_table is None and \
            all(DEFAULTS.get(k, object()) == v for k, v in options.items()):
        return _default_rules()  # the common case: every switch at its default
    merged = resolve(SWITCHES, options, "attack table")
    return _rules(tuple(sorted((k, _key(v)) for k, v in merged.items())), table, critical_table)


@lru_cache(maxsize=1)
def _default_rules() -> Rules:
    return _rules(tuple(sorted(DEFAULTS.items())), None, None)


@lru_cache(maxsize=64)
def _rules(key: tuple[tuple[str, Any], ...], table: AttackTable | None,
           critical_table: CriticalTable | None) -> Rules:
    merged = dict(key)
    if table is None:
        given = merged["attack_table"]
        table = attack_table_from_data(json.loads(given), "the attack table given") if given \
            else default_attack_table()
    if critical_table is None:
        given = merged["critical_damage_table"]
        critical_table = critical_table_from_data(
            json.loads(given), "the Critical Damage Table given") if given \
            else default_critical_table()
    table = _override_table(table, merged)
    if merged["triple_non_six"] == "own_column":
        for name in TRIPLE_COLUMNS:
            table.column(name)
    return Rules(table, critical_table, merged["crit_dice_subtract"], merged["triple_non_six"],
                 merged["threw_last_turn_defense"], merged["zero_attack_dice"],
                 _parse_class_map(merged["weapon_class_crit_dice"]), merged["stun_duration"],
                 merged["luck_dice"])
