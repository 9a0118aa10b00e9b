"""Shared words as anchors (Hunalign's and Bleualign's idea of identical strings across a translation): the words
of each line that occur spelled the same in the other document, as ids a bead's cost compares (:mod:`.costs`), as
:mod:`.numbers` does with numbers. Names of people, places and peaks, titles and technical terms survive translation
between languages of one script, so a bead whose two sides share such a word is likelier right. Off by default:
no weight tried raised the mean dev F1 (``xlsent eval align_ablation``, the word-weight rows in docs/results.md).

A word is a run of at least :data:`MIN_CHARS` letters (digits and underscores end it), compared case-folded. It is
an anchor when it occurs in both documents and, in each, on at most :data:`MAX_LINES` lines or :data:`MAX_SHARE` of
the lines, whichever is more: a word frequent in either document is a function word both languages happen to spell
alike (English and German "also"), which says nothing about a bead. Documents in two scripts share only the words
one writes in the other's script (Latin names in Chinese text), so there the anchors are few and the cost as before.

>>> src, tgt = line_words(["Die Eiger-Nordwand", "Zermatt im Winter"], ["La face nord de l'Eiger", "Zermatt"])
>>> src.ids.tolist(), src.starts.tolist()
([0, 1], [0, 1, 2])
>>> words("Die Eiger-Nordwand, 1938")
['eiger', 'nordwand']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from xlsent.align.anchors import Anchors, LineIds, anchor_ids

WORD = re.compile(r"[^\W\d_]+")
"""A word: a run of letters of any script."""
MIN_CHARS = 4
"""Shorter words are no anchors: most short words shared by two languages are function words or abbreviations."""
MAX_LINES = 3
"""A word on at most this many lines of each document (or :data:`MAX_SHARE` of its lines, whichever is more) is an
anchor ..."""
MAX_SHARE = 0.01
"""... so that in a long document a name cited on many pages still anchors."""


def words(line: str) -> list[str]:
    """The case-folded words of ``line`` of :data:`MIN_CHARS` letters or more, in order."""
    return [w.casefold() for w in WORD.findall(line) if len(w) >= MIN_CHARS]


def line_words(src: Sequence[str], tgt: Sequence[str]) -> tuple[LineIds, LineIds]:
    """The anchor words of each line of ``src`` and of ``tgt`` (words of both documents, rare in each), each word
    one id."""
    found_src, found_tgt = [words(line) for line in src], [words(line) for line in tgt]
    return anchor_ids(found_src, found_tgt, _rare(found_src) & _rare(found_tgt))


def _rare(found: list[list[str]]) -> set[str]:
    """The words on at most :data:`MAX_LINES` lines, or :data:`MAX_SHARE` of them, of one document."""
    lines = Counter(w for line in found for w in set(line))
    most = max(MAX_LINES, int(MAX_SHARE * len(found)))
    return {w for w, n in lines.items() if n <= most}


def word_anchors(src: Sequence[str], tgt: Sequence[str], weight: float) -> Anchors:
    """The word anchors of documents ``src`` and ``tgt`` (:func:`line_words`) at ``weight``."""
    return Anchors(*line_words(src, tgt), weight)
