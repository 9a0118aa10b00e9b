"""What a bead costs (numba): the cost of every bead type ending in every cell of a band, in parallel over rows.

A bead of ``a`` source and ``b`` target lines ending in cell ``(i, j)`` pairs the source span ``i-a..i-1`` with the
target span ``j-b..j-1``; ``cos`` is the cosine of their embeddings (:mod:`.overlaps`). Two costs
(:class:`~.config.Cost`):

- ``margin`` (Bertalign's modified cosine, the shipped one): minus ``(cos - (nx + ny) / 2) * log2(1 + short /
  long) ** length_weight``, where ``ny`` is the mean cosine of the source span with the target lines just before
  and just after the target span, ``nx`` the same for the target span (where a span covers its whole document, the
  other side's mean stands for both: no bead gains from having no neighbours), and ``short / long`` the ratio of
  the two sides' lengths in characters. A bead is cheap when its sides are closer to each other than to the lines around
  them, so a bead that leaves out a line belonging to it, or takes in one of its neighbour's, costs more. The
  difference is unchanged by a shift of every cosine (an encoder whose unrelated sentences sit at 0.7 scores as
  one whose sit at 0); null beads cost 0 by default: a line is paired only when its bead beats its surroundings.
  A bead that covers both documents whole has no line around it: it takes the mean of the other beads'
  neighbour terms (:func:`surroundings`), so that two short documents are not one bead because an encoder's
  unrelated sentences sit at 0.7.
- ``distance`` (Vecalign's): ``(1 - cos) / ((dx + dy) / 2) * size`` with ``dx``, ``dy`` the spans' normalisers
  (:mod:`.normalise`) and ``size`` the bead's size weight, plus ``length_weight`` times the absolute log ratio of
  the two lengths (Gale & Church's idea).

Both costs then take off, for each kind of anchor (numbers, :mod:`.numbers`; shared words, :mod:`.words`), its
weight (``number_weight``, ``word_weight``) times the bead's agreement on them: ``(shared - unshared) / all`` over
the distinct anchors of its two sides, from -1 (none shared) to 1 (the same ones), 0 where neither side has one.

>>> from xlsent.align.band import full_band
>>> x = np.eye(2, dtype=np.float32)[None]; y = x.copy()
>>> valid = np.ones((1, 2), dtype=np.bool_)
>>> lengths = np.full((1, 2), 10.0, dtype=np.float32)
>>> costs = margin_costs(full_band(2, 2), x, y, valid, valid, np.array([[1, 1]]), (lengths, lengths), 1.0)
>>> costs[0, 4].item()   # the bead of lines 0 and 0 (cell (1, 1)): cos 1, neighbours 0, equal lengths
-1.0
"""

from __future__ import annotations

import numba
import numpy as np

from xlsent.align.anchors import Anchors
from xlsent.align.band import Band

LENGTH_SMOOTHING = 10.0
"""Characters added to both lengths of a bead before the ``distance`` cost's log ratio, so short lines do not
dominate."""


@numba.njit(cache=True, fastmath=True)
def _cos(u, v):  # pragma: no cover - compiled
    dot = np.float32(0.0)
    for k in range(u.shape[0]):
        dot += u[k] * v[k]
    return dot


@numba.njit(cache=True, fastmath=True)
def _around(span, lines, before, after):  # pragma: no cover - compiled
    """Sum of the cosines of ``span`` with ``lines[before]`` and ``lines[after]``, those that exist, and their
    number."""
    total, count = np.float32(0.0), 0
    if before >= 0:
        total += _cos(span, lines[before])
        count += 1
    if after < lines.shape[0]:
        total += _cos(span, lines[after])
        count += 1
    return total, count


@numba.njit(cache=True, fastmath=True)
def _neighbours(src, tgt, x0, y0, src_before, src_after, tgt_before, tgt_after, isolated):  # pragma: no cover
    """``(nx + ny) / 2``: the mean cosine of each side with the lines around the other side; a side whose other
    side spans its whole document (no line around it) takes the other side's mean (``isolated`` where neither has
    one)."""
    ty, cy = _around(src, y0, tgt_before, tgt_after)
    tx, cx = _around(tgt, x0, src_before, src_after)
    if cy and cx:
        return (ty / cy + tx / cx) / 2
    if cy:
        return ty / cy
    if cx:
        return tx / cx
    return isolated


@numba.njit(cache=True)
def _first(ids, start, p):  # pragma: no cover - compiled
    """Whether ``ids[p]`` is the first of its value from ``start`` on."""
    for q in range(start, p):  # noqa: SIM110 - a loop numba compiles
        if ids[q] == ids[p]:
            return False
    return True


@numba.njit(cache=True)
def _agreement(x_ids, x0, x1, y_ids, y0, y1):  # pragma: no cover - compiled
    """``(shared - unshared) / all`` distinct ids of ``x_ids[x0:x1]`` and ``y_ids[y0:y1]``; 0 where there is none."""
    nx, ny, shared = 0, 0, 0
    for p in range(x0, x1):
        if _first(x_ids, x0, p):
            nx += 1
            for q in range(y0, y1):
                if y_ids[q] == x_ids[p]:
                    shared += 1
                    break
    for q in range(y0, y1):
        if _first(y_ids, y0, q):
            ny += 1
    union = nx + ny - shared
    return np.float32(0.0) if union == 0 else np.float32((2 * shared - union) / union)


@numba.njit(parallel=True, cache=True, fastmath=True)
def _bead_costs(lo, hi, offsets, x, y, dx, dy, x_ok, y_ok, types, weights, x_len, y_len, length_weight, margin,
                isolated, x_ids, x_starts, y_ids, y_starts, number_weight, wx_ids, wx_starts, wy_ids, wy_starts,
                word_weight, out):  # pragma: no cover - compiled
    for i in numba.prange(lo.shape[0]):
        for j in range(lo[i], hi[i]):
            cell = offsets[i] + j - lo[i]
            for t in range(types.shape[0]):
                a, b = types[t, 0], types[t, 1]
                out[t, cell] = np.inf
                if i < a or j < b or not x_ok[a - 1, i - a] or not y_ok[b - 1, j - b]:
                    continue
                src, tgt = x[a - 1, i - a], y[b - 1, j - b]
                ls, lt = x_len[a - 1, i - a], y_len[b - 1, j - b]
                if margin:
                    gap = _cos(src, tgt) - _neighbours(src, tgt, x[0], y[0], i - a - 1, i, j - b - 1, j, isolated)
                    out[t, cell] = -gap * np.log2(1.0 + min(ls, lt) / max(ls, lt, 1e-6)) ** length_weight
                else:
                    skew = abs(np.log((ls + LENGTH_SMOOTHING) / (lt + LENGTH_SMOOTHING)))
                    out[t, cell] = ((1.0 - _cos(src, tgt)) * 2.0 / (dx[a - 1, i - a] + dy[b - 1, j - b]) * weights[t]
                                    + length_weight * skew)
                if number_weight > 0:
                    out[t, cell] -= number_weight * _agreement(x_ids, x_starts[i - a], x_starts[i], y_ids,
                                                               y_starts[j - b], y_starts[j])
                if word_weight > 0:
                    out[t, cell] -= word_weight * _agreement(wx_ids, wx_starts[i - a], wx_starts[i], wy_ids,
                                                             wy_starts[j - b], wy_starts[j])


def _c(a: np.ndarray, dtype: type = np.float32) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)


def surroundings(x0: np.ndarray, y0: np.ndarray) -> float:
    """The neighbour term of a bead covering both documents (line embeddings ``x0``, ``y0``) whole: the mean, over
    every 1-1 bead that has lines around it, of its neighbour term as the cost kernel computes it (0 for two one-line
    documents: nothing to compare).

    >>> x0 = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    >>> round(surroundings(x0, x0.copy()), 3)   # around the right 1-1 beads: cosine 0.6, around the wrong ones: 1
    0.8
    """
    x0, y0 = _c(x0), _c(y0)
    terms = [_neighbours(x0[i], y0[j], x0, y0, i - 1, i + 1, j - 1, j + 1, np.float32(np.nan))
             for i in range(len(x0)) for j in range(len(y0))]
    around = [t for t in terms if not np.isnan(t)]  # a 1-1 bead with no line around it has no term
    return float(np.mean(around)) if around else 0.0


def _ids(anchors: Anchors) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The kernel's arguments of one kind of anchors: both sides' ids and line starts, and the weight."""
    return (_c(anchors.src.ids, np.int64), _c(anchors.src.starts, np.int64), _c(anchors.tgt.ids, np.int64),
            _c(anchors.tgt.starts, np.int64), float(anchors.weight))


def _costs(band: Band, x: np.ndarray, y: np.ndarray, dx: np.ndarray, dy: np.ndarray, x_ok: np.ndarray,
           y_ok: np.ndarray, types: np.ndarray, weights: np.ndarray, lengths: tuple[np.ndarray, np.ndarray],
           length_weight: float, margin: bool, numbers: Anchors | None, words: Anchors | None) -> np.ndarray:
    out = np.empty((len(types), band.cells), dtype=np.float32)
    none = Anchors.none(x.shape[1], y.shape[1])
    whole = margin and any(a == x.shape[1] and b == y.shape[1] for a, b in types)  # one bead can take both
    isolated = surroundings(x[0], y[0]) if whole else 0.0
    _bead_costs(band.lo, band.hi, band.offsets, _c(x), _c(y), _c(dx), _c(dy), _c(x_ok, np.bool_), _c(y_ok, np.bool_),
                _c(types, np.int64), _c(weights), _c(lengths[0]), _c(lengths[1]), float(length_weight), margin,
                np.float32(isolated), *_ids(numbers or none), *_ids(words or none), out)
    return out


def margin_costs(band: Band, x: np.ndarray, y: np.ndarray, x_ok: np.ndarray, y_ok: np.ndarray, types: np.ndarray,
                 lengths: tuple[np.ndarray, np.ndarray], length_weight: float = 1.0,
                 numbers: Anchors | None = None, words: Anchors | None = None) -> np.ndarray:
    """``(len(types), band.cells)`` float32: the ``margin`` cost of each bead type ending in each cell (inf where the
    bead does not fit or a span is not ``ok``). ``x``: ``(overlaps, n, dim)`` unit span embeddings (row ``s`` of
    level ``a - 1``: lines ``s..s+a-1``), ``x_ok`` which spans exist; ``y``, ``y_ok`` the same for the target side;
    ``lengths``: both sides' span lengths in characters, the target's scaled by the documents' length ratio;
    ``numbers``, ``words``: both sides' number and word anchors with the weight of a bead's agreement on each
    (:class:`~.anchors.Anchors`; none: that kind left out)."""
    no_norms = np.empty((0, 0), dtype=np.float32)  # the distance cost's normalisers and size weights: never read
    return _costs(band, x, y, no_norms, no_norms, x_ok, y_ok, types, np.empty(0), lengths, length_weight, True, numbers,
                  words)


def distance_costs(band: Band, x: np.ndarray, y: np.ndarray, dx: np.ndarray, dy: np.ndarray, x_ok: np.ndarray,
                   y_ok: np.ndarray, types: np.ndarray, weights: np.ndarray,
                   lengths: tuple[np.ndarray, np.ndarray] | None = None, length_weight: float = 0.0,
                   numbers: Anchors | None = None, words: Anchors | None = None) -> np.ndarray:
    """``(len(types), band.cells)`` float32: the ``distance`` cost of each bead type ending in each cell, arrays as
    :func:`margin_costs`; ``dx``, ``dy`` the spans' normalisers, ``weights`` what each type's normalised distance is
    multiplied by, ``length_weight`` the weight of the absolute log ratio of a bead's two lengths."""
    return _costs(band, x, y, dx, dy, x_ok, y_ok, types, weights,
                  lengths if lengths is not None else (np.zeros(x.shape[:2]), np.zeros(y.shape[:2])), length_weight,
                  False, numbers, words)
