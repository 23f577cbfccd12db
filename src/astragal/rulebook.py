"""The rulebook: every rule of every game, registered once under its ID from RULES.md.

A game marks each rule function with ``@rule("C5", "a face of N or more is rolled again")``. The
function is returned unchanged (no cost on the rolling path); the registry only records it, so
``astragal.rulebook("cofd")`` and ``astragal rules cofd`` list what each game implements, and the
tests can check that each registered rule is used by both the roller and the odds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ._records import Record

__all__ = ["Reading", "reading", "readings", "rule", "rulebook"]

F = TypeVar("F", bound=Callable[..., Any])


class Rule(Record):
    """One rule: its game, its ID in RULES.md, its one-line statement and the function."""

    system: str
    id: str
    statement: str
    function: Callable[..., Any]


_BOOK: dict[str, dict[str, Rule]] = {}


class Reading(Record):
    """A place where the text can be read two ways, stated plainly: the reading the engine takes
    (RULES.md gives the sentence it rests on) and the switch that takes the other."""

    system: str
    id: str
    text: str


_READINGS: dict[str, dict[str, Reading]] = {}


def reading(system: str, rule_id: str, text: str) -> None:
    """Record the reading of ``rule_id`` that ``system`` takes (``astragal rules`` prints it)."""
    _READINGS.setdefault(system, {})[rule_id] = Reading(system, rule_id, text)


def readings(system: str) -> tuple[Reading, ...]:
    """The readings ``system`` (a name or alias) takes where the text is unclear, by ID."""
    from .systems import get_system

    name = get_system(system).name
    return tuple(sorted(_READINGS.get(name, {}).values(), key=lambda r: (r.id[:1], _key(r.id))))


def rule(system: str, rule_id: str, statement: str) -> Callable[[F], F]:
    """Register the decorated function as rule ``rule_id`` of ``system``."""

    def register(function: F) -> F:
        book = _BOOK.setdefault(system, {})
        if rule_id in book and book[rule_id].function.__qualname__ != function.__qualname__:
            raise ValueError(f"rule {rule_id} of {system} is registered twice")
        book[rule_id] = Rule(system, rule_id, statement, function)
        return function

    return register


def _key(rule_id: str) -> tuple[Any, ...]:
    # C5 < C5a < C10 < C-A4 < C-X1: the statements first, by number, then ambiguities, extensions
    import re

    parts = re.findall(r"[A-Za-z]+|\d+", rule_id)
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts[1:]) if len(
        parts) > 1 else ((2, 0, rule_id),)


def rulebook(system: str) -> tuple[Rule, ...]:
    """The registered rules of ``system`` (a name or alias), in RULES.md order."""
    from .systems import get_system

    name = get_system(system).name
    return tuple(sorted(_BOOK.get(name, {}).values(), key=lambda r: (r.id[:1], _key(r.id))))
