"""Display names that cannot pass for one another: visible characters only, compared by skeleton.

A player must not be able to join as "Mei" beside the GM "Mei" by writing it with a Cyrillic
``е``, a Greek ``Μ``, an invisible joiner, a Hangul filler or a blank Braille cell. Two rules:

1. **Refused characters**: controls, format and unassigned characters, line separators, Unicode's
   *default ignorable* code points (variation selectors, the combining grapheme joiner, Hangul
   and Khmer fillers…), characters that draw nothing (the blank Braille pattern), a name mixing
   scripts beyond what a real name does (ICU's *moderately restrictive* level of Unicode TR39:
   Latin with one other script, but not Latin with Cyrillic or Greek), and repeated marks.
2. **Compared by skeleton**: two names clash when their TR39 confusable skeletons are equal,
   either as written or after NFKC folding, case folding and removing accents. So "Mei", "MEI",
   "Ｍｅｉ", "Méi" and "rnei" are one name at a table.

The skeleton and the checks are ICU's (``SpoofChecker``, through PyICU): the Unicode Consortium's
own implementation of TR39 and its confusables data, rather than a hand-made list.
"""

from __future__ import annotations

import threading
import unicodedata
from typing import Any

__all__ = ["clash", "hidden_character", "name_keys"]

# Drawn as nothing at all, yet neither whitespace nor default-ignorable in Unicode's data.
_BLANK = frozenset("\u2800\u115f\u1160\u3164\uffa0")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

_local = threading.local()


def _icu() -> Any:
    import icu  # type: ignore[import-untyped]

    return icu


def _checker() -> Any:
    """One ICU SpoofChecker per thread (the checker is not documented as thread-safe)."""
    checker = getattr(_local, "checker", None)
    if checker is None:
        icu = _icu()
        checker = icu.SpoofChecker()
        checker.setRestrictionLevel(icu.URestrictionLevel.MODERATELY_RESTRICTIVE)
        checker.setChecks(icu.USpoofChecks.RESTRICTION_LEVEL | icu.USpoofChecks.INVISIBLE)
        _local.checker = checker
    return checker


def hidden_character(text: str) -> str | None:
    """Why ``text`` may not be a name (naming the character), or None when every character
    shows and the scripts mix as a real name's do."""
    icu = _icu()
    ignorable = icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT
    for c in text:
        if (unicodedata.category(c) in _HIDDEN_CATEGORIES or c in _BLANK
                or icu.Char.hasBinaryProperty(c, ignorable)):
            return (f"has an invisible character (U+{ord(c):04X} "
                    f"{unicodedata.name(c, 'unnamed')}): use letters you can see")
    flags = _checker().check(text)
    if flags & icu.USpoofChecks.RESTRICTION_LEVEL:
        scripts = sorted({icu.Script.getScript(c).getName() for c in text if c.isalpha()}
                         - {"Common", "Inherited"})
        return (f"mixes the scripts {', '.join(scripts)} in a way that can imitate another "
                "name: write it in one script")
    if flags & icu.USpoofChecks.INVISIBLE:
        return "repeats an accent on one letter (drawn once, it would look like another name)"
    return None


def name_keys(name: str) -> tuple[str, str]:
    """The two skeletons a name is compared by: as written, and folded (NFKC, case, accents)."""
    checker = _checker()
    seen = checker.getSkeleton(0, unicodedata.normalize("NFKC", name))
    folded = unicodedata.normalize("NFKC", name).casefold()
    bare = "".join(c for c in unicodedata.normalize("NFD", folded)
                   if unicodedata.category(c) != "Mn")
    # The skeleton maps capitals to the lower-case letters they resemble (I to l): fold again.
    folded_key = checker.getSkeleton(0, checker.getSkeleton(0, bare).casefold())
    return seen, folded_key


def clash(name: str, others: list[str]) -> str | None:
    """The first of ``others`` that ``name`` could pass for, or None."""
    mine = name_keys(name)
    for other in others:
        theirs = name_keys(other)
        if mine[0] == theirs[0] or mine[1] == theirs[1]:
            return other
    return None
