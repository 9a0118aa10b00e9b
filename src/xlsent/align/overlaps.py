"""Span embeddings: every run of ``1..overlaps`` consecutive lines of a document, embedded as one text.

A bead of ``a`` source and ``b`` target lines is scored with the embedding of its ``a`` source lines joined by
spaces against that of its ``b`` target lines (Vecalign's overlaps). A span never crosses an empty line (``ids``,
the document line ids of the lines kept, are consecutive along it), so empty lines stay out of every bead.

>>> span_ok(np.array([0, 1, 3]), 2).tolist()
[[True, True, True], [True, False, False]]
>>> span_texts(["a", "b", "c"], span_ok(np.array([0, 1, 3]), 2))
['a', 'b', 'c', 'a b']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Embed = Callable[[Sequence[str], str | None], np.ndarray]
"""``embed(texts, lang) -> (len(texts), dim)`` float32 unit rows."""


def span_ok(ids: np.ndarray, overlaps: int) -> np.ndarray:
    """``(overlaps, n)`` bool: whether the span of ``a`` lines starting at kept line ``s`` exists (row ``a - 1``)."""
    n = len(ids)
    ok = np.zeros((overlaps, n), dtype=np.bool_)
    for a in range(1, overlaps + 1):
        starts = np.arange(max(n - a + 1, 0))
        ok[a - 1, starts] = ids[starts + a - 1] - ids[starts] == a - 1
    return ok


def span_texts(lines: Sequence[str], ok: np.ndarray) -> list[str]:
    """The text of every span that ``ok`` allows, level after level, start after start."""
    return [" ".join(lines[s:s + a + 1]) for a in range(ok.shape[0]) for s in np.flatnonzero(ok[a]).tolist()]


def span_array(vectors: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``(overlaps, n, dim)`` float32: the rows of ``vectors`` (embeddings of :func:`span_texts`) in place, zeros
    where no span is."""
    out = np.zeros((*ok.shape, vectors.shape[1]), dtype=np.float32)
    out[ok] = vectors
    return out


def embed_spans(embed: Embed, docs: Sequence[Sequence[str]], oks: Sequence[np.ndarray], lang: str | None
                ) -> list[np.ndarray]:
    """The span arrays of several documents of one language, embedded in one call (the encoder batches them)."""
    texts = [span_texts(lines, ok) for lines, ok in zip(docs, oks, strict=True)]
    vectors = embed([t for doc in texts for t in doc], lang)
    bounds = np.cumsum([0, *(len(doc) for doc in texts)])
    return [span_array(vectors[bounds[k]:bounds[k + 1]], ok) for k, ok in enumerate(oks)]
