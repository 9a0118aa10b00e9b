"""Sentence vectors as (TF-IDF weighted) averages of static subword vectors (ABSent paper 003, Sect. 3.4).

ABSent embeds a sentence as the average of its fastText word vectors, or as their TF-IDF weighted sum,
normalised. No fastText vectors are available here, so xlsent's stand-in takes the *static* subword vectors
of a transformer backbone: the rows of its input embedding matrix (``word_embeddings``, before position
embeddings and any layer), looked up for the SentencePiece tokens of the sentence without prefix or special
tokens. For me5-small these are 250k XLM-R subword vectors of 384 dimensions, shared by all languages.

- plain: ``normalize(sum_t v_t)`` over the token occurrences t of the sentence (the direction of the average);
- TF-IDF: ``normalize(sum_t tf(t, s) idf(t) v_t)``, with ``idf(t) = ln((1 + N) / (1 + df(t))) + 1`` over a
  corpus of N sentences (:func:`fit_idf`, scikit-learn's smoothed idf), so a token absent from the corpus gets
  the largest weight ``ln(1 + N) + 1``.

The vector of a sentence does not depend on its language (``lang`` is accepted and ignored); a sentence
without tokens gets a zero row.

>>> import numpy as np
>>> idf = fit_idf([[5, 6], [5], [5, 7]], vocab_size=8)
>>> [round(float(v), 3) for v in idf[5:8]], round(float(idf[0]), 3)
([1.0, 1.693, 1.693], 2.386)
>>> enc = StaticAverageEncoder(backbone)                        # doctest: +SKIP
>>> enc.encode(["Der Hund bellt."]).shape                         # doctest: +SKIP
(1, 384)
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from xlsent.encoders.base import l2_normalize, sentence_list
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.inference import DEFAULT_BATCH_TOKENS

log = logging.getLogger(__name__)

INPUTS = ("encoder", "average", "tfidf")
"""Input representations of the mapping methods: the backbone's own sentence vectors, or plain / TF-IDF weighted
averages of its static subword vectors."""

CHUNK = 8192


def fit_idf(token_ids: Sequence[Sequence[int]], vocab_size: int) -> np.ndarray:
    """Smoothed inverse document frequency ``ln((1 + N) / (1 + df)) + 1`` per vocabulary id, float32.

    ``token_ids`` holds one token id list per document (sentence); ``df`` counts the documents containing an id.
    """
    df = np.zeros(vocab_size, dtype=np.float64)
    for ids in token_ids:
        if len(ids):
            df[np.unique(np.asarray(ids, dtype=np.int64))] += 1
    return (np.log((1 + len(token_ids)) / (1 + df)) + 1).astype(np.float32)


class StaticAverageEncoder:
    """(TF-IDF weighted) averages of a transformer backbone's input subword vectors; ``idf=None`` is plain.

    ``id`` joins the backbone id with the weighting (and a checksum of the idf table), so on-disk encoding
    caches of different weightings never mix.
    """

    def __init__(self, backbone: TransformerEncoder, idf: np.ndarray | None = None) -> None:
        self.backbone = backbone
        self.vectors = backbone.model.embeddings.word_embeddings.weight.detach()
        vocab = self.vectors.shape[0]
        if idf is not None and idf.shape != (vocab,):
            raise ValueError(f"idf must have one weight per vocabulary id ({vocab},), got {idf.shape}")
        self.idf = None if idf is None else torch.from_numpy(np.ascontiguousarray(idf, dtype=np.float32))
        self.dim: int = int(self.vectors.shape[1])
        kind = "average" if idf is None else "tfidf"
        self.name: str = f"{backbone.name}-static-{kind}"
        suffix = "" if idf is None else "-" + hashlib.sha256(np.ascontiguousarray(idf).tobytes()).hexdigest()[:12]
        self.id: str = f"{encoder_id(backbone)}+static-{kind}{suffix}"

    def token_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """SentencePiece ids of each sentence without its surrounding whitespace (as the backbone reads it): no
        prefix, no special tokens."""
        texts = [s.strip() for s in sentences]
        return [e.ids for e in self.backbone.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def encode(self, sentences: Sequence[str], lang: str | None = None, *, batch_tokens: int = DEFAULT_BATCH_TOKENS,
               progress: bool = False) -> np.ndarray:
        """``(len(sentences), dim)`` float32 unit rows; sentences without tokens give zero rows."""
        sentences = sentence_list(sentences)
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for start in range(0, len(sentences), CHUNK):
            ids = self.token_ids(sentences[start : start + CHUNK])
            flat = torch.tensor([i for seq in ids for i in seq], dtype=torch.long)
            offsets = torch.tensor(np.cumsum([0, *[len(seq) for seq in ids[:-1]]]), dtype=torch.long)
            weights = None if self.idf is None else self.idf[flat]
            with torch.inference_mode():
                sums = F.embedding_bag(flat, self.vectors, offsets, mode="sum", per_sample_weights=weights)
            out[start : start + len(ids)] = l2_normalize(sums.numpy())
        return out
