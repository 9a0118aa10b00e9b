"""Task registry: task name -> its module (``METADATA``, ``evaluate(embed, ...)`` and ``run(encoder, ...)``).

The CLI builds its help from :data:`TASKS`, so importing this module imports every task module: they import
torch, scikit-learn and scipy only inside the functions that use them, keeping every ``xlsent`` command fast.
"""

from __future__ import annotations

import logging
from pathlib import Path
from types import ModuleType
from typing import Any

from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.evaluation import bucc, intent, retrieval_pk, senteval, sts, tatoeba, xnli
from xlsent.evaluation.results import TaskResult
from xlsent.evaluation.task import EmbedFn, TaskMetadata, encoder_embed

log = logging.getLogger(__name__)

MODULES: dict[str, ModuleType] = {m.METADATA.name: m for m in (tatoeba, bucc, sts, xnli, intent, senteval,
                                                                   retrieval_pk)}
METADATA: dict[str, TaskMetadata] = {name: m.METADATA for name, m in MODULES.items()}
TASKS: dict[str, str] = {name: meta.description for name, meta in METADATA.items()}
"""Task name -> one-line description (the CLI's help)."""


def evaluate_task(task: str, embed: EmbedFn, *, encoder_id: str, langs: list[str] | None = None,
                  root: str | Path | None = None, progress: bool = False, **options: Any) -> TaskResult:
    """Score the embeddings of ``embed`` on ``task`` and return the result (not yet saved).

    ``options`` are the task's own keyword arguments; those set to ``None`` are left at the task's default.
    """
    if task not in MODULES:
        raise ValueError(f"unknown task {task!r}; tasks: {', '.join(TASKS)}")
    kwargs = {k: v for k, v in options.items() if v is not None}
    result: TaskResult = MODULES[task].evaluate(embed, encoder_id=encoder_id, langs=langs, root=root,
                                                progress=progress, **kwargs)
    log.info("%s on %s: %s %.2f (%.0fs)", task, result.encoder, result.main_metric, result.main_score,
             result.seconds)
    return result


def run_task(task: str, encoder: Encoder, *, langs: list[str] | None = None, root: str | Path | None = None,
             progress: bool = False, **options: Any) -> TaskResult:
    """Evaluate ``encoder`` on ``task`` (encodings cached on disk) and return its result (not yet saved)."""
    return evaluate_task(task, encoder_embed(encoder), encoder_id=encoder_id(encoder), langs=langs, root=root,
                         progress=progress, **options)
