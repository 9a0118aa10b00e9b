"""The one definition of "empty text" that every reader of sentences uses (``embed``, ``mine``, ``score``, the service).

A text is empty when nothing is left after removing whitespace, Unicode format characters (category Cf: zero-width
space U+200B, zero-width non-joiner U+200C, byte order mark U+FEFF, soft hyphen U+00AD, ...) and control characters
(category Cc: ``\\x01``, ...). Such a line passes ``str.strip()`` but tokenizes to nothing, so every one of them would
get the same vector: it is treated as a blank line instead (a zero vector, no part in any neighbourhood, a 400 from
the service).
"""

from __future__ import annotations

import unicodedata

INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc"})
"""Unicode general categories that carry no text: format and control characters."""


def is_empty(text: str) -> bool:
    """Whether ``text`` holds nothing but whitespace, format (Cf) and control (Cc) characters.

    >>> is_empty(""), is_empty(" \\t"), is_empty("\\u200b\\u200c\\ufeff\\u00ad\\x01"), is_empty("a\\u200b")
    (True, True, True, False)
    """
    return all(ch.isspace() or unicodedata.category(ch) in INVISIBLE_CATEGORIES for ch in text)
