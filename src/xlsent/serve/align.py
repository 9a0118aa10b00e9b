"""``/v1/similarity`` and ``/v1/align`` on vectors the engine made: a cosine matrix, margin-scored pairs chosen
by the mining job in memory (:func:`xlsent.mining.job.mine_texts`), exactly as ``xlsent mine`` chooses them on the
same lines, and in document mode the beads of ``xlsent align`` (:mod:`xlsent.align`)."""

from __future__ import annotations

import numpy as np

from xlsent.data.sentence_split import Sentence, split_units
from xlsent.mining.job import MinedPair, mine_texts
from xlsent.serve.errors import ApiError
from xlsent.serve.schemas import MAX_SIDE, AlignRequest

__all__ = ["MinedPair", "align", "cosine_matrix", "document_sentences"]

align = mine_texts


def cosine_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(len(x), len(y))`` cosines of unit rows."""
    return np.asarray(x, dtype=np.float32) @ np.asarray(y, dtype=np.float32).T


def document_sentences(req: AlignRequest) -> tuple[list[Sentence], list[Sentence]]:
    """Document mode with ``split``: the sentences of src's and tgt's paragraphs (400 without both languages; 413
    for a side of more sentences than a side may have lines, :data:`~xlsent.serve.schemas.MAX_SIDE`)."""
    if req.src_lang is None or req.tgt_lang is None:
        raise ApiError(400, "split needs src_lang and tgt_lang: sentence ends depend on the language",
                       code="invalid_request", param="src_lang" if req.src_lang is None else "tgt_lang")
    sides = split_units(req.src, req.src_lang), split_units(req.tgt, req.tgt_lang)
    for param, sentences in zip(("src", "tgt"), sides, strict=True):
        if len(sentences) > MAX_SIDE:
            raise ApiError(413, f"{param} splits into {len(sentences)} sentences; at most {MAX_SIDE} a side, as for "
                           "lines: send the document in parts", code="too_many_inputs", param=param)
    return sides
