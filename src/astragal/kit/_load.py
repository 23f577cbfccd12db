"""Putting a kit game where every interface finds it: this process (``install``), or a file of
games named in ``ASTRAGAL_GAMES`` (read by ``astragal.systems`` when a game is looked up)."""

from __future__ import annotations

from typing import Any

__all__ = ["install"]


def install(game: Any) -> Any:
    """Make ``game`` (a ``Game``) a system of this process, under its name and aliases: the API,
    the command line and the web table then roll it like a built-in game."""
    from ..systems import add_system

    add_system(game)
    return game
