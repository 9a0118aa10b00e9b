"""Where a job's heavy stages run: the engine protocol, and the local engine (this process).

A job (:mod:`xlsent.mining.job`) reads its inputs, keeps its work folder and composes the stages
(:mod:`xlsent.mining.stages`) itself; it asks its engine only to embed a side and for the places where the k-NN
stage's shards run. :class:`LocalEngine` runs them here; :class:`xlsent.mining.distributed.RayEngine` runs them on
Ray workers. Both write the same files, so a job's output does not depend on its engine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from xlsent.data.text_input import InputSpec
from xlsent.embed_job import EmbedOptions, embed_file
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.mining.config import SearchConfig
from xlsent.mining.faiss_index import fill_index
from xlsent.mining.knn import KnnResult
from xlsent.mining.stages import IndexFill, ShardSearch, search_shards_locally
from xlsent.store import load_embeddings

log = logging.getLogger(__name__)

# Exact shards: (shard bounds, shards to do) -> (shard, its k-NN lists) as each finishes.
ExactShards = Callable[[list[tuple[int, int]], list[int]], Iterable[tuple[int, KnnResult]]]


@dataclass(frozen=True)
class Side:
    """One side of a job: its input (a readable file), the texts of its rows, the file's SHA-256, its language."""

    spec: InputSpec
    texts: list[str]
    sha256: str
    lang: str | None


@dataclass(frozen=True)
class SearchHooks:
    """Where the k-NN stage's shards run (see :func:`xlsent.mining.stages.neighbourhoods`): ``exact`` shards
    (``None``: in this process), the ``fill`` of an approximate index and the ``search`` of its query shards."""

    exact: ExactShards | None = None
    fill: IndexFill = fill_index
    search: ShardSearch = field(default=search_shards_locally)


class Engine(Protocol):
    """What a job asks of the place it runs on."""

    def encoder_id(self) -> str | None:
        """The id of the encoder that embeds (``None``: this engine embeds nothing)."""
        ...

    def job_key(self) -> dict[str, Any]:
        """What the engine adds to the job's key (settings that change the work folder's files)."""
        ...

    def embed(self, side: Side, out: Path, progress: bool) -> np.ndarray:
        """The embeddings of ``side``'s rows, written to ``out`` (resumable; reused when ``out`` holds them)."""
        ...

    def embedded(self) -> None:
        """Called once both sides are embedded: the engine may free its encoders."""
        ...

    def hooks(self, x: np.ndarray, y: np.ndarray, cfg: SearchConfig, progress: bool) -> SearchHooks:
        """Where the shards of the k-NN of ``x`` and ``y`` run."""
        ...


class LocalEngine:
    """Every stage in this process, with ``encoder`` (``None`` when both sides' embeddings are given).

    >>> LocalEngine(None).encoder_id() is None
    True
    """

    def __init__(self, encoder: Encoder | None) -> None:
        self.encoder = encoder

    def encoder_id(self) -> str | None:
        return encoder_id(self.encoder) if self.encoder is not None else None

    def job_key(self) -> dict[str, Any]:
        return {}

    def embed(self, side: Side, out: Path, progress: bool) -> np.ndarray:
        if self.encoder is None:
            raise ValueError("embedding a side needs an encoder")
        made_by = encoder_id(self.encoder)
        if out.is_file():
            try:
                return load_embeddings(out, expect_sha256=side.sha256, expect_encoder=made_by)[0]
            except ValueError as exc:
                log.warning("re-embedding %s: %s", side.spec.name, exc)
        embed_file(side.spec, out, self.encoder, EmbedOptions(resume=True, progress=progress, lang=side.lang))
        return load_embeddings(out, expect_sha256=side.sha256)[0]

    def embedded(self) -> None:
        return None

    def hooks(self, x: np.ndarray, y: np.ndarray, cfg: SearchConfig, progress: bool) -> SearchHooks:
        return SearchHooks()
