"""``xlsent eval align``: sentence alignment of parallel documents, strict and lax precision / recall / F1 with
Bleualign's definitions (:mod:`xlsent.evaluation.bead_scores`), on the Text+Berg de-fr dev document and on NTREX
and WMT newstest documents with lines merged, split, dropped and inserted (:mod:`xlsent.data.align_sets`). The
settings are measured one by one in :mod:`xlsent.evaluation.align_ablation`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path

import numpy as np

from xlsent.align.config import AlignConfig
from xlsent.data.align_sets import (
    NEWSTEST_YEARS,
    NTREX,
    TEXTBERG,
    AlignSet,
    align_set_langs,
    align_set_names,
    load_align_set,
    set_available,
    set_corpus,
)
from xlsent.data.empty_text import is_empty
from xlsent.evaluation.bead_scores import BOOTSTRAP_BLOCK, BOOTSTRAP_SAMPLES, bead_scores, strict_f1_interval
from xlsent.evaluation.task import EmbedFn, SubsetScore, Summary, Task, TaskMetadata

_CORPUS_FILES = {"textberg": "align_textberg/dev.*", NTREX: "parallel/ntrex128/NTREX-128/newstest2019-*.txt",
                 **{year: f"parallel/wmt_newstest/{year}/newstest{year}.*" for year in NEWSTEST_YEARS}}
"""The files of each corpus the sets are made of (:func:`~xlsent.data.align_sets.set_corpus`), under the data root."""
_DATA_FILES = tuple(_CORPUS_FILES.values())
_LANGUAGES = ("de", "fr", "en", "ru", "zh", "ar", "ja", "th", "ko", "es", "hu", "it")
_REFERENCE = ("Sennrich & Volk (2010), Bleualign: Text+Berg de-fr dev set; documents built here from NTREX-128 "
              f"(Federmann et al. 2022) and WMT newstest {' and '.join(NEWSTEST_YEARS)} by xlsent.data.doc_perturb")
METADATA = TaskMetadata(
    name="align",
    description="sentence alignment of parallel documents (strict F1 of beads, Bleualign's definitions)",
    languages=_LANGUAGES, data_files=_DATA_FILES,
    main_score="strict F1 (percent) on the Text+Berg de-fr dev document; without it, the mean over the sets run",
    papers=(), reference=_REFERENCE,
)
PUBLISHED = {"Vecalign + LASER": (90.2, 98.6), "Bertalign + LaBSE": (93.6, 98.9)}
"""Strict and lax F1 (percent) published on the Text+Berg *test* half: Thompson & Koehn (2019), Liu & Zhu (2022)."""
PIECES = 7
"""The Text+Berg test half is 7 documents: the dev document is also scored cut into this many (subset
:data:`TEXTBERG_PIECES`)."""
TEXTBERG_PIECES = f"{TEXTBERG} in {PIECES} documents"
OVERLAPS = 5
"""Span embeddings are made of at least this many lines (more where ``max_beads`` asks), whatever the settings run,
so that every setting up to ``max_beads`` 6 reuses the same (cached) embeddings."""


def available(base: Path) -> list[str]:
    return [name for name in align_set_names() if set_available(name, base)]


def cut_points(gold: Sequence[tuple[Sequence[int], Sequence[int]]], pieces: int) -> list[tuple[int, int]]:
    """The first source and target line of each piece after the first, when a document with beads ``gold`` is cut
    into ``pieces`` at gold beads' starts, each piece holding about as many beads with lines on both sides.

    >>> cut_points([((0,), (0,)), ((1, 2), (1,)), ((), (2,)), ((3,), (3,))], 2)
    [(1, 1)]
    """
    linked = sorted((b for b in gold if len(b[0]) and len(b[1])), key=lambda b: min(b[0]))
    return [(min(linked[k][0]), min(linked[k][1])) for k in (len(linked) * q // pieces for q in range(1, pieces))]


def percent(scores: dict[str, float]) -> dict[str, float]:
    return {k: 100 * v for k, v in scores.items()}


class Embedded:
    """The dev sets with their span embeddings (up to :data:`OVERLAPS` lines), each embedded once."""

    def __init__(self, embed: EmbedFn, base: Path, overlaps: int = OVERLAPS) -> None:
        self.embed, self.base, self.overlaps = embed, base, overlaps
        self.sets: dict[str, tuple[AlignSet, np.ndarray, np.ndarray]] = {}

    def get(self, name: str) -> tuple[AlignSet, np.ndarray, np.ndarray]:
        from xlsent.align.aligner import Doc
        from xlsent.align.overlaps import embed_spans

        if name not in self.sets:
            data = load_align_set(name, self.base)
            src, tgt = Doc.of(data.src, self.overlaps), Doc.of(data.tgt, self.overlaps)
            (x,), (y,) = (embed_spans(self.embed, [d.texts], [d.ok], lang)
                          for d, lang in ((src, data.src_lang), (tgt, data.tgt_lang)))
            self.sets[name] = (data, x, y)
        return self.sets[name]

    def scores(self, name: str, cfg: AlignConfig, interval: bool = False, pieces: int = 1) -> dict[str, float]:
        """Bead scores (percent) of ``cfg``'s alignment of the set ``name``, cut into ``pieces`` documents aligned
        one by one (:func:`cut_points`; counts summed); with ``interval``, also the 95% interval of its strict F1
        (``strict_f1_low``, ``strict_f1_high``: :func:`strict_f1_interval`, one piece only)."""
        from xlsent.align.adaptive import SpanCount
        from xlsent.align.aligner import Doc, align_documents, array_source  # numba: imported when a task runs

        data, x, y = self.get(name)
        whole_src, whole_tgt = Doc.of(data.src, self.overlaps), Doc.of(data.tgt, self.overlaps)
        bounds = [(0, 0), *cut_points(data.gold, pieces), (len(data.src), len(data.tgt))]
        golds, tests = [], []
        spans = SpanCount()
        for (s0, t0), (s1, t1) in itertools.pairwise(bounds):
            src, tgt = Doc.of(data.src[s0:s1], cfg.overlaps), Doc.of(data.tgt[t0:t1], cfg.overlaps)
            xs = x[:cfg.overlaps, np.searchsorted(whole_src.ids, s0):np.searchsorted(whole_src.ids, s1)]
            ys = y[:cfg.overlaps, np.searchsorted(whole_tgt.ids, t0):np.searchsorted(whole_tgt.ids, t1)]
            beads, count = align_documents(src, tgt, array_source(xs * src.ok[..., None]),
                                           array_source(ys * tgt.ok[..., None]), cfg)
            spans += count
            tests.append([(tuple(i + s0 for i in b.src), tuple(j + t0 for j in b.tgt)) for b in beads])
            golds.append([b for b in data.gold if (s0 <= min(b[0]) < s1 if b[0] else t0 <= min(b[1]) < t1)])
        out = bead_scores(golds, tests) | {"span_chars_embedded": spans.share}
        if interval and pieces == 1:
            out["strict_f1_low"], out["strict_f1_high"] = strict_f1_interval(golds[0], tests[0])  # strict_f1's gold
        return percent(out)


PARAGRAPH_LINES = 4
"""The paragraph route joins every this many lines of a document (with text) into one paragraph."""
SENTENCE_ENDS = frozenset(".!?…。！？；;:")
"""Characters that end a line that ends a sentence (closing quotation marks or brackets after it count too)."""
PARAGRAPHS = " from paragraphs"
"""The suffix of a set's paragraph-route subset (:func:`paragraph_beads`)."""


def paragraphs_of(lines: Sequence[str], per: int = PARAGRAPH_LINES
                  ) -> tuple[list[str], list[list[tuple[int, int, int]]]]:
    """The lines with text of a document joined by spaces into paragraphs of ``per`` lines (a line that does not end
    a sentence, a heading, ends its paragraph, as it would stand alone in a document of paragraphs), and for each
    paragraph the ``(line id, start, end)`` character span of each of its lines.

    >>> paragraphs_of(["A.", "", "B.", "C."], per=2)
    (['A. B.', 'C.'], [[(0, 0, 2), (2, 3, 5)], [(3, 0, 2)]])
    >>> paragraphs_of(["Title", "A.", "B."], per=4)[0]
    ['Title', 'A. B.']
    """
    paragraphs: list[str] = []
    spans: list[list[tuple[int, int, int]]] = []
    text, where = "", []
    for i, line in ((i, line.strip()) for i, line in enumerate(lines) if not is_empty(line)):
        start = len(text) + (1 if text else 0)
        text = f"{text} {line}" if text else line
        where.append((i, start, start + len(line)))
        if len(where) == per or not ends_sentence(line):  # a heading is a paragraph of its own
            paragraphs.append(text)
            spans.append(where)
            text, where = "", []
    if where:
        paragraphs.append(text)
        spans.append(where)
    return paragraphs, spans


def ends_sentence(line: str) -> bool:
    """Whether ``line`` ends with a sentence's stop, closing quotation marks or brackets after it included.

    >>> ends_sentence("Er kam. »"), ends_sentence("(Chaîne YouTube)"), ends_sentence("Title")
    (True, False, False)
    """
    from xlsent.data.sentence_split import CLOSING, EITHER

    bare = line.rstrip().rstrip("".join(CLOSING | EITHER)).rstrip()
    return bool(bare) and bare[-1] in SENTENCE_ENDS


def paragraph_beads(data: AlignSet, embed: EmbedFn, cfg: AlignConfig
                    ) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The set aligned as ``xlsent align --split`` aligns paragraphs: each document's lines joined into paragraphs
    (:func:`paragraphs_of`), split into sentences and cut again at colons and semicolons
    (:func:`~xlsent.data.sentence_split.split_units`), the pieces aligned, and each bead carried back to the lines its
    pieces came from (a sentence that runs over two lines takes both, :func:`owned_lines`; beads that share a line, the
    sentences of a line the splitter cut, are one bead), to be scored against the lines' gold."""
    from xlsent.align.aligner import Doc, align_documents, text_source
    from xlsent.data.sentence_split import split_units

    docs, owners = [], []
    for lines, lang in ((data.src, data.src_lang), (data.tgt, data.tgt_lang)):
        paragraphs, spans = paragraphs_of(lines)
        sentences = split_units(paragraphs, lang)
        docs.append(Doc.of([s.text for s in sentences], cfg.overlaps))
        owners.append([owned_lines(paragraphs[s.paragraph], spans[s.paragraph], s.start, s.end) for s in sentences])
    beads, _ = align_documents(docs[0], docs[1], text_source(embed, docs[0], data.src_lang),
                               text_source(embed, docs[1], data.tgt_lang), cfg)
    merged: list[tuple[set[int], set[int]]] = []
    for b in beads:
        src, tgt = {i for k in b.src for i in owners[0][k]}, {i for k in b.tgt for i in owners[1][k]}
        if merged and (src & merged[-1][0] or tgt & merged[-1][1]):  # a line split in two sentences: one bead
            merged[-1][0].update(src)
            merged[-1][1].update(tgt)
        else:
            merged.append((src, tgt))
    return [(tuple(sorted(src)), tuple(sorted(tgt))) for src, tgt in merged]


def owned_lines(paragraph: str, spans: Sequence[tuple[int, int, int]], start: int, end: int) -> list[int]:
    """The lines (``spans``: ``(line id, start, end)`` in ``paragraph``) that the sentence at ``start:end`` takes back:
    those where it has a letter or a digit, so a closing quotation mark that the corpus put on the next line does not
    pull that line into the sentence's bead; every line it touches when it is punctuation alone.

    >>> owned_lines("Er kam . » Dann ging er .", [(0, 0, 8), (1, 9, 25)], 0, 10)
    [0]
    """
    touched = [(i, max(a, start), min(b, end)) for i, a, b in spans if a < end and start < b]
    worded = [i for i, a, b in touched if any(c.isalnum() for c in paragraph[a:b])]
    return worded or [i for i, _, _ in touched]


def _interval_note(scores: dict[str, dict[str, float]]) -> str:
    spans = ", ".join(f"{name} {s['strict_f1_low']:.1f}-{s['strict_f1_high']:.1f}" for name, s in scores.items()
                      if "strict_f1_low" in s)
    return (f"strict F1, 95% intervals (2.5th and 97.5th percentiles over {BOOTSTRAP_SAMPLES} redraws, with "
            f"replacement, of a document's runs of {BOOTSTRAP_BLOCK} consecutive gold beads: how far the score could "
            f"move on another document of the kind): {spans}")


def _published_gap(dev_f1: float) -> str:
    gaps = ", ".join(f"{dev_f1 - f1:+.1f} against {system}'s {f1:.1f}" for system, (f1, _) in PUBLISHED.items())
    return (f"this encoder's Text+Berg *dev* strict F1 ({dev_f1:.1f}) against the published *test* scores: {gaps} "
            "(two halves of one corpus, not one test: see the interval below)")


def options(cfg: AlignConfig) -> dict[str, object]:
    """The settings as a result records them (the null cost the run used, not "default")."""
    return {k: (v.value if isinstance(v, StrEnum) else v) for k, v in asdict(cfg).items()} | {"null_cost": cfg.null}


def subsets_of(sets: Sequence[str]) -> list[str]:
    """The subsets of :class:`Align` made of the dev sets ``sets``: each set, Text+Berg also cut into
    :data:`PIECES`, and each set in a language that marks the ends of sentences also aligned from paragraphs."""
    from xlsent.data.sentence_split import NO_SENTENCE_MARK

    split = [f"{name}{PARAGRAPHS}" for name in sets if not set(align_set_langs(name)) & set(NO_SENTENCE_MARK)]
    return [*sets, *([TEXTBERG_PIECES] if TEXTBERG in sets else []), *split]


class Align(Task):
    """Strict / lax P, R, F1 of ``xlsent align``'s beads on each dev set (``langs`` picks sets by name)."""

    metadata = METADATA
    subset_kind = "alignment set"
    subset_metric = "strict_f1"
    unit = "set"

    def __init__(self, embed: EmbedFn, base: Path, *, config: AlignConfig | None = None) -> None:
        super().__init__(embed, base)
        self.config = config or AlignConfig()
        self.embedded = Embedded(embed, base, max(OVERLAPS, self.config.overlaps))

    def known_subsets(self) -> list[str]:
        return subsets_of(available(self.base))

    def all_subsets(self) -> list[str]:
        return subsets_of(align_set_names())

    def subset_files(self, subset: str) -> list[str]:
        name = TEXTBERG if subset == TEXTBERG_PIECES else subset.removesuffix(PARAGRAPHS)
        return [_CORPUS_FILES[set_corpus(name)]]

    def score(self, subset: str) -> SubsetScore:
        if subset.endswith(PARAGRAPHS):
            data = load_align_set(subset.removesuffix(PARAGRAPHS), self.base)
            return SubsetScore(percent(bead_scores([data.gold], [paragraph_beads(data, self.embed, self.config)])),
                               f"{subset}: each document's lines joined {PARAGRAPH_LINES} to a paragraph (a line "
                               "that ends no sentence, a heading, ends one), split into sentences, cut again at "
                               "colons and semicolons, and aligned as "
                               "xlsent align --split does, the beads carried back to the lines"
                               + (" (Text+Berg's lines are tokenized, a space before every punctuation mark, which "
                                  "the splitter does not expect of a paragraph)" if data.name == TEXTBERG else ""))
        if subset == TEXTBERG_PIECES:
            return SubsetScore(self.embedded.scores(TEXTBERG, self.config, pieces=PIECES),
                               f"{TEXTBERG_PIECES}: the dev document cut into {PIECES} at gold beads' starts "
                               f"(as many paired beads in each), each aligned alone, counts summed")
        return SubsetScore(self.embedded.scores(subset, self.config, interval=True),
                           self.embedded.get(subset)[0].description)

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        gaps = {name.removesuffix(PARAGRAPHS): s["strict_f1"] - scores[name.removesuffix(PARAGRAPHS)]["strict_f1"]
                for name, s in scores.items() if name.endswith(PARAGRAPHS) and name.removesuffix(PARAGRAPHS) in scores}
        scores = {name: s for name, s in scores.items() if not name.endswith(PARAGRAPHS)}
        strict = {name: s["strict_f1"] for name, s in scores.items()}
        others = [name for name in strict if name not in (TEXTBERG, TEXTBERG_PIECES)]
        averages = ({f"strict F1, {len(others)} built sets": float(np.mean([strict[n] for n in others]))}
                    if others else {})
        averages |= {"lax F1, all sets": float(np.mean([s["lax_f1"] for n, s in scores.items()
                                                         if n != TEXTBERG_PIECES]))}
        if gaps:
            averages[f"strict F1 from paragraphs less from lines, {len(gaps)} sets"] = float(np.mean([*gaps.values()]))
        main = strict[TEXTBERG] if TEXTBERG in strict else float(np.mean(list(strict.values())))
        return Summary(
            dataset="Text+Berg de-fr dev + documents built from NTREX-128 and WMT newstest", main_score=main,
            main_metric="strict f1, textberg dev" if TEXTBERG in strict else "mean strict f1",
            averages=averages, options=options(self.config),
            notes=["Bleualign's definitions: precision over predicted beads with lines on both sides, recall over "
                   "gold beads with lines on both sides; lax: a bead sharing a source and a target line with one "
                   "bead of the other alignment",
                   "published on the Text+Berg *test* half (not run here): " + ", ".join(
                       f"{system} strict F1 {f1:.1f} (lax {lax:.1f})" for system, (f1, lax) in PUBLISHED.items()),
                   *([_published_gap(strict[TEXTBERG])] if TEXTBERG in strict else []),
                   f"NTREX-128 and WMT newstest {' and '.join(NEWSTEST_YEARS)} are among the X-en training pairs "
                   "of laser-small and me5-distill (in the languages each was trained on)",
                   _interval_note(scores),
                   *([f"the --split route (each set's lines joined {PARAGRAPH_LINES} to a paragraph, split into "
                      "sentences and at colons and semicolons, aligned, carried back to the lines) against the lines "
                      "as given, strict F1: "
                      + ", ".join(f"{name} {gap:+.1f}" for name, gap in gaps.items())] if gaps else [])],
            files=[f for name in scores if name != TEXTBERG_PIECES for f in self.embedded.get(name)[0].files],
        )
