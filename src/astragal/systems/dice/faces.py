"""Faces typed in as a Fudge die shows them (``--faces -1,0,1,1``), for a roll of Fudge dice
alone: the tray reads a Fudge die's faces by position, 1 (−), 2 (blank), 3 (+), which is how they
are typed for any other roll (docs/notation.md, "Dice")."""

from __future__ import annotations

import re
from typing import Any

from ..._errors import FacesError
from .nodes import FUDGE, Computed, Dice

__all__ = ["fudge_positions"]

_VALUES = {"-1": "1", "-": "1", "0": "2", "+1": "3", "1": "3", "+": "3"}
_SIGNED = frozenset(("-1", "+1", "-", "+", "0"))
_SEPARATOR = re.compile(r"([\s,/]+)")


def _fudge_only(node: Any) -> bool:
    """Every die of the tree is a plain Fudge die (no custom faces, no rolled count)."""
    if isinstance(node, Computed):
        return False
    if isinstance(node, Dice):
        return node.sides == FUDGE and not node.custom
    return not isinstance(node, tuple) or all(_fudge_only(x) for x in node)


def fudge_positions(spec: Any, faces: str) -> str:
    """``faces`` with the Fudge values −1, 0, +1 (or -, +) as the positions 1, 2, 3, when the
    text types values (a signed face or a 0) and the roll has Fudge dice alone; otherwise
    ``faces`` as it is. Values and positions are never mixed: ``0,3`` is refused."""
    words = _SEPARATOR.split(faces.replace("\u2212", "-"))
    if _SIGNED.isdisjoint(words):
        return faces
    if not _fudge_only(spec):
        raise FacesError("faces typed as -1, 0, +1 are read for a roll of Fudge dice alone; "
                         "with other dice, type a Fudge die's faces as 1 (-), 2 (blank), 3 (+)",
                         faces, (0, len(faces)))
    out, at = [], 0
    for word in words:
        if word and not _SEPARATOR.fullmatch(word):
            if word not in _VALUES:
                raise FacesError(f"'{word}' is not a Fudge face: typed as values, they are "
                                 "-1, 0 and +1", faces, (at, at + len(word)))
            out.append(_VALUES[word])
        else:
            out.append(word)
        at += len(word)
    return "".join(out)
