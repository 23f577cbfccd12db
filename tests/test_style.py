"""The house style's checks (CONTRIBUTING.md): ruff over the sources and tests, mypy --strict over
the package. Run with the tests so that CI holds them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=900)


def test_ruff_finds_nothing() -> None:
    pytest.importorskip("ruff", reason="ruff is in the test extra")
    out = _run("ruff", "check", "src", "tests", "examples", "benchmarks")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_finds_nothing() -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    out = _run("mypy", "--strict", "src/astragal")
    assert out.returncode == 0, out.stdout + out.stderr
