"""Approximate k-NN in both directions for millions of sentences a side: one inverted file over both sides, scanned
with bf16 matrix products, neighbours re-scored in fp32.

Both sides are assigned to the ``nlist`` centroids of one spherical k-means (trained in bf16 on a seeded sample of
both sides): each row's *list* is its nearest centroid, its *probes* the ``nprobe`` nearest. The search of one
direction holds the database side in bf16, sorted by list, and streams the queries by blocks: the queries of a
block that probe a list are multiplied with that list's members in one bf16 product (AMX on CPUs that have it) and
the tile is folded into the queries' running lists by a compiled scan (:mod:`xlsent.mining.ivf_scan`). Each query
keeps its ``k + SPARE`` best by bf16 similarity; their similarities are then recomputed in fp32 from the fp32
vectors (both sides read in blocks, never held whole in fp32) and each list cut to ``k``.

A pair found in either direction counts for both: when ``y`` is among the neighbours of ``x``, ``x`` is offered to
the list of ``y`` too (with the same fp32 similarity). A near pair is missed only when neither side's probes reach
the other's list, which for the same ``nprobe`` is far rarer than one direction's miss (the mining benchmark
measures the recall this gives, ``results/bench/mining-approx.json``).

Memory: one side in bf16 (``2·rows·dim`` bytes), a block of queries, the lists and the probes; time: the
assignment (``rows·nlist`` products a side), and ``rows·nprobe·rows/nlist`` products a direction.

>>> rng = np.random.default_rng(0)
>>> x = rng.normal(size=(2000, 32)).astype(np.float32)
>>> x /= np.linalg.norm(x, axis=1, keepdims=True)
>>> res = ivf_bf16_knn(x, x, 2, IvfShape(nlist=20, nprobe=4))
>>> float((res.fwd_idx[:, 0] == np.arange(2000)).mean())
1.0
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch
from tqdm.auto import tqdm

from xlsent.mining.bf16_scan import merge_into
from xlsent.mining.config import IVF_BF16
from xlsent.mining.ivf_scan import EMPTY_KEY, pair_dots, scan_tiles, top_columns
from xlsent.mining.knn import CHUNK_ROWS, KnnResult, bidirectional_knn, check_inputs, read_rows, take_rows
from xlsent.threads import cores

log = logging.getLogger(__name__)

SPARE = 4
"""Neighbours kept beyond k by bf16 similarity, for the fp32 re-scoring."""
TILE_BUFFER = 1 << 23
"""Entries of the flat buffer of bf16 tiles scanned in one call (16 MiB)."""
QUERY_BLOCK_BYTES = 128 << 20
"""The queries searched at once, in bf16 (the block's probes take about as much again)."""
ROW_STEP, COLUMN_STEP = 256, 32
"""Tiles are padded to multiples of these: queries (rows) and list members (columns)."""
RESCORE_BLOCK_BYTES = 384 << 20
"""The fp32 rows of ``x`` held at once while the neighbours' similarities are recomputed (and a quarter as many of
``y``)."""
SAMPLE_RUNS = 256
"""Runs of consecutive rows a side that make the k-means sample."""
MAX_LISTS = 1 << 15
"""The most lists (a list number is an int16)."""
ASSIGN_BLOCK_BYTES = 16 << 20
"""The bf16 products of rows with centroids taken at once (a block that stays in cache while it is read)."""


class ListStore(Protocol):
    """Where a resumable run keeps its finished parts (arrays by name), such as a job's work folder."""

    def load(self, name: str) -> dict[str, np.ndarray] | None:
        """The arrays saved under ``name``, or ``None``."""

    def save(self, name: str, arrays: dict[str, np.ndarray]) -> None:
        """Keep ``arrays`` under ``name`` (atomically)."""


@dataclass(frozen=True)
class IvfShape:
    """The inverted file: ``nlist`` lists (default ``4·sqrt(rows)``), ``nprobe`` probed per query (default: tuned,
    see :func:`tune_nprobe`), k-means on ``train_per_list`` sampled rows per list for ``iterations`` rounds,
    sampling seeded by ``seed``."""

    nlist: int | None = None
    nprobe: int | None = None
    train_per_list: int = 39
    iterations: int = 6
    seed: int = 0
    target_recall: float = 0.98

    def lists_for(self, rows: int) -> int:
        """The lists for ``rows`` rows (the larger side): ``nlist``, or ``4·sqrt(rows)`` with at least 39 rows a list.

        >>> IvfShape().lists_for(1_000_000), IvfShape(nlist=7).lists_for(10)
        (4000, 7)
        """
        return self.nlist or max(1, min(int(4 * math.sqrt(rows)), rows // 39))


def _bf16(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(torch.bfloat16)


def _bf16_rows(v: np.ndarray, lo: int, hi: int) -> torch.Tensor:
    """Rows ``[lo, hi)`` of ``v`` (an array or memmap) in bf16, read ``CHUNK_ROWS`` at a time."""
    out = torch.empty((hi - lo, v.shape[1]), dtype=torch.bfloat16)
    for a, b in _blocks(hi - lo, CHUNK_ROWS):
        out[a:b] = torch.from_numpy(read_rows(v, lo + a, lo + b))
    return out


def _blocks(rows: int, block: int) -> Iterator[tuple[int, int]]:
    for lo in range(0, rows, block):
        yield lo, min(rows, lo + block)


def train_centroids(sample: np.ndarray, nlist: int, iterations: int, seed: int) -> np.ndarray:
    """Spherical k-means: ``nlist`` unit centroids (float32) of the rows of ``sample``, assignments by bf16 products,
    a list left empty re-seeded with a random row."""
    rng = np.random.default_rng(seed)
    data = torch.from_numpy(np.ascontiguousarray(sample, dtype=np.float32))
    data16 = data.to(torch.bfloat16)
    centroids = data[torch.from_numpy(rng.choice(len(sample), nlist, replace=False))].clone()
    for _ in range(iterations):
        nearest = torch.from_numpy(nearest_columns(data16, centroids.to(torch.bfloat16), 1)[:, 0].astype(np.int64))
        sums = torch.zeros_like(centroids).index_add_(0, nearest, data)
        empty = torch.bincount(nearest, minlength=nlist) == 0
        sums[empty] = data[torch.from_numpy(rng.choice(len(sample), int(empty.sum()), replace=False))]
        centroids = sums / sums.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return centroids.numpy()


def _sample(x: np.ndarray, y: np.ndarray, rows: int, seed: int) -> np.ndarray:
    """About ``rows`` rows, half from each side: ``SAMPLE_RUNS`` runs of consecutive rows a side at seeded random
    places (reading a run costs one read, where scattered rows would cost reading the whole file)."""
    rng = np.random.default_rng(seed)
    parts = []
    for side in (x, y):
        run = max(1, min(len(side), rows // 2) // SAMPLE_RUNS)
        starts = np.unique(rng.integers(0, max(1, len(side) - run + 1), SAMPLE_RUNS))
        parts += [read_rows(side, int(lo), min(len(side), int(lo) + run)) for lo in starts]
    return np.concatenate(parts)


def nearest_columns(rows16: torch.Tensor, columns16: torch.Tensor, m: int) -> np.ndarray:
    """For each of ``rows16`` (bf16), the ``m`` rows of ``columns16`` (bf16) of largest product, largest first
    (int32), by blocks of rows, each block's selection shared by the cores."""
    out = np.empty((len(rows16), m), np.int32)
    block = max(1, ASSIGN_BLOCK_BYTES // (2 * len(columns16)))
    with ThreadPoolExecutor(cores()) as pool:
        for lo, hi in _blocks(len(rows16), block):
            tile = (rows16[lo:hi] @ columns16.T).view(torch.int16).numpy()
            cuts = np.linspace(0, hi - lo, cores() + 1).astype(int)
            list(pool.map(top_columns, *zip(*[(tile, a, b, out[lo:hi]) for a, b in zip(cuts[:-1], cuts[1:],
                                                                                          strict=True)], strict=True)))
    return out


def probe_lists(v: np.ndarray, centroids: np.ndarray, nprobe: int, progress: bool = False) -> np.ndarray:
    """The ``nprobe`` nearest centroids of each row of ``v`` (an array or memmap, read in blocks), nearest first
    (int16: at most ``MAX_LISTS`` centroids), by bf16 products."""
    c16 = _bf16(centroids)
    out = np.empty((len(v), nprobe), np.int16)
    for lo, hi in tqdm(list(_blocks(len(v), CHUNK_ROWS)), desc="IVF probes", unit="block", disable=not progress):
        out[lo:hi] = nearest_columns(_bf16(read_rows(v, lo, hi)), c16, nprobe)
    return out


@dataclass
class _SortedSide:
    """One side in bf16 with its rows grouped by list: ``rows[starts[c]:starts[c + 1]]`` are the row numbers of
    list ``c``, ``vectors`` their bf16 vectors in that order (and ``COLUMN_STEP`` zero rows after the last)."""

    vectors: torch.Tensor
    rows: np.ndarray
    starts: np.ndarray

    @classmethod
    def build(cls, v: np.ndarray, lists: np.ndarray, nlist: int) -> _SortedSide:
        rows = np.argsort(lists, kind="stable").astype(np.int32)
        position = np.empty(len(v), np.int64)
        position[rows] = np.arange(len(v))
        vectors = torch.zeros((len(v) + COLUMN_STEP, v.shape[1]), dtype=torch.bfloat16)  # room for padded tiles
        for lo, hi in _blocks(len(v), CHUNK_ROWS):
            vectors.index_copy_(0, torch.from_numpy(position[lo:hi]), _bf16(read_rows(v, lo, hi)))
        starts = np.concatenate([[0], np.cumsum(np.bincount(lists, minlength=nlist))])
        return cls(vectors, rows, starts)


def _padded(size: int, step: int) -> int:
    """``size`` rounded up to a multiple of ``step``: tiles of a few recurring shapes, whose bf16 product kernels
    oneDNN compiles once and caches (a new shape per list cost more than its product)."""
    return -(-size // step) * step


def _search_block(queries16: np.ndarray, first: int, probes: np.ndarray, db: _SortedSide, keys: np.ndarray,
                  idx: np.ndarray, pool: ThreadPoolExecutor) -> None:
    """Fold the neighbours in ``db`` of the queries ``queries16`` (bf16 bits as int16; numbered from ``first``;
    ``probes`` their lists) into ``keys``/``idx``: list by list, one bf16 product of the list's probing queries with
    its members (both padded to a recurring shape), the tiles scanned a buffer at a time."""
    nprobe = probes.shape[1]
    by_list = np.argsort(probes.ravel(), kind="stable")  # a radix sort of int16 list numbers
    local = (by_list // nprobe).astype(np.int32)
    del by_list
    rows = local + np.int32(first)
    bounds = np.concatenate([[0], np.cumsum(np.bincount(probes.ravel(), minlength=len(db.starts) - 1))])
    buffer = torch.empty(TILE_BUFFER, dtype=torch.bfloat16)
    flat = buffer.view(torch.int16).numpy()
    tiles: list[tuple[int, int, int, int, int, int]] = []
    used = 0

    def scan() -> None:
        table = np.array(tiles, dtype=np.int64).reshape(-1, 6)
        list(pool.map(lambda part: scan_tiles(flat, table, rows, db.rows, part, 2, keys, idx), range(2)))
        tiles.clear()

    for c in range(len(db.starts) - 1):
        q_lo, q_hi, m_lo, m_hi = int(bounds[c]), int(bounds[c + 1]), int(db.starts[c]), int(db.starts[c + 1])
        if q_hi == q_lo or m_hi == m_lo:
            continue
        n_q, n_m = _padded(q_hi - q_lo, ROW_STEP), _padded(m_hi - m_lo, COLUMN_STEP)
        if n_q * n_m > TILE_BUFFER:
            raise ValueError(f"an IVF list of {m_hi - m_lo} rows probed by {q_hi - q_lo} queries exceeds the tile "
                             "buffer; use more lists (--nlist)")
        if used + n_q * n_m > TILE_BUFFER:
            scan()
            used = 0
        chosen = np.take(queries16, np.resize(local[q_lo:q_hi], n_q), axis=0)
        torch.matmul(torch.from_numpy(chosen).view(torch.bfloat16), db.vectors[m_lo : m_lo + n_m].T,
                     out=buffer[used : used + n_q * n_m].view(n_q, n_m))
        tiles.append((used, q_hi - q_lo, m_hi - m_lo, n_m, q_lo, m_lo))
        used += n_q * n_m
    if tiles:
        scan()


def search_direction(queries: np.ndarray, probes: np.ndarray, db: _SortedSide, size: int, progress: bool = False,
                     desc: str = "IVF search") -> np.ndarray:
    """The ``size`` best neighbours in ``db`` of each row of ``queries`` (read in blocks) by bf16 similarity, among
    the members of its ``probes`` lists: row numbers (int32, best first; ``-1`` where fewer were found)."""
    keys = np.full((len(queries), size), EMPTY_KEY, np.int32)
    idx = np.full((len(queries), size), -1, np.int32)
    block = max(1, QUERY_BLOCK_BYTES // (2 * queries.shape[1]))
    with ThreadPoolExecutor(2) as pool:
        for lo, hi in tqdm(list(_blocks(len(queries), block)), desc=desc, unit="block", disable=not progress):
            _search_block(_bf16_rows(queries, lo, hi).view(torch.int16).numpy(), lo, probes[lo:hi], db, keys, idx,
                          pool)
    return idx


def _pairs_by_block(idx: np.ndarray, lo: int, hi: int, block: int, rows: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The listed pairs of the owners ``[lo, hi)`` of ``idx`` sorted by neighbour: owners (from 0 at ``lo``),
    slots, neighbours, and where each ``block`` of the ``rows`` neighbours starts among them."""
    owner, slot = (part.astype(np.int32) for part in np.nonzero(idx[lo:hi] >= 0))
    neighbour = idx[lo:hi][owner, slot].astype(np.int32)
    order = np.argsort(neighbour, kind="stable")
    neighbour = neighbour[order]
    return owner[order], slot[order], neighbour, np.searchsorted(neighbour, np.arange(0, rows + block, block))


def rescore(x: np.ndarray, y: np.ndarray, fwd: np.ndarray, bwd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fp32 similarities of the pairs listed by ``fwd`` (neighbours in ``y`` of each row of ``x``) and by
    ``bwd`` (neighbours in ``x`` of each row of ``y``), ``-inf`` where ``-1``: ``x`` read in large blocks, ``y``
    in small ones for each of them, each pair's product taken while both its rows are in memory, both directions
    in one pass."""
    fwd_sim, bwd_sim = np.full(fwd.shape, -np.inf, np.float32), np.full(bwd.shape, -np.inf, np.float32)
    x_block = max(1, RESCORE_BLOCK_BYTES // (4 * x.shape[1]))
    y_block = max(1, x_block // 4)
    bwd_parts = [_pairs_by_block(bwd, lo, hi, x_block, len(x)) for lo, hi in _blocks(len(y), y_block)]
    for x_lo, x_hi in _blocks(len(x), x_block):
        x_rows = read_rows(x, x_lo, x_hi)
        owner, slot, neighbour, edges = _pairs_by_block(fwd, x_lo, x_hi, y_block, len(y))
        for n, (y_lo, y_hi) in enumerate(_blocks(len(y), y_block)):
            y_rows = read_rows(y, y_lo, y_hi)
            _dots_into(fwd_sim, x_rows, y_rows, x_lo, y_lo, owner[edges[n] : edges[n + 1]],
                       slot[edges[n] : edges[n + 1]], neighbour[edges[n] : edges[n + 1]])
            b_owner, b_slot, b_neighbour, b_edges = bwd_parts[n]
            first, last = b_edges[x_lo // x_block], b_edges[x_lo // x_block + 1]
            _dots_into(bwd_sim, y_rows, x_rows, y_lo, x_lo, b_owner[first:last], b_slot[first:last],
                       b_neighbour[first:last])
    return fwd_sim, bwd_sim


def _dots_into(sim: np.ndarray, owners: np.ndarray, neighbours: np.ndarray, owner_lo: int, neighbour_lo: int,
               owner: np.ndarray, slot: np.ndarray, neighbour: np.ndarray) -> None:
    """``sim[owner_lo + owner, slot]`` = the products of rows ``owner`` of ``owners`` (numbered from 0) with rows
    ``neighbour`` of ``neighbours`` (numbered from ``neighbour_lo``)."""
    if not len(owner):
        return
    dots = np.empty(len(owner), np.float32)
    pair_dots(owners, neighbours, owner.astype(np.int64), (neighbour - neighbour_lo).astype(np.int64), dots)
    sim[owner_lo + owner, slot] = dots


def _best(idx: np.ndarray, sim: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` best by ``sim`` (ties to the smaller index), best first."""
    order = np.lexsort((idx, -sim), axis=1)[:, :k]
    return np.take_along_axis(idx, order, 1), np.take_along_axis(sim, order, 1)


def _with_reverse(idx: np.ndarray, sim: np.ndarray, other_idx: np.ndarray, other_sim: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Copies of the lists ``idx``/``sim`` (best first) that took the reverse of the other direction's pairs: row
    ``j`` of the other side listing ``i`` offers ``j`` to the list of ``i`` at their similarity."""
    idx, sim = idx.copy(), sim.copy()
    owner, slot = np.nonzero(other_idx >= 0)
    merge_into(sim, idx, other_idx[owner, slot], owner.astype(np.int64), other_sim[owner, slot], True)
    return idx, sim


def tune_nprobe(x: np.ndarray, y: np.ndarray, centroids: np.ndarray, target: float, sample: int = 500,
                seed: int = 0) -> int:
    """The smallest ``nprobe`` at which a seeded ``sample`` of ``x`` reaches its exact nearest neighbour in ``y``
    at rate ``target``, a pair counting as reached when either row's probes hold the other's list."""
    rng = np.random.default_rng(seed)
    probe = take_rows(x, np.sort(rng.choice(len(x), min(sample, len(x)), replace=False)))
    truth_rows = take_rows(y, bidirectional_knn(probe, y, 1).fwd_idx[:, 0])
    score_q, score_t = probe @ centroids.T, truth_rows @ centroids.T
    list_q, list_t = score_q.argmax(axis=1), score_t.argmax(axis=1)
    rank_fwd = (score_q > score_q[np.arange(len(probe)), list_t][:, None]).sum(axis=1)
    rank_bwd = (score_t > score_t[np.arange(len(probe)), list_q][:, None]).sum(axis=1)
    needed = np.minimum(rank_fwd, rank_bwd) + 1
    return int(np.ceil(np.quantile(needed, target)))


def ivf_bf16_knn(x: np.ndarray, y: np.ndarray, k: int, shape: IvfShape | None = None, *,
                 store: ListStore | None = None, progress: bool = False,
                 timings: dict[str, float] | None = None) -> KnnResult | None:
    """Approximate k-NN of ``x`` among ``y`` and of ``y`` among ``x`` (rows L2-normalised; memmaps read in blocks),
    see the module's notes; fp32 similarities, best first. ``store`` keeps the centroids and each direction's
    lists as they finish, reused by a re-run. ``timings``, when given, receives the seconds of the build (k-means
    and both sides' probes: ``build_s``) and of the search (both directions, re-scoring included: ``search_s``)
    and the lists and probes used (``nlist``, ``nprobe``). ``None`` when the tuned ``nprobe`` would scan more than an
    eighth of the lists (data without cluster structure): exact search is then faster."""
    shape = shape or IvfShape()
    k_fwd, k_bwd = check_inputs(x, y, k)
    nlist = min(shape.lists_for(max(len(x), len(y))), len(x), len(y), MAX_LISTS)
    threads = torch.get_num_threads()
    torch.set_num_threads(cores())
    start = time.perf_counter()
    try:
        with torch.inference_mode():
            centroids = _centroids(x, y, nlist, shape, store)
            nprobe = shape.nprobe or tune_nprobe(x, y, centroids, shape.target_recall, seed=shape.seed)
            if shape.nprobe is None and nprobe > nlist // 8:
                log.warning("IVF needs nprobe=%d of %d lists for %.0f%% recall; searching exactly instead", nprobe,
                            nlist, 100 * shape.target_recall)
                return None
            nprobe = min(nprobe, nlist)
            log.info("IVF (bf16): %d lists, nprobe=%d", nlist, nprobe)
            probes = {name: probe_lists(v, centroids, nprobe, progress) for name, v in (("x", x), ("y", y))}
            built = time.perf_counter()
            log.info("IVF (bf16): both sides assigned to their lists in %.1fs", built - start)
            fwd = _direction(store, "fwd", x, probes["x"], y, probes["y"][:, 0], nlist, k_fwd + SPARE, progress)
            bwd = _direction(store, "bwd", y, probes["y"], x, probes["x"][:, 0], nlist, k_bwd + SPARE, progress)
            del probes
    finally:
        torch.set_num_threads(threads)
    fwd_sim, bwd_sim = rescore(x, y, fwd, bwd)
    log.info("IVF (bf16): neighbours re-scored in fp32")
    fwd_lists = _best(fwd.astype(np.int64), fwd_sim, fwd.shape[1])
    bwd_lists = _best(bwd.astype(np.int64), bwd_sim, bwd.shape[1])
    (fwd_idx, fwd_sim), (bwd_idx, bwd_sim) = _with_reverse(*fwd_lists, *bwd_lists), _with_reverse(*bwd_lists,
                                                                                                  *fwd_lists)
    if timings is not None:
        timings |= {"build_s": built - start, "search_s": time.perf_counter() - built, "nlist": nlist,
                    "nprobe": nprobe}
    return KnnResult(fwd_idx[:, :k_fwd], fwd_sim[:, :k_fwd], bwd_idx[:, :k_bwd], bwd_sim[:, :k_bwd])


def _centroids(x: np.ndarray, y: np.ndarray, nlist: int, shape: IvfShape, store: ListStore | None) -> np.ndarray:
    """The trained centroids, from ``store`` when an earlier run left them there."""
    name = f"{IVF_BF16}-centroids-{nlist}"
    saved = None if store is None else store.load(name)
    if saved is not None:
        return saved["centroids"]
    centroids = train_centroids(_sample(x, y, shape.train_per_list * nlist, shape.seed), nlist, shape.iterations,
                                shape.seed)
    if store is not None:
        store.save(name, {"centroids": centroids})
    return centroids


def _direction(store: ListStore | None, name: str, queries: np.ndarray, probes: np.ndarray, db: np.ndarray,
               db_lists: np.ndarray, nlist: int, size: int, progress: bool) -> np.ndarray:
    """The ``size`` best neighbours of ``queries`` in ``db`` by bf16 similarity (row numbers), from ``store`` when
    an earlier run finished this direction."""
    key = f"{IVF_BF16}-{name}"
    saved = None if store is None else store.load(key)
    if saved is not None:
        return saved["idx"]
    side = _SortedSide.build(db, db_lists, nlist)
    idx = search_direction(queries, probes, side, min(size, len(db)), progress, desc=f"IVF search {name}")
    del side
    log.info("IVF (bf16) %s: searched", name)
    if store is not None:
        store.save(key, {"idx": idx})
    return idx
