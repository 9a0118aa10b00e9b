"""Adaptive spans: which multi-line spans an alignment embeds.

Embedding every span of up to ``overlaps`` lines costs about ``1 + 2 + ... + overlaps`` times embedding the lines
once (the texts grow with the span), yet most beads of a translation are 1-1 and most of a document's path is
certain from its lines alone. So (``spans = "adaptive"``, :class:`~.config.Spans`) the lines are embedded once, each
span stands in as the unit mean of its lines' vectors (:func:`pooled_spans`), and a first path is found with those;
the real spans are then embedded only where that path is unsure (:func:`unsure_lines`: beads other than 1-1, and the
weakest share of the 1-1 beads, with the beads around them, and on each side only spans one line longer than such
a bead's side there) and the documents are aligned again.

>>> found = [((0, 1), (0, 1), -0.9), ((1, 2), (1, 1), 0.0), ((2, 3), (1, 2), -0.8), ((3, 4), (2, 3), -0.9)]
>>> src, tgt = unsure_lines(found, 4, 3, share=0.0, radius=1)
>>> src.tolist(), tgt.tolist()
([2, 2, 2, 0], [0, 0, 0])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xlsent.align.dp import Found

SpanSource = Callable[[np.ndarray], np.ndarray]
"""``fetch(wanted)``: the unit embeddings of the spans that ``wanted`` (an ``(overlaps, n)`` bool array as
:func:`~.overlaps.span_ok` makes) marks, in :func:`~.overlaps.span_texts` order."""


@dataclass(frozen=True)
class SpanCount:
    """How many spans of two lines or more an alignment embedded (``embedded``) of those its documents have
    (``possible``), and the same in characters (what an encoder's time follows)."""

    embedded: int = 0
    possible: int = 0
    embedded_chars: int = 0
    possible_chars: int = 0

    def __add__(self, other: SpanCount) -> SpanCount:
        return SpanCount(self.embedded + other.embedded, self.possible + other.possible,
                         self.embedded_chars + other.embedded_chars, self.possible_chars + other.possible_chars)

    @property
    def share(self) -> float:
        """The share of the multi-line spans' characters embedded (0 when there are none).

        >>> SpanCount(1, 4, 30, 120).share, SpanCount().share
        (0.25, 0.0)
        """
        return self.embedded_chars / self.possible_chars if self.possible_chars else 0.0

    @property
    def skipped(self) -> float:
        """The share of the multi-line spans' characters not embedded (0 when there are none).

        >>> SpanCount(1, 4, 30, 120).skipped, SpanCount().skipped
        (0.75, 0.0)
        """
        return 1 - self.share if self.possible_chars else 0.0

    @classmethod
    def of(cls, wanted: np.ndarray, ok: np.ndarray, lengths: np.ndarray) -> SpanCount:
        """The count of the multi-line spans ``wanted`` among those ``ok`` allows; ``lengths``: each span's
        characters (``(overlaps, n)``, as :attr:`~.aligner.Doc.lengths`)."""
        return cls(int(wanted[1:].sum()), int(ok[1:].sum()), int(lengths[1:][wanted[1:]].sum()),
                   int(lengths[1:][ok[1:]].sum()))


def lines_only(ok: np.ndarray) -> np.ndarray:
    """``ok`` with its one-line spans only."""
    out = np.zeros_like(ok)
    out[0] = ok[0]
    return out


def pooled_spans(lines: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``(overlaps, n, dim)`` float32: each span that ``ok`` allows as the unit mean of its lines' vectors ``lines``
    (``(n, dim)``), zeros where no span is.

    >>> lines = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> [round(v, 3) for v in pooled_spans(lines, np.array([[True, True], [True, False]]))[1, 0].tolist()]
    [0.707, 0.707]
    """
    sums = np.zeros((len(lines) + 1, lines.shape[1]), dtype=np.float64)
    np.cumsum(lines, axis=0, out=sums[1:])
    out = np.zeros((*ok.shape, lines.shape[1]), dtype=np.float32)
    for a in range(ok.shape[0]):
        starts = np.flatnonzero(ok[a])
        out[a, starts] = sums[starts + a + 1] - sums[starts]
    norms = np.linalg.norm(out, axis=2, keepdims=True)
    return np.divide(out, norms, out=out, where=norms > 0)


def unsure_beads(found: Found, share: float) -> np.ndarray:
    """Which beads of ``found`` are unsure: every bead but a 1-1 one, and the ``share`` of the 1-1 beads that cost
    most (the weakest)."""
    sizes = np.array([(s1 - s0, t1 - t0) for (s0, s1), (t0, t1), _ in found], dtype=np.int64).reshape(-1, 2)
    one_to_one = (sizes == 1).all(axis=1)
    unsure = ~one_to_one
    costs = np.array([c for _, _, c in found], dtype=np.float64)
    weak = int(round(share * one_to_one.sum()))
    if weak:
        order = np.flatnonzero(one_to_one)[np.argsort(-costs[one_to_one], kind="stable")]
        unsure[order[:weak]] = True
    return unsure


def unsure_lines(found: Found, n: int, m: int, share: float, radius: int) -> tuple[np.ndarray, np.ndarray]:
    """The longest span worth embedding at each source and target line (``n`` and ``m`` ints, 0 where none is):
    around each of the :func:`unsure_beads` of ``found`` (its lines and those of the ``radius`` beads on either
    side), on each side spans one line longer than the bead's side there: the merge it may have missed (a 1-1 bead:
    2 lines each side; a 2-1 bead: 3 source lines, 2 target lines; a null bead: 2 lines on its own side, none on
    the empty one, which no merge of the other side's lines can fill); where several such regions overlap, the
    longest."""
    unsure = unsure_beads(found, share)
    src, tgt = np.zeros(n, dtype=np.int64), np.zeros(m, dtype=np.int64)
    for k in np.flatnonzero(unsure).tolist():
        (s0, s1), (t0, t1), _ = found[k]
        near = found[max(k - radius, 0):k + radius + 1]
        (a, _), (c, _), _ = near[0]
        (_, b), (_, d), _ = near[-1]
        if s1 > s0:
            np.maximum(src[a:b], s1 - s0 + 1, out=src[a:b])
        if t1 > t0:
            np.maximum(tgt[c:d], t1 - t0 + 1, out=tgt[c:d])
    return src, tgt


def wanted_spans(ok: np.ndarray, longest: np.ndarray) -> np.ndarray:
    """The multi-line spans ``ok`` allows that are no longer than ``longest`` at any of their lines.

    >>> ok = np.array([[True] * 3, [True, True, False], [True, False, False]])
    >>> wanted_spans(ok, np.array([0, 3, 3])).astype(int).tolist()
    [[0, 0, 0], [0, 1, 0], [0, 0, 0]]
    """
    out = np.zeros_like(ok)
    for a in range(1, ok.shape[0]):
        starts = np.flatnonzero(ok[a])
        if len(starts):
            window = np.lib.stride_tricks.sliding_window_view(longest, a + 1)[starts]
            out[a, starts] = window.min(axis=1) >= a + 1
    return out
