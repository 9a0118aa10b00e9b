"""What every evaluation task shares (after MTEB): its metadata, and the embedding function it scores.

A task module declares ``METADATA`` (what it measures, on which data, for which papers) and
``evaluate(embed, *, encoder_id, ...)``, which loads its data, embeds every sentence list through ``embed``
and scores the embeddings with pure functions. Anything that turns sentences into unit rows can be scored: an
:class:`~xlsent.encoders.base.Encoder` (through :func:`encoder_embed`), a model being trained, or a study's
projection of cached states.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import cached_encode

EmbedFn = Callable[[Sequence[str], str | None], np.ndarray]
"""``embed(sentences, lang) -> (len(sentences), dim)`` array of unit rows, row i <-> ``sentences[i]``."""


def encoder_embed(encoder: Encoder) -> EmbedFn:
    """The :data:`EmbedFn` of ``encoder``, read from or written to the on-disk encoding cache."""
    return lambda sentences, lang: cached_encode(encoder, sentences, lang)


@dataclass(frozen=True)
class TaskMetadata:
    """What a task measures and on what (MTEB's ``TaskMetadata``, reduced to what xlsent uses).

    ``languages`` are the codes the data cover, in the data's own spelling; where the task finds them in its data
    folder instead, it is empty and ``languages_note`` says how. ``data_files`` are glob patterns relative to the
    data root (:func:`xlsent.paths.data_root`). ``main_score`` says in words what ``TaskResult.main_score`` is.
    ``papers`` name the papers of ``shared/papers`` whose numbers the task reproduces (file number and short
    name); ``reference`` cites the task's data.
    """

    name: str
    description: str
    languages: tuple[str, ...]
    data_files: tuple[str, ...]
    main_score: str
    papers: tuple[str, ...]
    reference: str
    languages_note: str = ""
