"""The text rules of ``xlsent filter``, one pure function each: a line's length, whether it is text at all (not a
URL, a number, a date, a menu), how alike the two sides of a pair are (an untranslated copy), and the key under
which two pairs are duplicates. What the limits are is :class:`xlsent.mining.filter_config.FilterConfig`'s business.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

WIDE_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")
"""Scripts whose characters each carry about a word: one counts :data:`WIDE_WEIGHT` in :func:`length`."""
WIDE_WEIGHT = 3

URL = re.compile(r"(?:https?://|ftp://|www\.)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)
"""A web address or an e-mail address."""
MENU_SEPARATORS = frozenset("|•·¦")
"""Tokens that separate the items of a menu (standing alone between spaces)."""
BREADCRUMB_SEPARATORS = frozenset({">", "/", "::", "»", "›"})
"""Tokens that separate the items of a breadcrumb trail when they stand alone twice or more in a line without an
opening quotation mark (French and other quotes are ``« ... »``, and a quote may close alone)."""
OPENING_QUOTES = frozenset("«‹")


def _is_wide(char: str) -> bool:
    return unicodedata.name(char, "").startswith(WIDE_SCRIPTS)


def _is_letter(char: str) -> bool:
    """A letter, or a mark that belongs to one (the vowel signs of Indic scripts, Thai tone marks)."""
    return char.isalpha() or unicodedata.category(char).startswith("M")


def length(text: str) -> int:
    """The length of ``text`` in characters (surrounding whitespace left out), a Chinese, Japanese or Korean
    character counting :data:`WIDE_WEIGHT`, so that lengths compare across scripts.

    >>> length(" Guten Morgen "), length("早上好")
    (12, 9)
    """
    text = text.strip()
    if text.isascii():
        return len(text)
    return sum(WIDE_WEIGHT if _is_wide(char) else 1 for char in text)


def length_ratio(a: int, b: int) -> float:
    """The longer of two lengths over the shorter (``inf`` when one is 0).

    >>> length_ratio(10, 30), length_ratio(0, 3)
    (3.0, inf)
    """
    return max(a, b) / min(a, b) if min(a, b) else float("inf")


def nontext(text: str, *, min_letter_share: float, max_digit_share: float) -> str:
    """Why ``text`` is not a sentence (empty when it is one): ``url`` (mostly a web or e-mail address), ``letters``
    (under ``min_letter_share`` of its non-space characters are letters or their marks: numbers, prices, codes),
    ``digits`` (over ``max_digit_share`` are digits: dates, phone numbers) or ``menu`` (items between separators
    such as ``|`` or ``•``, or a breadcrumb trail ``a > b > c``, ``a » b » c``). Shares weigh characters as
    :func:`length` does, so a number in a Chinese sentence counts as it would in its translation.

    >>> [nontext(t, min_letter_share=0.5, max_digit_share=0.25) for t in ("Das ist gut.", "www.example.com/shop",
    ...  "€ 19,99", "Monday, March 12, 2019", "Home | Products | Contact", "Go > Shop > Shoes")]
    ['', 'url', 'letters', 'digits', 'menu', 'menu']
    """
    rest = URL.sub(" ", text)
    visible = sum(not char.isspace() for char in text)
    weights = [(char, WIDE_WEIGHT if not char.isascii() and _is_wide(char) else 1) for char in rest
               if not char.isspace()]
    left = sum(weight for _, weight in weights)
    if visible and len(weights) < visible / 2:
        return "url"
    if not left or sum(weight for char, weight in weights if _is_letter(char)) < min_letter_share * left:
        return "letters"
    if sum(weight for char, weight in weights if char.isdigit()) > max_digit_share * left:
        return "digits"
    tokens = rest.split()
    crumbs = sum(token in BREADCRUMB_SEPARATORS for token in tokens)
    if any(token in MENU_SEPARATORS for token in tokens) or (crumbs >= 2 and not OPENING_QUOTES.intersection(rest)):
        return "menu"
    return ""


def normalise(text: str) -> str:
    """``text`` reduced to what tells sentences apart: NFKC, lower case, letters and digits only (punctuation,
    spacing and symbols dropped).

    >>> normalise("  Hello,   World! 2 "), normalise("hello world 2")
    ('helloworld2', 'helloworld2')
    """
    return "".join(char for char in unicodedata.normalize("NFKC", text).casefold() if char.isalnum())


def _bigrams(text: str) -> Counter[str]:
    return Counter(text[i:i + 2] for i in range(max(len(text) - 1, 1)))


def similarity(a: str, b: str) -> float:
    """How alike two sides are, 0 to 1: the Dice coefficient of the character bigrams of their :func:`normalise`
    forms (1 for an exact copy, about 0.2 or less for a translation between related languages).

    >>> similarity("The house is red.", "the house is red")
    1.0
    >>> round(similarity("The house is red.", "Das Haus ist rot."), 2)
    0.17
    """
    na, nb = normalise(a), normalise(b)
    if not na or not nb:
        return 1.0 if na == nb else 0.0
    ga, gb = _bigrams(na), _bigrams(nb)
    return 2 * sum((ga & gb).values()) / (sum(ga.values()) + sum(gb.values()))
