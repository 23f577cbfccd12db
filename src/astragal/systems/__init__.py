"""The system registry: each game is one module that registers a ``System`` under names and aliases.

A system turns text into a ``Spec`` (``parse``), a spec and a source of faces into a ``Roll``
(``roll``), and a spec into exact ``Odds`` (``odds``). The roll and the odds use the same rule
functions, so they can never disagree.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

from .._errors import NotationError, OptionError
from .._limits import Limits
from .._records import Record
from .._rng import Source
from ..dice import Roll
from ..odds import Odds
from ..switches import Switch, load_files, read_bool, read_int, resolve

__all__ = ["ENTRY_POINT_GROUP", "GAMES_VARIABLE", "Game", "Odds", "System", "add_system",
           "get_system", "register", "resolve_options", "system_names"]

ENTRY_POINT_GROUP = "astragal.systems"  # a game in its own pip package registers here
GAMES_VARIABLE = "ASTRAGAL_GAMES"  # files or folders of game modules, joined by os.pathsep


class System(Protocol):
    """What a game module provides."""

    name: str
    aliases: tuple[str, ...]
    title: str
    defaults: Mapping[str, Any]

    def parse(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Any: ...

    def roll(self, spec: Any, source: Source, options: Mapping[str, Any], limits: Limits,
             text: str) -> Roll: ...

    def odds(self, spec: Any, options: Mapping[str, Any], limits: Limits, text: str) -> Odds: ...


class Game(Record):
    """The plumbing every game shares: a game is its name, its switches and three functions.

    ``switches`` declares each house rule once (``astragal.switches.Switch``); ``defaults`` is
    derived from them. ``parse``, ``roll`` and ``odds`` are the game's own functions.
    """

    name: str
    title: str
    parse_fn: Callable[[str, int, Mapping[str, Any], Limits], Any]
    roll_fn: Callable[[Any, Source, Mapping[str, Any], Limits, str], Roll]
    odds_fn: Callable[[Any, Mapping[str, Any], Limits, str], Odds]
    switches: tuple[Switch, ...] = ()
    aliases: tuple[str, ...] = ()
    tables: Mapping[str, Callable[[Mapping[str, Any]], list[list[str]]]] = MappingProxyType({})
    examples: tuple[str, ...] = ()  # rolls a player might type (the web room offers them)

    @property
    def defaults(self) -> dict[str, Any]:
        return {s.name: s.default for s in self.switches}

    def parse(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Any:
        return self.parse_fn(text, start, options, limits)

    def roll(self, spec: Any, source: Source, options: Mapping[str, Any], limits: Limits,
             text: str) -> Roll:
        return self.roll_fn(spec, source, options, limits, text)

    def odds(self, spec: Any, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
        return self.odds_fn(spec, options, limits, text)


_MODULES = {
    "jadeclaw": "astragal.systems.jadeclaw",
    "cofd": "astragal.systems.cofd",
    "d6system": "astragal.systems.d6system",
    "attack": "astragal.systems.attack",
    "d6skill": "astragal.systems.d6skill",
    "dice": "astragal.systems.dice",
}
_ALIASES = {
    "jadeclaw": "jadeclaw", "jc": "jadeclaw",
    "cofd": "cofd",
    "d6system": "d6system", "od6": "d6system",
    "attack": "attack", "at": "attack",
    "d6skill": "d6skill", "ds": "d6skill",
    "dice": "dice",
}
_LOADED: dict[str, System] = {}


def register(name: str, module: str, aliases: tuple[str, ...] = ()) -> None:
    """Register a system module (imported lazily on first use) under a name and aliases."""
    _MODULES[name] = module
    for alias in (name, *aliases):
        _ALIASES[alias] = name


def add_system(system: System) -> None:
    """Make ``system`` (a loaded game) one of this process's systems, under its aliases."""
    _MODULES.setdefault(system.name, type(system).__module__)
    _LOADED[system.name] = system
    for alias in (system.name, *system.aliases):
        _ALIASES.setdefault(alias.lower(), system.name)


def _discover() -> None:
    """Games installed as separate packages (the ``astragal.systems`` entry-point group), and
    games in the files ``ASTRAGAL_GAMES`` names."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _MODULES:
            _MODULES[ep.name] = ep.value.partition(":")[0]
            _ALIASES.setdefault(ep.name, ep.name)
            _ENTRY[ep.name] = ep.value
    _load_files()


_DISCOVERED = False
_ENTRY: dict[str, str] = {}
_FILE_ERRORS: list[str] = []  # the game files of ASTRAGAL_GAMES that failed, said when a name is


def _load_files() -> None:
    import os

    for entry in filter(None, os.environ.get(GAMES_VARIABLE, "").split(os.pathsep)):
        paths = (sorted(os.path.join(entry, f) for f in os.listdir(entry)
                        if f.endswith(".py") and not f.startswith("_"))
                 if os.path.isdir(entry) else [entry])
        for path in paths:
            try:
                _load_file(path)
            except Exception as e:  # noqa: BLE001 - one broken file must not stop the others
                _FILE_ERRORS.append(f"{path} could not be loaded ({type(e).__name__}: {e})")


def _load_file(path: str) -> None:
    """Import the game module at ``path`` and add every game it defines."""
    import importlib.util
    import os
    import sys

    stem = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(f"astragal_games.{stem}", path)
    if spec is None or spec.loader is None or not os.path.isfile(path):
        raise NotationError(f"{GAMES_VARIABLE} names '{path}', which is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    for value in list(vars(module).values()):
        if isinstance(value, _kit_game()):
            add_system(value)  # type: ignore[arg-type]  # a kit Game is a System


def _kit_game() -> type:  # the kit's Game class, imported only when files are read
    from ..kit import Game as KitGame

    return KitGame


def _learn_aliases() -> None:
    """Load the installed games not loaded yet, so that their own aliases are known (an entry
    point names a game once; its aliases live on the game)."""
    with _LOAD_LOCK:
        for key in list(_ENTRY):
            if key in _MODULES and key not in _LOADED:
                try:
                    _LOADED[key] = _load(key)
                except Exception:  # noqa: BLE001, S112 - a broken game must not break the lookup of
                    continue  # another name; asked for by its own name, it says what is wrong


def system_names() -> dict[str, tuple[str, ...]]:
    """Each system name with its aliases (installed games included)."""
    _discover()
    out: dict[str, list[str]] = {name: [] for name in _MODULES}
    for alias, name in _ALIASES.items():
        if alias != name:
            out[name].append(alias)
    return {k: tuple(v) for k, v in out.items()}


# Games load once, under one lock: a request that finds a game half imported by another thread
# (a server's concurrent first requests) waits for it instead of reading a module still being
# run ("partially initialized module") or skipping the game. Re-entrant: a game's import may
# ask for another game.
_LOAD_LOCK = threading.RLock()


def _load(key: str) -> System:
    target = _ENTRY.get(key, _MODULES[key])
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    system: System = getattr(module, attr or "SYSTEM")
    for alias in getattr(system, "aliases", ()):
        _ALIASES.setdefault(alias, key)
    return system


def get_system(name: str, text: str = "", span: tuple[int, int] | None = None) -> System:
    """The system called ``name`` (or one of its aliases)."""
    key = _ALIASES.get(name.lower())
    if key is None:
        _discover()
        key = _ALIASES.get(name.lower())
    if key is None:
        _learn_aliases()
        key = _ALIASES.get(name.lower())
    if key is None:
        known = ", ".join(sorted(_ALIASES))
        broken = "".join(f"; {e}" for e in _FILE_ERRORS)
        raise NotationError(f"unknown system '{name}': known systems are {known}{broken}", text,
                            span)
    loaded = _LOADED.get(key)
    if loaded is not None:
        return loaded
    with _LOAD_LOCK:
        if key not in _LOADED:
            try:
                _LOADED[key] = _load(key)
            except ModuleNotFoundError:
                raise NotationError(f"the system '{key}' is not available yet", text,
                                    span) from None
        return _LOADED[key]


def resolve_options(system: System, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The system's defaults overlaid with ``options``; unknown names or bad values are errors.

    A game that declares ``switches`` has each value read by its switch; for the others the type
    of the default decides (true/false, a whole number, or text the game checks itself).
    """
    if options is not None and not isinstance(options, Mapping):
        raise OptionError(f"options must be a mapping of switch names to values, not "
                          f"{type(options).__name__}")
    switches = getattr(system, "switches", None)
    if switches:
        return resolve(switches, load_files(switches, options), system.title)
    out = dict(system.defaults)
    for key, value in (options or {}).items():
        k = str(key).replace("-", "_")
        if k not in out:
            raise OptionError(
                f"'{key}' is not a {system.title} option; options are {', '.join(sorted(out))}"
            )
        default = out[k]
        if isinstance(default, bool):
            value = read_bool(str(key), value)
        elif isinstance(default, int):
            value = read_int(str(key), value)
        out[k] = value
    return out
