"""``/v1/similarity`` and ``/v1/align`` on vectors the engine made: a cosine matrix, and margin-scored pairs chosen
by the mining job in memory (:func:`xlsent.mining.job.mine_texts`), exactly as ``xlsent mine`` chooses them on the
same lines."""

from __future__ import annotations

import numpy as np

from xlsent.mining.job import MinedPair, mine_texts

__all__ = ["MinedPair", "align", "cosine_matrix"]

align = mine_texts


def cosine_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(len(x), len(y))`` cosines of unit rows."""
    return np.asarray(x, dtype=np.float32) @ np.asarray(y, dtype=np.float32).T
