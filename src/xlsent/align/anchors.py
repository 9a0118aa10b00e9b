"""Anchors: strings that survive translation unchanged (numbers, :mod:`.numbers`; shared words, :mod:`.words`),
found on both documents' lines and given ids, so that a bead's cost (:mod:`.costs`) can compare its two sides'."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LineIds:
    """The anchor ids of each line of one document: line ``k``'s ids are ``ids[starts[k]:starts[k + 1]]``, so a
    span of lines ``s..e-1`` holds ``ids[starts[s]:starts[e]]``."""

    ids: np.ndarray
    starts: np.ndarray

    @classmethod
    def none(cls, lines: int) -> LineIds:
        """No anchor on any of ``lines`` lines."""
        return cls(np.zeros(0, dtype=np.int64), np.zeros(lines + 1, dtype=np.int64))


@dataclass(frozen=True)
class Anchors:
    """Both documents' anchors of one kind and the ``weight`` of a bead's agreement on them in its cost."""

    src: LineIds
    tgt: LineIds
    weight: float

    @classmethod
    def none(cls, src_lines: int, tgt_lines: int) -> Anchors:
        """No anchors: this kind left out of the cost."""
        return cls(LineIds.none(src_lines), LineIds.none(tgt_lines), 0.0)


def anchor_ids(found_src: Sequence[Sequence[str]], found_tgt: Sequence[Sequence[str]], anchors: set[str]
               ) -> tuple[LineIds, LineIds]:
    """Both documents' :class:`LineIds` of the strings found on their lines that are ``anchors``, each one id."""
    vocab = {n: k for k, n in enumerate(sorted(anchors))}
    return indexed(found_src, vocab), indexed(found_tgt, vocab)


def indexed(found: Sequence[Sequence[str]], vocab: dict[str, int]) -> LineIds:
    """The ids (``vocab``) of the strings found on each line, those ``vocab`` holds, in order.

    >>> indexed([["8848", "7"], [], ["8848"]], {"8848": 0}).starts.tolist()
    [0, 1, 1, 2]
    """
    per_line = [[vocab[n] for n in line if n in vocab] for line in found]
    starts = np.zeros(len(found) + 1, dtype=np.int64)
    np.cumsum([len(ids) for ids in per_line], out=starts[1:])
    return LineIds(np.array([k for ids in per_line for k in ids], dtype=np.int64), starts)
