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

import math
import re
from dataclasses import dataclass
from pathlib import Path

from xlsent.data._files import read_lines
from xlsent.data.text_input import InputError

_IDS = r"\s*(?:[0-9]+(?:\s*,\s*[0-9]+)*)?\s*"
_BEAD = re.compile(rf"^\[({_IDS})\]:\[({_IDS})\](?::(\S+))?$")


@dataclass(frozen=True)
class Bead:
    """Source line ids, target line ids (each ascending, possibly empty; consecutive in xlsent's beads) and the
    bead's cost."""

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
    """The bead on ``line`` (line ``line_no`` of the file ``name``, for the message of :class:`InputError`): a
    side's ids ascending (a gold bead may skip a line: Bleualign's Text+Berg gold has ``[291, 293, 294]``), at least
    one line, a finite cost.

    >>> parse_bead("[2, 1]:[1]", "gold", 4)
    Traceback (most recent call last):
    ...
    xlsent.data.text_input.InputError: gold:4: the source ids (2, 1) are not ascending; a bead lists its lines in \
order, each once
    """
    match = _BEAD.match(line.strip())
    if match is None:
        raise InputError(f"{name}:{line_no}: not a bead; expected [i, j]:[k] or [i, j]:[k]:cost, got {line[:60]!r}")
    cost = None
    if match.group(3) is not None:
        try:
            cost = float(match.group(3))
        except ValueError as exc:
            raise InputError(f"{name}:{line_no}: the cost {match.group(3)!r} is not a number") from exc
        if not math.isfinite(cost):
            raise InputError(f"{name}:{line_no}: the cost {match.group(3)!r} is not a finite number")
    bead = Bead(_ids(match.group(1)), _ids(match.group(2)), cost)
    if not bead.src and not bead.tgt:
        raise InputError(f"{name}:{line_no}: the bead []:[] holds no line; every bead holds a line of a side")
    for side, ids in (("source", bead.src), ("target", bead.tgt)):
        if any(a >= b for a, b in zip(ids, ids[1:], strict=False)):
            raise InputError(f"{name}:{line_no}: the {side} ids {ids} are not ascending; a bead lists its lines in "
                             "order, each once")
    return bead


def read_beads(path: str | Path, within: tuple[tuple[str, int], tuple[str, int]] | None = None, *,
               each_line_once: bool = False) -> list[Bead]:
    """Every bead of the file ``path`` (blank lines skipped), naming file and line on a malformed one; a file of no
    bead is an :class:`InputError` too. ``within``: the name and number of lines of the source and target documents
    the beads align; a bead citing a line past the end of either is an :class:`InputError` naming the file and line
    (the beads are not of these documents). A line in two beads is read as given, unless ``each_line_once`` (a
    gold alignment): then the later bead is an :class:`InputError` naming the file and line. Beads may cross
    (Bleualign's Text+Berg gold has ``[455]:[541]`` before ``[456]:[540]``).

    >>> import tempfile
    >>> gold = Path(tempfile.mkdtemp()) / "dev.defr"
    >>> _ = gold.write_text("[0]:[0]\\n[1, 2]:[1]\\n")
    >>> read_beads(gold, within=(("dev.de", 2), ("dev.fr", 2)))
    Traceback (most recent call last):
    ...
    xlsent.data.text_input.InputError: .../dev.defr:2: the bead cites source line 2 (0-based), but dev.de has 2 ...
    """
    path = Path(path)
    beads = []
    seen: tuple[set[int], set[int]] = (set(), set())
    for no, line in enumerate(read_lines(path), start=1):
        if line.strip():
            beads.append(bead := parse_bead(line, str(path), no))
            if within is not None:
                check_bead_fits(bead, within, f"{path}:{no}")
            if each_line_once:
                _check_new_lines(bead, seen, f"{path}:{no}")
    if not beads:
        raise InputError(f"{path}: holds no bead; expected one bead a line, [i, j]:[k] or [i, j]:[k]:cost")
    return beads


def _check_new_lines(bead: Bead, seen: tuple[set[int], set[int]], where: str) -> None:
    """Raise :class:`InputError` naming ``where`` when ``bead`` cites a line of ``seen`` (the source and target lines
    of the earlier beads); add its lines to ``seen`` otherwise."""
    for side, ids, earlier in (("source", bead.src, seen[0]), ("target", bead.tgt, seen[1])):
        repeated = sorted(earlier.intersection(ids))
        if repeated:
            raise InputError(f"{where}: the bead cites {side} line(s) {repeated} (0-based) of an earlier bead; in a "
                             "gold alignment every line is in one bead: fix or restore the gold file")
    seen[0].update(bead.src)
    seen[1].update(bead.tgt)


def check_bead_fits(bead: Bead, within: tuple[tuple[str, int], tuple[str, int]], where: str) -> None:
    """Raise :class:`InputError` naming ``where`` when ``bead`` cites a line past the end of a document of
    ``within`` (the name and number of lines of the source and the target)."""
    for side, ids, (name, lines) in (("source", bead.src, within[0]), ("target", bead.tgt, within[1])):
        if ids and max(ids) >= lines:
            raise InputError(f"{where}: the bead cites {side} line {max(ids)} (0-based), but {name} has {lines} "
                             "line(s); these beads are not of these documents (a file of another version, or cut)")
