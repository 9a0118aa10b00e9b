"""Exact inner-product k-NN in both directions with the matrix products in bfloat16 (CPU).

On CPUs with bf16 matrix units (AMX), ``X·Yᵀ`` runs several times faster in bf16 than in fp32, but a bf16
similarity is off by up to ``2^-8·|s|`` (its 8-bit mantissa) plus the rounding of the inputs. So the bf16
products only *find candidates*: each source and each target keeps the ``k + SPARE`` best neighbours by bf16
similarity over one pass of the tiles of ``X·Yᵀ``; their similarities are then recomputed in fp32 from the fp32
vectors and the best k kept. A list is *proven* when its fp32 k-th best is above the bf16 value of its last
candidate plus :func:`slack`: no neighbour it did not keep can beat its k-th best. The lists that are not proven
(dense near-ties, where more than ``SPARE`` neighbours lie within the bf16 error of the k-th) are searched again in
fp32. So the lists are those of :func:`xlsent.mining.knn.bidirectional_knn`, fp32 similarities included, wherever
the bf16 error stays within the slack (for unit vectors, bar an error beyond 8 standard deviations of the input
rounding); ties to a few fp32 ulps may be broken differently than by a BLAS product.

Keeping the lists costs little next to the product: each tile is read once by a compiled scan
(:mod:`xlsent.mining.bf16_scan`) that keeps the entries above the threshold of their row or of their column (the
last bf16 value of its list), one scan per core over a part of the tile's rows. Lists that are not yet full (in
the first tiles) start from the ``k + SPARE``-th largest of their entries in the tile (of a column's block maxima).

>>> rng = np.random.default_rng(0)
>>> x = rng.normal(size=(300, 16)).astype(np.float32)
>>> x /= np.linalg.norm(x, axis=1, keepdims=True)
>>> res = bf16_bidirectional_knn(x, x, 3)
>>> bool((res.fwd_idx[:, 0] == np.arange(300)).all()), res.fwd_sim.dtype
(True, dtype('float32'))
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch
from tqdm.auto import tqdm

from xlsent.mining.bf16_scan import HEIGHT, kth_largest, merge_into, scan_tile
from xlsent.mining.knn import (
    DEFAULT_MAX_MEMORY,
    KnnResult,
    check_inputs,
    read_rows,
    take_rows,
)
from xlsent.threads import cores

log = logging.getLogger(__name__)

SPARE = 8
"""Candidates kept beyond k in each list, by bf16 similarity, for the fp32 re-scoring."""
TILE_ROWS, TILE_COLS = 4096, 2048
"""Tile shape of the bf16 products: the largest whose 16 MiB product AMX writes at full speed (2.2 TFLOP/s
measured on 2 cores against 0.6 for 4096 x 4096); halved until a tile fits ``max_memory``."""
_INT16_MIN, _INT16_MAX = -(1 << 15), (1 << 15) - 1


def slack(sim: np.ndarray) -> np.ndarray:
    """How far above its bf16 product the fp32 similarity of the same unit vectors may lie: the bf16 rounding of
    the result (``2^-9·|s|``) and of the inputs (``2^-8·|s|`` at most when the errors line up, counted in full)
    plus ``2^-10`` for the rounding noise of the inputs' products (8 standard deviations at 384 dimensions).

    >>> float(slack(np.array([0.5], dtype=np.float32))[0])
    0.0029296875
    """
    return np.abs(sim) * np.float32(2.0**-8) + np.float32(2.0**-10)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """float32 values of bf16 numbers given by their bits read as int16.

    >>> bf16_values(np.array([16256, -16512], dtype=np.int16)).tolist()
    [1.0, -1.0]
    """
    return (np.asarray(bits).astype(np.uint16).astype(np.uint32) << 16).view(np.float32)


def _bits_above(values: np.ndarray) -> np.ndarray:
    """int16 thresholds for bf16 entries read as int16: an entry passes ``entry >= threshold`` when it is above
    each of ``values`` (bf16 values held as float32). A value that is not positive gives the smallest int16, which
    every entry passes: the integer order is the float order for positive values only."""
    as_float = np.ascontiguousarray(values, dtype=np.float32)
    bits = torch.from_numpy(as_float).to(torch.bfloat16).view(torch.int16).numpy().astype(np.int32) + 1
    bits[~(as_float > 0)] = _INT16_MIN
    return np.minimum(bits, _INT16_MAX).astype(np.int16)


@dataclass
class _Lists:
    """Running lists of one side, best first: neighbour indices (-1: none yet) and their bf16 similarities (as
    float32; ``-inf``: none yet)."""

    idx: np.ndarray
    sim: np.ndarray

    @classmethod
    def empty(cls, rows: int, size: int) -> _Lists:
        return cls(np.full((rows, size), -1, np.int64), np.full((rows, size), -np.inf, np.float32))


def _tile_shape(n_x: int, n_y: int, max_memory: int) -> tuple[int, int]:
    """Rows and columns of a tile: at most the measured best, halved until the tile's working memory (bf16
    products, a transposed copy for the first tiles, candidates) fits ``max_memory``."""
    rows, cols = min(TILE_ROWS, n_x), min(TILE_COLS, n_y)
    while 8 * rows * cols > max_memory and rows * cols > 1:
        rows, cols = (max(1, rows // 2), cols) if rows >= cols else (rows, max(1, cols // 2))
    return rows, cols


def bf16_bidirectional_knn(x: np.ndarray, y: np.ndarray, k: int, *, max_memory: int | None = None,
                           progress: bool = False, warn_k: bool = True) -> KnnResult:
    """Exact inner-product k-NN of ``x`` in ``y`` and of ``y`` in ``x`` (rows L2-normalised), candidates found
    by bf16 products and re-scored in fp32 (see the module's notes): the lists of
    :func:`xlsent.mining.knn.bidirectional_knn`, fp32 similarities included, but for near-ties.

    ``x`` and ``y`` may be memmaps, read tile by tile; ``y`` is also held in bf16 (``2·len(y)·dim`` bytes). The
    tiles' working memory stays within ``max_memory`` bytes (default 1 GiB).
    """
    k_fwd, k_bwd = check_inputs(x, y, k, warn=warn_k)
    n_x, n_y = len(x), len(y)
    rows, cols = _tile_shape(n_x, n_y, DEFAULT_MAX_MEMORY if max_memory is None else max_memory)
    fwd, bwd = _Lists.empty(n_x, min(n_y, k_fwd + SPARE)), _Lists.empty(n_y, min(n_x, k_bwd + SPARE))
    threads = torch.get_num_threads()
    torch.set_num_threads(cores())
    log.debug("bf16 k-NN %d x %d (k=%d) in %d x %d tiles", n_x, n_y, k, rows, cols)
    try:
        y_tiles = [torch.from_numpy(read_rows(y, lo, min(n_y, lo + cols))).to(torch.bfloat16)
                   for lo in range(0, n_y, cols)]
        products = torch.empty((rows, cols), dtype=torch.bfloat16)  # reused: a fresh one costs page faults
        with (torch.inference_mode(), ThreadPoolExecutor(cores()) as pool,
              tqdm(total=n_x, unit="rows", desc="exact k-NN (bf16)", disable=not progress) as bar):
            for x_lo in range(0, n_x, rows):
                x_hi = min(n_x, x_lo + rows)
                x_bf16 = torch.from_numpy(read_rows(x, x_lo, x_hi)).to(torch.bfloat16)
                for tile_no, y_lo in enumerate(range(0, n_y, cols)):
                    targets = y_tiles[tile_no]
                    full = (len(x_bf16), len(targets)) == (rows, cols)
                    tile = torch.matmul(x_bf16, targets.T, out=products) if full else x_bf16 @ targets.T
                    _fold_tile(tile.view(torch.int16).numpy(), (x_lo, x_hi), (y_lo, min(n_y, y_lo + cols)), fwd,
                               bwd, pool)
                bar.update(x_hi - x_lo)
        del y_tiles
    finally:
        torch.set_num_threads(threads)
    fwd_idx, fwd_sim = _rescored(x, y, fwd, k_fwd)
    bwd_idx, bwd_sim = _rescored(y, x, bwd, k_bwd)
    return KnnResult(fwd_idx, fwd_sim, bwd_idx, bwd_sim)


def _thresholds(tile: np.ndarray, lists: np.ndarray) -> np.ndarray:
    """The thresholds of the rows of ``tile`` (int16, one row per list of ``lists``' bf16 values; or rows of
    distinct entries of each owner, such as block maxima): strictly above the last value of each full list; for a
    list not yet full, at or above the ``size``-th largest of its row (every entry where that is not positive, or
    where the row has fewer than ``size`` entries)."""
    last = lists[:, -1]
    bits = _bits_above(last)
    short = np.flatnonzero(np.isneginf(last))
    size = lists.shape[1]
    if len(short):
        if tile.shape[1] < size:
            bits[short] = _INT16_MIN
        else:
            kth = kth_largest(tile, short, tile.shape[1], size)
            bits[short] = np.where(kth > 0, kth, _INT16_MIN)
    return bits


def _column_maxima(tile: np.ndarray) -> np.ndarray:
    """The maxima of each column of ``tile`` (int16) over blocks of ``HEIGHT`` rows, one row per column: distinct
    entries of the column, a lower bound of its best ones. A column shorter than a block is returned whole."""
    rows, cols = tile.shape
    if rows < HEIGHT * SPARE:
        return np.ascontiguousarray(tile.T)
    blocks = rows // HEIGHT
    return np.ascontiguousarray(tile[: blocks * HEIGHT].reshape(blocks, HEIGHT, cols).max(axis=1).T)


def _fold_tile(tile: np.ndarray, x_span: tuple[int, int], y_span: tuple[int, int], fwd: _Lists, bwd: _Lists,
               pool: ThreadPoolExecutor) -> None:
    """Merge one bf16 tile (its int16 view) into the running lists ``fwd`` of its sources and ``bwd`` of its
    targets: each entry at or above the threshold of its row (for ``fwd``) or of its column (for ``bwd``)."""
    (x_lo, x_hi), (y_lo, y_hi) = x_span, y_span
    n_rows, n_cols = tile.shape
    row_bits = _thresholds(tile, fwd.sim[x_lo:x_hi])
    col_lists = bwd.sim[y_lo:y_hi]
    col_bits = (_thresholds(_column_maxima(tile), col_lists) if np.isneginf(col_lists[:, -1]).any() else
                _bits_above(col_lists[:, -1]))
    bounds = np.linspace(0, n_rows, min(cores(), n_rows) + 1).round().astype(int)
    parts = list(pool.map(lambda span: _scan(tile, span, n_cols, row_bits, col_bits),
                          zip(bounds[:-1], bounds[1:], strict=True)))
    f_row, f_col, f_val, b_row, b_col, b_val = (np.concatenate([part[i] for part in parts]) for i in range(6))
    merge_into(fwd.sim, fwd.idx, f_row + x_lo, f_col + y_lo, bf16_values(f_val))
    merge_into(bwd.sim, bwd.idx, b_col + y_lo, b_row + x_lo, bf16_values(b_val))


def _scan(tile: np.ndarray, span: tuple[int, int], cols: int, row_bits: np.ndarray, col_bits: np.ndarray
          ) -> tuple[np.ndarray, ...]:
    """:func:`~xlsent.mining.bf16_scan.scan_tile` of the rows ``span``, scanned again with room for every entry
    when the first guess of room was short."""
    capacity = max(1024, 4 * (span[1] - span[0]))
    while True:
        f_row, f_col, f_val, n_f, b_row, b_col, b_val, n_b = scan_tile(tile, span[0], span[1], cols, row_bits,
                                                                       col_bits, capacity)
        if max(n_f, n_b) <= capacity:
            return f_row[:n_f], f_col[:n_f], f_val[:n_f], b_row[:n_b], b_col[:n_b], b_val[:n_b]
        capacity = max(n_f, n_b)


def forward_knn(queries: np.ndarray, db: np.ndarray, k: int, block: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Exact fp32 k-NN of ``queries`` (in memory) among ``db`` (an array or memmap): ``(idx, sim)``, best first, ties
    to the smaller index; ``block`` queries against ``block`` rows at a time (``4·block²`` bytes of similarities).

    >>> forward_knn(np.eye(2, 3, dtype=np.float32), np.eye(3, dtype=np.float32), 1)[0].tolist()
    [[0], [1]]
    """
    idx, sim = np.empty((len(queries), k), np.int64), np.empty((len(queries), k), np.float32)
    for q in range(0, len(queries), block):
        part_q = queries[q : q + block]
        best_idx, best_sim = np.empty((len(part_q), 0), np.int64), np.empty((len(part_q), 0), np.float32)
        for lo in range(0, len(db), block):
            part = part_q @ read_rows(db, lo, min(len(db), lo + block)).T
            best_idx = np.concatenate([best_idx, np.broadcast_to(np.arange(lo, lo + part.shape[1]), part.shape)], 1)
            best_sim = np.concatenate([best_sim, part], axis=1)
            order = np.lexsort((best_idx, -best_sim), axis=1)[:, :k]
            best_idx, best_sim = np.take_along_axis(best_idx, order, 1), np.take_along_axis(best_sim, order, 1)
        idx[q : q + block], sim[q : q + block] = best_idx, best_sim
    return idx, sim


def _gather(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` of ``a``: indexed directly in memory, read chunk by chunk from a memmap."""
    return take_rows(a, rows) if isinstance(a, np.memmap) else np.asarray(a, dtype=np.float32)[rows]


def _rescored(queries: np.ndarray, db: np.ndarray, lists: _Lists, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The fp32 k-NN lists of ``queries`` among ``db`` from their bf16 candidate ``lists``: the candidates'
    similarities recomputed in fp32 and the best ``k`` kept (ties to the smaller index), and the queries whose
    lists are not proven (see the module's notes) searched again exactly."""
    idx, sim = np.empty((len(queries), k), np.int64), np.empty((len(queries), k), np.float32)
    unproven: list[np.ndarray] = []
    step = 1 << 14
    for lo in range(0, len(queries), step):
        hi = min(len(queries), lo + step)
        cand, found = lists.idx[lo:hi], lists.idx[lo:hi] >= 0
        exact = np.einsum("id,ijd->ij", read_rows(queries, lo, hi),
                          _gather(db, np.where(found, cand, 0).ravel()).reshape(*cand.shape, -1))
        exact[~found] = -np.inf
        order = np.lexsort((cand, -exact), axis=1)[:, :k]
        idx[lo:hi], sim[lo:hi] = np.take_along_axis(cand, order, 1), np.take_along_axis(exact, order, 1)
        floor = lists.sim[lo:hi, -1]
        full = len(db) > cand.shape[1]  # a list that holds every neighbour is proven
        proven = (sim[lo:hi, -1] > floor + slack(floor)) | (not full)
        unproven.append(np.flatnonzero(~(proven & found.all(axis=1))) + lo)
    again = np.concatenate(unproven)
    if len(again):
        log.debug("%d of %d lists not proven by their bf16 candidates: searched again in fp32", len(again),
                  len(queries))
        idx[again], sim[again] = forward_knn(take_rows(queries, again), db, k)
    return idx, sim
