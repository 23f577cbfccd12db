"""The sdist and wheel as a user gets them (issue 40, item 7): built from a copy of the tree
by PyPA's build frontend, they carry the licence, the rules, the docs and the whole test suite,
and say their licence in the SPDX form."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("build", reason="the packaging test builds with PyPA's build (test extra)")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("packaging")
    tree = tmp / "tree"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(
        ".git", ".ci-venv", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis", "build",
        "dist", "node_modules"))
    out = tmp / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(tree)],
                          check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return next(out.glob("*.tar.gz")), next(out.glob("*.whl"))


def test_the_sdist_carries_the_licence_rules_docs_and_tests(built: tuple[Path, Path]) -> None:
    with tarfile.open(built[0]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
        info = sdist.extractfile(next(n for n in sdist.getnames()
                                      if n.count("/") == 1 and n.endswith("/PKG-INFO")))
        assert info is not None
        meta = info.read().decode()
    for path in ("LICENSE", "RULES.md", "docs/architecture.md", "tests/conftest.py",
                 "tests/stats.py", "tests/data/vectors.json", "tests/test_rng.py"):
        assert path in names, path
    assert not any("__pycache__" in n for n in names)
    assert "License-Expression: MIT" in meta
    assert "Classifier: Topic :: Games/Entertainment :: Role-Playing" in meta


def test_the_wheel_carries_the_mit_licence(built: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(built[1]) as wheel:
        licence = next(n for n in wheel.namelist() if n.endswith("licenses/LICENSE"))
        text = wheel.read(licence).decode()
        meta = wheel.read(next(n for n in wheel.namelist() if n.endswith("/METADATA"))).decode()
    assert text.startswith("MIT License") and "the astragal authors" in text
    assert "License-Expression: MIT" in meta



def test_the_project_urls_point_into_the_tree_and_no_placeholder_ships(
        built: tuple[Path, Path]) -> None:
    """Issue 40, item 7: the URLs' table is kept in pyproject.toml until the project's home is
    named (CONTRIBUTING.md, "Releasing"); the paths it names exist, and whatever URLs the
    metadata does carry are real https links, never the placeholder."""
    import re
    from urllib.parse import urlsplit

    with tarfile.open(built[0]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    template = re.findall(r'^# (\w+) = "HOME(?:/blob/main/([^"]+))?', (ROOT / "pyproject.toml")
                          .read_text(encoding="utf-8"), re.MULTILINE)
    assert {label for label, _ in template} >= {"Homepage", "Documentation", "Source", "Issues"}
    for label, path in template:
        assert not path or path in names, (label, path)
    with zipfile.ZipFile(built[1]) as wheel:
        meta = wheel.read(next(n for n in wheel.namelist() if n.endswith("/METADATA"))).decode()
    for line in meta.splitlines():
        if line.startswith("Project-URL:"):
            url = urlsplit(line.split(",", 1)[1].strip())
            host = url.hostname or ""
            assert url.scheme == "https" and "." in host, line
            assert not host.startswith("example.") and not host.endswith(".invalid"), line
            assert "HOME" not in line, line
