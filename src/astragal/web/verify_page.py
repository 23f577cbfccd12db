"""Serving ``static/verify.html``: the self-contained page that checks a room's export.

The page must work opened from disk, so its scripts and style are inline; the table's pages
forbid inline scripts, so this one is served with a policy naming the SHA-256 of each of its own
scripts and its style, and nothing else (it may fetch from the table: the room's export).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from pathlib import Path

__all__ = ["PAGE", "headers"]

PAGE = Path(__file__).with_name("static") / "verify.html"


def _source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


@functools.cache
def headers() -> dict[str, str]:
    """The Content-Security-Policy of the page (its own inline scripts and style only)."""
    text = PAGE.read_text(encoding="utf-8")
    scripts = " ".join(map(_source, re.findall(r"<script>(.*?)</script>", text, re.DOTALL)))
    styles = " ".join(map(_source, re.findall(r"<style>(.*?)</style>", text, re.DOTALL)))
    return {"Content-Security-Policy": (
        f"default-src 'none'; script-src {scripts}; style-src {styles}; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        "Referrer-Policy": "no-referrer"}
