"""The normalisers of a bead's distance (:class:`~.config.Norm`): for each span, a typical distance to the other
document, so that a cost says how much closer the bead's two sides are than their surroundings.

``neighbours``: one minus the mean cosine of the span to its ``k`` most similar lines of the other document among
``window`` lines either side of where the band expects its counterpart (the mining margin's neighbourhood, made
local). ``random``: the mean distance to random lines of the other document (Vecalign). ``none``: one.
"""

from __future__ import annotations

import numba
import numpy as np

from xlsent.align.config import AlignConfig, Norm


@numba.njit(parallel=True, cache=True, fastmath=True)
def _neighbour_distance(x, ok, other, starts, stops, k, out):  # pragma: no cover - compiled
    dim = x.shape[2]
    for s in numba.prange(x.shape[1]):
        width = stops[s] - starts[s]
        sims = np.empty(width, dtype=np.float32)
        for a in range(x.shape[0]):
            out[a, s] = 1.0
            if not ok[a, s] or width == 0:
                continue
            for c in range(width):
                dot = np.float32(0.0)
                for d in range(dim):
                    dot += x[a, s, d] * other[starts[s] + c, d]
                sims[c] = dot
            top = np.sort(sims)[max(width - k, 0):]
            out[a, s] = 1.0 - top.mean()


def neighbour_distance(x: np.ndarray, ok: np.ndarray, other: np.ndarray, centre: np.ndarray, cfg: AlignConfig
                       ) -> np.ndarray:
    """``(overlaps, n)``: one minus the mean cosine of each span of ``x`` to its ``cfg.neighbours`` most similar
    lines of ``other`` (single-line embeddings) within ``cfg.window`` lines of ``centre[s]``, the column where the
    band expects the counterpart of the span starting at line ``s``."""
    m = len(other)
    starts = np.clip(centre[:x.shape[1]] - cfg.window, 0, m).astype(np.int64)
    stops = np.clip(centre[:x.shape[1]] + cfg.window + 1, 0, m).astype(np.int64)
    out = np.empty(ok.shape, dtype=np.float32)
    _neighbour_distance(np.ascontiguousarray(x, dtype=np.float32), np.ascontiguousarray(ok),
                        np.ascontiguousarray(other, dtype=np.float32), starts, stops, cfg.neighbours, out)
    return np.maximum(out, 1e-3)


def random_distance(x: np.ndarray, other: np.ndarray, cfg: AlignConfig) -> np.ndarray:
    """``(overlaps, n)``: the mean distance ``1 - cos`` of each span of ``x`` to ``cfg.samples`` random lines of
    ``other`` (the same lines for every span; seeded)."""
    rng = np.random.default_rng(cfg.seed)
    sample = other[rng.choice(len(other), size=min(cfg.samples, len(other)), replace=False)]
    flat = x.reshape(-1, x.shape[-1]) @ sample.mean(axis=0)  # the mean cosine is the cosine with the mean vector
    return np.maximum(1.0 - flat.reshape(x.shape[:-1]), 1e-3).astype(np.float32)


def normalisers(x: np.ndarray, x_ok: np.ndarray, y: np.ndarray, y_ok: np.ndarray,
                centres: tuple[np.ndarray, np.ndarray], cfg: AlignConfig, norm: Norm | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """The normalisers of both sides' spans under ``norm`` (default ``cfg.norm``); ``centres`` as
    :meth:`~.band.Band.centres` gives them."""
    norm = cfg.norm if norm is None else norm
    if norm is Norm.NONE:
        return np.ones(x_ok.shape, dtype=np.float32), np.ones(y_ok.shape, dtype=np.float32)
    if norm is Norm.RANDOM:
        return random_distance(x, y[0], cfg), random_distance(y, x[0], cfg)
    return (neighbour_distance(x, x_ok, y[0], centres[0], cfg), neighbour_distance(y, y_ok, x[0], centres[1], cfg))
