"""Shared notation helpers: a tokenizer that keeps spans, so every error can point at its character."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from .._errors import NotationError
from .._records import Record

__all__ = ["Token", "Tokens", "did_you_mean", "split_prefix", "tokenize", "unknown"]

_TOKEN = re.compile(r"\s*(?:(?P<sym>[&,;()])|(?P<word>[^\s&,;()]+))")


class Token(Record):
    """One word or symbol of the input, with its position in the whole text."""

    text: str
    start: int
    end: int

    @property
    def lower(self) -> str:
        return self.text.lower()


class Tokens:
    """A cursor over tokens, raising errors that point into the original text."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.items = tokens
        self.i = 0

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.items[j] if j < len(self.items) else None

    def next(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise self.error_at_end("the notation ends too early")
        self.i += 1
        return tok

    def at_end(self) -> bool:
        return self.i >= len(self.items)

    def accept(self, *words: str) -> Token | None:
        tok = self.peek()
        if tok is not None and tok.lower in words:
            self.i += 1
            return tok
        return None

    def error(self, message: str, tok: Token) -> NotationError:
        return NotationError(message, self.text, (tok.start, tok.end))

    def unknown(self, tok: Token, what: str, choices: Iterable[str], hint: str) -> NotationError:
        """``tok`` is no word of ``what``: the error asks whether the closest choice was meant,
        else gives ``hint`` (what is expected there)."""
        return unknown(self.text, (tok.start, tok.end), tok.text, what, choices, hint)

    def error_at_end(self, message: str) -> NotationError:
        n = len(self.text.rstrip())
        return NotationError(message, self.text, (n, n + 1))


_SYMBOLS = frozenset("&,;()")


def tokenize(text: str, start: int = 0) -> Tokens:
    """Split ``text[start:]`` into words and the symbols ``& , ; ( )``."""
    tokens: list[Token] = []
    pos = start
    rest = text[start:] if start else text
    if _SYMBOLS.isdisjoint(rest):  # words only (most notation): no regex to run
        find = text.find
        for word in rest.split():  # str.split and the regex's \s split at the same spaces
            pos = find(word, pos)
            tokens.append(Token(word, pos, pos + len(word)))
            pos += len(word)
        return Tokens(text, tokens)
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        kind = "sym" if m.group("sym") else "word"
        tokens.append(Token(m.group(kind), m.start(kind), m.end(kind)))
        pos = m.end()
    return Tokens(text, tokens)


_PREFIX = re.compile(r"\s*([A-Za-z][A-Za-z0-9_\-]*)\s*:")


def split_prefix(text: str) -> tuple[str | None, int, tuple[int, int]]:
    """Find a system prefix such as ``jc:``: (name or None, where the rest starts, name span)."""
    if ":" not in text:  # most notation has none; a regex's first match in a process costs ~5 µs
        return None, 0, (0, 0)
    m = _PREFIX.match(text)
    if m is None:
        return None, 0, (0, 0)
    return m.group(1).lower(), m.end(), (m.start(1), m.end(1))


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """The choice a mistyped ``word`` is closest to (``9-agian`` → ``9-again``), or None when
    none is close: a slip of a letter or two, not a different word."""
    typed = word.lower()
    options = {c.lower(): c for c in choices}
    best = difflib.get_close_matches(typed, list(options), n=1, cutoff=0.75)
    if not best and len(typed) >= 3:  # a word cut short: 'rot' for 'rote', 'expe' for 'expert'
        best = sorted(c for c in options if c.startswith(typed))[:1]
    return options[best[0]] if best else None


def unknown(text: str, span: tuple[int, int], word: str, what: str, choices: Iterable[str],
            hint: str) -> NotationError:
    """The error for ``word`` at ``span``, which is not one of ``what`` (every game's notation
    says it this way): "did you mean" the closest choice, else ``hint``."""
    guess = did_you_mean(word, choices)
    if guess is not None:
        return NotationError(f"'{word}' is not {what}: did you mean '{guess}'?", text, span)
    return NotationError(f"'{word}' is not {what}: {hint}", text, span)
