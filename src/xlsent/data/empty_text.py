"""The one definition of "empty text" that every reader of sentences uses (``embed``, ``mine``, ``score``, the service).

A text is empty when nothing is left after removing whitespace, Unicode format characters (category Cf: zero-width
space U+200B, zero-width non-joiner U+200C, byte order mark U+FEFF, soft hyphen U+00AD, ...), control characters
(category Cc: ``\\x01``, ...) and the other code points Unicode says to show as nothing (Default_Ignorable_Code_Point:
variation selectors, the Hangul fillers, the combining grapheme joiner, ...). Such a line passes ``str.strip()`` but
tokenizes to nothing or to the unknown token, so every one of them would get one vector: it is treated as a blank
line instead (a zero vector, no part in any neighbourhood, a 400 from the service).
"""

from __future__ import annotations

import unicodedata

INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc"})
"""Unicode general categories that carry no text: format and control characters."""
IGNORABLE = frozenset(chr(c) for first, last in (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
    for c in range(first, last + 1))
"""Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): shown as nothing where not supported."""


def is_empty(text: str) -> bool:
    """Whether ``text`` holds nothing but whitespace, format (Cf), control (Cc) and default-ignorable characters.

    >>> is_empty(""), is_empty(" \\t"), is_empty("\\u200b\\u200c\\ufeff\\u00ad\\x01"), is_empty("a\\u200b")
    (True, True, True, False)
    >>> is_empty("\\ufe0f\\u3164\\u034f"), is_empty("\\u2764\\ufe0f")   # a variation selector alone; a heart with it
    (True, False)
    """
    return all(ch.isspace() or ch in IGNORABLE or unicodedata.category(ch) in INVISIBLE_CATEGORIES for ch in text)
