"""Sentence segmentation of paragraphs (``xlsent split``, ``xlsent align --split``): Wikimedia's sentencex, with
every sentence kept as a character span of its paragraph, so a sentence maps back to where it came from.

Why sentencex: on paragraphs of 2 to 5 consecutive NTREX-128 lines in 20 languages (150 paragraphs each; a line
boundary is a gold sentence boundary), its mean boundary F1 was 83.4, against 81.5 for pysbd and 72.6 for the Moses
splitter (``sentence-splitter``), which knows no Hindi danda and no Chinese or Japanese full stop (0 to 2 there; it
leads on English, Spanish, Greek, Persian and Arabic, 94-95 against 90-91). sentencex covers about 300 languages by
fallback chains, needs no model download and took 0.1 s for the 3000 paragraphs against 10.2 s for pysbd. Line
boundaries that are not sentence boundaries (an NTREX line of two sentences) cap every splitter near 90.
``benchmarks/split_compare.py`` measures it (on this session's AVX2 machine).

Languages whose script marks no sentence end (Thai, Khmer, Lao, Myanmar: :data:`NO_SENTENCE_MARK`) are not split:
a space there separates phrases as often as sentences (on Thai NTREX paragraphs, splitting at spaces found every
boundary at a precision of 0.12), so each paragraph stays one sentence, with a warning that names the language.

>>> [s.text for s in split_paragraphs(["Dr. Müller kam am 3. Mai. Er blieb!", "", "Gut so?"], "de")]
['Dr. Müller kam am 3. Mai.', 'Er blieb!', 'Gut so?']
>>> [(s.paragraph, s.start, s.end) for s in split_paragraphs(["Dr. Müller kam am 3. Mai. Er blieb!"], "de")]
[(0, 0, 25), (0, 26, 35)]
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from xlsent.data.empty_text import is_empty
from xlsent.data.tsv_field import clean_cell
from xlsent.languages import base_lang

log = logging.getLogger(__name__)

MAP_HEADER = "line\tstart\tend\tsentence\n"
"""The header of a sentence map (``xlsent split`` to a ``.tsv``, ``xlsent align --split``)."""
NO_SENTENCE_MARK = ("th", "km", "lo", "my")
"""Languages whose script has no sentence-final punctuation: a paragraph of theirs is kept whole."""


@dataclass(frozen=True)
class Sentence:
    """One sentence: the 0-based row of its paragraph, its character span there (``start`` to ``end``, end
    exclusive, without the spaces around it) and its text."""

    paragraph: int
    start: int
    end: int
    text: str


def sentence_spans(paragraph: str, lang: str) -> list[tuple[int, int]]:
    """The character spans of the sentences of ``paragraph`` in language ``lang`` (none for an empty one).

    >>> sentence_spans("  Ein Satz. Noch einer.  ", "de")
    [(2, 11), (12, 23)]
    """
    if is_empty(paragraph):
        return []
    if base_lang(lang) in NO_SENTENCE_MARK:
        start = len(paragraph) - len(paragraph.lstrip())
        return [(start, len(paragraph.rstrip()))]
    import sentencex

    spans, pos = [], 0
    for piece in sentencex.segment(base_lang(lang), paragraph):
        at = paragraph.find(piece, pos)
        if at < 0:  # sentencex returns pieces of its input, in order; never expected
            raise RuntimeError(f"sentencex returned text not in the paragraph: {piece!r}")
        pos = at + len(piece)
        start, end = at + len(piece) - len(piece.lstrip()), at + len(piece.rstrip())
        if end > start and not is_empty(paragraph[start:end]):
            spans.append((start, end))
    return spans


def split_paragraphs(paragraphs: Iterable[str], lang: str) -> list[Sentence]:
    """The sentences of every paragraph (one a row; an empty row has none), in order."""
    return list(iter_sentences(paragraphs, lang))


def iter_sentences(paragraphs: Iterable[str], lang: str) -> Iterator[Sentence]:
    """:func:`split_paragraphs`, one sentence at a time."""
    if base_lang(lang) in NO_SENTENCE_MARK:
        log.warning("%s has no sentence-final punctuation: each paragraph is kept as one sentence (split it with a "
                    "segmenter for %s first if you need sentences)", lang, lang)
    for row, text in enumerate(paragraphs):
        for start, end in sentence_spans(text, lang):
            yield Sentence(row, start, end, text[start:end])


def sentence_lines(sentences: Sequence[Sentence], *, tsv: bool, first_line: int = 1) -> list[str]:
    """The output lines of ``sentences``: with ``tsv``, the header and ``line TAB start TAB end TAB sentence`` (the
    paragraph's input line, counting its first row as ``first_line``); else the sentences, one a line.

    >>> sentence_lines([Sentence(0, 4, 9, "Zwei.")], tsv=True)
    ['line\\tstart\\tend\\tsentence\\n', '1\\t4\\t9\\tZwei.\\n']
    """
    if not tsv:
        return [clean_cell(s.text) + "\n" for s in sentences]
    return [MAP_HEADER, *(f"{s.paragraph + first_line}\t{s.start}\t{s.end}\t{clean_cell(s.text)}\n"
                          for s in sentences)]
