"""A game's notation from one line: ``"{pool:int} [vs {rival:int}] [{rote:rote}]"``.

The form is a row of words. A word is literal text (matched in any case), fields, or both
(``{dice:int}k{keep:int}``); ``[ ... ]`` makes a part optional. A field is ``{name:type}`` or
``{name:type=default}``, its type one of:

- ``int`` a whole number, ``+int`` one with an optional sign (``+2``, ``-1``);
- ``a|b|c`` one of these words (the value is the word as written in the form);
- ``@table`` a word of the game's table of that name (the value is the table's value);
- ``dice`` die sizes, one word or more: ``d8 2d6 d4`` (the value is the sizes, ``(8, 6, 6, 4)``).

Errors point at the word that did not fit, and a misspelt word gets the nearest one it could
have been (``did you mean 'again'?``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from .._errors import NotationError

__all__ = ["Form", "Spec"]

BIGGEST = 1_000_000  # a number in a form is at most this (a count of dice, a bonus)
MOST_SIDES = 1000  # a die a form names (``d8``) has at most this many sides

_FIELD = re.compile(r"\{(\w+):([^}=]+)(?:=([^}]*))?\}")
_DIE = re.compile(r"(\d*)d(\d+)", re.IGNORECASE)


class _TooBig(Exception):
    """A number out of bounds, at its word."""

    def __init__(self, message: str, token: tuple[str, int, int]) -> None:
        super().__init__(message)
        self.message, self.token = message, token


class _Field:
    __slots__ = ("choices", "default", "kind", "name", "table")

    def __init__(self, name: str, kind: str, default: str | None,
                 tables: Mapping[str, Mapping[str, Any]]) -> None:
        self.name, self.kind = name, kind
        self.choices: tuple[str, ...] = ()
        self.table: Mapping[str, Any] = {}
        if kind.startswith("@"):
            if kind[1:] not in tables:
                raise ValueError(f"the form names a table '{kind[1:]}' the game does not have")
            self.table = {k.lower(): v for k, v in tables[kind[1:]].items()}
        elif kind not in ("int", "+int", "dice"):
            self.choices = tuple(kind.split("|"))
        self.default = None if default is None else self.read(default)

    def pattern(self) -> str:
        if self.kind == "int":
            return r"\d+"
        if self.kind == "+int":
            return r"[+\-−]?\d+"
        if self.table:
            return "|".join(re.escape(k) for k in sorted(self.table, key=len, reverse=True))
        return "|".join(re.escape(c) for c in sorted(self.choices, key=len, reverse=True))

    def read(self, word: str) -> Any:
        if self.kind in ("int", "+int"):
            return int(word.replace("−", "-"))
        if self.table:
            return self.table[word.lower()]
        choice = next(c for c in self.choices if c.lower() == word.lower())
        return int(choice) if choice.isdigit() else choice

    def words(self) -> tuple[str, ...]:
        return tuple(self.table) if self.table else self.choices

    def show(self, value: Any) -> str:
        if self.kind == "+int":
            return f"{value:+d}"
        if self.table:
            return next(k for k, v in self.table.items() if v == value)
        if self.kind == "dice":
            return _show_dice(value)
        return str(value)

    def expects(self) -> str:
        if self.kind == "int":
            return f"a whole number ({self.name})"
        if self.kind == "+int":
            return f"a number such as +2 or -1 ({self.name})"
        if self.kind == "dice":
            return f"dice such as d8 or 2d6 ({self.name})"
        return " or ".join(f"'{w}'" for w in self.words())


def _show_dice(sizes: tuple[int, ...]) -> str:
    out: list[str] = []
    for s in dict.fromkeys(sizes):
        n = sizes.count(s)
        out.append(f"{n}d{s}" if n > 1 else f"d{s}")
    return " ".join(out)


class _Word:
    """One word of the form: literal text and fields, matched as one regular expression."""

    __slots__ = ("fields", "literal", "optional", "parts", "regex")

    def __init__(self, text: str, tables: Mapping[str, Mapping[str, Any]]) -> None:
        self.parts: list[str | _Field] = []
        pos = 0
        for m in _FIELD.finditer(text):
            if m.start() > pos:
                self.parts.append(text[pos:m.start()])
            self.parts.append(_Field(m[1], m[2], m[3], tables))
            pos = m.end()
        if pos < len(text):
            self.parts.append(text[pos:])
        self.fields = [p for p in self.parts if isinstance(p, _Field)]
        self.literal = "".join(p for p in self.parts if isinstance(p, str)).lower()
        self.optional = bool(self.fields) and not self.literal and all(
            f.default is not None for f in self.fields)
        self.regex = re.compile("".join(
            re.escape(p) if isinstance(p, str) else f"({p.pattern()})" for p in self.parts
            if not (isinstance(p, _Field) and p.kind == "dice")), re.IGNORECASE)

    def expects(self) -> str:
        if not self.fields:
            return f"'{self.literal}'"
        if len(self.parts) == 1:
            return self.parts[0].expects()  # type: ignore[union-attr]
        return "'" + "".join(p if isinstance(p, str) else f"{{{p.name}}}"
                             for p in self.parts) + "'"

    def show(self, values: Mapping[str, Any]) -> str:
        return "".join(p if isinstance(p, str) else p.show(values[p.name]) for p in self.parts)


_Item = _Word | list[Any]  # a word, or an optional group of items


class Spec:
    """What a roll of a kit game asked for: its fields by name; ``str`` is canonical notation."""

    __slots__ = ("_form", "values")

    def __init__(self, form: Form, values: Mapping[str, Any]) -> None:
        self._form, self.values = form, dict(values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Spec) and other._form is self._form and (
            other.values == self.values)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.values.items())))

    def __str__(self) -> str:
        return f"{self._form.prefix}: {self._form.show(self.values)}"

    def __repr__(self) -> str:
        return f"Spec({str(self)!r})"


class Form:
    """A game's notation, read from its one-line form."""

    def __init__(self, prefix: str, form: str,
                 tables: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.prefix, self.text = prefix, form
        self.items = self._items(form.replace("[", " [ ").replace("]", " ] ").split(),
                                 tables or {})
        self.fields: dict[str, _Field] = {}
        for w in self._words(self.items):
            for f in w.fields:
                self.fields[f.name] = f

    def _items(self, words: list[str], tables: Mapping[str, Mapping[str, Any]]) -> list[Any]:
        stack: list[list[Any]] = [[]]
        for w in words:
            if w == "[":
                stack.append([])
            elif w == "]":
                if len(stack) == 1:
                    raise ValueError(f"an unopened ']' in the form {self.text!r}")
                group = stack.pop()
                stack[-1].append(group)
            else:
                stack[-1].append(_Word(w, tables))
        if len(stack) != 1:
            raise ValueError(f"an unclosed '[' in the form {self.text!r}")
        return stack[0]

    def _words(self, items: list[Any]) -> list[_Word]:
        out: list[_Word] = []
        for it in items:
            out.extend(self._words(it) if isinstance(it, list) else [it])
        return out

    # reading -------------------------------------------------------------------------------

    def parse(self, text: str, start: int = 0) -> Spec:
        tokens = [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", text[start:])]
        tokens = [(w, a + start, b + start) for w, a, b in tokens]
        self._far: tuple[int, list[_Word]] = (-1, [])
        try:
            found = self._match(self.items, tokens, 0, {})
        except _TooBig as e:
            raise NotationError(e.message, text, e.token[1:]) from None
        done = [(pos, vals) for pos, vals in found if pos == len(tokens)]
        if done:
            values = {name: f.default for name, f in self.fields.items()}
            values.update(done[0][1])
            return Spec(self, values)
        far, wanted = self._far
        best = max((pos for pos, _ in found), default=-1)
        if best > far:
            far, wanted = best, []
        return self._error(text, tokens, max(far, 0), wanted, could_end=best == far)

    def _match(self, items: list[Any], tokens: list[tuple[str, int, int]], pos: int,
               vals: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        if not items:
            return [(pos, vals)]
        head, rest = items[0], items[1:]
        out: list[tuple[int, dict[str, Any]]] = []
        if isinstance(head, list):
            for p, v in self._match(head, tokens, pos, vals):
                out.extend(self._match(rest, tokens, p, v))
            out.extend(self._match(rest, tokens, pos, vals))
            return out
        step = self._word(head, tokens, pos)
        if head.optional:  # a field with a default may be left out
            out.extend(self._match(rest, tokens, pos, vals))
        if step is None:
            if pos >= self._far[0]:
                self._far = (pos, (self._far[1] if pos == self._far[0] else []) + [head])
            return out
        p, got = step
        return self._match(rest, tokens, p, {**vals, **got}) + out

    def _word(self, word: _Word, tokens: list[tuple[str, int, int]],
              pos: int) -> tuple[int, dict[str, Any]] | None:
        if word.fields and word.fields[0].kind == "dice":
            sizes: list[int] = []
            while pos < len(tokens) and (m := _DIE.fullmatch(tokens[pos][0])):
                count, size = int(m[1] or 1), int(m[2])
                if not 1 <= size <= MOST_SIDES or count > BIGGEST:
                    raise _TooBig(f"{tokens[pos][0]}: a die here has 1 to {MOST_SIDES} sides and "
                                  f"at most {BIGGEST:,} of them are rolled", tokens[pos])
                sizes.extend([size] * count)
                pos += 1
            return (pos, {word.fields[0].name: tuple(sizes)}) if sizes else None
        if pos >= len(tokens):
            return None
        m = word.regex.fullmatch(tokens[pos][0])
        if m is None:
            return None
        got = {f.name: f.read(g) for f, g in zip(word.fields, m.groups())}
        for f in word.fields:
            if f.kind in ("int", "+int") and abs(got[f.name]) > BIGGEST:
                raise _TooBig(f"{got[f.name]} is too large for {f.name}: at most {BIGGEST:,}",
                              tokens[pos])
        return pos + 1, got

    def _error(self, text: str, tokens: list[tuple[str, int, int]], at: int,
               wanted: list[_Word], could_end: bool) -> Spec:
        options = list(dict.fromkeys(w.expects() for w in wanted))
        expected = " or ".join(options + (["nothing more"] if could_end or not options else []))
        if at >= len(tokens):
            end = len(text.rstrip())
            raise NotationError(f"the notation ends too early: expected {expected}", text,
                                (end, end + 1))
        word, a, b = tokens[at]
        choices = [c for w in wanted for c in ([w.literal] if not w.fields else
                                               [x for f in w.fields for x in f.words()])]
        near = difflib.get_close_matches(word.lower(), [c.lower() for c in choices], 1, 0.6)
        hint = f": did you mean '{near[0]}'?" if near else ""
        raise NotationError(f"'{word}' does not fit here: expected {expected}{hint}", text, (a, b))

    # writing -------------------------------------------------------------------------------

    def show(self, values: Mapping[str, Any]) -> str:
        return " ".join(self._show(self.items, values)).strip()

    def _show(self, items: list[Any], values: Mapping[str, Any]) -> list[str]:
        out: list[str] = []
        for it in items:
            if isinstance(it, list):
                inner = self._words(it)
                fields = [f for w in inner for f in w.fields]
                if fields and all(values.get(f.name) not in (None, f.default, ()) for f in fields):
                    out.extend(self._show(it, values))
            elif not (it.optional and all(values.get(f.name) == f.default for f in it.fields)):
                out.append(it.show(values))
        return out
