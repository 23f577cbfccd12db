"""A fight command's words (``astragal fight attack Anna Bo --seed 3 luck=1``, or the same typed
at the web table): positional words, flags, key=value pairs and where the dice come from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._digits import signed
from ..._errors import OptionError
from ..._rng import Source, SystemSource, make_source
from .combatants import FightError

__all__ = ["Args"]


class Args:
    """A command's words: positional words, flags, key=value pairs and the dice source."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words: list[str] = []
        self.pairs: dict[str, str] = {}
        self.json = False
        self.faces: str | None = None
        self.seed: int | None = None
        self.tables: dict[str, Any] = {}  # the JSON of table files named by pairs (the CLI's)
        items = list(words)
        i = 0
        while i < len(items):
            w = items[i]
            low = w.lower()
            if low == "--json":
                self.json = True
            elif low in ("--faces", "--seed"):
                if i + 1 >= len(items):
                    raise FightError(f"{w} needs a value")
                self._source(low[2:], items[i + 1])
                i += 1
            elif low.startswith(("--faces=", "--seed=", "faces=", "seed=")):
                key, _, value = w.lstrip("-").partition("=")
                self._source(key.lower(), value)
            elif "=" in w and not w.startswith("-"):
                key, _, value = w.partition("=")
                key = key.strip().lower().replace("-", "_")
                if key in self.pairs:
                    raise FightError(f"{key} is given twice")
                self.pairs[key] = value
            elif w.startswith("--"):
                raise FightError(f"unknown flag {w}")
            else:
                self.words.append(w)
            i += 1

    def _source(self, key: str, value: str) -> None:
        if key == "faces":
            if self.faces is not None:
                raise FightError("faces are given twice")
            self.faces = value
        else:
            if self.seed is not None:
                raise FightError("the seed is given twice")
            self.seed = signed(value)
            if self.seed is None:
                raise FightError(f"a seed is a whole number, not '{value}'")

    def source(self) -> Source:
        if self.faces is not None and self.seed is not None:
            raise OptionError("give either a seed or faces, not both")
        return make_source(self.seed, self.faces) \
            if (self.faces is not None or self.seed is not None) \
            else SystemSource()

    def no_source(self, command: str) -> None:
        if self.faces is not None or self.seed is not None:
            raise FightError(f"'{command}' rolls no dice: faces and seeds go with 'attack'")

    def no_pairs(self, command: str) -> None:
        if self.pairs:
            raise FightError(f"'{command}' takes no key=value words "
                             f"(got {', '.join(self.pairs)})")
