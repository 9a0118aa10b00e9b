"""Numbers as anchors (Hunalign's idea): the digit strings of each line that also occur somewhere in the other
document, as ids a bead's cost compares (:mod:`.costs`). Dates, heights, counts and references survive translation
unchanged in most scripts, so a bead whose two sides cite the same numbers is likelier right, and one whose sides cite
different ones likelier wrong; a number found in one document only (a page number, an OCR slip) says nothing and is
left out, as are numbers under :data:`SMALLEST` (below) by default.

>>> src, tgt = line_numbers(["Höhe 8848 m, 1953", "kein Wert"], ["hauteur 8848 m", "7 jours"])
>>> src.ids.tolist(), src.starts.tolist()
([0], [0, 1, 1])
>>> tgt.ids.tolist(), tgt.starts.tolist()
([0], [0, 1, 1])
>>> numbers("am ٢٠٢٠-05-18, 18.5.2020")  # any script's digits, leading zeros dropped, none under 10
['2020', '18', '18', '2020']
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

NUMBER = re.compile(r"\d+")
"""A number: a run of decimal digits (any script's); ``8839,8`` holds two."""
SMALLEST = 10
"""By default numbers under this are no anchors: many languages write them as words ("six", a month's name) where
others use digits (6, 9月), so one side's lacking them says little (measured: ``xlsent eval align_ablation``, row
"number-min 0")."""


def numbers(line: str, smallest: int = SMALLEST) -> list[str]:
    """The numbers of ``line`` (``smallest`` or more) in ASCII digits without leading zeros, in order."""
    found = ["".join(str(unicodedata.decimal(c)) for c in n).lstrip("0") or "0" for n in NUMBER.findall(line)]
    return [n for n in found if len(n) > len(str(smallest)) or int(n) >= smallest]  # no int() of a huge string


@dataclass(frozen=True)
class LineNumbers:
    """The shared numbers of each line of one document: line ``k``'s ids are ``ids[starts[k]:starts[k + 1]]``, so a
    span of lines ``s..e-1`` holds ``ids[starts[s]:starts[e]]``."""

    ids: np.ndarray
    starts: np.ndarray

    @classmethod
    def none(cls, lines: int) -> LineNumbers:
        """No number on any of ``lines`` lines."""
        return cls(np.zeros(0, dtype=np.int64), np.zeros(lines + 1, dtype=np.int64))


def line_numbers(src: Sequence[str], tgt: Sequence[str], smallest: int = SMALLEST) -> tuple[LineNumbers, LineNumbers]:
    """The numbers of each line of ``src`` and of ``tgt`` that occur in both documents, each number one id."""
    found_src = [numbers(line, smallest) for line in src]
    found_tgt = [numbers(line, smallest) for line in tgt]
    shared = {n for line in found_src for n in line} & {n for line in found_tgt for n in line}
    vocab = {n: k for k, n in enumerate(sorted(shared))}
    return _indexed(found_src, vocab), _indexed(found_tgt, vocab)


@dataclass(frozen=True)
class NumberAnchors:
    """Both documents' shared numbers and the ``weight`` of a bead's agreement on them in its cost (:mod:`.costs`)."""

    src: LineNumbers
    tgt: LineNumbers
    weight: float

    @classmethod
    def of(cls, src: Sequence[str], tgt: Sequence[str], weight: float, smallest: int = SMALLEST) -> NumberAnchors:
        """The anchors of documents ``src`` and ``tgt`` (:func:`line_numbers`)."""
        return cls(*line_numbers(src, tgt, smallest), weight)

    @classmethod
    def none(cls, src_lines: int, tgt_lines: int) -> NumberAnchors:
        """No anchors: numbers left out of the cost."""
        return cls(LineNumbers.none(src_lines), LineNumbers.none(tgt_lines), 0.0)


def _indexed(found: list[list[str]], vocab: dict[str, int]) -> LineNumbers:
    per_line = [[vocab[n] for n in line if n in vocab] for line in found]
    starts = np.zeros(len(found) + 1, dtype=np.int64)
    np.cumsum([len(ids) for ids in per_line], out=starts[1:])
    return LineNumbers(np.array([k for ids in per_line for k in ids], dtype=np.int64), starts)
