"""The input vectors a mapping method maps (``inputs`` in the config).

``encoder``: the backbone's own sentence vectors (any Encoder); ``average`` / ``tfidf``: (TF-IDF weighted)
averages of the backbone's static subword vectors, xlsent's stand-in for the paper's fastText word vectors
(:mod:`xlsent.encoders.static_average`; the idf is fitted on the training sentences and stored in the model
directory).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import cached_encode
from xlsent.encoders.static_average import StaticAverageEncoder, fit_idf
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.methods.mapping.data import PairData


def input_encoder(backbone: Encoder, inputs: str, idf: np.ndarray | None = None) -> Encoder:
    """The input representation ``inputs`` over ``backbone`` (``tfidf`` needs the ``idf`` table)."""
    if inputs == "encoder":
        return backbone
    if not isinstance(backbone, TransformerEncoder):
        raise ValueError(f"inputs {inputs!r} average a transformer's subword vectors; {backbone.name} is not one")
    if inputs == "tfidf" and idf is None:
        raise ValueError("tfidf inputs need an idf table")
    return StaticAverageEncoder(backbone, idf if inputs == "tfidf" else None)


def fit_input_encoder(backbone: Encoder, inputs: str, data: Sequence[PairData]) -> tuple[Encoder, np.ndarray | None]:
    """The input encoder for training on ``data``; for ``tfidf`` the idf is fitted on all its sentences."""
    if inputs != "tfidf":
        return input_encoder(backbone, inputs), None
    plain = input_encoder(backbone, "average")
    assert isinstance(plain, StaticAverageEncoder)
    sentences = [s for d in data for s in (*d.bitext.src, *d.bitext.tgt)]
    idf = fit_idf(plain.token_ids(sentences), plain.vectors.shape[0])
    return input_encoder(backbone, inputs, idf), idf


@dataclass(frozen=True)
class PairVectors:
    """Input vectors of every row of a pair's bitext: ``x`` (source side) and ``y`` (target side)."""

    data: PairData
    x: np.ndarray
    y: np.ndarray


def pair_vectors(encoder: Encoder, data: Sequence[PairData], progress: bool = False) -> list[PairVectors]:
    """Input vectors of every pair's whole bitext, read from or written to the encoding cache."""
    return [PairVectors(d, cached_encode(encoder, d.bitext.src, d.bitext.src_lang, progress=progress),
                        cached_encode(encoder, d.bitext.tgt, d.bitext.tgt_lang, progress=progress)) for d in data]
