"""Tatoeba similarity search (Artetxe & Schwenk 2019): 112 languages, nearest neighbour both ways."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xlsent.data.tatoeba import (
    FOLDER,
    LANGUAGES,
    PAPER14,
    RELEASE_LANGUAGES,
    XTREME36,
    load_tatoeba,
    tatoeba_languages,
)
from xlsent.evaluation.retrieval import retrieval_accuracy
from xlsent.evaluation.task import EmbedFn, SubsetScore, Summary, Task, TaskMetadata

log = logging.getLogger(__name__)

AVERAGES = ("all-112", "xtreme-36", "paper-14")
"""The averages reported when all their languages ran, in the order that picks the main score."""

METADATA = TaskMetadata(
    name="tatoeba",
    description="Tatoeba similarity search, 112 languages <-> English (accuracy, both directions)",
    languages=(),
    languages_note=f"every xx with both tatoeba.xx-eng.xx and tatoeba.xx-eng.eng in {FOLDER} (112 in the release), "
                   "each searched against English (eng)",
    data_files=(f"{FOLDER}/tatoeba.*-eng.*",),
    main_score="mean of xx->en and en->xx accuracy, averaged over all 112 languages; when a run covers fewer, "
               "over XTREME-36, else over the paper's 14, else over the languages run",
    papers=("001 LASER", "000 DuEAM", "004 dual-pivot"),
    reference="Artetxe & Schwenk (2019), Massively Multilingual Sentence Embeddings for Zero-Shot Cross-Lingual "
              "Transfer and Beyond, TACL 7 (Tatoeba test set v1 of LASER's tasks/similarity)",
)


def pair_scores(xx: np.ndarray, en: np.ndarray, *, margin_k: int | None = None) -> dict[str, float]:
    """One language's metrics from row-aligned embeddings (row i of ``xx`` translates row i of ``en``).

    >>> pair_scores(np.eye(2), np.eye(2)[[1, 0]])
    {'xx->en': 0.0, 'en->xx': 0.0, 'mean': 0.0, 'pairs': 2.0}
    """
    fwd, bwd = retrieval_accuracy(xx, en, margin_k=margin_k)
    return {"xx->en": fwd, "en->xx": bwd, "mean": (fwd + bwd) / 2, "pairs": float(len(xx))}


def language_averages(scores: dict[str, dict[str, float]], all_langs: Sequence[str]) -> dict[str, float]:
    """The :data:`AVERAGES` of per-language ``mean`` whose languages all have scores (all-112 is ``all_langs``, when
    they are the release's :data:`~xlsent.data.tatoeba.LANGUAGES` languages: a folder holding fewer has no all-112).

    >>> language_averages({"deu": {"mean": 90.0}, "fra": {"mean": 80.0}}, ["deu", "fra"])
    {}
    >>> codes = [f"l{i:03d}" for i in range(LANGUAGES)]
    >>> language_averages({lang: {"mean": 50.0} for lang in codes}, codes)
    {'all-112': 50.0}
    """
    groups = {"xtreme-36": list(XTREME36), "paper-14": list(PAPER14)}
    if len(all_langs) == LANGUAGES:
        groups = {"all-112": list(all_langs), **groups}
    return {name: float(np.mean([scores[lang]["mean"] for lang in group]))
            for name, group in groups.items() if all(lang in scores for lang in group)}


def tatoeba_files(lang: str) -> list[str]:
    """The two files of the Tatoeba language ``lang``, relative to the data root.

    >>> tatoeba_files("fra")
    ['tatoeba_v1/tatoeba.fra-eng.fra', 'tatoeba_v1/tatoeba.fra-eng.eng']
    """
    return [f"{FOLDER}/tatoeba.{lang}-eng.{side}" for side in (lang, "eng")]


class Tatoeba(Task):
    """Accuracy xx->en, en->xx and their mean for every language (or those in ``langs``); standard averages.

    ``margin_k`` switches from cosine to ratio-margin retrieval (reported as variant ``margin``).
    """

    metadata = METADATA
    subset_kind = "Tatoeba language"
    subset_metric = "mean"

    def __init__(self, embed: EmbedFn, base: Path, *, margin_k: int | None = None) -> None:
        super().__init__(embed, base)
        self.margin_k = margin_k

    def known_subsets(self) -> list[str]:
        return tatoeba_languages(self.base)

    def all_subsets(self) -> list[str]:
        return list(RELEASE_LANGUAGES)

    def subset_files(self, subset: str) -> list[str]:
        return tatoeba_files(subset)

    def score(self, subset: str) -> SubsetScore:
        """The language's metrics; with ``margin_k``, also the k used (``margin_k``), which a set of fewer pairs
        cuts to its size: logged and noted."""
        xx, en = load_tatoeba(subset, self.base)
        metrics = pair_scores(self.embed(xx, subset), self.embed(en, "eng"), margin_k=self.margin_k)
        if self.margin_k is None:
            return SubsetScore(metrics)
        used = min(self.margin_k, len(xx))
        note = f"{subset}: margin k {used}, not {self.margin_k}: the set has {len(xx)} pairs" \
            if used < self.margin_k else ""
        if note:
            log.warning("%s", note)
        return SubsetScore({**metrics, "margin_k": float(used)}, note)

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        averages = language_averages(scores, self.known_subsets())
        main_name = next((name for name in AVERAGES if name in averages), None)
        main = averages[main_name] if main_name else float(np.mean([s["mean"] for s in scores.values()]))
        retrieval = f"ratio margin k={self.margin_k}" if self.margin_k else "cosine"
        return Summary(
            dataset="tatoeba_v1 (Artetxe & Schwenk 2019)", main_score=main, main_metric="mean", averages=averages,
            options={"retrieval": retrieval, "main": main_name or "langs"},
            notes=["accuracy = 100 - error rate; nearest neighbour over the whole set of each language"],
            files=[self.base / name for lang in scores for name in tatoeba_files(lang)],
            variant="margin" if self.margin_k else "",
        )


evaluate = Tatoeba.evaluate
