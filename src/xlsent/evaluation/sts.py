"""Semantic textual similarity: Spearman correlation (x100) of cosine similarity with gold scores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from xlsent.data.sts import STS17_TRACKS, STSB_LANGS, StsPairs, load_sts17, load_stsb_crosslingual
from xlsent.evaluation.task import EmbedFn, SubsetScore, Summary, Task, TaskMetadata

EXCLUDED_FROM_AVERAGE = ("4b",)

METADATA = TaskMetadata(
    name="sts",
    description="STS17 tracks, English STS-B and cross-lingual STS-B (Spearman x 100 of cosine)",
    languages=tuple(sorted({lang for pair in STS17_TRACKS.values() for lang in pair} | set(STSB_LANGS))),
    data_files=("sts2017/STS2017.eval.v1.1/STS.input.track*.txt", "sts2017/STS2017.gs/STS.gs.track*.txt",
                "stsb_multi_mt/data/stsb-*-test.csv"),
    main_score="Spearman x 100 averaged over the STS17 tracks run except 4b; without STS17 tracks, over the "
               "cross-lingual stsb en-xx pairs run",
    papers=("000 DuEAM",),
    reference="Cer et al. (2017), SemEval-2017 Task 1: Semantic Textual Similarity; May (2021), stsb_multi_mt "
              "(machine-translated STS benchmark)",
)


def cosine_spearman(a: np.ndarray, b: np.ndarray, gold: Sequence[float]) -> float:
    """Spearman x 100 between row-wise cosine of ``a`` and ``b`` and the gold scores.

    >>> a = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]); b = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    >>> round(cosine_spearman(a, b, [5.0, 2.5, 0.0]), 1)
    100.0
    """
    return spearman_x100(row_cosines(a, b), gold)


def spearman_x100(cos: np.ndarray, gold: Sequence[float]) -> float:
    """Spearman x 100 between the cosines ``cos`` and the gold scores."""
    from scipy.stats import spearmanr

    return float(spearmanr(cos, np.asarray(gold)).statistic) * 100


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The cosine of row i of ``a`` and row i of ``b``, for every i.

    >>> row_cosines(np.array([[1.0, 0.0], [2.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 3.0]])).tolist()
    [1.0, 0.0]
    """
    na = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.sum(a * b, axis=1) / np.maximum(na, 1e-12)


def check_cosines_vary(cos: np.ndarray, subset: str) -> None:
    """``ValueError`` naming ``subset`` when its cosines ``cos`` are not finite or all equal (the model gives every
    pair the same similarity): Spearman's correlation with them is undefined."""
    if not np.all(np.isfinite(cos)) or np.ptp(cos) == 0:
        what = "not all finite" if not np.all(np.isfinite(cos)) else f"all {cos[0]:.4g}"
        raise ValueError(f"sts {subset}: the model's cosines of the {len(cos)} pairs are {what}, so their Spearman "
                         "correlation with the gold is undefined: check the model (it gives every sentence the same "
                         "vector?). Not saved")


class Sts(Task):
    """STS17 tracks 1-6, English STS-B test (``stsb-en``, from ``stsb_multi_mt``) and cross-lingual en-xx pairs
    built from ``stsb_multi_mt`` test.

    ``langs`` picks the subsets by name (e.g. ``sts17-5``, ``stsb-en``, ``stsb-en-de``); default all.
    """

    metadata = METADATA
    subset_kind = "STS subset"
    subset_metric = "spearman"
    unit = "subset"

    def __init__(self, embed: EmbedFn, base: Path) -> None:
        super().__init__(embed, base)
        self.loaders: dict[str, Callable[[], StsPairs]] = {
            **{f"sts17-{t}": partial(load_sts17, t, base) for t in STS17_TRACKS},
            "stsb-en": partial(load_stsb_crosslingual, "en", "en", "test", base),
            **{f"stsb-en-{x}": partial(load_stsb_crosslingual, "en", x, "test", base) for x in STSB_LANGS if x != "en"},
        }

    def known_subsets(self) -> list[str]:
        return list(self.loaders)

    def score(self, subset: str) -> SubsetScore:
        pairs = self.loaders[subset]()
        a, b = self.embed(pairs.sent1, pairs.lang1), self.embed(pairs.sent2, pairs.lang2)
        cos = row_cosines(a, b)
        check_cosines_vary(cos, subset)
        return SubsetScore({"spearman": spearman_x100(cos, pairs.scores), "pairs": float(len(pairs.scores))})

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        sts17 = [s["spearman"] for n, s in scores.items()
                 if n.startswith("sts17-") and n.removeprefix("sts17-") not in EXCLUDED_FROM_AVERAGE]
        cross = [s["spearman"] for n, s in scores.items() if n.startswith("stsb-en-")]
        averages = {}
        if sts17:
            averages["sts17 (without 4b)"] = float(np.mean(sts17))
        if cross:
            averages["stsb en-xx"] = float(np.mean(cross))
        if "stsb-en" in scores:
            averages["stsb en"] = scores["stsb-en"]["spearman"]
        return Summary(
            dataset="SemEval-2017 STS + stsb_multi_mt test", main_score=next(iter(averages.values()), float("nan")),
            main_metric="spearman", averages=averages,
            options={"similarity": "cosine", "correlation": "spearman x 100"},
            notes=["track 6 uses the first 250 input lines (as MTEB and SBERT)",
                   "track 4b's gold holds only the integers 2-5; reported but left out of the average",
                   "cross-lingual pairs: sent1 from stsb_multi_mt English test, sent2 from the other language"],
            files=[*sorted((self.base / "sts2017").rglob("*.txt")),
                   *sorted((self.base / "stsb_multi_mt").rglob("*test*"))],
        )


evaluate = Sts.evaluate
