"""Strict and lax precision, recall and F1 of sentence alignments, with the definitions of Bleualign's evaluation
(as Vecalign's ``score.py`` applies them).

Precision counts the predicted beads with lines on both sides; recall the gold beads with lines on both sides.
A bead is *strictly* right when the other alignment has exactly that bead, *laxly* right when one bead of the other
alignment shares a source line and a target line with it. Counts are summed over documents before dividing.

>>> gold = [((0,), (0,)), ((1, 2), (1,)), ((3,), ())]
>>> test = [((0,), (0,)), ((1,), (1,)), ((2,), ()), ((3,), (2,))]
>>> s = bead_scores([gold], [test])
>>> round(s["strict_precision"], 4), round(s["strict_recall"], 4), round(s["lax_precision"], 4), s["lax_recall"]
(0.3333, 0.5, 0.6667, 1.0)

:func:`strict_f1_interval` says how much the strict F1 of one document would move on another of its kind: a block
bootstrap over runs of consecutive gold beads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

Beads = Sequence[tuple[Sequence[int], Sequence[int]]]
"""An alignment: ``(source ids, target ids)`` per bead."""


def _linked(beads: Beads) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The beads with lines on both sides, as tuples."""
    return [(tuple(s), tuple(t)) for s, t in beads if len(s) and len(t)]


def _hits(test: Beads, reference: Beads) -> tuple[int, int, int]:
    """``(beads of test with both sides, strictly right, laxly right)`` against ``reference``."""
    ref = _linked(reference)
    exact = set(ref)
    src_of: dict[int, set[int]] = {}
    for k, (s, _) in enumerate(ref):
        for i in s:
            src_of.setdefault(i, set()).add(k)
    tgt_sets = [set(t) for _, t in ref]
    beads = _linked(test)
    strict = sum(bead in exact for bead in beads)
    lax = sum(any(tgt_sets[k] & set(t) for i in s for k in src_of.get(i, ())) for s, t in beads)
    return len(beads), strict, lax


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def bead_scores(gold: Iterable[Beads], test: Iterable[Beads]) -> dict[str, float]:
    """Strict and lax precision, recall and F1 (fractions) of the alignments ``test`` against ``gold``, one per
    document, counts summed over the documents."""
    predicted = strict_p = lax_p = expected = strict_r = lax_r = 0
    for g, t in zip(gold, test, strict=True):
        n, strict, lax = _hits(t, g)
        predicted, strict_p, lax_p = predicted + n, strict_p + strict, lax_p + lax
        n, strict, lax = _hits(g, t)
        expected, strict_r, lax_r = expected + n, strict_r + strict, lax_r + lax
    out: dict[str, float] = {}
    for kind, tp_p, tp_r in (("strict", strict_p, strict_r), ("lax", lax_p, lax_r)):
        p, r = tp_p / predicted if predicted else 0.0, tp_r / expected if expected else 0.0
        out |= {f"{kind}_precision": p, f"{kind}_recall": r, f"{kind}_f1": _f1(p, r)}
    return out


BOOTSTRAP_BLOCK = 20
"""Gold beads per run of :func:`strict_f1_interval` by default."""
BOOTSTRAP_SAMPLES = 2000
"""How many times :func:`strict_f1_interval` redraws a document's runs by default."""


def strict_f1_interval(gold: Beads, test: Beads, *, block: int = BOOTSTRAP_BLOCK, samples: int = BOOTSTRAP_SAMPLES,
                       level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """The ``level`` percentile interval of the strict F1 of ``test`` against ``gold`` (one document) when the
    document is cut into runs of ``block`` consecutive gold beads (a predicted bead goes with the run its first
    source line falls in) and the runs are drawn again with replacement ``samples`` times (seeded), widened where
    needed to hold the strict F1 itself (:func:`bead_scores`' ``strict_f1``): a percentile interval of a skewed or
    coarse bootstrap can miss its own estimate, and an interval is reported beside that estimate.

    >>> gold = [((i,), (i,)) for i in range(100)]
    >>> strict_f1_interval(gold, gold)
    (1.0, 1.0)
    >>> every_other = [((i,), (i,) if i % 2 else (i + 1,)) for i in range(100)]  # half right in every run
    >>> strict_f1_interval(gold, every_other)
    (0.5, 0.5)
    >>> low, high = strict_f1_interval(gold, gold[:50] + every_other[50:], block=10)  # runs differ: a spread
    >>> 0.55 < low < 0.75 < high < 0.95
    True
    >>> low, high = strict_f1_interval(gold, gold[:50] + every_other[50:], block=10, samples=1)  # one redraw alone
    >>> low, round(high, 3)
    (0.75, 0.8)
    """
    if block < 1 or samples < 1 or not 0 < level < 1:
        raise ValueError(f"block and samples must be at least 1 and level in (0, 1), not {block}, {samples}, {level}")
    ref, beads = _linked(gold), _linked(test)
    if not ref or not beads:
        return 0.0, 0.0
    starts = sorted(min(s) for s, _ in ref)[::block][1:]
    counts = np.zeros((len(starts) + 1, 4))  # per run: predicted, strictly right of them, gold, found of them
    for column, (these, others) in enumerate(((beads, set(ref)), (ref, set(beads)))):
        for bead in these:
            run = np.searchsorted(starts, min(bead[0]), side="right")
            counts[run, 2 * column] += 1
            counts[run, 2 * column + 1] += bead in others
    drawn = counts[np.random.default_rng(seed).integers(0, len(counts), (samples, len(counts)))].sum(axis=1)
    low, high = np.quantile(_strict_f1(drawn), [(1 - level) / 2, (1 + level) / 2])
    point = float(_strict_f1(counts.sum(axis=0, keepdims=True))[0])
    return min(float(low), point), max(float(high), point)


def _strict_f1(counts: np.ndarray) -> np.ndarray:
    """The strict F1 of each row of ``counts``: predicted beads, strictly right of them, gold beads, found of them."""
    rows = len(counts)
    p = np.divide(counts[:, 1], counts[:, 0], out=np.zeros(rows), where=counts[:, 0] > 0)
    r = np.divide(counts[:, 3], counts[:, 2], out=np.zeros(rows), where=counts[:, 2] > 0)
    return np.divide(2 * p * r, p + r, out=np.zeros(rows), where=p + r > 0)
