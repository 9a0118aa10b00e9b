"""The banded dynamic programme (numba): the cost of every bead type ending in every cell of a band, the cheapest
path of beads from ``(0, 0)`` to ``(n, m)``, and that path read back as beads.

Cell ``(i, j)`` is "the first ``i`` source and ``j`` target lines aligned". A bead of ``a`` source and ``b`` target
lines ends in ``(i, j)`` and starts in ``(i - a, j - b)``; its cost is ``(1 - cos) / ((dx + dy) / 2) * a * b``, the
cosine of the embeddings of the source span ``i-a..i-1`` and the target span ``j-b..j-1``, ``dx`` and ``dy`` their
normalisers (:mod:`.normalise`), the product of the sizes as in Vecalign (a bead of several lines must be better
than its parts), plus a weight times the absolute log ratio of the two sides' lengths (Gale & Church's idea). A null
bead (1-0 or 0-1) costs ``null_cost``. Costs are computed in parallel over rows, the programme row after row; both
visit only the band's cells.

>>> from xlsent.mining.docalign.band import full_band
>>> x = np.eye(2, dtype=np.float32)[None]           # one overlap level, two source lines
>>> y = np.eye(2, dtype=np.float32)[None]
>>> ones = np.ones((1, 2), dtype=np.float32)
>>> valid = np.ones((1, 2), dtype=np.bool_)
>>> band = full_band(2, 2)
>>> types = np.array([[1, 1]], dtype=np.int64)
>>> costs = bead_costs(band, x, y, ones, ones, valid, valid, types, np.ones(1))
>>> beads = best_beads(band, types, costs, 0.5)
>>> [(s, t) for s, t, _ in beads]
[((0, 1), (0, 1)), ((1, 2), (1, 2))]
"""

from __future__ import annotations

import numba
import numpy as np

from xlsent.mining.docalign.band import Band

NO_MOVE = -1
LENGTH_SMOOTHING = 10.0
"""Characters added to both lengths of a bead before their ratio is taken, so short lines do not dominate."""


@numba.njit(parallel=True, cache=True, fastmath=True)
def _bead_costs(lo, hi, offsets, x, y, dx, dy, x_ok, y_ok, types, weights, x_len, y_len, length_weight,
                out):  # pragma: no cover - compiled
    dim = x.shape[2]
    for i in numba.prange(lo.shape[0]):
        for j in range(lo[i], hi[i]):
            cell = offsets[i] + j - lo[i]
            for t in range(types.shape[0]):
                a, b = types[t, 0], types[t, 1]
                out[t, cell] = np.inf
                if i < a or j < b or not x_ok[a - 1, i - a] or not y_ok[b - 1, j - b]:
                    continue
                dot = np.float32(0.0)
                for k in range(dim):
                    dot += x[a - 1, i - a, k] * y[b - 1, j - b, k]
                skew = abs(np.log((x_len[a - 1, i - a] + LENGTH_SMOOTHING) / (y_len[b - 1, j - b] + LENGTH_SMOOTHING)))
                out[t, cell] = ((1.0 - dot) * 2.0 / (dx[a - 1, i - a] + dy[b - 1, j - b]) * weights[t]
                                + length_weight * skew)


def bead_costs(band: Band, x: np.ndarray, y: np.ndarray, dx: np.ndarray, dy: np.ndarray, x_ok: np.ndarray,
               y_ok: np.ndarray, types: np.ndarray, weights: np.ndarray,
               lengths: tuple[np.ndarray, np.ndarray] | None = None, length_weight: float = 0.0) -> np.ndarray:
    """``(len(types), band.cells)`` float32: the cost of each bead type ending in each cell (inf where the bead does
    not fit or a span is not ``ok``). ``x``: ``(overlaps, n, dim)`` unit span embeddings (row ``s`` of level
    ``a - 1``: lines ``s..s+a-1``), ``dx`` their normalisers, ``x_ok`` which spans exist; ``y``, ``dy``, ``y_ok``
    the same for the target side; ``weights`` multiply the cost of each type. ``lengths``: the spans' lengths in
    characters, each side's scaled to the other's mean; ``length_weight`` times the absolute log ratio of a bead's
    two lengths is added to its cost."""
    out = np.empty((len(types), band.cells), dtype=np.float32)
    x_len, y_len = lengths if lengths is not None else (np.zeros(x.shape[:2]), np.zeros(y.shape[:2]))
    _bead_costs(band.lo, band.hi, band.offsets, np.ascontiguousarray(x, dtype=np.float32),
                np.ascontiguousarray(y, dtype=np.float32), np.ascontiguousarray(dx, dtype=np.float32),
                np.ascontiguousarray(dy, dtype=np.float32), np.ascontiguousarray(x_ok), np.ascontiguousarray(y_ok),
                np.ascontiguousarray(types, dtype=np.int64), np.ascontiguousarray(weights, dtype=np.float32),
                np.ascontiguousarray(x_len, dtype=np.float32), np.ascontiguousarray(y_len, dtype=np.float32),
                length_weight, out)
    return out


@numba.njit(cache=True)
def _programme(lo, hi, offsets, types, costs, null_cost, moves):  # pragma: no cover - compiled
    total = np.full(offsets[-1], np.inf)
    total[0] = 0.0
    n_types = types.shape[0]
    for i in range(lo.shape[0]):
        for j in range(lo[i], hi[i]):
            cell = offsets[i] + j - lo[i]
            best, move = total[cell], NO_MOVE
            if j > lo[i] and total[cell - 1] + null_cost < best:  # 0-1: a target line alone
                best, move = total[cell - 1] + null_cost, n_types + 1
            if i > 0 and lo[i - 1] <= j < hi[i - 1]:  # 1-0: a source line alone
                value = total[offsets[i - 1] + j - lo[i - 1]] + null_cost
                if value < best:
                    best, move = value, n_types
            for t in range(n_types):
                a, b = types[t, 0], types[t, 1]
                if i < a or j < b or not lo[i - a] <= j - b < hi[i - a]:
                    continue
                value = total[offsets[i - a] + j - b - lo[i - a]] + costs[t, cell]
                if value < best:
                    best, move = value, t
            total[cell] = best
            moves[cell] = move


@numba.njit(cache=True)
def _read_back(lo, hi, offsets, types, moves):  # pragma: no cover - compiled
    i, j = lo.shape[0] - 1, hi[-1] - 1
    steps = np.empty((i + j + 1, 3), dtype=np.int64)  # (move, end row, end column), last bead first
    k = 0
    n_types = types.shape[0]
    while i > 0 or j > 0:
        move = moves[offsets[i] + j - lo[i]]
        if move == NO_MOVE:
            return steps[:0]
        steps[k, 0], steps[k, 1], steps[k, 2] = move, i, j
        k += 1
        if move < n_types:
            i, j = i - types[move, 0], j - types[move, 1]
        elif move == n_types:
            i -= 1
        else:
            j -= 1
    return steps[:k][::-1]


def best_beads(band: Band, types: np.ndarray, costs: np.ndarray, null_cost: float
               ) -> list[tuple[tuple[int, int], tuple[int, int], float]]:
    """The cheapest path from ``(0, 0)`` to the band's last cell, as beads ``((src start, src stop), (tgt start,
    tgt stop), cost)`` in document order."""
    types = np.ascontiguousarray(types, dtype=np.int64)
    moves = np.full(band.cells, NO_MOVE, dtype=np.int8)
    _programme(band.lo, band.hi, band.offsets, types, costs, null_cost, moves)
    steps = _read_back(band.lo, band.hi, band.offsets, types, moves)
    if len(steps) == 0 and band.cells > 1:
        raise RuntimeError(f"the band does not connect (0, 0) to ({band.rows - 1}, {int(band.hi[-1]) - 1})")
    sizes = np.vstack([types, [[1, 0], [0, 1]]])[steps[:, 0]]
    cells = band.offsets[steps[:, 1]] + steps[:, 2] - band.lo[steps[:, 1]]
    move_costs = np.where(steps[:, 0] < len(types), costs[np.minimum(steps[:, 0], len(types) - 1), cells], null_cost)
    return [((i - a, i), (j - b, j), c)
            for (_, i, j), (a, b), c in zip(steps.tolist(), sizes.tolist(), move_costs.tolist(), strict=True)]
