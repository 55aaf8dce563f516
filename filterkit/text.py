"""Texts as messages show them."""

from __future__ import annotations

import json
import re

#: A JSON escape of a UTF-16 surrogate, text only in a pair: a JSON text without one holds no lone surrogate.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def shown(text: str, most: int = 60) -> str:
    """``text`` quoted for an error message, its middle cut out when longer than ``most`` characters."""
    if len(text) <= most:
        return repr(text)
    half = most // 2
    return repr(text[:half] + "…" + text[-half:]) + f" ({len(text):,} characters)"


def unwritable_text_at(document: object) -> str | None:
    """Where in a JSON ``document`` the first key or string UTF-8 cannot write (a lone surrogate, ``"\\udc80"``)
    is, as ``a.b[2]`` (or ``a key of a.b``; the document itself: ``the top``), or None."""
    try:  # the whole document at C speed (a vocabulary of emoji, written as surrogate pairs, is text)
        json.dumps(document, ensure_ascii=False).encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    unvisited: list[tuple[str, object]] = [("", document)]
    while unvisited:
        where, value = unvisited.pop()
        if isinstance(value, str) and not _writable(value):
            return where or "the top"
        if isinstance(value, dict):
            if not all(_writable(key) for key in value):
                return f"a key of {where or 'the top'}"
            unvisited += reversed([(f"{where}.{key}".lstrip("."), item) for key, item in value.items()])
        elif isinstance(value, list):
            unvisited += reversed([(f"{where}[{position}]", item) for position, item in enumerate(value)])
    return None


def _writable(text: str) -> bool:
    """Whether UTF-8 can write ``text`` (a lone surrogate it cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
