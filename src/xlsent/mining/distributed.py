"""The mining pipeline on Ray: embedding with Ray Data over input shards, k-NN as one task per shard.

The margin needs the k-NN means of both sides, so the search runs in two explicit passes: (1) each task
takes a block of source rows against all target rows (shared once through the object store) and
returns complete forward lists plus the target side's lists restricted to its block; (2) the driver
merges the backward lists, scores margins and selects pairs exactly as the single-process pipeline.
Embedding chunks are the same row ranges as in ``xlsent embed``, so the output is identical; as there,
repeated sentences are searched once (:mod:`xlsent.mining.unify`), from the vectors of their first lines.

Local Ray (started in-process with the machine's cores) is the default; ``address`` joins a cluster.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.data.text_input import InputSpec, iter_rows
from xlsent.mining.knn import KnnResult, merge_source_spans
from xlsent.mining.pipeline import (
    MineConfig,
    MineSummary,
    candidates_from_knn,
    knn_shard,
    shard_bounds,
    summarise,
    write_pairs,
)
from xlsent.mining.unify import unify

log = logging.getLogger(__name__)


class _ChunkEmbedder:
    """Ray Data actor: loads the encoder once, embeds one chunk of rows per call."""

    def __init__(self, model: str, lang: str | None, batch_tokens: int) -> None:
        from xlsent.encoders.registry import load_encoder

        self.encoder = load_encoder(model)
        self.lang, self.batch_tokens = lang, batch_tokens

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        (texts,) = batch["texts"]  # batch_size=1: one chunk per call
        vecs = self.encoder.encode([str(t) for t in texts], self.lang, batch_tokens=self.batch_tokens)
        return {"chunk": batch["chunk"], "vecs": vecs.reshape(1, -1)}


def ray_embed(texts: Sequence[str], model: str, *, lang: str | None, chunk_rows: int, workers: int,
              batch_tokens: int = 2048) -> np.ndarray:
    """Embed ``texts`` with Ray Data, one actor per worker, chunk ``i`` = rows ``[i*chunk_rows, ...)``."""
    import ray

    bounds = shard_bounds(len(texts), chunk_rows)
    items = [{"chunk": i, "texts": list(texts[lo:hi])} for i, (lo, hi) in enumerate(bounds)]
    ds = ray.data.from_items(items, override_num_blocks=len(items))
    out = ds.map_batches(_ChunkEmbedder, fn_constructor_kwargs={"model": model, "lang": lang,
                                                               "batch_tokens": batch_tokens},
                         batch_size=1, concurrency=max(1, min(workers, len(items))), batch_format="numpy")
    chunks: dict[int, np.ndarray] = {}
    for row in out.iter_rows():
        lo, hi = bounds[int(row["chunk"])]
        chunks[int(row["chunk"])] = np.asarray(row["vecs"], dtype=np.float32).reshape(hi - lo, -1)
    return np.concatenate([chunks[i] for i in range(len(bounds))]).astype(np.float32)


def ray_knn(x: np.ndarray, y: np.ndarray, cfg: MineConfig) -> KnnResult:
    """Exact bidirectional k-NN with one Ray task per source shard, merged on the driver."""
    import ray

    remote = ray.remote(knn_shard)
    y_ref = ray.put(y)
    futures = [remote.remote(x[lo:hi], y_ref, lo, cfg.k, cfg.max_memory)
               for lo, hi in shard_bounds(len(x), cfg.shard_rows)]
    return merge_source_spans(ray.get(futures), cfg.k)


def mine_files_ray(src: InputSpec, tgt: InputSpec, output: str | Path, model: str, cfg: MineConfig, *,
                   src_lang: str | None = None, tgt_lang: str | None = None, address: str | None = None,
                   num_cpus: int | None = None, chunk_rows: int = 50_000, progress: bool = True) -> MineSummary:
    """Mine ``src`` x ``tgt`` on Ray into ``output`` (same format and result as ``mine_files``)."""
    import ray

    start = time.perf_counter()
    started_here = not ray.is_initialized()
    if started_here:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=num_cpus or os.cpu_count(), include_dashboard=False, log_to_driver=False)
    try:
        workers = int(ray.available_resources().get("CPU", 1))
        src_text, tgt_text = list(iter_rows(src)), list(iter_rows(tgt))
        if progress:
            print(f"[1/3] embedding on Ray ({workers} CPUs)", flush=True)
        x = ray_embed(src_text, model, lang=src_lang, chunk_rows=chunk_rows, workers=workers)
        y = ray_embed(tgt_text, model, lang=tgt_lang, chunk_rows=chunk_rows, workers=workers)
        src_u, tgt_u = unify(src_text, cfg.unify), unify(tgt_text, cfg.unify)
        x, y = src_u.distinct(x), tgt_u.distinct(y)
        if progress:
            print(f"[2/3] k-NN search on Ray ({len(x)} x {len(y)} distinct sentences)", flush=True)
        cands = candidates_from_knn(ray_knn(x, y, cfg), cfg)
        if progress:
            print(f"[3/3] scoring and selecting {len(cands.score)} candidates", flush=True)
        written = write_pairs(Path(output), cands, src_u, tgt_u, cfg)
    finally:
        if started_here:
            ray.shutdown()
    return summarise(Path(output), src_u, tgt_u, len(cands.score), written, cfg, time.perf_counter() - start)
