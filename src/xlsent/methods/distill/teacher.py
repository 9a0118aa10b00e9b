"""The teacher's targets: its unit vectors of each language's English sides, encoded when a batch first needs them.

A run pays for the English sentences it trains on, not for the whole bitext: a student that sees 30k of 145k pairs
encodes 30k English sentences, spread over its steps, and its first step starts as soon as the models are loaded
(the whole English side took 20-40 minutes on two cores before the first step). A language whose every vector is
needed at once (hard negatives) is encoded whole through the disk cache (:func:`xlsent.encoders.cache.cached_encode`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import cached_encode


class TeacherTargets:
    """Per language, the ``teacher``'s vectors of ``english[lang]``, filled on demand and kept for the run.

    >>> from xlsent.testing import LookupEncoder
    >>> t = TeacherTargets(LookupEncoder({"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [0.6, 0.8]}), [["a", "b", "c"]])
    >>> t.rows(0, np.array([2, 0, 2])).tolist(), t.encoded  # "c" encoded once
    ([[0.6000000238418579, 0.800000011920929], [1.0, 0.0], [0.6000000238418579, 0.800000011920929]], 2)
    >>> t.rows(0, np.array([0, 1]))[1].tolist(), t.encoded
    ([0.0, 1.0], 3)
    """

    def __init__(self, teacher: Encoder, english: Sequence[Sequence[str]]) -> None:
        self.teacher = teacher
        self.english = [list(e) for e in english]
        self.vectors = [np.zeros((len(e), teacher.dim), dtype=np.float32) for e in self.english]
        self.ready = [np.zeros(len(e), dtype=bool) for e in self.english]
        self.encoded = 0
        """English sentences the teacher encoded in this run (a sentence given twice counts once)."""

    def rows(self, lang: int, rows: np.ndarray) -> np.ndarray:
        """The vectors ``(len(rows), dim)`` of language ``lang``'s English sides ``rows``, encoding the missing."""
        missing = np.unique(rows[~self.ready[lang][rows]])
        if len(missing):
            with torch.autocast("cpu", enabled=False), torch.no_grad():
                vecs = self.teacher.encode([self.english[lang][i] for i in missing], "en", progress=False)
            self.vectors[lang][missing] = vecs
            self.ready[lang][missing] = True
            self.encoded += len(missing)
        return self.vectors[lang][rows]

    def whole(self, lang: int, *, progress: bool = False) -> np.ndarray:
        """Every vector of language ``lang`` (through the disk cache of the teacher's encodings)."""
        if not self.ready[lang].all():
            self.vectors[lang] = np.ascontiguousarray(cached_encode(self.teacher, self.english[lang], "en",
                                                                    progress=progress), dtype=np.float32)
            self.ready[lang][:] = True
        return self.vectors[lang]
