"""The band of cells a dynamic programme visits: for each row ``i`` (source lines consumed, ``0..n``) the columns
``lo[i] <= j < hi[i]`` (target lines consumed), both non-decreasing, stored row after row from ``offsets[i]``.

A band around a path holds ``O((n + m) * width)`` cells, so memory grows with the documents' length, not with the
product of their lengths.

>>> b = band_around(np.arange(5), np.arange(5), 4, width=1)  # around the diagonal of a 5 x 5 grid
>>> b.lo.tolist(), b.hi.tolist(), b.cells
([0, 0, 0, 1, 2], [3, 4, 5, 5, 5], 19)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Band:
    """Rows ``0..n``; row ``i`` holds columns ``lo[i]..hi[i]-1`` at ``offsets[i]..offsets[i+1]-1``."""

    lo: np.ndarray
    hi: np.ndarray
    offsets: np.ndarray

    @classmethod
    def of(cls, lo: np.ndarray, hi: np.ndarray) -> Band:
        lo, hi = np.ascontiguousarray(lo, dtype=np.int64), np.ascontiguousarray(hi, dtype=np.int64)
        offsets = np.zeros(len(lo) + 1, dtype=np.int64)
        np.cumsum(hi - lo, out=offsets[1:])
        return cls(lo, hi, offsets)

    @property
    def rows(self) -> int:
        return len(self.lo)

    @property
    def cells(self) -> int:
        return int(self.offsets[-1])

    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        """The middle column of each row, and the middle row of each column ``0..m``: where the band expects a
        line's counterpart."""
        rows = np.arange(self.rows)
        row_centre = (self.lo + self.hi - 1) // 2
        cols = np.arange(int(self.hi[-1]))
        first = np.searchsorted(self.hi, cols, side="right")  # the first row whose band reaches past column j
        last = np.searchsorted(self.lo, cols, side="right") - 1  # the last row whose band starts at or before j
        return row_centre, (rows[np.minimum(first, self.rows - 1)] + last) // 2


def full_band(n: int, m: int) -> Band:
    """Every cell of an ``(n + 1) x (m + 1)`` grid."""
    return Band.of(np.zeros(n + 1, dtype=np.int64), np.full(n + 1, m + 1, dtype=np.int64))


def path_extent(rows: np.ndarray, cols: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first and last column of a monotone path (nodes ``(rows[k], cols[k])``, from ``(0, 0)`` to ``(n, m)``) on
    each row ``0..n``.

    >>> [a.tolist() for a in path_extent(np.array([0, 1, 1, 2]), np.array([0, 0, 1, 2]), 2)]
    [[0, 0, 2], [0, 1, 2]]
    """
    first = np.full(n + 1, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(n + 1, -1, dtype=np.int64)
    np.minimum.at(first, rows, cols)
    np.maximum.at(last, rows, cols)
    return first, last


def band_around(first: np.ndarray, last: np.ndarray, m: int, width: int) -> Band:
    """The cells within ``width`` rows and columns of a path whose row ``i`` runs from column ``first[i]`` to
    ``last[i]`` (both non-decreasing), clipped to the grid."""
    n = len(first) - 1
    idx = np.arange(n + 1)
    lo = np.maximum(first[np.maximum(idx - width, 0)] - width, 0)
    hi = np.minimum(last[np.minimum(idx + width, n)] + width, m) + 1
    lo[0], hi[-1] = 0, m + 1
    return Band.of(lo, hi)


def project(first: np.ndarray, last: np.ndarray, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """A path's extent on halved documents (``first``/``last`` per coarse row) carried to the full documents of
    ``n`` and ``m`` lines: coarse cell ``(I, J)`` covers rows ``2I-1..2I`` and columns ``2J-1..2J``.

    >>> [a.tolist() for a in project(np.array([0, 1]), np.array([0, 1]), 2, 2)]
    [[0, 0, 1], [0, 2, 2]]
    """
    idx = np.arange(n + 1)
    fine_first = np.minimum(2 * first[idx // 2] - 1, m)
    fine_last = np.minimum(2 * last[(idx + 1) // 2], m)
    return np.maximum(fine_first, 0), fine_last
