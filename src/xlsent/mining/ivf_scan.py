"""Compiled kernels of :mod:`xlsent.mining.ivf_bf16`: the scan of bf16 similarity tiles into running k-NN lists.

A tile holds the bf16 similarities (read as int16) of the queries that probe one inverted list against that list's
members, one row per query, rows of consecutive tiles packed in one flat buffer. A list keeps its best entries as
order keys (:func:`order_key`: the int16 bits of a bf16 value turned so that integer order is float order, negative
values included) and the members' row numbers, best first. Each query appears at most once per tile and each
member belongs to one list, so a list never receives the same neighbour twice. Two threads share the work by
query parity, so no two threads ever touch the same list.
"""

from __future__ import annotations

import numba
import numpy as np

EMPTY_KEY = -(1 << 16)
"""The order key of an empty list slot: below the key of every bf16 value."""
LANES = 128
"""Strided lanes whose maxima :func:`top_columns` compares first."""


@numba.njit(inline="always")
def order_key(bits: int) -> int:
    """The int order key of the bf16 value with int16 bits ``bits``: keys order as the values do (``-0.0`` just
    below ``+0.0``)."""
    return bits if bits >= 0 else -32769 - bits


@numba.njit(nogil=True, cache=True)
def scan_tiles(flat: np.ndarray, tiles: np.ndarray, rows: np.ndarray, members: np.ndarray, part: int, parts: int,
               keys: np.ndarray, idx: np.ndarray) -> None:
    """Fold the tiles of ``flat`` (int16) into the lists ``keys``/``idx`` (one row per query) in place, for the
    queries whose number modulo ``parts`` is ``part``.

    ``tiles`` has one row per tile: its offset in ``flat``, its rows, its columns, its row stride (the columns
    and their padding), the index in ``rows`` (query numbers) of its first row, the index in ``members`` (neighbour
    numbers) of its first column. A row whose
    largest entry cannot enter its list (a non-negative threshold above the row's maximum) is skipped after one
    pass over it that the compiler vectorises."""
    last = keys.shape[1] - 1
    for t in range(tiles.shape[0]):
        offset, n_rows, n_cols, stride = tiles[t, 0], tiles[t, 1], tiles[t, 2], tiles[t, 3]
        first_row, first_member = tiles[t, 4], tiles[t, 5]
        for r in range(n_rows):
            q = rows[first_row + r]
            if q % parts != part:
                continue
            threshold = keys[q, last]
            row = flat[offset + r * stride : offset + r * stride + n_cols]
            if threshold >= 0:
                if row.max() <= threshold:
                    continue
                for j in range(n_cols):
                    if row[j] > threshold:
                        threshold = _insert(keys, idx, q, row[j], members[first_member + j])
            else:
                for j in range(n_cols):
                    value = order_key(row[j])
                    if value > threshold:
                        threshold = _insert(keys, idx, q, value, members[first_member + j])


@numba.njit(inline="always")
def _insert(keys: np.ndarray, idx: np.ndarray, q: int, value: int, member: int) -> int:
    """Put ``member`` with order key ``value`` into the list of ``q`` (best first; the last entry drops out); the
    list's new threshold (its last key)."""
    p = keys.shape[1] - 1
    while p > 0 and value > keys[q, p - 1]:
        keys[q, p] = keys[q, p - 1]
        idx[q, p] = idx[q, p - 1]
        p -= 1
    keys[q, p] = value
    idx[q, p] = member
    return keys[q, keys.shape[1] - 1]


@numba.njit(nogil=True, cache=True, fastmath=True)
def pair_dots(queries: np.ndarray, block: np.ndarray, query_rows: np.ndarray, block_rows: np.ndarray,
              out: np.ndarray) -> None:
    """``out[n] = queries[query_rows[n]] · block[block_rows[n]]`` in float32 for every ``n``."""
    dim = queries.shape[1]
    for n in range(len(query_rows)):
        a, b = query_rows[n], block_rows[n]
        total = np.float32(0.0)
        for d in range(dim):
            total += queries[a, d] * block[b, d]
        out[n] = total


@numba.njit(nogil=True, cache=True)
def top_columns(tile: np.ndarray, lo: int, hi: int, out: np.ndarray) -> None:
    """For each row ``i`` in ``[lo, hi)`` of ``tile`` (bf16 bits as int16), the columns of its ``m`` largest
    entries into ``out[i]`` (``m = out.shape[1] <= tile.shape[1]``), largest first; ties to the smaller column.

    A row is first reduced to the maxima of ``LANES`` strided lanes (a pass the compiler vectorises); the ``m``-th
    largest lane maximum is a floor under the ``m``-th largest entry, so only lanes whose maximum reaches it are
    read entry by entry."""
    m, cols = out.shape[1], tile.shape[1]
    lanes = min(LANES, cols)
    rounds = cols // lanes
    best = np.empty(lanes, np.int16)
    keys = np.empty(m, np.int32)
    ids = np.empty(m, np.int32)
    order = np.empty(m, np.int16)
    for i in range(lo, hi):
        row = tile[i]
        for j in range(lanes):
            best[j] = row[j]
        for c in range(1, rounds):
            base = c * lanes
            for j in range(lanes):
                if row[base + j] > best[j]:
                    best[j] = row[base + j]
        for j in range(rounds * lanes, cols):
            if row[j] > best[j - rounds * lanes]:
                best[j - rounds * lanes] = row[j]
        floor = _mth_largest(best, m, order) if m <= lanes else -1
        threshold = floor - 1  # an order key: the floor is a positive value, or every entry is read
        if floor < 0:
            floor, threshold = -32768, EMPTY_KEY
        for t in range(m):
            keys[t], ids[t] = EMPTY_KEY, cols
        for j in range(lanes):
            if best[j] < floor:
                continue
            for c in range(j, cols, lanes):
                value = order_key(row[c])
                if value > threshold or (value == threshold and c < ids[m - 1]):
                    p = m - 1
                    while p > 0 and (value > keys[p - 1] or (value == keys[p - 1] and c < ids[p - 1])):
                        keys[p] = keys[p - 1]
                        ids[p] = ids[p - 1]
                        p -= 1
                    keys[p] = value
                    ids[p] = c
                    threshold = max(threshold, keys[m - 1])
        for t in range(m):
            out[i, t] = ids[t]


@numba.njit(inline="always")
def _mth_largest(values: np.ndarray, m: int, top: np.ndarray) -> int:
    """The ``m``-th largest of ``values`` (int16, ``m <= len(values)``) by a running top ``m`` held in ``top``
    (ascending)."""
    for t in range(m):
        top[t] = values[t]
    top.sort()
    for j in range(m, len(values)):
        v = values[j]
        if v > top[0]:
            p = 0
            while p + 1 < m and top[p + 1] < v:
                top[p] = top[p + 1]
                p += 1
            top[p] = v
    return top[0]


@numba.njit(nogil=True, cache=True)
def offer(idx: np.ndarray, sim: np.ndarray, owner: np.ndarray, neighbour: np.ndarray, value: np.ndarray) -> None:
    """Offer neighbour ``neighbour[n]`` at similarity ``value[n]`` to the list of ``owner[n]`` (``idx``/``sim``, best
    first, ``-1``/``-inf`` where empty) for every ``n``, in place: it enters where it beats an entry (ties to the
    smaller neighbour) unless the list holds it already."""
    size = idx.shape[1]
    for n in range(len(owner)):
        o, j, v = owner[n], neighbour[n], value[n]
        if v < sim[o, size - 1] or (v == sim[o, size - 1] and j >= idx[o, size - 1] >= 0):
            continue
        held = False
        for t in range(size):
            if idx[o, t] == j:
                held = True
        if held:
            continue
        p = size - 1
        while p > 0 and (v > sim[o, p - 1] or (v == sim[o, p - 1] and j < idx[o, p - 1])):
            sim[o, p] = sim[o, p - 1]
            idx[o, p] = idx[o, p - 1]
            p -= 1
        sim[o, p] = v
        idx[o, p] = j
