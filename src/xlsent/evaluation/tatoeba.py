"""Tatoeba similarity search (Artetxe & Schwenk 2019): 112 languages, nearest neighbour both ways."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import cached_encode, encoder_id
from xlsent.evaluation.results import TaskResult, file_checksums
from xlsent.evaluation.retrieval import retrieval_accuracy
from xlsent.paths import data_root

AVERAGES = ("all-112", "xtreme-36", "paper-14")


def run(encoder: Encoder, *, langs: list[str] | None = None, root: str | Path | None = None,
        progress: bool = False, margin_k: int | None = None) -> TaskResult:
    """Accuracy xx->en, en->xx and their mean for every language; averages over the standard sets.

    ``margin_k`` switches from cosine to ratio-margin retrieval (reported as variant ``margin``).
    """
    from xlsent.data.tatoeba import PAPER14, XTREME36, load_tatoeba, tatoeba_languages

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
        files += [base / "tatoeba_v1" / f"tatoeba.{lang}-eng.{lang}", base / "tatoeba_v1" / f"tatoeba.{lang}-eng.eng"]
        fwd, bwd = retrieval_accuracy(cached_encode(encoder, xx, lang), cached_encode(encoder, en, "eng"),
                                      margin_k=margin_k)
        scores[lang] = {"xx->en": fwd, "en->xx": bwd, "mean": (fwd + bwd) / 2, "pairs": float(len(xx))}
    groups = {"all-112": all_langs, "xtreme-36": list(XTREME36), "paper-14": list(PAPER14)}
    averages = {name: float(np.mean([scores[lang]["mean"] for lang in group]))
                for name, group in groups.items() if all(lang in scores for lang in group)}
    main_name = next((name for name in AVERAGES if name in averages), None)
    main = averages[main_name] if main_name else float(np.mean([s["mean"] for s in scores.values()]))
    return TaskResult(
        task="tatoeba", encoder=encoder_id(encoder), dataset="tatoeba_v1 (Artetxe & Schwenk 2019)",
        main_score=main, main_metric="mean", scores=scores, averages=averages,
        options={"retrieval": f"ratio margin k={margin_k}" if margin_k else "cosine", "main": main_name or "langs"},
        dataset_files=file_checksums(files, base), seconds=time.perf_counter() - start,
        variant="margin" if margin_k else "",
        notes=["accuracy = 100 - error rate; nearest neighbour over the whole set of each language"],
    )
