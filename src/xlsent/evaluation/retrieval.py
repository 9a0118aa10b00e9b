"""Pure similarity-search metrics over two row-aligned embedding matrices (Tatoeba protocol)."""

from __future__ import annotations

import numpy as np


def knn_mean(sims: np.ndarray, k: int) -> np.ndarray:
    """Mean of each row's ``k`` largest values (``k`` clipped to the row length)."""
    k = min(k, sims.shape[1])
    return np.mean(-np.partition(-sims, k - 1, axis=1)[:, :k], axis=1)


def ratio_margin(sims: np.ndarray, k: int = 4) -> np.ndarray:
    """Ratio-margin scores of Artetxe & Schwenk (2019): cos(x, y) / mean of both sides' k-NN cosines."""
    fwd = knn_mean(sims, k)
    bwd = knn_mean(sims.T, k)
    return sims / ((fwd[:, None] + bwd[None, :]) / 2)


def retrieval_accuracy(src: np.ndarray, tgt: np.ndarray, *, margin_k: int | None = None) -> tuple[float, float]:
    """Accuracy (%) of nearest-neighbour search src->tgt and tgt->src, where row i of both is a pair.

    Cosine similarity on L2-normalised rows; with ``margin_k`` the ratio margin with that k is used.

    >>> eye = np.eye(3, dtype=np.float32)
    >>> retrieval_accuracy(eye, eye)
    (100.0, 100.0)
    >>> retrieval_accuracy(eye, eye[[1, 0, 2]])
    (33.33333333333333, 33.33333333333333)
    """
    if src.shape != tgt.shape:
        raise ValueError(f"src {src.shape} and tgt {tgt.shape} must have the same shape (row i is a pair)")
    sims = np.asarray(src, dtype=np.float32) @ np.asarray(tgt, dtype=np.float32).T
    if margin_k is not None:
        sims = ratio_margin(sims, margin_k)
    gold = np.arange(len(src))
    fwd = float(np.mean(sims.argmax(axis=1) == gold)) * 100
    bwd = float(np.mean(sims.argmax(axis=0) == gold)) * 100
    return fwd, bwd
