"""The banded dynamic programme (numba): the cheapest path of beads from ``(0, 0)`` to ``(n, m)`` through a band,
given the cost of every bead type ending in every cell (:mod:`.costs`), read back as beads.

Cell ``(i, j)`` is "the first ``i`` source and ``j`` target lines aligned". A bead of ``a`` source and ``b`` target
lines ends in ``(i, j)`` and starts in ``(i - a, j - b)``. A null bead (1-0 or 0-1) costs ``null_cost``. A path
that cuts the source before line ``i`` (a bead with source lines ending in row ``i``) also pays ``cuts[0][i]``, one
that cuts the target before line ``j`` ``cuts[1][j]`` (:mod:`.brackets`). The programme runs row after row over the
band's cells only.

>>> from xlsent.align.band import full_band
>>> from xlsent.align.costs import distance_costs
>>> x = np.eye(2, dtype=np.float32)[None]           # one overlap level, two source lines
>>> y = np.eye(2, dtype=np.float32)[None]
>>> ones = np.ones((1, 2), dtype=np.float32)
>>> valid = np.ones((1, 2), dtype=np.bool_)
>>> band = full_band(2, 2)
>>> types = np.array([[1, 1]], dtype=np.int64)
>>> costs = distance_costs(band, x, y, ones, ones, valid, valid, types, np.ones(1))
>>> beads = best_beads(band, types, costs, 0.5)
>>> [(s, t) for s, t, _ in beads]
[((0, 1), (0, 1)), ((1, 2), (1, 2))]
"""

from __future__ import annotations

import numba
import numpy as np

from xlsent.align.band import Band

NO_MOVE = -1


@numba.njit(cache=True)
def _programme(lo, hi, offsets, types, costs, null_cost, cut_x, cut_y, moves):  # pragma: no cover - compiled
    total = np.full(offsets[-1], np.inf)
    total[0] = 0.0
    n_types = types.shape[0]
    for i in range(lo.shape[0]):
        for j in range(lo[i], hi[i]):
            cell = offsets[i] + j - lo[i]
            best, move = total[cell], NO_MOVE
            if j > lo[i] and total[cell - 1] + null_cost + cut_y[j] < best:  # 0-1: a target line alone
                best, move = total[cell - 1] + null_cost + cut_y[j], n_types + 1
            if i > 0 and lo[i - 1] <= j < hi[i - 1]:  # 1-0: a source line alone
                value = total[offsets[i - 1] + j - lo[i - 1]] + null_cost + cut_x[i]
                if value < best:
                    best, move = value, n_types
            for t in range(n_types):
                a, b = types[t, 0], types[t, 1]
                if i < a or j < b or not lo[i - a] <= j - b < hi[i - a]:
                    continue
                value = total[offsets[i - a] + j - b - lo[i - a]] + costs[t, cell] + cut_x[i] + cut_y[j]
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


Found = list[tuple[tuple[int, int], tuple[int, int], float]]
"""Beads as :func:`best_beads` gives them: ``((src start, src stop), (tgt start, tgt stop), cost)`` over the rows
and columns of the grid."""


def best_beads(band: Band, types: np.ndarray, costs: np.ndarray, null_cost: float,
               cuts: tuple[np.ndarray, np.ndarray] | None = None) -> Found:
    """The cheapest path from ``(0, 0)`` to the band's last cell, as beads ``((src start, src stop), (tgt start,
    tgt stop), cost)`` in document order; ``cuts``: what cutting the source before each row ``0..n`` and the target
    before each column ``0..m`` costs (none: cuts are free), included in the cost of the bead ending there."""
    types = np.ascontiguousarray(types, dtype=np.int64)
    moves = np.full(band.cells, NO_MOVE, dtype=np.int8)
    cut_x, cut_y = cuts if cuts is not None else (np.zeros(band.rows), np.zeros(int(band.hi[-1])))
    cut_x, cut_y = np.ascontiguousarray(cut_x, dtype=np.float64), np.ascontiguousarray(cut_y, dtype=np.float64)
    if cut_x.shape != (band.rows,) or cut_y.shape != (int(band.hi[-1]),):
        raise ValueError(f"cuts of {cut_x.shape} and {cut_y.shape} for a grid of {band.rows} x {int(band.hi[-1])} "
                         "nodes: one cost per row and per column")
    _programme(band.lo, band.hi, band.offsets, types, costs, null_cost, cut_x, cut_y, moves)
    steps = _read_back(band.lo, band.hi, band.offsets, types, moves)
    if len(steps) == 0 and band.cells > 1:
        raise RuntimeError(f"the band does not connect (0, 0) to ({band.rows - 1}, {int(band.hi[-1]) - 1})")
    sizes = np.vstack([types, [[1, 0], [0, 1]]])[steps[:, 0]]
    cells = band.offsets[steps[:, 1]] + steps[:, 2] - band.lo[steps[:, 1]]
    move_costs = np.where(steps[:, 0] < len(types), costs[np.minimum(steps[:, 0], len(types) - 1), cells], null_cost)
    move_costs += np.where(sizes[:, 0] > 0, cut_x[steps[:, 1]], 0.0)
    move_costs += np.where(sizes[:, 1] > 0, cut_y[steps[:, 2]], 0.0)
    return [((i - a, i), (j - b, j), c)
            for (_, i, j), (a, b), c in zip(steps.tolist(), sizes.tolist(), move_costs.tolist(), strict=True)]
