"""Task registry: task name -> the module whose ``run(encoder, ...)`` evaluates it."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any

from xlsent.encoders.base import Encoder
from xlsent.evaluation.results import TaskResult

log = logging.getLogger(__name__)

TASKS: dict[str, str] = {
    "tatoeba": "Tatoeba similarity search, 112 languages <-> English (accuracy, both directions)",
    "bucc": "BUCC-style bitext mining with the ratio margin (F1 with the threshold optimised on gold)",
    "sts": "STS17 tracks and cross-lingual STS-B (Spearman x 100 of cosine)",
    "xnli": "XNLI zero-shot transfer: English-trained classifier on frozen embeddings, 15 languages",
    "intent": "xSID intent classification by leave-one-out nearest neighbour (EMU protocol)",
    "senteval": "SentEval MR, SUBJ, TREC, SST-2 with logistic regression on frozen embeddings",
}


def run_task(task: str, encoder: Encoder, *, langs: list[str] | None = None, root: str | Path | None = None,
             progress: bool = False, **options: Any) -> TaskResult:
    """Evaluate ``encoder`` on ``task`` and return its result (not yet saved)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; tasks: {', '.join(TASKS)}")
    module = importlib.import_module(f"xlsent.evaluation.{task}")
    kwargs = {k: v for k, v in options.items() if v is not None}
    result: TaskResult = module.run(encoder, langs=langs, root=root, progress=progress, **kwargs)
    log.info("%s on %s: %s %.2f (%.0fs)", task, result.encoder, result.main_metric, result.main_score,
             result.seconds)
    return result
