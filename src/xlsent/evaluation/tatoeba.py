"""Tatoeba similarity search (Artetxe & Schwenk 2019): 112 languages, nearest neighbour both ways."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from xlsent.data.tatoeba import FOLDER, PAPER14, XTREME36, load_tatoeba, tatoeba_languages
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.evaluation.results import TaskResult, file_checksums
from xlsent.evaluation.retrieval import retrieval_accuracy
from xlsent.evaluation.task import EmbedFn, TaskMetadata, encoder_embed
from xlsent.paths import data_root

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
    """The :data:`AVERAGES` of per-language ``mean`` whose languages all have scores (all-112 is ``all_langs``).

    >>> language_averages({"deu": {"mean": 90.0}, "fra": {"mean": 80.0}}, ["deu", "fra"])
    {'all-112': 85.0}
    """
    groups = {"all-112": list(all_langs), "xtreme-36": list(XTREME36), "paper-14": list(PAPER14)}
    return {name: float(np.mean([scores[lang]["mean"] for lang in group]))
            for name, group in groups.items() if all(lang in scores for lang in group)}


def evaluate(embed: EmbedFn, *, encoder_id: str, langs: list[str] | None = None, root: str | Path | None = None,
             progress: bool = False, margin_k: int | None = None) -> TaskResult:
    """Accuracy xx->en, en->xx and their mean for every language (or those in ``langs``); standard averages.

    ``margin_k`` switches from cosine to ratio-margin retrieval (reported as variant ``margin``).
    """
    start = time.perf_counter()
    base = data_root(root)
    all_langs = tatoeba_languages(base)
    langs = langs or all_langs
    unknown = sorted(set(langs) - set(all_langs))
    if unknown:
        raise ValueError(f"unknown Tatoeba language(s) {unknown}; known: {' '.join(all_langs)}")
    scores: dict[str, dict[str, float]] = {}
    files: list[Path] = []
    for lang in tqdm(langs, disable=not progress, desc="tatoeba", unit="lang"):
        xx, en = load_tatoeba(lang, base)
        files += [base / FOLDER / f"tatoeba.{lang}-eng.{lang}", base / FOLDER / f"tatoeba.{lang}-eng.eng"]
        scores[lang] = pair_scores(embed(xx, lang), embed(en, "eng"), margin_k=margin_k)
    averages = language_averages(scores, all_langs)
    main_name = next((name for name in AVERAGES if name in averages), None)
    main = averages[main_name] if main_name else float(np.mean([s["mean"] for s in scores.values()]))
    return TaskResult(
        task="tatoeba", encoder=encoder_id, dataset="tatoeba_v1 (Artetxe & Schwenk 2019)",
        main_score=main, main_metric="mean", subset_metric="mean", scores=scores, averages=averages,
        options={"retrieval": f"ratio margin k={margin_k}" if margin_k else "cosine", "main": main_name or "langs"},
        dataset_files=file_checksums(files, base), seconds=time.perf_counter() - start,
        variant="margin" if margin_k else "",
        notes=["accuracy = 100 - error rate; nearest neighbour over the whole set of each language"],
    )


def run(encoder: Encoder, *, langs: list[str] | None = None, root: str | Path | None = None,
        progress: bool = False, margin_k: int | None = None) -> TaskResult:
    """:func:`evaluate` ``encoder`` (encodings cached on disk)."""
    return evaluate(encoder_embed(encoder), encoder_id=encoder_id(encoder), langs=langs, root=root,
                    progress=progress, margin_k=margin_k)
