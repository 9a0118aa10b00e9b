"""The mining pipeline on Ray: embedding by encoder actors over input chunks, k-NN as one task per shard.

The driver keeps its memory bounded: each finished embedding chunk and each finished k-NN shard is written
into the work folder (``OUTPUT.work/``, the single-process engine's bookkeeping: the same job key, chunk and
shard files) as soon as it arrives, and the k-NN lists are merged from there one shard at a time. A driver
killed mid-run and started again with the same command recomputes only the missing chunks and shards; a task
whose worker process dies is retried by Ray (``TASK_RETRIES``).

Exact search (``ray_knn``) runs in two explicit passes, as the margin needs the k-NN means of both sides: (1)
each task takes a block of source rows against all target rows (put into the object store once, read in place
by the tasks of a node) and returns complete forward lists plus the target side's lists restricted to its block;
(2) the driver merges the backward lists, scores margins and selects pairs exactly as the single-process
pipeline. With an approximate ``--index``, the driver trains each direction's FAISS index once on a seeded
sample and serializes it, trained and empty (``faiss.serialize_index``, bytes in a numpy array, no pickle), into
the object store; one task per database shard adds that shard's vectors on a worker and returns its filled index,
which the driver merges in shard order (``ray_index_fill``: FAISS's ``merge_from`` concatenates the inverted
lists, the encoding was done on the workers). ``ivfpqfs`` travels as a plain IVF-PQ with the same 4-bit codes
(FAISS cannot merge fast-scan lists), whose merged codes the driver packs into fast-scan lists; ``hnsw`` cannot be
merged and is filled on the driver (see :func:`xlsent.mining.knn.mergeable`). The filled index, the same bytes as
one fill, goes into the object store in turn and one
task per query shard searches it on the workers (``ray_shard_search``); the shards are saved and reused as by
:func:`xlsent.mining.pipeline.approximate_knn`, which both engines share, so the output is the same.
Embedding chunks are the same row ranges as in ``xlsent embed``, so the output is identical; as there, repeated
sentences are searched once (:mod:`xlsent.mining.unify`).

Every task and actor runs with as many BLAS, OpenMP (FAISS) and torch threads as CPUs it reserves
(:mod:`xlsent.mining.threads`). Local Ray (started in-process) is the default; ``address`` joins a cluster.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from xlsent.atomic import atomic_path
from xlsent.checksum import sha256_file
from xlsent.data.text_input import InputSpec, iter_rows
from xlsent.encoders.cache import encoder_id
from xlsent.inference import DEFAULT_BATCH_TOKENS
from xlsent.mining.knn import (
    KnnResult,
    fill_index,
    from_shard_form,
    merge_index,
    mergeable,
    search_rows,
    serialized_shard_form,
    take_rows,
)
from xlsent.mining.pipeline import (
    IndexFill,
    MineConfig,
    MineSummary,
    ShardSearch,
    approximate_knn,
    candidates_from_knn,
    check_mine_paths,
    clean_up,
    job_key,
    knn_shard,
    knn_shard_path,
    load_knn_shard,
    merge_shards,
    prepare_work,
    readable_sides,
    resolve_index,
    save_knn_shard,
    shard_bounds,
    summarise,
    write_pairs,
)
from xlsent.mining.threads import limit_threads, thread_counts
from xlsent.mining.unify import unify
from xlsent.store import EmbeddingFileError, base_metadata, load_embeddings, save_embedding_parts

log = logging.getLogger(__name__)

# Attempts after the first that Ray makes of a task whose worker process died.
TASK_RETRIES = 3
# Seconds to wait for a cluster at ``--address`` to accept a connection.
CONNECT_TIMEOUT = 5.0


@dataclass(frozen=True)
class RayConfig:
    """Where and how to run on Ray: ``address`` of a cluster (default: start Ray in this process with
    ``num_cpus``, default all cores), CPUs reserved by each task and actor (its thread budget), rows per
    embedding chunk (as ``xlsent embed --chunk-rows``), the encoder's batch size in tokens, and the inference
    backend each encoder actor loads the model on (``auto`` is resolved on the actor's own CPU)."""

    address: str | None = None
    num_cpus: int | None = None
    cpus_per_task: int = 1
    chunk_rows: int = 50_000
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    backend: str = "torch"

    def __post_init__(self) -> None:
        for name in ("num_cpus", "cpus_per_task", "chunk_rows", "batch_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, not {value}")


def task_cpus() -> int:
    """CPUs reserved by the running Ray task or actor (1 outside Ray's workers)."""
    import ray

    return max(1, round(ray.get_runtime_context().get_assigned_resources().get("CPU", 1)))


class _Embedder:
    """Ray actor: loads the encoder once, embeds one chunk of rows per call within its CPU reservation."""

    def __init__(self, model: str, batch_tokens: int, backend: str) -> None:
        from xlsent.encoders.registry import load_encoder

        self.encoder = load_encoder(model, backend)
        self.batch_tokens = batch_tokens

    def encoder_id(self) -> str:
        return encoder_id(self.encoder)

    def embed(self, chunk: int, texts: list[str], lang: str | None) -> tuple[int, np.ndarray, dict[str, int]]:
        with limit_threads(task_cpus()):
            vecs = self.encoder.encode(texts, lang, batch_tokens=self.batch_tokens)
            return chunk, np.asarray(vecs, dtype=np.float32), thread_counts()


def _knn_task(x_block: np.ndarray, y: np.ndarray, offset: int, k: int, max_memory: int
              ) -> tuple[KnnResult, dict[str, int]]:
    """One source shard against all targets (read in place from the node's object store), within the task's CPU
    reservation; also returns the thread counts it ran with."""
    with limit_threads(task_cpus()):
        return knn_shard(x_block, y, offset, k, max_memory), thread_counts()


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


def _in_flight(cpus: int, cpus_per_task: int) -> int:
    """Tasks kept in flight: two per task slot of the ``cpus``, so that a slot never waits for its next task."""
    return 2 * max(1, cpus // cpus_per_task)


def _as_finished(submit: Callable[[int], Any], todo: list[int], most: int, *, ordered: bool = False
                 ) -> Iterator[tuple[int, Any]]:
    """``(item, result)`` of a Ray task per item of ``todo`` (``submit(item)`` starts it), as each finishes (with
    ``ordered``, in the order of ``todo``, later results waiting in the object store), with at most ``most`` in
    flight."""
    import ray

    pending: dict[Any, int] = {}
    queue = list(todo)
    while queue or pending:
        while queue and len(pending) < most:
            item = queue.pop(0)
            pending[submit(item)] = item
        ready = next(iter(pending)) if ordered else ray.wait(list(pending), num_returns=1)[0][0]
        yield pending.pop(ready), ray.get(ready)


def ray_index_fill(cpus: int, cpus_per_task: int, shard_rows: int) -> IndexFill:
    """The Ray engine's index fill for :func:`~xlsent.mining.pipeline.approximate_knn`: the trained, empty index
    serialized into the object store once (:func:`~xlsent.mining.knn.serialized_shard_form`), one task per
    database shard of ``shard_rows`` rows adding that shard on a worker (at most two per task slot of the ``cpus``
    in flight), and the shards' indexes merged on the driver in shard order
    (:func:`~xlsent.mining.knn.merge_index`, :func:`~xlsent.mining.knn.from_shard_form`) into the index one fill
    makes. An index that is not :func:`~xlsent.mining.knn.mergeable` (``hnsw``) is filled on the driver."""
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
        shards = _as_finished(submit, list(range(len(bounds))), _in_flight(cpus, cpus_per_task), ordered=True)
        for shard, (part, threads) in shards:
            log.debug("index shard %d filled with threads %s", shard, threads)
            merge_index(merged, faiss.deserialize_index(part))
        return from_shard_form(index, merged)

    return fill


def ray_shard_search(cpus: int, cpus_per_task: int = 1) -> ShardSearch:
    """The Ray engine's shard search for :func:`~xlsent.mining.pipeline.approximate_knn`: the filled index
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

        for shard, (idx, sim, threads) in _as_finished(submit, todo, _in_flight(cpus, cpus_per_task)):
            log.debug("search of shard %d ran with threads %s", shard, threads)
            yield shard, idx, sim

    return search


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise ValueError unless something accepts connections at the Ray ``address`` (``host:port`` or
    ``ray://host:port``; ``auto`` and ``local`` are Ray's to find) within ``timeout`` seconds: Ray itself would
    retry for minutes, logging each attempt."""
    if address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--address {address}: expected HOST:PORT (or ray://HOST:PORT, auto) of a Ray cluster")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ValueError(f"--address {address}: no Ray cluster answers there within {timeout:g}s ({exc}); start "
                         "one (`ray start --head`) or leave out --address to run Ray on this machine") from None


@contextmanager
def ray_session(cfg: RayConfig) -> Iterator[int]:
    """Ray, joined at ``cfg.address`` or started here (and shut down after) unless already running; yields its
    CPU count."""
    import ray

    if cfg.address:
        check_reachable(cfg.address)
    started_here = not ray.is_initialized()
    if started_here:
        if cfg.address:
            ray.init(address=cfg.address, log_to_driver=False)
        else:
            ray.init(num_cpus=cfg.num_cpus or os.cpu_count(), include_dashboard=False, log_to_driver=False)
    try:
        yield max(1, int(ray.cluster_resources().get("CPU", 1)))
    finally:
        if started_here:
            ray.shutdown()


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
    for chunk, vecs, threads in ActorPool(actors).map_unordered(submit, todo):
        log.debug("%s chunk %d embedded with threads %s", out.name, chunk, threads)
        with atomic_path(_part_path(parts, chunk)) as tmp, open(tmp, "wb") as fh:
            np.save(fh, vecs)
        dim = vecs.shape[1]
    files = [_part_path(parts, chunk) for chunk in range(len(bounds))]
    dim = dim or int(np.load(files[0], mmap_mode="r").shape[1])
    save_embedding_parts(out, files, base_metadata(len(texts), dim, encoder, {"sha256": sha}))
    shutil.rmtree(parts)
    return load_embeddings(out, expect_sha256=sha, expect_encoder=encoder)[0]


def ray_knn(x: np.ndarray, y: np.ndarray, cfg: MineConfig, work: Path, *, cpus: int, cpus_per_task: int = 1
            ) -> KnnResult:
    """Exact bidirectional k-NN with one Ray task per source shard of ``cfg.shard_rows`` rows. Each finished
    shard is saved in ``work`` at once (shards found there are not recomputed); the lists are then merged one
    shard at a time. At most two tasks per task slot of the ``cpus`` are in flight, so the object store holds
    the targets and a bounded number of source blocks."""
    import ray

    bounds = shard_bounds(len(x), cfg.shard_rows)
    todo = [shard for shard in range(len(bounds)) if not knn_shard_path(work, shard).is_file()]
    if len(todo) < len(bounds):
        log.info("k-NN: reusing %d of %d finished shards in %s", len(bounds) - len(todo), len(bounds), work)
    if todo:
        task = ray.remote(num_cpus=cpus_per_task, max_retries=TASK_RETRIES)(_knn_task)
        y_ref = ray.put(y)  # one copy per node, shared by its tasks

        def submit(shard: int) -> Any:
            lo, hi = bounds[shard]
            return task.remote(take_rows(x, np.arange(lo, hi)), y_ref, lo, cfg.k, cfg.max_memory)

        for shard, (part, threads) in _as_finished(submit, todo, _in_flight(cpus, cpus_per_task)):
            log.debug("k-NN shard %d ran with threads %s", shard, threads)
            save_knn_shard(knn_shard_path(work, shard), part)
    return merge_shards((load_knn_shard(knn_shard_path(work, shard)) for shard in range(len(bounds))), cfg.k)


def mine_files_ray(src: InputSpec, tgt: InputSpec, output: str | Path, model: str, cfg: MineConfig,
                   ray_cfg: RayConfig | None = None, *, src_lang: str | None = None, tgt_lang: str | None = None,
                   work_dir: Path | None = None, keep_work: bool = False, progress: bool = True) -> MineSummary:
    """Mine ``src`` x ``tgt`` on Ray into ``output`` (same format and result as ``mine_files``), resumable
    through the work folder (``OUTPUT.work/`` unless ``work_dir``). With an approximate ``cfg.index`` each index
    is trained on the driver, over the memory-mapped embeddings, filled on the workers, one task per database
    shard (on the driver for ``hnsw``), merged on the driver and searched on the workers, one task
    per query shard."""
    import ray

    ray_cfg = ray_cfg or RayConfig()
    start = time.perf_counter()
    check_mine_paths(src, tgt, output)
    output = Path(output)
    work = work_dir or output.with_name(output.name + ".work")
    with readable_sides(src, tgt) as (src, tgt), ray_session(ray_cfg) as cpus:
        src_text, tgt_text = list(iter_rows(src)), list(iter_rows(tgt))
        chunks = len(shard_bounds(len(src_text), ray_cfg.chunk_rows)) + len(shard_bounds(len(tgt_text),
                                                                                           ray_cfg.chunk_rows))
        actor = ray.remote(num_cpus=ray_cfg.cpus_per_task)(_Embedder)
        actors: list[Any] = [actor.remote(model, ray_cfg.batch_tokens, ray_cfg.backend)
                  for _ in range(max(1, min(chunks, cpus // ray_cfg.cpus_per_task)))]
        made_by = str(ray.get(actors[0].encoder_id.remote()))
        src_sha, tgt_sha = sha256_file(src.path), sha256_file(tgt.path)
        key = {**job_key(src, tgt, src_sha, tgt_sha, made_by, cfg), "engine": "ray", "chunk_rows": ray_cfg.chunk_rows}
        prepare_work(work, key)
        try:
            _say(progress, f"[1/3] embedding on Ray ({len(actors)} encoder actors, {cpus} CPUs)")
            x = ray_embed(src_text, work / "src.npy", actors, sha=src_sha, encoder=made_by, lang=src_lang,
                          chunk_rows=ray_cfg.chunk_rows)
            y = ray_embed(tgt_text, work / "tgt.npy", actors, sha=tgt_sha, encoder=made_by, lang=tgt_lang,
                          chunk_rows=ray_cfg.chunk_rows)
            for handle in actors:
                ray.kill(handle)
            src_u, tgt_u = unify(src_text, cfg.unify), unify(tgt_text, cfg.unify)
            x, y = src_u.distinct(x, work / "src-distinct.npy"), tgt_u.distinct(y, work / "tgt-distinct.npy")
            cfg = resolve_index(cfg, len(x), len(y), progress)
            _say(progress, f"[2/3] k-NN search on Ray ({len(x)} x {len(y)} distinct sentences, index={cfg.index})")
            knn = None
            if cfg.index != "exact":
                fill = ray_index_fill(cpus, ray_cfg.cpus_per_task, cfg.shard_rows)
                knn = approximate_knn(x, y, cfg, work, fill=fill, search=ray_shard_search(cpus, ray_cfg.cpus_per_task),
                                      progress=progress)
            if knn is None:
                knn = ray_knn(x, y, cfg, work, cpus=cpus, cpus_per_task=ray_cfg.cpus_per_task)
            cands = candidates_from_knn(knn, cfg)
            _say(progress, f"[3/3] scoring and selecting {len(cands.score)} candidates")
            written = write_pairs(output, cands, src_u, tgt_u, cfg, first_lines=(src.first_line, tgt.first_line))
        except BaseException as exc:
            clean_up(work, exc, False)
            raise
    if not keep_work:
        shutil.rmtree(work)
    return summarise(output, src_u, tgt_u, len(cands.score), written, cfg, time.perf_counter() - start)


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr, flush=True)
