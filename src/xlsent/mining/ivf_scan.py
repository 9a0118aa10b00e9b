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
FLOOR_SHIFT = 2
""":func:`top_columns` places its floor in buckets of ``2^FLOOR_SHIFT`` consecutive bf16 values."""


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
    entries into ``out[i]`` (``m = out.shape[1] <= tile.shape[1]``): the largest first (the smallest column among
    equals), the others in no set order (equal entries at the cut taken in a fixed order).

    A row is first reduced to the maxima of ``LANES`` strided lanes (a pass the compiler vectorises); a value at or
    below the ``m``-th largest lane maximum (:func:`_floor`) is a floor under the ``m``-th largest entry, so only
    the entries at or above it are kept as candidates (a second vectorised pass); the ``m``-th largest candidate is
    then found by counting them per value. The first of equal largest entries is the smallest column: columns are
    read in order."""
    m, cols = out.shape[1], tile.shape[1]
    rounds = cols // LANES
    best = np.empty(LANES, np.int16)
    buckets = np.zeros(1 << (15 - FLOOR_SHIFT), np.int32)
    counts = np.zeros(1 << 16, np.int32)
    keys = np.empty(cols, np.int32)
    found = np.empty(cols, np.int32)
    for i in range(lo, hi):
        row = tile[i]
        floor = -1  # below LANES columns, or m above LANES: every entry is a candidate
        if rounds and m <= LANES:
            best[:] = row[:LANES]
            for c in range(1, rounds):
                chunk = row[c * LANES : (c + 1) * LANES]
                for j in range(LANES):
                    if chunk[j] > best[j]:
                        best[j] = chunk[j]
            floor = _floor(best, m, buckets)
        n = 0
        if floor < 0:
            for c in range(cols):
                n = _collect(row, c, n, keys, found, counts)
        else:
            for j in range(LANES):
                if best[j] >= floor:
                    for c in range(j, rounds * LANES, LANES):
                        if row[c] >= floor:
                            n = _collect(row, c, n, keys, found, counts)
            for c in range(rounds * LANES, cols):  # past the last full round of lanes
                if row[c] >= floor:
                    n = _collect(row, c, n, keys, found, counts)
        top, first = EMPTY_KEY, cols
        for t in range(n):
            if keys[t] > top or (keys[t] == top and found[t] < first):
                top, first = keys[t], found[t]
        cut, seen = top, 0
        while True:
            seen += counts[cut + 32768]
            if seen >= m:
                break
            cut -= 1
        out[i, 0] = first
        taken, at_cut = 1, m - (seen - counts[cut + 32768])  # entries equal to the cut that enter
        if top == cut:
            at_cut -= 1
        for t in range(n):
            key, c = keys[t], found[t]
            counts[key + 32768] = 0
            if c == first:
                continue
            if key > cut or (key == cut and at_cut > 0):
                if key == cut:
                    at_cut -= 1
                out[i, taken] = c
                taken += 1


@numba.njit(inline="always")
def _collect(row: np.ndarray, c: int, n: int, keys: np.ndarray, found: np.ndarray, counts: np.ndarray) -> int:
    """Keep entry ``c`` of ``row`` as the ``n``-th candidate (its order key, its column, its count); the count of
    candidates after it."""
    key = order_key(row[c])
    keys[n], found[n] = key, c
    counts[key + 32768] += 1
    return n + 1


@numba.njit(inline="always")
def _floor(values: np.ndarray, m: int, counts: np.ndarray) -> int:
    """A non-negative int16 at or below the ``m``-th largest of ``values`` (int16 bits of bf16 values), or -1 when
    fewer than ``m`` of them are non-negative: the lower edge of the bucket of ``2^FLOOR_SHIFT`` consecutive values
    where the running count from the top reaches ``m``. ``counts`` (zeros, one per bucket) is left as it was found."""
    top, positive = -1, 0
    for v in values:
        if v >= 0:
            counts[v >> FLOOR_SHIFT] += 1
            positive += 1
            top = max(top, v >> FLOOR_SHIFT)
    bucket, seen = top, 0
    if positive >= m:
        while True:
            seen += counts[bucket]
            if seen >= m:
                break
            bucket -= 1
    for v in values:
        if v >= 0:
            counts[v >> FLOOR_SHIFT] = 0
    return bucket << FLOOR_SHIFT if positive >= m else -1
