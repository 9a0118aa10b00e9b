"""The F1-optimal margin threshold on a BUCC-style set: mine candidates, score them against the gold pairs.

Used by the ``bucc`` evaluation task (F1 with the threshold optimised on gold, as in the papers' sample-set numbers)
and by :func:`xlsent.mining.calibration.calibrate` (the threshold itself, for ``xlsent mine --threshold auto``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from xlsent.data.bucc import BuccSet
from xlsent.mining.margin import Margin, Mode, select_candidates


@dataclass(frozen=True)
class ThresholdScore:
    """Precision, recall and F1 (percent) of the candidates scoring at least ``threshold``."""

    threshold: float
    precision: float
    recall: float
    f1: float


def best_threshold(scores: Sequence[float] | np.ndarray, correct: Sequence[bool], n_gold: int) -> ThresholdScore:
    """The threshold on ``scores`` that maximises F1 against ``n_gold`` gold pairs.

    ``correct[i]`` says whether candidate i is a gold pair.

    >>> best_threshold([0.9, 0.8, 0.7, 0.6], [True, True, False, True], n_gold=4)
    ThresholdScore(threshold=0.6, precision=75.0, recall=75.0, f1=75.0)
    """
    if not len(scores) or n_gold == 0:
        return ThresholdScore(float("inf"), 0.0, 0.0, 0.0)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    hits = np.cumsum(np.asarray(correct, dtype=np.float64)[order])
    kept = np.arange(1, len(order) + 1)
    precision, recall = hits / kept, hits / n_gold
    f1 = np.where(hits > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    best = int(np.argmax(f1))
    return ThresholdScore(float(np.asarray(scores)[order[best]]), float(precision[best] * 100),
                          float(recall[best] * 100), float(f1[best] * 100))


def gold_positions(bucc: BuccSet) -> set[tuple[int, int]]:
    """The gold pairs of ``bucc`` as (row in ``src``, row in ``tgt``).

    >>> gold_positions(BuccSet("zh-en", ["z1", "z2"], ["a", "b"], ["e1"], ["c"], [("z2", "e1")], ""))
    {(1, 0)}
    """
    src_pos = {i: n for n, i in enumerate(bucc.src_ids)}
    tgt_pos = {i: n for n, i in enumerate(bucc.tgt_ids)}
    return {(src_pos[a], tgt_pos[b]) for a, b in bucc.gold if a in src_pos and b in tgt_pos}


def mine_and_score(src: np.ndarray, tgt: np.ndarray, gold: set[tuple[int, int]], *, k: int = 4,
                   mode: str = "max") -> dict[str, float]:
    """Mine candidates between ``src`` and ``tgt`` with the ratio margin and score them against ``gold``: F1,
    precision and recall at the F1-optimal threshold, the threshold, and the numbers of candidates and gold pairs."""
    from xlsent.mining.knn import bidirectional_knn  # FAISS, imported only when mining

    knn = bidirectional_knn(src, tgt, k)
    s_idx, t_idx, score = select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim,
                                            margin=Margin.RATIO, mode=Mode(mode))
    correct = [(int(a), int(b)) in gold for a, b in zip(s_idx, t_idx, strict=True)]
    best = best_threshold(score, correct, len(gold))
    return {"f1": best.f1, "precision": best.precision, "recall": best.recall, "threshold": best.threshold,
            "candidates": float(len(score)), "gold": float(len(gold))}


def score_set(embed: Callable[[Sequence[str], str], np.ndarray], bucc: BuccSet, *, k: int = 4,
              mode: str = "max") -> dict[str, float]:
    """Embed both sides of ``bucc`` (``embed(sentences, lang)``, the languages of ``bucc.pair``) and score mining on
    it against its gold pairs (:func:`mine_and_score`)."""
    src_lang, tgt_lang = bucc.pair.split("-")
    return mine_and_score(embed(bucc.src, src_lang), embed(bucc.tgt, tgt_lang), gold_positions(bucc), k=k,
                          mode=mode)
