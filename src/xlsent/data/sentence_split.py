"""Sentence segmentation of paragraphs (``xlsent split``, ``xlsent align --split``): Wikimedia's sentencex, with
every sentence kept as a character span of its paragraph, so a sentence maps back to where it came from.

Why sentencex: on paragraphs of 2 to 5 consecutive NTREX-128 lines in 20 languages (150 paragraphs each; a line
boundary is a gold sentence boundary), its mean boundary F1 was 83.4, against 81.5 for pysbd and 72.6 for the Moses
splitter (``sentence-splitter``), which knows no Hindi danda and no Chinese or Japanese full stop (0 to 2 there; it
leads on English, Spanish, Greek, Persian and Arabic, 94-95 against 90-91). sentencex covers about 300 languages by
fallback chains, needs no model download and took 0.1 s for the 3000 paragraphs against 10.2 s for pysbd. Line
boundaries that are not sentence boundaries (an NTREX line of two sentences) cap every splitter near 90.
sentencex never ends a sentence inside a quotation, and news quotes run over several sentences: with quotation
marks and brackets hidden from it (:func:`sentence_spans`), the mean rose to 85.9 (18 of the 20 languages higher;
Polish 79.3 -> 79.0, Thai 3.8 -> 0: not split, below). ``benchmarks/split_compare.py`` measures it (on this
session's AVX2 machine).

Languages whose script marks no sentence end (Thai, Khmer, Lao, Myanmar: :data:`NO_SENTENCE_MARK`) are not split:
a space there separates phrases as often as sentences (on Thai NTREX paragraphs, splitting at spaces found every
boundary at a precision of 0.12), so each paragraph stays one sentence, with a warning that names the language.

>>> [s.text for s in split_paragraphs(["Dr. Müller kam am 3. Mai. Er blieb!", "", "Gut so?"], "de")]
['Dr. Müller kam am 3. Mai.', 'Er blieb!', 'Gut so?']
>>> [(s.paragraph, s.start, s.end) for s in split_paragraphs(["Dr. Müller kam am 3. Mai. Er blieb!"], "de")]
[(0, 0, 25), (0, 26, 35)]
"""

from __future__ import annotations

import itertools
import logging
import re
import unicodedata
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
CLOSING = frozenset(")]}”’›」』）》】〉")
"""Marks that close a quotation or a bracket."""
OPENING = frozenset("([{„‚‟「『（《【〈")
"""Marks that open one."""
EITHER = frozenset("\"'«»“‘‹")
"""Marks that open a quotation in one language and close it in another (``„so“``, ``“so”``, ``»so«``, ``« so »``):
closing before a space or another closing mark."""
HIDDEN = CLOSING | OPENING | EITHER
"""Quotation marks and brackets, shown to sentencex as spaces."""
WIDE_SPACES = frozenset(c for c in map(chr, range(0x80, 0x3001)) if c.isspace())
"""Every space character beyond ASCII (no-break, thin, ideographic ...: all lie below U+3001), shown to sentencex as
an ASCII space: sentencex 1.0's name-initial rule panics on one between a capital letter and a period (``plan
B\u00a0.``), a Rust panic no ``except Exception`` catches."""
_HIDE = str.maketrans(dict.fromkeys(HIDDEN | WIDE_SPACES, " "))
ITEM_NUMBER = re.compile(r"(?:(?<=[.!?…])\s+|^\s*)\d{1,3}\.$")
"""A list item's number after a sentence's end, which sentencex leaves at the end of that sentence (``Ende. 2.``
``Weiter``: the number reads as a German ordinal, ``am 2. Mai``) or alone: the sentence is cut before it, so it
starts the next one."""
ALONE_CLOSING = CLOSING | {"»"}
"""Marks that close a quotation when they stand alone after a space (French ``fin. »``)."""
LONE_PERIOD = re.compile(r"(?<=\s)\.(?=\s)")
"""A period with a space on each side, as in tokenized text (``kamen . 1954 gab``): a sentence ends there, whatever
follows (sentencex starts no sentence at a digit). A tokenizer detaches a period from its word where it judged the
sentence to end (Moses' keeps known abbreviations attached), and untokenized text has no lone period."""
CLAUSE_END = re.compile(r"[:;](?=\s+\S)")
"""Where :func:`split_units` cuts a sentence: after a colon or a semicolon with a space and more text after it (not
``10:30``; the full-width marks of Chinese and Japanese, with no space after them, are never cut)."""


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

    Sentence ends inside quotation marks and brackets count: sentencex itself never cuts inside a quotation, and a
    quotation left open (a quote that runs on into the next paragraph, common in news) kept the rest of the paragraph
    one sentence. Quotes and brackets are hidden from it (:data:`HIDDEN`); a closing mark after a sentence's end goes
    with that sentence, an opening one with the next.

    >>> sentence_spans("  Ein Satz. Noch einer.  ", "de")
    [(2, 11), (12, 23)]
    >>> p = 'Er sagte: „Wir gehen. Ihr bleibt.“ Dann ging er. « On verra. » Fin.'
    >>> [p[a:b] for a, b in sentence_spans(p, "de")]
    ['Er sagte: „Wir gehen.', 'Ihr bleibt.“', 'Dann ging er.', '« On verra. »', 'Fin.']
    """
    if is_empty(paragraph):
        return []
    if base_lang(lang) in NO_SENTENCE_MARK:
        start = len(paragraph) - len(paragraph.lstrip())
        return [(start, len(paragraph.rstrip()))]
    cuts = []
    for at, piece in _segments(paragraph, base_lang(lang)):
        item = ITEM_NUMBER.search(piece.rstrip())
        cuts.append(at + item.start() if item else _sentence_end(paragraph, at + len(piece.rstrip())))
    spans, start = [], 0
    for cut in [*cuts[:-1], len(paragraph)]:
        end = max(cut, start)
        text = paragraph[start:end]
        first, last = start + len(text) - len(text.lstrip()), start + len(text.rstrip())
        if last > first and not is_empty(paragraph[first:last]):
            spans.append((first, last))
        start = end
    return spans


def _segments(paragraph: str, lang: str) -> Iterator[tuple[int, str]]:
    """sentencex's sentences of ``paragraph`` with its quotation marks and brackets hidden (:data:`HIDDEN`), each
    with its offset, the text cut first after every lone period of the paragraph (:data:`LONE_PERIOD`).

    >>> [piece for _, piece in _segments("bis 7750 m kamen . 1954 gab es « Schnee ».", "de")]
    ['bis 7750 m kamen .', ' 1954 gab es   Schnee  .']
    """
    import sentencex

    hidden, start = paragraph.translate(_HIDE), 0
    for stop in [*(m.end() for m in LONE_PERIOD.finditer(paragraph)), len(paragraph)]:
        chunk, pos = hidden[start:stop], 0
        for piece in sentencex.segment(lang, chunk):
            at = chunk.find(piece, pos)
            if at < 0:  # sentencex returns pieces of its input, in order; never expected
                raise RuntimeError(f"sentencex returned text not in the paragraph: {piece!r}")
            pos = at + len(piece)
            yield start + at, piece
        start = stop


def _sentence_end(paragraph: str, end: int) -> int:
    """Where a sentence whose text ends at ``end`` ends with its closing marks: the punctuation right after it that
    opens nothing (``!"`` but not ``。「``), then a closing mark standing alone after a space (French ``fin. »``).

    >>> _sentence_end('"Go!" He', 4), _sentence_end("fin. » Puis", 4), _sentence_end("Ja. »Nein«", 3)
    (5, 6, 3)
    >>> _sentence_end("说。”他", 2), _sentence_end("说。“他", 2), _sentence_end("bleibt.“ Dann", 7)
    (3, 2, 8)
    """
    def closes(i: int) -> bool:  # a mark that opens a quotation in some languages closes one before a space
        after = paragraph[i + 1] if i + 1 < len(paragraph) else " "
        return after.isspace() or after in CLOSING or _plain_punctuation(after)

    while end < len(paragraph) and paragraph[end] not in OPENING and (
            paragraph[end] in CLOSING or (paragraph[end] in EITHER and closes(end))
            or _plain_punctuation(paragraph[end])):
        end += 1
    after = end
    while after < len(paragraph) and paragraph[after].isspace():
        after += 1
    while after < len(paragraph) and paragraph[after] in ALONE_CLOSING and closes(after):
        end = after = after + 1
    return end


def _plain_punctuation(char: str) -> bool:
    """Punctuation that is no quotation mark or bracket (``.``, ``!``, ``…``)."""
    return char not in HIDDEN and unicodedata.category(char)[0] == "P"


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


def split_units(paragraphs: Iterable[str], lang: str) -> list[Sentence]:
    """What ``xlsent align --split`` aligns: the sentences of every paragraph (:func:`split_paragraphs`), each cut
    again after a colon or a semicolon that more text follows (:data:`CLAUSE_END`). A bead may always join two units
    again, but never split one. Chosen on the dev documents built from paragraphs (``xlsent eval align``, me5-small)
    in a one-off comparison that is not a kept result: the cut helped Text+Berg, whose lines end at colons, by more
    than ten points and moved the news sets by under half a point either way.

    >>> [s.text for s in split_units(["Er schrieb: « Der Fluss ist älter. » Dann kam er; spät.", "10:30 Uhr."], "de")]
    ['Er schrieb:', '« Der Fluss ist älter. »', 'Dann kam er;', 'spät.', '10:30 Uhr.']
    """
    units = []
    for sentence in iter_sentences(paragraphs, lang):
        cuts = [m.end() for m in CLAUSE_END.finditer(sentence.text)]
        for a, b in itertools.pairwise([0, *cuts, len(sentence.text)]):
            text = sentence.text[a:b]
            if is_empty(text):  # invisible characters alone after a colon: no unit, as sentence_spans keeps none
                continue
            first = sentence.start + a + len(text) - len(text.lstrip())
            units.append(Sentence(sentence.paragraph, first, first + len(text.strip()), text.strip()))
    return units


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
