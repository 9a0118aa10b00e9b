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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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
