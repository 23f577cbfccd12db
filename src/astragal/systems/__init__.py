"""The system registry: each game is one module that registers a ``System`` under names and aliases.

A system turns text into a ``Spec`` (``parse``), a spec and a source of faces into a ``Roll``
(``roll``), and a spec into exact ``Odds`` (``odds``). The roll and the odds use the same rule
functions, so they can never disagree.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._errors import NotationError, OptionError
from .._limits import Limits
from .._rng import Source
from ..dice import Roll
from ..odds import Distribution

__all__ = ["Odds", "System", "get_system", "register", "resolve_options", "system_names"]


@dataclass(frozen=True, slots=True)
class Odds:
    """Exact odds of one roll: named outcome categories and the distribution of its value."""

    system: str
    input: str
    outcomes: Distribution
    distribution: Distribution
    value_name: str = "value"
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def mean(self) -> float:
        return self.distribution.mean()

    def _repr_html_(self) -> str:
        from ..render import odds_html

        return odds_html(self)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (see README: JSON output)."""
        out: dict[str, Any] = {
            "system": self.system,
            "input": self.input,
            "outcomes": self.outcomes.to_json(),
            "distribution": self.distribution.to_json(),
            "mean": self.mean,
        }
        if self.notes:
            out["notes"] = list(self.notes)
        if self.distribution.truncated:
            out["truncated"] = self.distribution.truncated
        out.update(self.extra)
        return out


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


def system_names() -> dict[str, tuple[str, ...]]:
    """Each system name with its aliases."""
    out: dict[str, list[str]] = {name: [] for name in _MODULES}
    for alias, name in _ALIASES.items():
        if alias != name:
            out[name].append(alias)
    return {k: tuple(v) for k, v in out.items()}


def get_system(name: str, text: str = "", span: tuple[int, int] | None = None) -> System:
    """The system called ``name`` (or one of its aliases)."""
    key = _ALIASES.get(name.lower())
    if key is None:
        known = ", ".join(sorted(_ALIASES))
        raise NotationError(f"unknown system '{name}': known systems are {known}", text, span)
    if key not in _LOADED:
        try:
            module = importlib.import_module(_MODULES[key])
        except ModuleNotFoundError:
            raise NotationError(f"the system '{key}' is not available yet", text, span) from None
        _LOADED[key] = module.SYSTEM
    return _LOADED[key]


def resolve_options(system: System, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The system's defaults overlaid with ``options``; unknown names or bad values are errors."""
    out = dict(system.defaults)
    for key, value in (options or {}).items():
        k = key.replace("-", "_")
        if k not in out:
            raise OptionError(
                f"'{key}' is not a {system.title} option; options are {', '.join(sorted(out))}"
            )
        default = out[k]
        if isinstance(default, bool):
            if isinstance(value, str):
                if value.lower() not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
                    raise OptionError(f"option {key} takes true or false, not '{value}'")
                value = value.lower() in ("true", "on", "yes", "1")
            elif not isinstance(value, bool):
                raise OptionError(f"option {key} takes true or false, not {value!r}")
        elif isinstance(default, int):
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise OptionError(f"option {key} takes a whole number, not {value!r}") from None
        out[k] = value
    return out
