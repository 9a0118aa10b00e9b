"""Linear maps between sentence-embedding spaces: the classic baselines of ABSent (paper 003), as the method
``linear-map``.

The four baselines of ABSent's Tables 1 and 5, each a map W fitted on parallel rows (x_i W ~ y_i) plus a
retrieval rule (:data:`~xlsent.methods.mapping.config.METHODS`):

- ``lsq``: least squares ``min_W ||X W - Y||^2`` (+ ridge), nearest neighbour (Mikolov, Le & Sutskever 2013);
- ``lsq-gc``: the same map, retrieval by globally corrected ranks (Dinu, Lazaridou & Baroni 2014);
- ``procrustes-isf``: orthogonal Procrustes ``W = U V^T`` from ``X^T Y = U S V^T``, retrieval by the inverted
  softmax (Smith et al. 2017);
- ``procrustes-csls``: orthogonal Procrustes, retrieval by CSLS (supervised MUSE, Lample et al. 2018);
- ``procrustes``: orthogonal Procrustes with nearest neighbour.

An encoder maps only: the retrieval rule is recorded in the model directory and applied by the ABSent study;
other consumers (``xlsent mine``, ``xlsent eval``) use their own scoring on the mapped vectors. Data, inputs,
the model directory and the language routing are those of every mapping method (:mod:`xlsent.methods.mapping`).

>>> import numpy as np
>>> rot = np.array([[0.0, -1.0], [1.0, 0.0]])
>>> x = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
>>> np.allclose(fit_procrustes(x, x @ rot), rot), np.allclose(fit_least_squares(x, 3 * x), 3 * np.eye(2))
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlsent.encoders.base import Encoder, l2_normalize
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.retrieval_pk import RULES, ScoreRule
from xlsent.methods.mapping.config import DEFAULTS, METHODS, NAME, LinearMapConfig
from xlsent.methods.mapping.data import PairData, toy_pair_data, toy_sets
from xlsent.methods.mapping.encoder import MappedEncoder
from xlsent.methods.mapping.inputs import PairVectors
from xlsent.methods.mapping.training import FittedMapping, mapping_train, train_mapping_on
from xlsent.training.method import Method

ISF_BETAS = (1.0, 3.0, 10.0, 30.0, 100.0)
ISF_FIT_ROWS = 2000
MAP_FILE = "map.safetensors"

# --- maps and retrieval rules ----------------------------------------------------------------------------------


def fit_least_squares(x: np.ndarray, y: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """``W`` (d_x, d_y) minimising ``||x W - y||^2 + ridge ||W||^2`` (Mikolov et al. 2013; ridge: Dinu et al.)."""
    x64, y64 = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if ridge > 0:
        gram = x64.T @ x64 + ridge * np.eye(x64.shape[1])
        return np.linalg.solve(gram, x64.T @ y64).astype(np.float32)
    return np.linalg.lstsq(x64, y64, rcond=None)[0].astype(np.float32)


def fit_procrustes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The orthogonal ``W`` minimising ``||x W - y||_F``: ``U V^T`` where ``x^T y = U S V^T`` (Schoenemann 1966;
    Xing et al. 2015, Smith et al. 2017, Lample et al. 2018)."""
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"Procrustes needs spaces of one dimension, got {x.shape[1]} and {y.shape[1]}")
    u, _, vt = np.linalg.svd(np.asarray(x, dtype=np.float64).T @ np.asarray(y, dtype=np.float64))
    return (u @ vt).astype(np.float32)


def globally_corrected(cos: np.ndarray) -> np.ndarray:
    """Dinu et al. (2014)'s globally corrected retrieval: target j ranks the queries by cosine, and query i takes
    the target where it ranks best; ties are broken by cosine. Scores: ``-rank + cos / 4`` (rank 0 = best, the
    cosine term never crosses a rank). The pool of queries is the rows of ``cos`` (the test queries).

    >>> globally_corrected(np.array([[0.9, 0.8], [0.95, 0.1]])).argmax(axis=1).tolist()
    [1, 0]
    """
    ranks = np.argsort(np.argsort(-cos, axis=0, kind="stable"), axis=0, kind="stable")
    return -ranks.astype(np.float32) + cos / 4


def inverted_softmax(cos: np.ndarray, beta: float) -> np.ndarray:
    """Smith et al. (2017)'s inverted softmax, as log-probabilities: ``log P(y_j | x_i)`` with
    ``P(y_j | x_i) = exp(beta cos_ij) / sum_m exp(beta cos_mj)``, normalised over the queries m for each target.

    >>> inverted_softmax(np.array([[0.9, 0.8], [0.95, 0.1]]), beta=10.0).argmax(axis=1).tolist()
    [1, 0]
    """
    z = beta * np.asarray(cos, dtype=np.float64)
    top = z.max(axis=0, keepdims=True)
    return z - (top + np.log(np.exp(z - top).sum(axis=0, keepdims=True)))


def fit_isf_beta(cos: np.ndarray, betas: Sequence[float] = ISF_BETAS) -> float:
    """The inverse temperature maximising the mean ``log P(y_i | x_i)`` of training pairs (row i pairs with
    column i), as Smith et al. (2017) learn beta on their training dictionary."""
    return max(betas, key=lambda b: float(np.mean(np.diagonal(inverted_softmax(cos, b)))))


def retrieval_rule(name: str, beta: float = 10.0) -> ScoreRule:
    """The scoring rule ``nn``, ``csls``, ``gc`` or ``isf`` (with ``beta``) over a cosine matrix."""
    if name in RULES:
        return RULES[name]
    if name == "gc":
        return globally_corrected
    if name == "isf":
        return lambda cos: inverted_softmax(cos, beta)
    raise ValueError(f"unknown retrieval rule {name!r}: nn, csls, gc or isf")


def fit_linear(method: str, x: np.ndarray, y: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """The map of ``method`` (a :data:`METHODS` key) fitted on row-aligned parallel vectors."""
    if method not in METHODS:
        raise ValueError(f"unknown linear method {method!r}; methods: {', '.join(METHODS)}")
    return fit_least_squares(x, y, ridge) if method.startswith("lsq") else fit_procrustes(x, y)


# --- the linear-map method -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinearFit:
    """One map per source language (``x W`` lies in the target space) and the inverted-softmax beta."""

    maps: dict[str, np.ndarray]
    beta: float


def fit_maps(config: LinearMapConfig, vectors: Sequence[PairVectors]) -> LinearFit:
    """Fit the configured map on the labelled rows of every pair (beta on up to 2000 of them for ``isf``)."""
    maps: dict[str, np.ndarray] = {}
    betas = []
    for pv in vectors:
        rows = pv.data.labelled
        w = fit_linear(config.method, pv.x[rows], pv.y[rows], config.ridge)
        maps[pv.data.bitext.src_lang] = w
        if METHODS[config.method][1] == "isf":
            sample = rows[:ISF_FIT_ROWS]
            betas.append(fit_isf_beta(l2_normalize(pv.x[sample] @ w) @ l2_normalize(pv.y[sample]).T))
    return LinearFit(maps, float(np.median(betas)) if betas else ISF_BETAS[2])


def train_on(config: LinearMapConfig, data: Sequence[PairData], backbone: Encoder, out_dir: str | Path, *,
             resume: bool = False, progress: bool = True) -> Path:
    """Embed the training data (cached), fit the maps, write the model directory."""

    def fit(vectors: Sequence[PairVectors], out: Path, meta: dict[str, Any]) -> FittedMapping:
        fitted = fit_maps(config, vectors)
        what, rule = METHODS[config.method]
        return FittedMapping({f"map.{src}": torch.from_numpy(w) for src, w in fitted.maps.items()}, MAP_FILE,
                             {"method": config.method, "description": what, "retrieval": rule,
                              "isf_beta": fitted.beta, "formula": "normalize(x @ map.<source language>)"})

    return train_mapping_on(NAME, config, data, backbone, out_dir, fit, resume=resume, progress=progress)


train = mapping_train(LinearMapConfig, train_on)


class LinearMapEncoder(MappedEncoder):
    """Encoder of a ``linear-map`` directory: ``normalize(x @ W_source)`` for source languages.

    >>> enc = LinearMapEncoder("models/procrustes-de-en")                   # doctest: +SKIP
    >>> enc.encode(["Der Hund bellt."], "de").shape, enc.retrieval_rule     # doctest: +SKIP
    ((1, 384), 'csls')
    """

    config_class = LinearMapConfig
    model_type = NAME

    def __init__(self, model_dir: str | Path, *, backbone: Encoder | None = None, verify: str = "cached") -> None:
        super().__init__(model_dir, backbone=backbone, verify=verify)
        state = self._load(MAP_FILE)
        self.maps = {src: state[f"map.{src}"].numpy() for src in self.sources}
        mapping = self.manifest["mapping"]
        self.retrieval_rule: str = mapping["retrieval"]
        self.isf_beta: float = float(mapping["isf_beta"])

    def map_source(self, vectors: np.ndarray, source: str) -> np.ndarray:
        out: np.ndarray = vectors @ self.maps[source]
        return out

    def rule(self) -> ScoreRule:
        """The method's retrieval rule over a cosine matrix (:func:`retrieval_rule`)."""
        return retrieval_rule(self.retrieval_rule, self.isf_beta)



def smallest_model(out: Path, backbone: TransformerEncoder) -> Path:
    """The smallest linear map: Procrustes over tf-idf vectors of the toy pairs."""
    cfg = METHOD.config(sets=[*toy_sets(backbone.model_dir), "method=procrustes"])
    return train_on(cfg, [toy_pair_data()], backbone, out, progress=False)  # type: ignore[arg-type]

METHOD = Method(
    name=NAME,
    summary="linear maps between embedding spaces (least squares, Procrustes; ABSent paper 003's baselines)",
    config_class=LinearMapConfig,
    defaults=DEFAULTS,
    train=train,
    encoder=LinearMapEncoder,
    smallest=smallest_model,
)
