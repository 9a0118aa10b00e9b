"""The Ray engine of the mining job (:class:`RayEngine`): embedding by encoder actors over input chunks, k-NN as
one task per shard. The job itself (:mod:`xlsent.mining.job`) is the same driver as on the local engine.

The driver keeps its memory bounded: each finished embedding chunk and each finished k-NN shard is written
into the work folder (``OUTPUT.work/``, the same job key, chunk and shard files as the local engine) as soon as it
arrives, and the k-NN lists are merged from there one shard at a time. A driver killed mid-run and started again
with the same command recomputes only the missing chunks and shards; a task whose worker process dies is retried
by Ray (``TASK_RETRIES``).

Exact search (:func:`ray_exact_shards`) runs in two explicit passes, as the margin needs the k-NN means of both
sides: (1) each task takes a block of source rows against all target rows (put into the object store once, read in
place by the tasks of a node) at the job's precision and returns complete forward lists plus the target side's
lists restricted to its block; (2) the driver merges the backward lists, scores margins and selects pairs as on
the local engine. With an approximate ``--index``, the driver trains each direction's FAISS index once on a seeded
sample and serializes it, trained and empty (``faiss.serialize_index``, bytes in a numpy array, no pickle), into
the object store; one task per database shard adds that shard's vectors on a worker and returns its filled index,
which the driver merges in shard order (:func:`ray_index_fill`: FAISS's ``merge_from`` concatenates the inverted
lists, the encoding was done on the workers). ``ivfpqfs`` travels as a plain IVF-PQ with the same 4-bit codes
(FAISS cannot merge fast-scan lists), whose merged codes the driver packs into fast-scan lists; ``hnsw`` cannot be
merged and is filled on the driver (see :func:`xlsent.mining.faiss_index.mergeable`). The filled index, the same
bytes as one fill, goes into the object store in turn and one task per query shard searches it on the workers
(:func:`ray_shard_search`); the shards are saved and reused by :func:`xlsent.mining.stages.approximate_knn`, which
both engines share, so the output is the same. Embedding chunks are the same row ranges as in ``xlsent embed``,
so the output is identical.

Every task and actor runs with as many BLAS, OpenMP (FAISS) and torch threads as CPUs it reserves
(:mod:`xlsent.threads`). Local Ray (started in-process) is the default; ``address`` joins a cluster.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from xlsent.atomic import atomic_path
from xlsent.cluster import (
    TASK_RETRIES,
    RayConfig,
    as_finished,
    encoder_actors,
    in_flight,
    log_again,
    ray_session,
    task_cpus,
)
from xlsent.mining.config import SearchConfig
from xlsent.mining.engine import ExactShards, SearchHooks, Side
from xlsent.mining.faiss_index import (
    fill_index,
    from_shard_form,
    merge_index,
    mergeable,
    search_rows,
    serialized_shard_form,
)
from xlsent.mining.knn import KnnResult, take_rows
from xlsent.mining.stages import IndexFill, ShardSearch, knn_shard, say, shard_bounds
from xlsent.store import EmbeddingFileError, base_metadata, load_embeddings, save_embedding_parts
from xlsent.threads import limit_threads, thread_counts

log = logging.getLogger(__name__)

def _knn_task(x_block: np.ndarray, y: np.ndarray, offset: int, cfg: SearchConfig
              ) -> tuple[KnnResult, dict[str, int]]:
    """One source shard against all targets (read in place from the node's object store), within the task's CPU
    reservation; also returns the thread counts it ran with."""
    with limit_threads(task_cpus()):
        return knn_shard(x_block, y, offset, cfg), thread_counts()


def _search_task(index: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """One query shard searched in a serialized FAISS index (``faiss.serialize_index``, read from the node's object
    store, its search effort set), within the task's CPU reservation; also returns the thread counts it ran with."""
    with limit_threads(task_cpus()):
        found = search_rows(faiss.deserialize_index(index), queries, 0, len(queries), k)
        return *found, thread_counts()


def _fill_task(index: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
    """One database shard added to a serialized trained index (``faiss.serialize_index``, read from the node's
    object store), within the task's CPU reservation: the filled index serialized, its rows numbered from 0; also
    returns the thread counts it ran with."""
    with limit_threads(task_cpus()):
        return faiss.serialize_index(fill_index(faiss.deserialize_index(index), rows)), thread_counts()


def ray_index_fill(cpus: int, cpus_per_task: int, shard_rows: int) -> IndexFill:
    """The Ray engine's index fill for :func:`~xlsent.mining.stages.approximate_knn`: the trained, empty index
    serialized into the object store once (:func:`~xlsent.mining.faiss_index.serialized_shard_form`), one task per
    database shard of ``shard_rows`` rows adding that shard on a worker (at most two per task slot of the ``cpus``
    in flight), and the shards' indexes merged on the driver in shard order
    (:func:`~xlsent.mining.faiss_index.merge_index`, :func:`~xlsent.mining.faiss_index.from_shard_form`) into
    the index one fill makes. An index that is not :func:`~xlsent.mining.faiss_index.mergeable` (``hnsw``) is
    filled on the driver."""
    import ray

    def fill(index: faiss.Index, db: np.ndarray) -> faiss.Index:
        if not mergeable(index):
            log.info("a %s cannot be merged from shards: its vectors are added on the driver", type(index).__name__)
            return fill_index(index, db)
        task = ray.remote(num_cpus=cpus_per_task, max_retries=TASK_RETRIES)(_fill_task)
        form = serialized_shard_form(index)
        index_ref = ray.put(form)  # one copy per node, shared by its tasks
        bounds = shard_bounds(len(db), shard_rows)

        def submit(shard: int) -> Any:
            lo, hi = bounds[shard]
            return task.remote(index_ref, take_rows(db, np.arange(lo, hi)))

        merged = faiss.deserialize_index(form)
        shards = as_finished(submit, list(range(len(bounds))), in_flight(cpus, cpus_per_task), ordered=True)
        for shard, (part, threads) in shards:
            log.debug("index shard %d filled with threads %s", shard, threads)
            merge_index(merged, faiss.deserialize_index(part))
        return from_shard_form(index, merged)

    return fill


def ray_shard_search(cpus: int, cpus_per_task: int = 1) -> ShardSearch:
    """The Ray engine's shard search for :func:`~xlsent.mining.stages.approximate_knn`: the filled index
    serialized into the object store once, one task per query shard on the workers, at most two per task slot of
    the ``cpus`` in flight."""
    import ray

    def search(index: faiss.Index, queries: np.ndarray, bounds: list[tuple[int, int]], todo: list[int], k: int
               ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        task = ray.remote(num_cpus=cpus_per_task, max_retries=TASK_RETRIES)(_search_task)
        index_ref = ray.put(faiss.serialize_index(index))  # one copy per node, shared by its tasks

        def submit(shard: int) -> Any:
            lo, hi = bounds[shard]
            return task.remote(index_ref, take_rows(queries, np.arange(lo, hi)), k)

        for shard, (idx, sim, threads) in as_finished(submit, todo, in_flight(cpus, cpus_per_task)):
            log.debug("search of shard %d ran with threads %s", shard, threads)
            yield shard, idx, sim

    return search


def _part_path(parts: Path, chunk: int) -> Path:
    return parts / f"{chunk:05d}.npy"


def ray_embed(texts: list[str], out: Path, actors: list[Any], *, sha: str, encoder: str, lang: str | None,
              chunk_rows: int) -> np.ndarray:
    """Embeddings of ``texts`` in ``out`` (memory-mapped): reused when ``out`` holds them already; else embedded
    chunk by chunk by ``actors``, each chunk saved into ``OUT.parts/`` as it arrives (finished ones are kept
    from an earlier run), then assembled into ``out``."""
    from ray.util import ActorPool

    if out.is_file():
        try:
            return load_embeddings(out, expect_sha256=sha, expect_encoder=encoder, expect_rows=len(texts))[0]
        except EmbeddingFileError as exc:
            log.warning("re-embedding %s: %s", out.name, exc)
    parts = out.with_name(out.name + ".parts")
    parts.mkdir(exist_ok=True)
    bounds = shard_bounds(len(texts), chunk_rows)
    todo = [chunk for chunk in range(len(bounds)) if not _part_path(parts, chunk).is_file()]
    if len(todo) < len(bounds):
        log.info("%s: reusing %d of %d finished chunks", out.name, len(bounds) - len(todo), len(bounds))

    def submit(actor: Any, chunk: int) -> Any:
        lo, hi = bounds[chunk]
        return actor.embed.remote(chunk, texts[lo:hi], lang)

    dim = 0
    for chunk, vecs, threads, warnings in ActorPool(actors).map_unordered(submit, todo):
        log.debug("%s chunk %d embedded with threads %s", out.name, chunk, threads)
        log_again(warnings)
        with atomic_path(_part_path(parts, chunk)) as tmp, open(tmp, "wb") as fh:
            np.save(fh, vecs)
        dim = vecs.shape[1]
    files = [_part_path(parts, chunk) for chunk in range(len(bounds))]
    dim = dim or int(np.load(files[0], mmap_mode="r").shape[1])
    save_embedding_parts(out, files, base_metadata(len(texts), dim, encoder, {"sha256": sha}))
    shutil.rmtree(parts)
    return load_embeddings(out, expect_sha256=sha, expect_encoder=encoder)[0]


def ray_exact_shards(x: np.ndarray, y: np.ndarray, cfg: SearchConfig, cpus: int, cpus_per_task: int = 1
                     ) -> ExactShards:
    """The Ray engine's exact shards for :func:`~xlsent.mining.stages.sharded_knn`: one task per source shard
    against all targets (put into the object store once, read in place by the tasks of a node), at most two per
    task slot of the ``cpus`` in flight, so the object store holds the targets and a bounded number of source
    blocks; each shard's lists as it finishes."""
    import ray

    def shards(bounds: list[tuple[int, int]], todo: list[int]) -> Iterator[tuple[int, KnnResult]]:
        if not todo:
            return
        task = ray.remote(num_cpus=cpus_per_task, max_retries=TASK_RETRIES)(_knn_task)
        y_ref = ray.put(y)  # one copy per node, shared by its tasks

        def submit(shard: int) -> Any:
            lo, hi = bounds[shard]
            return task.remote(take_rows(x, np.arange(lo, hi)), y_ref, lo, cfg)

        for shard, (part, threads) in as_finished(submit, todo, in_flight(cpus, cpus_per_task)):
            log.debug("k-NN shard %d ran with threads %s", shard, threads)
            yield shard, part

    return shards


class RayEngine:
    """The stages of a job on a Ray cluster (:class:`~xlsent.mining.engine.Engine`): embedding by encoder actors
    over input chunks of ``cfg.chunk_rows`` rows, exact k-NN as one task per source shard, an approximate index
    filled by one task per database shard and searched by one task per query shard. Use it as a context manager:
    Ray is joined or started on entry (see :func:`ray_session`) and its actors are gone on exit."""

    def __init__(self, model: str, cfg: RayConfig | None = None) -> None:
        self.model, self.cfg = model, cfg or RayConfig()
        self.cpus = 0
        self.actors: list[Any] = []
        self._session: contextlib.ExitStack | None = None

    def __enter__(self) -> RayEngine:
        self._session = contextlib.ExitStack()
        self.cpus = self._session.enter_context(ray_session(self.cfg))
        return self

    def __exit__(self, *exc: object) -> None:
        self.embedded()
        if self._session is not None:
            self._session.close()

    def _add_actors(self, count: int) -> None:
        self.actors += encoder_actors(self.model, self.cfg, count - len(self.actors))

    def encoder_id(self) -> str | None:
        import ray

        self._add_actors(1)
        return str(ray.get(self.actors[0].encoder_id.remote()))

    def job_key(self) -> dict[str, Any]:
        return {"engine": "ray", "chunk_rows": self.cfg.chunk_rows}

    def embed(self, side: Side, out: Path, progress: bool) -> np.ndarray:
        chunks = len(shard_bounds(len(side.texts), self.cfg.chunk_rows))
        self._add_actors(max(1, min(chunks, self.cpus // self.cfg.cpus_per_task)))
        say(progress, f"embedding {side.spec.name} on Ray ({len(self.actors)} encoder actors, {self.cpus} CPUs)")
        return ray_embed(side.texts, out, self.actors, sha=side.sha256, encoder=str(self.encoder_id()),
                         lang=side.lang, chunk_rows=self.cfg.chunk_rows)

    def embedded(self) -> None:
        import ray

        for handle in self.actors:
            ray.kill(handle)
        self.actors = []

    def hooks(self, x: np.ndarray, y: np.ndarray, cfg: SearchConfig, progress: bool) -> SearchHooks:
        per_task = self.cfg.cpus_per_task
        return SearchHooks(exact=ray_exact_shards(x, y, cfg, self.cpus, per_task),
                           fill=ray_index_fill(self.cpus, per_task, cfg.shard_rows),
                           search=ray_shard_search(self.cpus, per_task))
