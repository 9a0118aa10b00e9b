"""Repeated sentences searched once (LASER's ``--unify``): distinct sentences of a side, and their lines.

Web corpora repeat lines. When a target line occurs k times, a source's k nearest neighbours are k copies of
it, its neighbourhood mean equals its best cosine and the ratio margin of a true pair falls towards 1. So
mining searches and scores the *distinct* sentences of each side (lines equal once surrounding whitespace is
stripped, the sentence being the first such line) and maps every result back to all the lines that hold it. Lines
without text (:func:`xlsent.data.empty_text.is_empty`: blank, or only invisible characters) are one sentence, ``""``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from xlsent.atomic import atomic_path
from xlsent.data.empty_text import is_empty
from xlsent.mining.knn import CHUNK_ROWS, take_rows


@dataclass(frozen=True)
class Unified:
    """The distinct sentences of one side: ``texts[i]`` is sentence ``i`` (as written on its first line,
    ``first[i]``); ``inverse[row]`` is the sentence of input row ``row``. Sentences are numbered in the order
    of their first lines, so a side without repeats maps each row to itself.

    >>> u = unify(["a", "b", " a", "c", "b"])
    >>> u.texts, u.first.tolist(), u.inverse.tolist(), u.rows(0).tolist()
    (['a', 'b', 'c'], [0, 1, 3], [0, 1, 0, 2, 1], [0, 2])
    """

    texts: list[str]
    first: np.ndarray
    inverse: np.ndarray

    @property
    def repeated(self) -> bool:
        """Whether any sentence occurs on more than one row."""
        return len(self.first) < len(self.inverse)

    @cached_property
    def _groups(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows ordered by sentence (ascending within one), and where each sentence's rows start."""
        order = np.argsort(self.inverse, kind="stable")
        starts = np.concatenate([[0], np.cumsum(np.bincount(self.inverse, minlength=len(self.first)))])
        return order, starts

    def rows(self, sentence: int) -> np.ndarray:
        """The input rows holding ``sentence``, ascending."""
        order, starts = self._groups
        return order[starts[sentence] : starts[sentence + 1]]

    def distinct(self, vectors: np.ndarray, path: Path | None = None) -> np.ndarray:
        """Row ``i`` = the vector of sentence ``i`` (that of its first line): ``vectors`` itself when no sentence
        repeats; else gathered in memory, or with ``path`` written there chunk by chunk and memory-mapped (for
        memmapped ``vectors`` too large to copy into memory)."""
        if not self.repeated:
            return vectors
        if path is None:
            return take_rows(vectors, self.first)
        header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False,
                  "shape": (len(self.first), vectors.shape[1])}
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.lib.format.write_array_header_1_0(fh, header)
            for lo in range(0, len(self.first), CHUNK_ROWS):
                fh.write(take_rows(vectors, self.first[lo : lo + CHUNK_ROWS]).tobytes())
        return np.load(path, mmap_mode="r")


def unify(texts: Sequence[str], enabled: bool = True) -> Unified:
    """The distinct sentences of ``texts`` (equal once stripped; every line without text is ``""``); with
    ``enabled=False`` every row is its own.

    >>> unify(["a", "a"], enabled=False).texts, unify(["\u200b", " ", "a"]).texts
    (['a', 'a'], ['', 'a'])
    """
    sentences = ["" if is_empty(t) else t for t in texts]
    if not enabled:
        rows = np.arange(len(texts), dtype=np.int64)
        return Unified(sentences, rows, rows)
    ids: dict[str, int] = {}
    inverse = np.fromiter((ids.setdefault(t.strip(), len(ids)) for t in sentences), dtype=np.int64, count=len(texts))
    first = np.unique(inverse, return_index=True)[1].astype(np.int64)
    return Unified([sentences[i] for i in first], first, inverse)
