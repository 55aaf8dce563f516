"""Texts as messages show them."""

from __future__ import annotations


def shown(text: str, most: int = 60) -> str:
    """``text`` quoted for an error message, its middle cut out when longer than ``most`` characters."""
    if len(text) <= most:
        return repr(text)
    half = most // 2
    return repr(text[:half] + "…" + text[-half:]) + f" ({len(text):,} characters)"
