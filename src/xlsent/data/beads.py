"""The bead file format of Vecalign's output and Bleualign's gold: one bead a line, ``[i, j]:[k]:cost``.

A bead pairs consecutive source lines with consecutive target lines (0-based ids); either side may be empty (a line
with no counterpart). The cost (lower is better) is optional: gold files have none.

>>> format_bead(Bead((3, 4), (5,), 0.25))
'[3, 4]:[5]:0.250000'
>>> parse_bead("[3, 4]:[5]:0.250000", "a.txt", 1)
Bead(src=(3, 4), tgt=(5,), cost=0.25)
>>> parse_bead("[]:[7]", "gold", 9)
Bead(src=(), tgt=(7,), cost=None)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from xlsent.data._files import read_lines
from xlsent.data.text_input import InputError

_BEAD = re.compile(r"^\[([0-9,\s]*)\]:\[([0-9,\s]*)\](?::(\S+))?$")


@dataclass(frozen=True)
class Bead:
    """Source line ids, target line ids (each ascending and consecutive, possibly empty) and the bead's cost."""

    src: tuple[int, ...]
    tgt: tuple[int, ...]
    cost: float | None = None

    @property
    def is_null(self) -> bool:
        """Whether one side is empty (an unaligned line)."""
        return not (self.src and self.tgt)


def format_bead(bead: Bead) -> str:
    """``[i, j]:[k]:cost`` (the cost with 6 decimals; ``[i]:[k]`` without a cost)."""
    ids = f"[{', '.join(map(str, bead.src))}]:[{', '.join(map(str, bead.tgt))}]"
    return ids if bead.cost is None else f"{ids}:{bead.cost:.6f}"


def _ids(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.replace(",", " ").split())


def parse_bead(line: str, name: str, line_no: int) -> Bead:
    """The bead on ``line`` (line ``line_no`` of the file ``name``, for the message of :class:`InputError`)."""
    match = _BEAD.match(line.strip())
    if match is None:
        raise InputError(f"{name}:{line_no}: not a bead; expected [i, j]:[k] or [i, j]:[k]:cost, got {line[:60]!r}")
    cost = None
    if match.group(3) is not None:
        try:
            cost = float(match.group(3))
        except ValueError as exc:
            raise InputError(f"{name}:{line_no}: the cost {match.group(3)!r} is not a number") from exc
    return Bead(_ids(match.group(1)), _ids(match.group(2)), cost)


def read_beads(path: str | Path) -> list[Bead]:
    """Every bead of the file ``path`` (blank lines skipped), naming file and line on a malformed one."""
    path = Path(path)
    return [parse_bead(line, str(path), no) for no, line in enumerate(read_lines(path), start=1) if line.strip()]
