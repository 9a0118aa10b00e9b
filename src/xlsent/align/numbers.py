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

from xlsent.align.anchors import Anchors, LineIds, anchor_ids

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


def line_numbers(src: Sequence[str], tgt: Sequence[str], smallest: int = SMALLEST) -> tuple[LineIds, LineIds]:
    """The numbers of each line of ``src`` and of ``tgt`` that occur in both documents, each number one id."""
    found_src = [numbers(line, smallest) for line in src]
    found_tgt = [numbers(line, smallest) for line in tgt]
    shared = {n for line in found_src for n in line} & {n for line in found_tgt for n in line}
    return anchor_ids(found_src, found_tgt, shared)


def number_anchors(src: Sequence[str], tgt: Sequence[str], weight: float, smallest: int = SMALLEST) -> Anchors:
    """The number anchors of documents ``src`` and ``tgt`` (:func:`line_numbers`) at ``weight``."""
    return Anchors(*line_numbers(src, tgt, smallest), weight)
