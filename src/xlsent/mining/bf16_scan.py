"""Compiled scans of a tile of bf16 similarities (read as int16) for :mod:`xlsent.mining.knn_bf16`.

For a positive bf16 value the int16 read of its bits orders as the value does, so a threshold is an int16 and a
comparison is one integer comparison. :func:`scan_tile` keeps the entries at or above the threshold of their row or
of their column; it first reduces the tile to block maxima (elementwise maxima over long runs, loops the compiler
vectorises) and looks at single entries only inside blocks whose maximum reaches the threshold, so a tile costs
about two passes over its memory. :func:`kth_largest` gives
the thresholds of lists not yet full. Both release the GIL: the caller runs one per core on parts of the tile.
"""

from __future__ import annotations

import numba
import numpy as np

WIDTH = 64
"""A row's entries are first reduced to the maxima of ``WIDTH`` strided blocks (entry ``j`` in block ``j % WIDTH``)."""
HEIGHT = 16
"""A column's entries are first reduced to the maxima of blocks of ``HEIGHT`` consecutive rows."""


@numba.njit(nogil=True, cache=True)
def scan_tile(tile: np.ndarray, lo: int, hi: int, cols: int, row_bits: np.ndarray, col_bits: np.ndarray,
              capacity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray,
                                      int]:
    """The entries of rows ``[lo, hi)`` and the first ``cols`` columns of ``tile`` (int16) at or above the threshold
    of their row (``row_bits``, for the rows' lists) and of their column (``col_bits``, for the columns' lists):
    ``(row, col, value)`` arrays and the count of each kind (rows ascending; within a row the columns in no set
    order). A count above ``capacity`` means the arrays were too small (only the first ``capacity`` are filled):
    scan again with a larger one. Blocks whose maximum is below the threshold are not looked into."""
    f_row = np.empty(capacity, np.int32)
    f_col = np.empty(capacity, np.int32)
    f_val = np.empty(capacity, np.int16)
    b_row = np.empty(capacity, np.int32)
    b_col = np.empty(capacity, np.int32)
    b_val = np.empty(capacity, np.int16)
    n_f = 0
    n_b = 0
    strided = cols // WIDTH
    best = np.empty(WIDTH, np.int16)
    for i in range(lo, hi):
        rt = row_bits[i]
        for j in range(WIDTH):
            best[j] = tile[i, j] if strided else -32768
        for c in range(1, strided):
            for j in range(WIDTH):
                best[j] = max(best[j], tile[i, c * WIDTH + j])
        for j in range(WIDTH):
            if best[j] >= rt:
                for c in range(strided):
                    v = tile[i, c * WIDTH + j]
                    if v >= rt:
                        if n_f < capacity:
                            f_row[n_f], f_col[n_f], f_val[n_f] = i, c * WIDTH + j, v
                        n_f += 1
        for j in range(strided * WIDTH, cols):
            v = tile[i, j]
            if v >= rt:
                if n_f < capacity:
                    f_row[n_f], f_col[n_f], f_val[n_f] = i, j, v
                n_f += 1
    column = np.empty(cols, np.int16)
    for top in range(lo, hi, HEIGHT):
        bottom = min(hi, top + HEIGHT)
        for j in range(cols):
            column[j] = tile[top, j]
        for i in range(top + 1, bottom):
            for j in range(cols):
                column[j] = max(column[j], tile[i, j])
        for j in range(cols):
            if column[j] >= col_bits[j]:
                for i in range(top, bottom):
                    v = tile[i, j]
                    if v >= col_bits[j]:
                        if n_b < capacity:
                            b_row[n_b], b_col[n_b], b_val[n_b] = i, j, v
                        n_b += 1
    return f_row, f_col, f_val, n_f, b_row, b_col, b_val, n_b


@numba.njit(nogil=True, cache=True)
def kth_largest(tile: np.ndarray, rows: np.ndarray, cols: int, k: int) -> np.ndarray:
    """For each row of ``tile`` (int16) in ``rows``, the ``k``-th largest of its first ``cols`` entries (``k <=
    cols``), by a running top-k."""
    out = np.empty(len(rows), np.int16)
    top = np.empty(k, np.int16)
    for n in range(len(rows)):
        i = rows[n]
        for t in range(k):
            top[t] = tile[i, t]
        top.sort()  # ascending: top[0] is the k-th largest so far
        for j in range(k, cols):
            v = tile[i, j]
            if v > top[0]:
                p = 0
                while p + 1 < k and top[p + 1] < v:
                    top[p] = top[p + 1]
                    p += 1
                top[p] = v
        out[n] = top[0]
    return out


@numba.njit(nogil=True, cache=True)
def merge_into(sim: np.ndarray, idx: np.ndarray, owner: np.ndarray, nbr: np.ndarray, value: np.ndarray,
               distinct: bool = False) -> None:
    """Insert the candidates ``(owner, nbr, value)``, in any order, into the running lists ``sim``/``idx`` (one row
    per owner, best first, ``-inf``/``-1`` where empty) in place: a candidate enters its owner's list where it beats
    an entry, ties going to the smaller neighbour index; with ``distinct``, not when the list holds it already."""
    size = sim.shape[1]
    for n in range(len(owner)):
        o, j, v = owner[n], nbr[n], value[n]
        last = size - 1
        if v < sim[o, last] or (v == sim[o, last] and j > idx[o, last]):
            continue
        if distinct and (idx[o] == j).any():
            continue
        p = last
        while p > 0 and (v > sim[o, p - 1] or (v == sim[o, p - 1] and j < idx[o, p - 1])):
            sim[o, p] = sim[o, p - 1]
            idx[o, p] = idx[o, p - 1]
            p -= 1
        sim[o, p] = v
        idx[o, p] = j
