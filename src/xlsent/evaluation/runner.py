"""Task registry: task name -> its :class:`~xlsent.evaluation.task.Task` class; evaluation of a task by name.

The CLI builds its help from :data:`TASKS`, so importing this module imports every task module: they import
torch, scikit-learn and scipy only inside the functions that use them, keeping every ``xlsent`` command fast.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.evaluation.align import Align
from xlsent.evaluation.align_ablation import AlignAblation
from xlsent.evaluation.bucc import Bucc
from xlsent.evaluation.filter import Filter
from xlsent.evaluation.intent import Intent
from xlsent.evaluation.results import TaskResult
from xlsent.evaluation.retrieval_pk import RetrievalPk
from xlsent.evaluation.senteval import SentEval
from xlsent.evaluation.sts import Sts
from xlsent.evaluation.task import EmbedFn, Task, TaskMetadata, encoder_embed
from xlsent.evaluation.tatoeba import Tatoeba
from xlsent.evaluation.xnli import Xnli

log = logging.getLogger(__name__)

REGISTRY: dict[str, type[Task]] = {t.metadata.name: t for t in (Tatoeba, Bucc, Sts, Xnli, Intent, SentEval,
                                                                 RetrievalPk, Filter, Align, AlignAblation)}
METADATA: dict[str, TaskMetadata] = {name: t.metadata for name, t in REGISTRY.items()}
TASKS: dict[str, str] = {name: meta.description for name, meta in METADATA.items()}
"""Task name -> one-line description (the CLI's help)."""


def evaluate_task(task: str, embed: EmbedFn, *, encoder_id: str, langs: list[str] | None = None,
                  root: str | Path | None = None, progress: bool = False, **options: Any) -> TaskResult:
    """Score the embeddings of ``embed`` on ``task`` and return the result (not yet saved).

    ``options`` are the task's own keyword arguments; those set to ``None`` are left at the task's default.
    """
    if task not in REGISTRY:
        raise ValueError(f"unknown task {task!r}; tasks: {', '.join(TASKS)}")
    kwargs = {k: v for k, v in options.items() if v is not None}
    result = REGISTRY[task].evaluate(embed, encoder_id=encoder_id, langs=langs, root=root, progress=progress,
                                     **kwargs)
    log.info("%s on %s: %s %.2f (%.0fs)", task, result.encoder, result.main_metric, result.main_score,
             result.seconds)
    return result


def check_task_data(task: str, *, langs: list[str] | None = None, root: str | Path | None = None,
                    **options: Any) -> list[str]:
    """The subsets a run of ``task`` would score, before any model is loaded (:meth:`Task.check_data`: the subsets
    the data lack, or no data at all, are errors naming them); ``options`` set to ``None`` are left at the task's
    default."""
    if task not in REGISTRY:
        raise ValueError(f"unknown task {task!r}; tasks: {', '.join(TASKS)}")
    return REGISTRY[task].check_data(langs=langs, root=root, **{k: v for k, v in options.items() if v is not None})


def run_task(task: str, encoder: Encoder, *, langs: list[str] | None = None, root: str | Path | None = None,
             progress: bool = False, **options: Any) -> TaskResult:
    """Evaluate ``encoder`` on ``task`` (encodings cached on disk) and return its result (not yet saved); the task's
    options that depend on the encoder (:meth:`~xlsent.evaluation.task.Task.encoder_options`) come first."""
    own = REGISTRY[task].encoder_options(encoder) if task in REGISTRY else {}
    return evaluate_task(task, encoder_embed(encoder), encoder_id=encoder_id(encoder), langs=langs, root=root,
                         progress=progress, **{**own, **options})
