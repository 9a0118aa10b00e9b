"""Exact inner-product k-NN in both directions, for margin scoring, in fp32.

:func:`bidirectional_knn` makes ONE pass over the tiles of ``X·Yᵀ``: each tile updates the running top-k of its
rows (sources) and of its columns (targets), so both directions cost one matrix product instead of the two of
LASER's ``mine_bitexts.py`` (reproduced by :func:`xlsent.mining.faiss_index.two_pass_faiss_knn`). The top-k
bookkeeping stays cheap next to the product: a tile's candidates are only the entries that beat both the running
k-th best of their row/column and a lower bound of the tile's own k-th best (the k-th largest of ``2k`` group
maxima), usually a handful per row, found with one comparison pass and merged with one small sort, on all cores
at once (each thread owns a span of rows or columns). Ties are broken towards the smaller index, so results are
deterministic. :mod:`xlsent.mining.knn_bf16` finds the same lists with bf16 products.

:func:`recall` measures what an approximate search misses, and :func:`sample_bidirectional_knn` gives the exact
lists that margin scoring needs for a sample of sources, to check approximate results at any size. Memmapped
``.npy`` inputs are read with explicit file reads, so their pages do not add up in the RSS.
"""

from __future__ import annotations

import logging
import math
import mmap
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from xlsent.threads import cores

log = logging.getLogger(__name__)

DEFAULT_MAX_MEMORY = 1 << 30
# Tile shape measured fastest on CPU (numpy/OpenBLAS sgemm, 384-d): the 16 MiB similarity tile stays in L3.
TILE_ROWS, TILE_COLS = 4096, 1024
CHUNK_ROWS = 1 << 16

@dataclass(frozen=True)
class KnnResult:
    """k-NN lists, best first: ``fwd_*`` ``(n_x, k)`` targets of each source, ``bwd_*`` ``(n_y, k)`` sources of
    each target; ``*_idx`` int64 row numbers, ``*_sim`` float32 inner products."""

    fwd_idx: np.ndarray
    fwd_sim: np.ndarray
    bwd_idx: np.ndarray
    bwd_sim: np.ndarray


def check_inputs(x: np.ndarray, y: np.ndarray, k: int, *, warn: bool = True) -> tuple[int, int]:
    """Validate the shapes of sources ``x`` and targets ``y``; the neighbourhood sizes ``(k_fwd, k_bwd)``, clipped
    to the other side's size, with a warning where they are (``warn``: a search over a shard of the sources clips
    the backward lists to the shard by design; its driver warns once, for the whole corpus)."""
    if x.ndim != 2 or y.ndim != 2:
        raise ValueError(f"expected 2-d embedding matrices, got shapes {x.shape} and {y.shape}")
    if len(x) == 0 or len(y) == 0:
        raise ValueError(f"cannot search with an empty side: {len(x)} sources, {len(y)} targets")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"dimension mismatch: sources have {x.shape[1]} dims, targets {y.shape[1]}")
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    k_fwd, k_bwd = min(k, len(y)), min(k, len(x))
    if warn and (k_fwd, k_bwd) != (k, k):
        log.warning("k=%d exceeds the corpus size (%d sources, %d targets); using k=%d forward and k=%d backward",
                    k, len(x), len(y), k_fwd, k_bwd)
    return k_fwd, k_bwd


def read_rows(a: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Rows ``[lo, hi)`` as an in-memory, writable C-contiguous float32 array (read from disk for a memmap; copied
    from a read-only array, which torch refuses to share)."""
    raw = _file_rows(a, lo, hi)
    if raw is None:
        block = np.array(a[lo:hi], dtype=np.float32, order="C",
                         copy=isinstance(a, np.memmap) or not a.flags.writeable or None)
    else:
        block = raw.astype(np.float32, copy=False)
    if not np.isfinite(block).all():
        raise ValueError(f"embeddings contain NaN or inf in rows {lo}..{hi - 1}")
    return block


def _file_rows(a: np.ndarray, lo: int, hi: int) -> np.ndarray | None:
    """Rows ``[lo, hi)`` of a C-order memmap over a file (as ``np.load(..., mmap_mode="r")`` gives), read from
    the file: pages read through the mapping would stay mapped, counted in the RSS until the map is closed.
    ``None`` for other arrays (in memory, views of a memmap, copy-on-write maps)."""
    if not (isinstance(a, np.memmap) and isinstance(a.base, mmap.mmap) and a.mode in ("r", "r+", "w+")
            and a.flags.c_contiguous and a.filename):
        return None
    block = np.empty((hi - lo, *a.shape[1:]), a.dtype)
    with open(a.filename, "rb") as f:
        f.seek(a.offset + lo * a.strides[0])
        if f.readinto(block.reshape(-1).view(np.uint8)) != block.nbytes:
            raise OSError(f"{a.filename} ends before row {hi - 1} of its array")
    return block


def take_rows(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` (any order) of ``a`` as an in-memory C-contiguous float32 array, read chunk by chunk."""
    order = np.argsort(rows, kind="stable")
    wanted = np.asarray(rows)[order]
    out = np.empty((len(wanted), a.shape[1]), np.float32)
    bounds = np.searchsorted(wanted, np.arange(0, len(a) + CHUNK_ROWS, CHUNK_ROWS))
    for chunk in np.flatnonzero(np.diff(bounds)):
        lo, first, last = int(chunk) * CHUNK_ROWS, bounds[chunk], bounds[chunk + 1]
        out[order[first:last]] = read_rows(a, lo, min(len(a), lo + CHUNK_ROWS))[wanted[first:last] - lo]
    return out


def _max_hits(tile_size: int) -> int:
    """Candidates handled at once in a tile (about 64 bytes each while merged); more are taken in row chunks."""
    return max(1, tile_size // 16)


def _tile_bytes(rows: int, cols: int, dim: int) -> int:
    """Working memory of one tile: embedding blocks, similarities, the comparison mask (shared by both
    directions, which are folded one after the other) and candidate arrays."""
    return 4 * dim * (rows + cols) + 5 * rows * cols + 2 * 64 * _max_hits(rows * cols)


def tile_shape(n_x: int, n_y: int, dim: int, max_memory: int = DEFAULT_MAX_MEMORY,
               block_rows: int | None = None) -> tuple[int, int]:
    """Rows and columns of the similarity tiles: ``block_rows`` both ways if given, else the measured best
    shape shrunk until a tile's working memory fits ``max_memory``.

    >>> tile_shape(100_000, 100_000, 384)
    (4096, 1024)
    >>> tile_shape(100_000, 100_000, 384, max_memory=4 << 20)
    (512, 256)
    """
    if block_rows is not None:
        if block_rows < 1:
            raise ValueError(f"block_rows must be positive, got {block_rows}")
        return min(block_rows, n_x), min(block_rows, n_y)
    rows, cols = min(TILE_ROWS, n_x), min(TILE_COLS, n_y)
    while _tile_bytes(rows, cols, dim) > max_memory and rows * cols > 1:
        rows, cols = (max(1, rows // 2), cols) if rows >= 4 * cols or cols == 1 else (rows, max(1, cols // 2))
    if _tile_bytes(rows, cols, dim) > max_memory:
        raise ValueError(f"max_memory={max_memory} bytes cannot hold even one {dim}-d row pair")
    return rows, cols


def _descending_key(owner: np.ndarray, sim: np.ndarray) -> np.ndarray:
    """uint64 keys ordering by owner, then by float32 similarity descending."""
    bits = sim.astype(np.float32).view(np.uint32).astype(np.uint64)
    ascending = np.where(bits >> 31 == 1, bits ^ 0xFFFFFFFF, bits | 0x80000000)  # float order as unsigned order
    return (owner.astype(np.uint64) << 32) | (0xFFFFFFFF - ascending)


def merge_candidates(top_sim: np.ndarray, top_idx: np.ndarray, owner: np.ndarray, nbr: np.ndarray,
                     sim: np.ndarray) -> None:
    """Merge new candidates ``(owner row, neighbour index, similarity)`` into running top-k lists in place.

    Candidates must have larger neighbour indices than the lists' entries and come in increasing neighbour
    order per owner, so that the stable sort breaks ties towards the smaller index.
    """
    k = top_sim.shape[1]
    touched = np.flatnonzero(np.bincount(owner, minlength=len(top_sim)))
    all_owner = np.concatenate([np.repeat(touched, k), owner])
    all_sim = np.concatenate([top_sim[touched].ravel(), sim])
    all_idx = np.concatenate([top_idx[touched].ravel(), nbr])
    order = np.argsort(_descending_key(all_owner, all_sim), kind="stable")
    all_owner, all_sim, all_idx = all_owner[order], all_sim[order], all_idx[order]
    rank = np.arange(len(order)) - np.searchsorted(all_owner, all_owner)
    keep = rank < k
    top_sim[all_owner[keep], rank[keep]] = all_sim[keep]
    top_idx[all_owner[keep], rank[keep]] = all_idx[keep]


def _update(sims: np.ndarray, top_sim: np.ndarray, top_idx: np.ndarray, axis: int, offset: int,
            mask: np.ndarray) -> None:
    """Fold a similarity tile into the running top-k of its rows (``axis=1``) or columns (``axis=0``).

    ``offset`` is the global index of the tile's first neighbour (column for rows, row for columns), and
    neighbours must arrive in increasing index order over the tiles. ``mask`` is a scratch buffer.
    """
    k = top_sim.shape[1]
    n_own, n_nbr = sims.shape if axis == 1 else sims.shape[::-1]
    # Entries not above the running k-th best lose against it (equal ones on the index tie-break).
    threshold = np.nextafter(top_sim[:, k - 1], np.float32(np.inf))
    groups = 2 * k
    if n_nbr >= groups and np.isneginf(top_sim[:, k - 1]).any():
        # Lists not yet full (first tiles): the k-th largest of 2k disjoint group maxima bounds the tile's k-th best.
        size = n_nbr // groups
        if axis == 1:
            maxima = sims[:, : groups * size].reshape(n_own, groups, size).max(axis=2)
        else:
            maxima = sims[: groups * size].reshape(groups, size, n_own).max(axis=1).T
        np.maximum(threshold, np.partition(maxima, groups - k, axis=1)[:, groups - k], out=threshold)
    np.greater_equal(sims, threshold[:, None] if axis == 1 else threshold[None, :], out=mask)
    cap = _max_hits(sims.size)
    step = len(sims) if np.count_nonzero(mask) <= cap else max(1, cap // sims.shape[1])  # many ties: bound memory
    for lo in range(0, len(sims), step):
        row, col = np.divmod(np.flatnonzero(mask[lo : lo + step]), sims.shape[1])
        row += lo
        own, nbr = (row, col) if axis == 1 else (col, row)
        merge_candidates(top_sim, top_idx, own, nbr + offset, sims[row, col])


def bidirectional_knn(x: np.ndarray, y: np.ndarray, k: int, *, max_memory: int | None = None,
                      block_rows: int | None = None, progress: bool = False, warn_k: bool = True) -> KnnResult:
    """Exact inner-product k-NN of ``x`` in ``y`` and of ``y`` in ``x`` from one pass over ``X·Yᵀ``.

    ``x`` and ``y`` (rows L2-normalised for cosine) may be memmaps: they are read tile by tile, so the
    working memory stays within ``max_memory`` bytes (default 1 GiB; the results take another
    ``12·k·(n_x + n_y)`` bytes, up to four times that while the cores' lists are merged). ``block_rows``
    forces square tiles of that many rows (for tests). On
    several cores, each core takes a contiguous span of the sources with single-threaded BLAS, so that one
    core's top-k bookkeeping overlaps another's matrix product; the spans' target lists are merged at the end.

    >>> x = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    >>> y = np.array([[0.0, 1.0], [1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
    >>> res = bidirectional_knn(x, y, 2)
    >>> res.fwd_idx.tolist(), res.fwd_sim.astype(float).round(2).tolist()
    ([[1, 2], [2, 0]], [[1.0, 0.8], [0.96, 0.8]])
    >>> res.bwd_idx.tolist()
    [[1, 0], [0, 1], [1, 0]]
    """
    k_fwd, k_bwd = check_inputs(x, y, k, warn=warn_k)
    budget = DEFAULT_MAX_MEMORY if max_memory is None else max_memory
    rows, _ = tile_shape(len(x), len(y), x.shape[1], budget, block_rows)
    spans = _spans(len(x), min(cores(), math.ceil(len(x) / rows)))
    rows, cols = tile_shape(max(s.stop - s.start for s in spans), len(y), x.shape[1], budget // len(spans),
                            block_rows)
    log.debug("exact k-NN %d x %d (k=%d) in %d x %d tiles on %d core(s)", len(x), len(y), k, rows, cols, len(spans))
    with tqdm(total=len(x), unit="rows", desc="exact k-NN", disable=not progress) as bar:
        def one_pass(span: slice) -> KnnResult:
            return _one_pass(x, y, span, (k_fwd, k_bwd), (rows, cols), bar)

        if len(spans) == 1:
            return one_pass(spans[0])
        with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(len(spans)) as pool:
            parts = list(pool.map(one_pass, spans))
    return merge_source_spans(parts, k_bwd)


def _one_pass(x: np.ndarray, y: np.ndarray, span: slice, ks: tuple[int, int], tile: tuple[int, int],
              bar: tqdm) -> KnnResult:
    """Exact k-NN of the sources ``x[span]`` in ``y`` and of ``y`` among those sources (global row numbers),
    one tile of ``tile`` rows x columns at a time."""
    (k_fwd, k_bwd), (rows, cols), n_x = ks, tile, span.stop - span.start
    fwd_sim, fwd_idx = np.full((n_x, k_fwd), -np.inf, np.float32), np.full((n_x, k_fwd), -1, np.int64)
    bwd_sim, bwd_idx = np.full((len(y), k_bwd), -np.inf, np.float32), np.full((len(y), k_bwd), -1, np.int64)
    buffers = np.empty(rows * cols, np.float32), np.empty(rows * cols, bool)
    for x_lo in range(span.start, span.stop, rows):
        x_hi = min(span.stop, x_lo + rows)
        xb, own = read_rows(x, x_lo, x_hi), slice(x_lo - span.start, x_hi - span.start)
        for y_lo in range(0, len(y), cols):
            y_hi = min(len(y), y_lo + cols)
            sims, mask = (b[: (x_hi - x_lo) * (y_hi - y_lo)].reshape(x_hi - x_lo, y_hi - y_lo) for b in buffers)
            np.matmul(xb, read_rows(y, y_lo, y_hi).T, out=sims)
            _update(sims, fwd_sim[own], fwd_idx[own], 1, y_lo, mask)
            _update(sims, bwd_sim[y_lo:y_hi], bwd_idx[y_lo:y_hi], 0, x_lo, mask)
        bar.update(x_hi - x_lo)
    return KnnResult(fwd_idx, fwd_sim, bwd_idx, bwd_sim)


def merge_source_spans(parts: Sequence[KnnResult], k: int) -> KnnResult:
    """Join k-NN results of consecutive source spans: forward lists are concatenated, each target's lists are
    re-ranked to the best ``k`` (ties to the smaller source index, as within one span)."""
    bwd_sim = np.concatenate([p.bwd_sim for p in parts], axis=1)
    bwd_idx = np.concatenate([p.bwd_idx for p in parts], axis=1)
    order = np.argsort(-bwd_sim, axis=1, kind="stable")[:, : min(k, bwd_sim.shape[1])]
    return KnnResult(np.concatenate([p.fwd_idx for p in parts]), np.concatenate([p.fwd_sim for p in parts]),
                     np.take_along_axis(bwd_idx, order, axis=1), np.take_along_axis(bwd_sim, order, axis=1))


def _spans(n: int, parts: int) -> list[slice]:
    """``[0, n)`` cut into at most ``parts`` contiguous non-empty slices of near-equal length."""
    bounds = np.linspace(0, n, min(parts, n) + 1).round().astype(int).tolist()
    return [slice(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def recall(exact: KnnResult, approx: KnnResult) -> float:
    """Fraction of exact nearest neighbours (both directions) found among the approximate k neighbours.

    >>> exact = KnnResult(np.array([[0], [1]]), np.ones((2, 1)), np.array([[0], [1]]), np.ones((2, 1)))
    >>> approx = KnnResult(np.array([[0], [0]]), np.ones((2, 1)), np.array([[0], [1]]), np.ones((2, 1)))
    >>> recall(exact, approx)
    0.75
    """
    found = np.concatenate([np.any(approx.fwd_idx == exact.fwd_idx[:, :1], axis=1),
                            np.any(approx.bwd_idx == exact.bwd_idx[:, :1], axis=1)])
    return float(found.mean())


@dataclass(frozen=True)
class SampleKnn:
    """Exact k-NN lists of some sources and of the targets they reach, best first: ``fwd_*``
    ``(len(rows), k)`` targets of the sources ``rows``, ``bwd_*`` ``(len(targets), k)`` sources of each of
    ``targets`` (the distinct targets in ``fwd_idx``, ascending); row numbers are those of the full corpora."""

    rows: np.ndarray
    fwd_idx: np.ndarray
    fwd_sim: np.ndarray
    targets: np.ndarray
    bwd_idx: np.ndarray
    bwd_sim: np.ndarray


def sample_bidirectional_knn(x: np.ndarray, y: np.ndarray, k: int, rows: np.ndarray, *,
                             max_memory: int | None = None) -> SampleKnn:
    """Exact k-NN of the sources ``x[rows]`` among ``y``, and of each target in their lists among ``x``: what
    margin scoring needs to score every candidate pair of those sources exactly, as the full
    :func:`bidirectional_knn` would, for ``(len(rows) + len(targets))·len(y)`` products instead of
    ``len(x)·len(y)``. Reference results for checking approximate search on corpora too large to search
    exactly. ``x`` and ``y`` may be memmaps (see :func:`bidirectional_knn` for ``max_memory``).

    >>> x = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    >>> y = np.array([[0.0, 1.0], [1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
    >>> s = sample_bidirectional_knn(x, y, 2, np.array([2, 0]))
    >>> s.fwd_idx.tolist(), s.targets.tolist(), s.bwd_idx.tolist()
    ([[0, 2], [1, 2]], [0, 1, 2], [[2, 1], [0, 1], [1, 0]])
    """
    k_fwd, k_bwd = check_inputs(x, y, k)
    rows = np.asarray(rows, dtype=np.int64)
    if rows.ndim != 1 or len(rows) == 0 or rows.min() < 0 or rows.max() >= len(x):
        raise ValueError(f"rows must be a non-empty list of source row numbers below {len(x)}")
    fwd = bidirectional_knn(take_rows(x, rows), y, k_fwd, max_memory=max_memory)
    targets = np.unique(fwd.fwd_idx)
    bwd = bidirectional_knn(take_rows(y, targets), x, k_bwd, max_memory=max_memory)
    return SampleKnn(rows, fwd.fwd_idx, fwd.fwd_sim, targets, bwd.fwd_idx, bwd.fwd_sim)
