"""Model selection without test data: criteria computed from the embeddings of held-out sentences.

Unsupervised, from two sets of sentences that need not be translations of each other: :func:`csls_mean_cosine`,
the validation criterion of Lample et al. (2018), *Word translation without parallel data*, section 3.5, with
sentences in place of words; :func:`mutual_nn_fraction` as a diagnostic. Supervised, from held-out translation
pairs: :func:`retrieval_criterion`. All take embedding matrices (rows need not be normalised; cosine is used) and
compare every row with every row, so they suit validation sets of up to some ten thousand sentences.
"""

from __future__ import annotations

import numpy as np

from xlsent.encoders.base import l2_normalize
from xlsent.evaluation.retrieval import knn_mean, retrieval_accuracy


def cosines(src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    """Cosine of every source row with every target row (the inputs are left as they are).

    >>> cosines(np.array([[2.0, 0.0]]), np.array([[0.0, 3.0], [-1.0, 0.0]])).tolist()
    [[0.0, -1.0]]
    """
    return l2_normalize(src) @ l2_normalize(tgt).T


def csls(cos: np.ndarray, k: int = 10) -> np.ndarray:
    """CSLS(x, y) = 2 cos(x, y) - r_T(x) - r_S(y) from the cosine matrix of source rows x and target rows y.

    r_T(x) is the mean cosine of x with its ``k`` nearest target rows and r_S(y) that of y with its ``k`` nearest
    source rows (Lample et al. 2018, section 2.3); ``k`` is clipped to the size of the set searched.

    >>> csls(np.eye(2), k=1).tolist()
    [[0.0, -2.0], [-2.0, 0.0]]
    """
    return 2 * cos - knn_mean(cos, k)[:, None] - knn_mean(cos.T, k)[None, :]


def csls_mean_cosine(src: np.ndarray, tgt: np.ndarray, k: int = 10) -> float:
    """Mean cosine between each source row and its CSLS-best target row: higher means better aligned spaces.

    Lample et al. (2018), section 3.5: translate every source item to its CSLS nearest neighbour and average the
    cosine of the pairs; it needs no translation pairs and tracks translation accuracy closely enough to choose
    between models and training steps.

    >>> round(csls_mean_cosine(np.eye(3), np.eye(3)[[2, 0, 1]]), 6)
    1.0
    """
    cos = cosines(src, tgt)
    best = csls(cos, k).argmax(axis=1)
    return float(np.mean(cos[np.arange(len(cos)), best]))


def mutual_nn_fraction(src: np.ndarray, tgt: np.ndarray) -> float:
    """Share of source rows whose cosine-nearest target row has them as its nearest source row.

    >>> mutual_nn_fraction(np.eye(2), np.array([[1.0, 0.0], [0.9, 0.1]]))
    0.5
    """
    cos = cosines(src, tgt)
    fwd, bwd = cos.argmax(axis=1), cos.argmax(axis=0)
    return float(np.mean(bwd[fwd] == np.arange(len(cos))))


def retrieval_criterion(src: np.ndarray, tgt: np.ndarray) -> float:
    """Mean of the src->tgt and tgt->src nearest-neighbour accuracy (%) on row-aligned held-out pairs.

    >>> round(retrieval_criterion(np.eye(3), np.eye(3)[[1, 0, 2]]), 2)
    33.33
    """
    fwd, bwd = retrieval_accuracy(l2_normalize(src), l2_normalize(tgt))
    return (fwd + bwd) / 2
