"""BUCC bitext mining (Artetxe & Schwenk 2019): ratio margin, candidates, threshold optimised on gold."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import cached_encode, encoder_id
from xlsent.evaluation.results import TaskResult, file_checksums
from xlsent.paths import data_root

if TYPE_CHECKING:
    from xlsent.data.bucc import BuccSet

NEWSTEST_LANGS = ("cs", "de", "es", "fr", "ru")


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


def mine_and_score(src: np.ndarray, tgt: np.ndarray, gold: set[tuple[int, int]], *, k: int = 4,
                   mode: str = "max") -> dict[str, float]:
    """Mine candidates between ``src`` and ``tgt`` with the ratio margin and score them against ``gold``."""
    from xlsent.mining.knn import bidirectional_knn
    from xlsent.mining.margin import Margin, Mode, select_candidates

    knn = bidirectional_knn(src, tgt, k)
    s_idx, t_idx, score = select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim,
                                            margin=Margin.RATIO, mode=Mode(mode))
    correct = [(int(a), int(b)) in gold for a, b in zip(s_idx, t_idx, strict=True)]
    best = best_threshold(score, correct, len(gold))
    return {"f1": best.f1, "precision": best.precision, "recall": best.recall, "threshold": best.threshold,
            "candidates": float(len(score)), "gold": float(len(gold))}


def score_set(encoder: Encoder, bucc: BuccSet, *, k: int = 4, mode: str = "max") -> dict[str, float]:
    """Encode a BUCC-style set (cached) and score mining on it against its gold pairs."""
    src_lang, tgt_lang = bucc.pair.split("-")
    src = cached_encode(encoder, bucc.src, src_lang)
    tgt = cached_encode(encoder, bucc.tgt, tgt_lang)
    src_pos = {i: n for n, i in enumerate(bucc.src_ids)}
    tgt_pos = {i: n for n, i in enumerate(bucc.tgt_ids)}
    gold = {(src_pos[a], tgt_pos[b]) for a, b in bucc.gold if a in src_pos and b in tgt_pos}
    return mine_and_score(src, tgt, gold, k=k, mode=mode)


def calibrate(encoder: Encoder, *, langs: Sequence[str] = ("de", "fr", "ru"), root: str | Path | None = None,
              k: int = 4) -> dict[str, object]:
    """A mining threshold for ``encoder``: the mean F1-optimal ratio-margin threshold over newstest sets."""
    from xlsent.data.bucc import newstest_bucc

    base = data_root(root)
    per_set = {f"{x}-en": score_set(encoder, newstest_bucc(x, base), k=k) for x in langs}
    return {"threshold": float(np.mean([s["threshold"] for s in per_set.values()])), "margin": "ratio", "k": k,
            "method": "mean of F1-optimal thresholds on BUCC-style newstest2012 sets (xlsent.data.bucc)",
            "per_set": per_set, "encoder": encoder_id(encoder)}


def run(encoder: Encoder, *, langs: list[str] | None = None, root: str | Path | None = None,
        progress: bool = False, mode: str = "max", k: int = 4) -> TaskResult:
    """F1 on the BUCC 2018 zh-en sample and on BUCC-style sets built from newstest (de/fr/ru/es/cs-en)."""
    from xlsent.data.bucc import load_bucc_sample, newstest_bucc

    start = time.perf_counter()
    base = data_root(root)
    builders: dict[str, Callable[[], BuccSet]] = {
        "zh-en (bucc2018 sample)": partial(load_bucc_sample, "zh-en", base),
        **{f"{x}-en (newstest)": partial(newstest_bucc, x, base) for x in NEWSTEST_LANGS},
    }
    chosen = [n for n in builders if not langs or n.split(" ")[0] in langs or n.split("-")[0] in langs]
    scores: dict[str, dict[str, float]] = {}
    notes = [f"ratio margin, k={k}, candidates by {mode!r} retrieval with LASER's greedy 1:1 filter, "
             "threshold chosen to maximise F1 on the gold pairs (oracle, as in the papers' sample-set numbers)"]
    for name in chosen:
        bucc = builders[name]()
        scores[name] = score_set(encoder, bucc, k=k, mode=mode)
        notes.append(f"{name}: {bucc.description}")
    averages = {"all": float(np.mean([s["f1"] for s in scores.values()]))} if scores else {}
    main = scores.get("zh-en (bucc2018 sample)", {}).get("f1", averages.get("all", float("nan")))
    files = sorted((base / "bucc2018_sample").glob("zh-en.*"))
    return TaskResult(
        task="bucc", encoder=encoder_id(encoder), dataset="bucc2018_sample zh-en + newstest-built sets",
        main_score=main, main_metric="f1", scores=scores, averages=averages,
        options={"margin": "ratio", "k": k, "mode": mode, "threshold": "optimised on gold"},
        dataset_files=file_checksums(files, base), seconds=time.perf_counter() - start, notes=notes,
    )
