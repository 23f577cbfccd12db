"""The example games of examples/, loaded from their files as a designer's would be."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from astragal.kit import install

ROOT = Path(__file__).resolve().parents[2] / "examples"
NAMES = ("pbta", "fate", "coc", "savage", "dragonage", "cortex", "onering")


def load(name: str, folder: Path = ROOT) -> ModuleType:
    path = folder / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{folder.name}_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_GAMES: dict[str, ModuleType] = {}


def game(name: str) -> ModuleType:
    """The example's module, its game installed in this process (once)."""
    if name not in _GAMES:
        _GAMES[name] = load(name)
        install(_GAMES[name].game)
    return _GAMES[name]
