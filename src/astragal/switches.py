"""House-rule switches, declared once: name, allowed values, default, the rule it changes, help.

Every way to set a switch (``key=value`` in the notation, ``-o key=value`` on the command line,
``options={...}`` in the API, a room's settings) goes through ``Switch.read``, so the values
allowed and the errors given are the same everywhere.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from ._errors import OptionError, shown
from ._records import Record

__all__ = ["Switch", "load_files", "no_table", "read_bool", "read_int", "resolve"]

_TRUE = ("true", "on", "yes", "1")
_WHOLE = re.compile(r"[+-]?[0-9]+")
_FALSE = ("false", "off", "no", "0")


def read_bool(name: str, value: object) -> bool:
    """true/false (also on/off, yes/no, 1/0) from text or a bool."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise OptionError(f"option {name} takes true or false, not {shown(value)}")


def read_int(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """A whole number within [low, high], from text, an int or an integral finite float."""
    number: int
    if isinstance(value, bool):
        raise OptionError(f"option {name} takes a whole number, not {shown(value)}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise OptionError(f"option {name} takes a whole number, not {shown(value)}")
        number = int(value)
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip()) and len(value) <= 12:
        number = int(value.strip())
    else:
        raise OptionError(f"option {name} takes a whole number, not {shown(value)}")
    if (low is not None and number < low) or (high is not None and number > high):
        span = f"{low} to {high}" if low is not None and high is not None else (
            f"at least {low}" if low is not None else f"at most {high}")
        raise OptionError(f"option {name} takes {span}, not {number}")
    return number


def no_table(value: object) -> bool:
    """A table switch's value that asks for no table of one's own (the game's default)."""
    return value is None or (isinstance(value, str) and
                             value.strip().lower() in ("", "-", "default"))


class Switch(Record):
    """One house-rule switch of a game.

    ``choices`` lists the allowed words of a text switch; ``aliases`` maps other spellings to them
    (``"9-again"`` → ``"9"``). Whole-number switches have ``low``/``high`` bounds; a text default
    with bounds is a whole number or one of ``choices`` (``max_explosions=none``). A ``multiple``
    switch takes a set of ``choices`` joined with '+' (or ``none``, ``all``), kept in the order of
    ``choices``: ``explode_on=dmg+skill`` reads as ``skill+dmg``.
    """

    name: str
    default: bool | int | str
    rule: str
    help: str
    choices: tuple[str, ...] = ()
    aliases: Mapping[str, str] = MappingProxyType({})
    low: int | None = None
    high: int | None = None
    multiple: bool = False
    # a value that is not a word from a list (a column list, a class map): read by this function
    # of (name, value), which returns the value or raises an OptionError
    parse: Callable[[str, object], Any] | None = None
    # a table the game reads as data (a JSON object); what a file of it is called. The command
    # line and the Python API read such a file from its path (``load_files``); the rules never do
    file: str = ""

    def allowed(self) -> str:
        """The values this switch takes, in words (``astragal rules``, help texts)."""
        if self.file:
            return f"a JSON file: the {self.file}"
        if self.parse is not None:
            return "text"
        if isinstance(self.default, bool):
            return "true/false"
        if self.multiple:
            return "+".join(self.choices) + " (any of them), none or all"
        if isinstance(self.default, int) or self.low is not None or self.high is not None:
            span = (f" {self.low} to {self.high}" if self.low is not None and self.high is not None
                    else f" ≥ {self.low}" if self.low is not None
                    else f" ≤ {self.high}" if self.high is not None else "")
            return f"a whole number{span}" + (f" or {'/'.join(self.choices)}"
                                               if self.choices else "")
        return "/".join(self.choices)

    def read(self, value: object, where: str = "") -> Any:
        """The value, checked and normalised; an ``OptionError`` naming what was wrong (a table
        is named by ``where``, say the file it came from)."""
        if self.file:
            return self._read_table(value, where or f"the {self.file} of option {self.name}")
        if self.parse is not None:
            return self.parse(self.name, value)
        if isinstance(self.default, bool):
            return read_bool(self.name, value)
        if self.multiple:
            return self._read_set(value)
        text = str(value).strip().lower() if value is not None else "none"
        text = self.aliases.get(text, text)
        if isinstance(self.default, int) or (
                (self.low is not None or self.high is not None) and text not in self.choices):
            try:
                return read_int(self.name, value, self.low, self.high)
            except OptionError:
                if not self.choices:
                    raise
                raise OptionError(f"option {self.name} takes a whole number ({self.low} to "
                                  f"{self.high}) or {' / '.join(self.choices)}, "
                                  f"not {shown(value)}") from None
        if text not in self.choices:
            raise OptionError(f"option {self.name} takes one of {', '.join(self.choices)}, "
                              f"not {shown(value)}")
        return text

    def _read_table(self, value: object, where: str) -> Mapping[str, Any] | str:
        if no_table(value):
            return ""
        if isinstance(value, Mapping):
            if self.parse is not None:
                self.parse(where, value)  # the game checks the table's contents now
            return value
        if isinstance(value, str):
            raise OptionError(f"option {self.name} is a {self.file} file: only the command line "
                              f"(-o {self.name}=PATH) and the Python API read files; here give "
                              "the table itself")
        raise OptionError(f"option {self.name} takes the {self.file} (a JSON object) or the "
                          f"path of its file, not {shown(value)}")

    def _read_set(self, value: object) -> str:
        if isinstance(value, str):
            words = [w for w in value.strip().lower().replace(",", "+").replace(" ", "+")
                     .replace("|", "+").replace("/", "+").split("+") if w]
        elif isinstance(value, Iterable):
            words = [str(w).strip().lower() for w in value]
        else:
            raise OptionError(f"option {self.name} takes {' / '.join(self.choices)} joined with "
                              f"'+', not {shown(value)}")
        if words in ([], ["none"]):
            return "none"
        if words == ["all"]:
            return "+".join(self.choices)
        chosen: set[str] = set()
        for word in words:
            word = self.aliases.get(word, word)
            if word not in self.choices:
                raise OptionError(f"option {self.name}: '{word}' is not one of "
                                  f"{', '.join(self.choices)} (join them with '+'), or none / "
                                  "all")
            chosen.add(word)
        return "+".join(c for c in self.choices if c in chosen)


# one switch is one object: compared and hashed by identity (its aliases are a mapping)
Switch.__eq__ = object.__eq__  # type: ignore[method-assign]
Switch.__ne__ = object.__ne__  # type: ignore[method-assign]
Switch.__hash__ = object.__hash__  # type: ignore[method-assign]


@lru_cache(maxsize=64)
def _table(switches: tuple[Switch, ...]) -> tuple[dict[str, Switch], dict[str, Any]]:
    return {s.name: s for s in switches}, {s.name: s.default for s in switches}


def resolve(switches: Iterable[Switch], options: Mapping[str, Any] | None,
            title: str) -> dict[str, Any]:
    """The switches' defaults overlaid with ``options``, each value read by its switch."""
    table, defaults = _table(tuple(switches))
    out = dict(defaults)
    for key, value in (options or {}).items():
        k = str(key).replace("-", "_").lower()
        switch = table.get(k)
        if switch is None:
            raise OptionError(f"'{key}' is not a {title} option; options are "
                              f"{', '.join(sorted(table))}")
        default = switch.default
        # a value already in its switch's own form (the default's type) needs no second reading
        if value is default or (type(value) is type(default) and value == default):
            continue
        out[k] = switch.read(value)
    return out


def load_files(switches: Iterable[Switch], options: Mapping[str, Any] | None,
               ) -> Mapping[str, Any] | None:
    """``options`` with each table switch given as a path replaced by the file's JSON: what the
    command line and the Python API do before a game sees its options (``file`` switches)."""
    if not options:
        return options
    tables = {s.name: s for s in switches if s.file}
    if not tables:
        return options
    from ._files import read_json

    out = dict(options)
    for key, value in options.items():
        switch = tables.get(str(key).replace("-", "_").lower())
        if switch is not None and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if switch is not None and isinstance(value, str) and not no_table(value):
            path = value.strip()
            out[key] = switch.read(read_json(path, switch.file, OptionError),
                                   f"the {switch.file} {path}")
    return out
