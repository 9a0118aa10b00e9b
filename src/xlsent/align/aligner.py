"""The alignment put together: span embeddings in, beads out (document line ids, empty lines as null beads).

>>> import numpy as np
>>> table = {"ein Hund": [1, 0, 0], "eine Katze": [0, 1, 0], "a dog": [1, 0, 0], "a cat": [0, 1, 0]}
>>> def embed(texts, lang):
...     rows = np.array([table.get(t, [0, 0, 1]) for t in texts], dtype=np.float32)
...     return rows / np.linalg.norm(rows, axis=1, keepdims=True)
>>> beads = align_texts(["ein Hund", "", "eine Katze"], ["a dog", "a cat"], embed, AlignConfig(norm="none"))
>>> [(b.src, b.tgt) for b in beads]
[((0,), (0,)), ((1,), ()), ((2,), (1,))]
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from xlsent.align.adaptive import SpanCount, SpanSource, lines_only, pooled_spans, unsure_lines, wanted_spans
from xlsent.align.anchors import Anchors
from xlsent.align.band import Band, band_around, full_band, path_extent, project
from xlsent.align.brackets import bracket_cuts
from xlsent.align.config import NULL_COSTS, AlignConfig, Cost, LengthRatio, Norm, Spans
from xlsent.align.costs import distance_costs, margin_costs
from xlsent.align.dp import Found, best_beads
from xlsent.align.normalise import normalisers, random_distance
from xlsent.align.numbers import number_anchors
from xlsent.align.overlaps import Embed, span_array, span_ok, span_texts
from xlsent.align.words import word_anchors
from xlsent.data.beads import Bead
from xlsent.data.empty_text import is_empty

log = logging.getLogger(__name__)

EMPTY_LINE_COST = 0.0
"""The cost written for the null bead of an empty line (it was never a candidate)."""


@dataclass(frozen=True)
class Doc:
    """One side of a document pair: every line, the ids of those with text (not
    :func:`~xlsent.data.empty_text.is_empty`: a line of whitespace and invisible characters only is an empty
    line), and the spans over them."""

    lines: Sequence[str]
    ids: np.ndarray
    ok: np.ndarray

    @classmethod
    def of(cls, lines: Sequence[str], overlaps: int) -> Doc:
        ids = np.array([i for i, line in enumerate(lines) if not is_empty(line)], dtype=np.int64)
        return cls(lines, ids, span_ok(ids, overlaps))

    @cached_property
    def lengths(self) -> np.ndarray:
        """``(overlaps, n)`` float32: the characters of each span (0 where there is none); counted once, read by
        both alignments."""
        chars = np.array([len(self.lines[i].strip()) for i in self.ids], dtype=np.float32)
        out = np.zeros(self.ok.shape, dtype=np.float32)
        for a in range(self.ok.shape[0]):
            spans = np.lib.stride_tricks.sliding_window_view(chars, a + 1).sum(axis=1) if len(chars) > a else []
            out[a, :len(spans)] = spans
        return out

    @property
    def texts(self) -> list[str]:
        """The lines with text."""
        return [self.lines[i] for i in self.ids]


def span_lengths(src: Doc, tgt: Doc, ratio: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The length in characters of every span of both sides, the target's times ``ratio`` (default: the ratio of
    the two documents' totals; a translation's length ratio is a property of the language pair, not of a bead)."""
    ls, lt = src.lengths, tgt.lengths
    if ratio is None:
        total_s, total_t = ls[0].sum(), lt[0].sum()
        ratio = total_s / total_t if total_s and total_t else 1.0
    return ls, lt * ratio


def paired_ratio(found: Found, src: Doc, tgt: Doc) -> float | None:
    """The characters of the source lines that ``found`` pairs over those of the target lines it pairs (None when
    it pairs none)."""
    src_paired, tgt_paired = np.zeros(len(src.ids), dtype=bool), np.zeros(len(tgt.ids), dtype=bool)
    for (s0, s1), (t0, t1), _ in found:
        if s1 > s0 and t1 > t0:
            src_paired[s0:s1] = tgt_paired[t0:t1] = True
    total_s, total_t = float(src.lengths[0][src_paired].sum()), float(tgt.lengths[0][tgt_paired].sum())
    return total_s / total_t if total_s and total_t else None


def halve(v: np.ndarray) -> np.ndarray:
    """Unit embeddings of consecutive pairs of rows (the last row alone when their number is odd)."""
    pairs = v[0::2].copy()
    pairs[:len(v) // 2] += v[1::2]
    return pairs / np.maximum(np.linalg.norm(pairs, axis=1, keepdims=True), 1e-12)


def _one_to_one(x: np.ndarray, y: np.ndarray, band: Band, cfg: AlignConfig) -> Found:
    """The cheapest 1-1 / null path over ``band`` for single-row embeddings, costs normalised by random lines."""
    types = np.array([[1, 1]], dtype=np.int64)
    x_ok, y_ok = np.ones((1, len(x)), dtype=np.bool_), np.ones((1, len(y)), dtype=np.bool_)
    costs = distance_costs(band, x[None], y[None], random_distance(x[None], y, cfg), random_distance(y[None], x, cfg),
                           x_ok, y_ok, types, np.ones(1))
    return best_beads(band, types, costs, NULL_COSTS[Cost.DISTANCE])


def search_band(x: np.ndarray, y: np.ndarray, cfg: AlignConfig) -> Band:
    """The band the alignment of ``x`` (``n`` line embeddings) and ``y`` searches: the whole grid when both have at
    most ``cfg.full_dp`` lines, else ``cfg.band`` lines around the path found on the halved documents (itself
    searched in a band, recursively)."""
    n, m = len(x), len(y)
    if max(n, m) <= cfg.full_dp:
        return full_band(n, m)
    xc, yc = halve(x), halve(y)
    beads = _one_to_one(xc, yc, search_band(xc, yc, cfg), cfg)
    rows = np.array([0, *(s[1] for s, _, _ in beads)])
    cols = np.array([0, *(t[1] for _, t, _ in beads)])
    return band_around(*project(*path_extent(rows, cols, len(xc)), n, m), m, cfg.band)


@dataclass(frozen=True)
class BeadCosts:
    """What each bead type costs ending in each cell of ``band`` under ``cfg.cost``, for a given length ratio
    (:meth:`at`); what does not depend on it (the number and word anchors, the ``distance`` cost's normalisers) is
    found once (:meth:`of`) for both alignments."""

    band: Band
    src: Doc
    tgt: Doc
    x: np.ndarray
    y: np.ndarray
    types: np.ndarray
    cfg: AlignConfig
    numbers: Anchors | None
    words: Anchors | None
    norms: tuple[np.ndarray, np.ndarray] | None

    @classmethod
    def of(cls, band: Band, src: Doc, tgt: Doc, x: np.ndarray, y: np.ndarray, types: np.ndarray, cfg: AlignConfig
           ) -> BeadCosts:
        numbers = (number_anchors(src.texts, tgt.texts, cfg.number_weight, cfg.number_min) if cfg.number_weight
                   else None)
        words = word_anchors(src.texts, tgt.texts, cfg.word_weight) if cfg.word_weight else None
        norms = None
        if cfg.cost is Cost.DISTANCE:
            n, m = len(src.ids), len(tgt.ids)
            whole = band.cells == (n + 1) * (m + 1)  # the whole grid: the neighbours are searched among all lines
            norms = normalisers(x, src.ok, y, tgt.ok, band.centres(), replace(cfg, window=max(n, m)) if whole else cfg,
                                cfg.norm if n and m else Norm.NONE)
        return cls(band, src, tgt, x, y, types, cfg, numbers, words, norms)

    def at(self, ratio: float | None = None) -> np.ndarray:
        """``(len(types), band.cells)``: the costs with the target's lengths times ``ratio`` (:func:`span_lengths`)."""
        lengths = span_lengths(self.src, self.tgt, ratio)
        if self.norms is None:
            return margin_costs(self.band, self.x, self.y, self.src.ok, self.tgt.ok, self.types, lengths,
                                self.cfg.length_weight, self.numbers, self.words)
        return distance_costs(self.band, self.x, self.y, *self.norms, self.src.ok, self.tgt.ok, self.types,
                              self.cfg.size_weights(), lengths, self.cfg.length_weight, self.numbers, self.words)


def find_path(src: Doc, tgt: Doc, x: np.ndarray, y: np.ndarray, cfg: AlignConfig) -> Found:
    """The cheapest path of beads over the lines with text of ``src`` and ``tgt``, with span embeddings ``x`` and
    ``y`` (:func:`~.overlaps.span_array`); a bead boundary inside a bracket (:mod:`.brackets`) costs
    ``cfg.bracket_cost``. With ``cfg.length_ratio`` ``paired`` (and lengths counting), the documents are aligned
    twice: the second time with the length ratio of the lines the first pairs."""
    n, m = len(src.ids), len(tgt.ids)
    band = search_band(x[0], y[0], cfg)
    log.debug("aligning %d x %d lines over %d cells", n, m, band.cells)
    types = np.array(cfg.bead_types(), dtype=np.int64)
    costs = BeadCosts.of(band, src, tgt, x, y, types, cfg)
    cuts = (bracket_cuts(src.texts) * cfg.bracket_cost, bracket_cuts(tgt.texts) * cfg.bracket_cost)
    found = best_beads(band, types, costs.at(), cfg.null, cuts)
    ratio = paired_ratio(found, src, tgt) if cfg.length_ratio is LengthRatio.PAIRED and cfg.length_weight else None
    null = document_null(found, cfg)
    if ratio is not None or null != cfg.null:
        log.debug("aligning again with the paired lines' length ratio %s and null cost %.4f", ratio, null)
        found = best_beads(band, types, costs.at(ratio), null, cuts)
    return found


def document_null(found: Found, cfg: AlignConfig) -> float:
    """The cost of a null bead in a document pair whose first path is ``found``: under the ``margin`` cost without a
    ``null_cost``, ``cfg.null_scale`` times the median gain (minus the cost) of the path's 1-1 beads, so leaving a
    line out costs a share of what a typical pair of this document pair gains (an encoder or a document whose
    translations stand out more pays more: Vecalign's idea of a deletion cost from the pair's own costs); else
    ``cfg.null``.

    >>> found = [((0, 1), (0, 1), -0.4), ((1, 2), (1, 1), 0.0), ((2, 3), (1, 2), -0.2)]
    >>> document_null(found, AlignConfig(null_scale=0.2)), document_null(found, AlignConfig())
    (0.06, 0.0)
    """
    if cfg.cost is not Cost.MARGIN or cfg.null_cost is not None or not cfg.null_scale:
        return cfg.null
    gains = [-c for (s0, s1), (t0, t1), c in found if s1 - s0 == 1 and t1 - t0 == 1]
    return round(max(cfg.null_scale * float(np.median(gains)), 0.0), 6) if gains else cfg.null


def align_spans(src: Doc, tgt: Doc, x: np.ndarray, y: np.ndarray, cfg: AlignConfig) -> list[Bead]:
    """The beads of :func:`find_path`, over document lines and in document order, every line in exactly one bead
    (an empty line: a null bead of cost :data:`EMPTY_LINE_COST`)."""
    found = find_path(src, tgt, x, y, cfg)
    kept = [Bead(tuple(int(i) for i in src.ids[s0:s1]), tuple(int(j) for j in tgt.ids[t0:t1]), cost)
            for (s0, s1), (t0, t1), cost in found]
    return with_empty_lines(kept, src, tgt)


def with_empty_lines(beads: Sequence[Bead], src: Doc, tgt: Doc) -> list[Bead]:
    """``beads`` (over lines with text) with a null bead for each empty line, in document order."""
    empty_src = np.setdiff1d(np.arange(len(src.lines)), src.ids).tolist()
    empty_tgt = np.setdiff1d(np.arange(len(tgt.lines)), tgt.ids).tolist()
    out: list[Bead] = []
    s = t = 0
    for bead in beads:
        while bead.src and s < len(empty_src) and empty_src[s] < bead.src[0]:
            out.append(Bead((empty_src[s],), (), EMPTY_LINE_COST))
            s += 1
        while bead.tgt and t < len(empty_tgt) and empty_tgt[t] < bead.tgt[0]:
            out.append(Bead((), (empty_tgt[t],), EMPTY_LINE_COST))
            t += 1
        out.append(bead)
    out += [Bead((i,), (), EMPTY_LINE_COST) for i in empty_src[s:]]
    out += [Bead((), (j,), EMPTY_LINE_COST) for j in empty_tgt[t:]]
    return out


def text_source(embed: Embed, doc: Doc, lang: str | None) -> SpanSource:
    """The :data:`~.adaptive.SpanSource` that embeds ``doc``'s spans with ``embed``."""
    return lambda wanted: embed(span_texts(doc.texts, wanted), lang)


def array_source(x: np.ndarray) -> SpanSource:
    """The :data:`~.adaptive.SpanSource` that reads spans from the span array ``x`` (embedded already)."""
    return lambda wanted: x[wanted]


@dataclass(frozen=True)
class SpanPlan:
    """The span arrays an alignment reads, with the lines' vectors in place (and, with adaptive spans, each
    multi-line span pooled from its lines until it is embedded), and the multi-line spans of each side still to
    embed (``wanted``, in :func:`~.overlaps.span_texts` order when read by :meth:`fill`)."""

    x: np.ndarray
    y: np.ndarray
    wanted: tuple[np.ndarray, np.ndarray]
    count: SpanCount

    def fill(self, x_spans: np.ndarray, y_spans: np.ndarray) -> None:
        """Put the embeddings of the wanted spans in place."""
        self.x[self.wanted[0]] = x_spans
        self.y[self.wanted[1]] = y_spans


def plan_spans(src: Doc, tgt: Doc, x_lines: np.ndarray, y_lines: np.ndarray, cfg: AlignConfig) -> SpanPlan:
    """Which multi-line spans the alignment of ``src`` and ``tgt`` embeds, given their lines' vectors (``(n, dim)``,
    ``(m, dim)``): all of them, or with ``cfg.spans`` ``adaptive`` those where the path found with spans pooled from
    their lines is unsure (:mod:`.adaptive`)."""
    if cfg.spans is Spans.ALL:
        x, y = (span_array(v, lines_only(d.ok)) for v, d in ((x_lines, src), (y_lines, tgt)))
        wx, wy = src.ok.copy(), tgt.ok.copy()
        wx[0] = wy[0] = False
    else:
        x, y = pooled_spans(x_lines, src.ok), pooled_spans(y_lines, tgt.ok)
        first = find_path(src, tgt, x, y, cfg)
        lx, ly = unsure_lines(first, len(src.ids), len(tgt.ids), cfg.unsure_share, cfg.unsure_radius)
        wx, wy = wanted_spans(src.ok, lx), wanted_spans(tgt.ok, ly)
    count = SpanCount.of(wx, src.ok, src.lengths) + SpanCount.of(wy, tgt.ok, tgt.lengths)
    log.debug("embedding %d of %d multi-line spans (%.0f%% of their characters skipped)", count.embedded,
              count.possible, 100 * count.skipped)
    return SpanPlan(x, y, (wx, wy), count)


def _fetch(source: SpanSource, wanted: np.ndarray, dim: int) -> np.ndarray:
    return source(wanted) if wanted.any() else np.empty((0, dim), dtype=np.float32)


def span_embeddings(src: Doc, tgt: Doc, x_source: SpanSource, y_source: SpanSource, cfg: AlignConfig) -> SpanPlan:
    """The span arrays the alignment of ``src`` and ``tgt`` reads, the lines embedded first and alone, then the
    multi-line spans of :func:`plan_spans`."""
    plan = plan_spans(src, tgt, x_source(lines_only(src.ok)), y_source(lines_only(tgt.ok)), cfg)
    dim = plan.x.shape[2]
    plan.fill(_fetch(x_source, plan.wanted[0], dim), _fetch(y_source, plan.wanted[1], dim))
    return plan


def align_documents(src: Doc, tgt: Doc, x_source: SpanSource, y_source: SpanSource, cfg: AlignConfig
                    ) -> tuple[list[Bead], SpanCount]:
    """The beads of ``src`` and ``tgt`` (:func:`align_spans`) with their spans embedded as ``cfg.spans`` says
    (:func:`span_embeddings`), and the count of multi-line spans embedded."""
    plan = span_embeddings(src, tgt, x_source, y_source, cfg)
    return align_spans(src, tgt, plan.x, plan.y, cfg), plan.count


def align_texts(src_lines: Sequence[str], tgt_lines: Sequence[str], embed: Embed, cfg: AlignConfig | None = None,
                src_lang: str | None = None, tgt_lang: str | None = None) -> list[Bead]:
    """Align two documents in memory: embed their spans with ``embed`` and return the beads."""
    cfg = cfg or AlignConfig()
    src, tgt = Doc.of(src_lines, cfg.overlaps), Doc.of(tgt_lines, cfg.overlaps)
    return align_documents(src, tgt, text_source(embed, src, src_lang), text_source(embed, tgt, tgt_lang), cfg)[0]
