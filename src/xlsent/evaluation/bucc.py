"""BUCC bitext mining (Artetxe & Schwenk 2019): ratio margin, candidates, threshold optimised on gold."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from xlsent.data.bucc import NEWSTEST_BUCC_LANGS, BuccSet, load_bucc_sample, newstest_bucc
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.evaluation.results import TaskResult, file_checksums
from xlsent.evaluation.task import EmbedFn, TaskMetadata, encoder_embed
from xlsent.paths import data_root

SAMPLE = "zh"
"""Code of the BUCC 2018 sample set (zh-en); the other sets are named by their newstest language."""
SETS: dict[str, str] = {SAMPLE: "zh-en (bucc2018 sample)", **{x: f"{x}-en (newstest)" for x in NEWSTEST_BUCC_LANGS}}
"""Set code -> the name of its row in ``TaskResult.scores``."""

METADATA = TaskMetadata(
    name="bucc",
    description="BUCC-style bitext mining with the ratio margin (F1 with the threshold optimised on gold)",
    languages=(SAMPLE, *NEWSTEST_BUCC_LANGS, "en"),
    data_files=("bucc2018_sample/zh-en.dev.*", "parallel/wmt_newstest/*/newstest*.*",
                "parallel/wmt_newstest/2014/*-en/newstest2014.*"),
    main_score="F1 on the zh-en BUCC 2018 sample; without it, F1 on the one newstest-built set run, else the mean "
               "F1 over the newstest-built sets run (main_metric names which)",
    papers=("001 LASER", "000 DuEAM", "004 dual-pivot"),
    reference="Zweigenbaum, Sharoff & Rapp (2018), Overview of the Third BUCC Shared Task (sample split, zh-en); "
              "the other sets are built here from WMT newstest 2008-2014 (xlsent.data.bucc.newstest_bucc)",
)


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


def gold_positions(bucc: BuccSet) -> set[tuple[int, int]]:
    """The gold pairs of ``bucc`` as (row in ``src``, row in ``tgt``).

    >>> gold_positions(BuccSet("zh-en", ["z1", "z2"], ["a", "b"], ["e1"], ["c"], [("z2", "e1")], ""))
    {(1, 0)}
    """
    src_pos = {i: n for n, i in enumerate(bucc.src_ids)}
    tgt_pos = {i: n for n, i in enumerate(bucc.tgt_ids)}
    return {(src_pos[a], tgt_pos[b]) for a, b in bucc.gold if a in src_pos and b in tgt_pos}


def load_set(code: str, root: str | Path | None = None) -> BuccSet:
    """The BUCC set of ``code`` (a key of :data:`SETS`): the zh-en sample, or the newstest-built ``code``-en set."""
    return load_bucc_sample("zh-en", root) if code == SAMPLE else newstest_bucc(code, root)


def score_set(embed: EmbedFn, bucc: BuccSet, *, k: int = 4, mode: str = "max") -> dict[str, float]:
    """Embed both sides of a BUCC-style set and score mining on it against its gold pairs."""
    src_lang, tgt_lang = bucc.pair.split("-")
    return mine_and_score(embed(bucc.src, src_lang), embed(bucc.tgt, tgt_lang), gold_positions(bucc), k=k,
                          mode=mode)


def summarise(f1: dict[str, float]) -> tuple[str, float, dict[str, float]]:
    """Main metric, main score and averages of the per-set F1 of a run (keys: set codes of :data:`SETS`).

    The main score is the sample set's F1 when it ran, else the newstest sets' (mean) F1; averages are named by
    their members and given only where they average more than one set and differ from each other.

    >>> summarise({"zh": 90.0, "de": 80.0, "fr": 70.0})
    ('f1, zh-en bucc2018 sample', 90.0, {'newstest de fr': 75.0, '3 sets: zh de fr': 80.0})
    >>> summarise({"de": 80.0, "fr": 70.0})
    ('mean f1 over newstest de fr', 75.0, {'newstest de fr': 75.0})
    """
    newstest = [x for x in SETS if x in f1 and x != SAMPLE]
    everything = [x for x in SETS if x in f1]
    newstest_name = "newstest " + " ".join(newstest)
    averages = {}
    if len(newstest) > 1:
        averages[newstest_name] = float(np.mean([f1[x] for x in newstest]))
    if SAMPLE in f1 and newstest:
        listed = " ".join(everything)
        name = f"all {len(SETS)} sets" if len(everything) == len(SETS) else f"{len(everything)} sets: {listed}"
        averages[name] = float(np.mean([f1[x] for x in everything]))
    if SAMPLE in f1:
        return "f1, zh-en bucc2018 sample", f1[SAMPLE], averages
    if len(newstest) == 1:
        return f"f1, {newstest[0]}-en newstest", f1[newstest[0]], averages
    return f"mean f1 over {newstest_name}", averages[newstest_name], averages


def evaluate(embed: EmbedFn, *, encoder_id: str, langs: list[str] | None = None, root: str | Path | None = None,
             progress: bool = False, mode: str = "max", k: int = 4) -> TaskResult:
    """F1 on the BUCC 2018 zh-en sample and on BUCC-style sets built from newstest (cs/de/es/fr/ru-en).

    ``langs`` picks sets by code or pair (``zh``, ``de-en``, ...); default all six.
    """
    start = time.perf_counter()
    base = data_root(root)
    wanted = {x.removesuffix("-en") for x in langs or SETS}
    unknown = sorted(wanted - SETS.keys())
    if unknown:
        raise ValueError(f"unknown BUCC set(s) {unknown}; known: {' '.join(SETS)} (or as pairs, e.g. zh-en)")
    scores: dict[str, dict[str, float]] = {}
    notes = [f"ratio margin, k={k}, candidates by {mode!r} retrieval with LASER's greedy 1:1 filter, "
             "threshold chosen to maximise F1 on the gold pairs (oracle, as in the papers' sample-set numbers)"]
    for code in tqdm([x for x in SETS if x in wanted], disable=not progress, desc="bucc", unit="set"):
        bucc = load_set(code, base)
        scores[SETS[code]] = score_set(embed, bucc, k=k, mode=mode)
        notes.append(f"{SETS[code]}: {bucc.description}")
    main_metric, main, averages = summarise({x: scores[name]["f1"] for x, name in SETS.items() if name in scores})
    files = sorted((base / "bucc2018_sample").glob("zh-en.*"))
    return TaskResult(
        task="bucc", encoder=encoder_id, dataset="bucc2018_sample zh-en + newstest-built sets",
        main_score=main, main_metric=main_metric, subset_metric="f1", scores=scores, averages=averages,
        options={"margin": "ratio", "k": k, "mode": mode, "threshold": "optimised on gold"},
        dataset_files=file_checksums(files, base), seconds=time.perf_counter() - start, notes=notes,
    )


def run(encoder: Encoder, *, langs: list[str] | None = None, root: str | Path | None = None,
        progress: bool = False, mode: str = "max", k: int = 4) -> TaskResult:
    """:func:`evaluate` ``encoder`` (encodings cached on disk)."""
    return evaluate(encoder_embed(encoder), encoder_id=encoder_id(encoder), langs=langs, root=root,
                    progress=progress, mode=mode, k=k)
