"""Hard negatives for translation ranking: each pair's nearest non-translation among its language's English sides,
found by xlsent's exact k-NN over the teacher's vectors (LaBSE, Feng et al. 2022, Sect. 3 mines them the same way
with its own model)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xlsent.mining.knn import bidirectional_knn

CANDIDATES = 8
"""Neighbours looked at per pair for one that is neither the pair's own English side nor a near-copy of it."""


def nearest_non_translations(vectors: np.ndarray, english: Sequence[str], max_cosine: float) -> np.ndarray:
    """For each row i, the row j of its nearest English side (cosine of unit ``vectors``) with another text and a
    cosine below ``max_cosine`` (closer ones are paraphrases: false negatives); -1 where none of the
    :data:`CANDIDATES` nearest qualifies.

    >>> v = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    >>> nearest_non_translations(v, ["a", "b", "c", "a"], 0.99).tolist()  # row 3 repeats row 0's text
    [1, 0, 1, 1]
    >>> nearest_non_translations(v, ["a", "b", "c", "d"], 0.5).tolist()  # row 1 has no neighbour below 0.5
    [2, -1, 0, 2]
    """
    n = len(english)
    out = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return out
    knn = bidirectional_knn(vectors, vectors, min(CANDIDATES, n))
    for i in range(n):
        for j, sim in zip(knn.fwd_idx[i], knn.fwd_sim[i], strict=True):
            if j != i and english[j] != english[i] and sim < max_cosine:
                out[i] = j
                break
    return out
