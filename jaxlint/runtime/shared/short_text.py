"""Text cut to a length for a verdict's reason: the verify child's judge and the report (`runtime_output`)
clip the same way."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """Cut at a word boundary, with an ellipsis, when over `limit` characters: never mid-word."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if not text[limit - 1].isspace():  # the cut falls inside a word: drop that word
        space = cut.rfind(" ")
        cut = cut[:space] if space > limit // 2 else cut
    return cut.rstrip(" ,;:(") + "…"
