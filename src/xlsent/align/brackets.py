"""Lines a bracket holds together: where a sentence splitter cut inside a parenthesis (``( London :`` /
``Collins 1956 ) .``), the lines up to the one that closes it are one sentence, and a bead boundary between them is
wrong (Text+Berg dev's gold keeps every such cut inside one bead). The alignment charges
:attr:`~.config.AlignConfig.bracket_cost` for a bead boundary at such a cut (:mod:`.dp`; measured: the ablation row
"bracket-cost 0").

Round and square brackets count, ASCII and full-width; quotation marks do not (a quotation often runs over several
sentences), nor a face's bracket (``:(``). A bracket counts when it closes within :data:`REACH` lines; one never
closed (an OCR slip) holds nothing. A line that *starts* with the closing bracket is no part of the bracket's
sentence: the splitter cut just before it (``... 1955 .`` / ``) 13. L' année ...``), so the cut before that line is
left free. What this cannot tell: a parenthesis of several whole sentences, one a line, is held together too, and
where the translation keeps them apart their 1-1 beads become one (``--bracket-cost 0`` for such documents).

>>> bracket_cuts(["Das Buch ( London :", "Collins 1956 ) .", "Ein Satz ."]).tolist()
[False, True, False, False]
>>> bracket_cuts(["( voir Izzard , 1955 .", ") 13. L' année 1955"]).tolist()
[False, False, False]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

REACH = 3
"""The most lines after a line with an open bracket that may close it (a bead side holds up to ``max_beads - 1``
lines)."""
OPENING, CLOSING = "([（［", ")]）］"
_BRACKETS = re.compile(f"(?<![:;=])[{re.escape(OPENING + CLOSING)}]")
"""Brackets, but not a face's (``:(``, ``;)``, ``=)``)."""


def _depths(line: str) -> tuple[int, list[int]]:
    """The brackets ``line`` leaves open (a closing one with none open is ignored), and the running depth change
    after each bracket in it, for continuing a bracket opened before."""
    left, steps, change = 0, [], 0
    for mark in _BRACKETS.findall(line):
        step = 1 if mark in OPENING else -1
        change += step
        steps.append(change)
        left = left + 1 if step > 0 else max(left - 1, 0)
    return left, steps


def bracket_cuts(lines: Sequence[str], reach: int = REACH) -> np.ndarray:
    """``(len(lines) + 1,)`` bool: whether the cut before line ``i`` (after line ``i - 1``) falls inside a bracket
    opened on an earlier line and closed within ``reach`` lines (never the cuts before the first line and after the
    last)."""
    depths = [_depths(line) for line in lines]
    inside = np.zeros(len(lines) + 1, dtype=np.bool_)
    for i, (left, _) in enumerate(depths):
        if not left:
            continue
        for k in range(i + 1, min(len(lines), i + 1 + reach)):
            closed_at = next((p for p, change in enumerate(depths[k][1]) if left + change <= 0), None)
            if closed_at is None:
                left += depths[k][1][-1] if depths[k][1] else 0
                continue
            starts_line = closed_at == 0 and lines[k].lstrip()[0] in CLOSING  # the line holds a bracket: not empty
            inside[i + 1:k + (0 if starts_line else 1)] = True
            break
    return inside
