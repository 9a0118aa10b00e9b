"""How ``xlsent align`` aligns: :class:`AlignConfig`, the shipped choices (each measured by
``xlsent eval align_ablation``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from xlsent.align.numbers import SMALLEST

SIZE_WEIGHTS = ("product", "lines")
"""What a bead's normalised distance is multiplied by: its sizes' product ``a * b`` (Vecalign), or its mean size
``(a + b) / 2``."""


class Cost(StrEnum):
    """What a bead costs (:mod:`.costs`): ``margin``, Bertalign's cosine less the bead's sides' cosine with the lines
    around the other side, times a length penalty; or ``distance``, Vecalign's ``1 - cos`` normalised by
    :class:`Norm` and weighted by the bead's size."""

    MARGIN = "margin"
    DISTANCE = "distance"


MIN_BEADS, MOST_BEADS = 2, 8
"""The range of ``max_beads`` (``--max-beads``, the service's ``max_beads``): 2 allows 1-1 beads only; 8 is
Vecalign's largest setting (``alignment_max_size``), and the spans embedded grow with it."""
MAX_BEADS_RULE = f"a whole number from {MIN_BEADS} (1-1 beads only) to {MOST_BEADS}"
"""How every message about ``--max-beads`` states its range."""
MAX_WEIGHT = 1e6
"""The largest ``--null-cost``, ``--length-weight``, ``--number-weight``, ``--word-weight`` and ``--bracket-cost``: a
bead's cost is a float32 and a path's a sum of them, so a setting near the float limits would overflow to infinity; a
million is far past any setting that still changes an alignment (a bead's margin is at most 2)."""
WEIGHT_FLAGS = ("--null-cost", "--length-weight", "--number-weight", "--word-weight", "--bracket-cost")


def check_max_beads(value: int) -> None:
    """Raise ValueError naming ``--max-beads`` unless ``value`` is in its range (:data:`MAX_BEADS_RULE`).

    >>> check_max_beads(1)
    Traceback (most recent call last):
    ...
    ValueError: --max-beads must be a whole number from 2 (1-1 beads only) to 8, not 1
    """
    if not MIN_BEADS <= value <= MOST_BEADS:
        raise ValueError(f"--max-beads must be {MAX_BEADS_RULE}, not {value}")


def check_weight(flag: str, value: float) -> None:
    """Raise ValueError naming ``flag`` unless ``value`` is a number from 0 to :data:`MAX_WEIGHT`.

    >>> check_weight("--bracket-cost", 1e300)
    Traceback (most recent call last):
    ...
    ValueError: --bracket-cost must be a number from 0 to 1000000, not 1e+300
    """
    if not 0 <= value <= MAX_WEIGHT:  # also refuses nan
        raise ValueError(f"{flag} must be a number from 0 to {MAX_WEIGHT:.0f}, not {value:g}")


NULL_COSTS = {Cost.MARGIN: 0.0, Cost.DISTANCE: 0.8}
"""The default cost of a null bead under each :class:`Cost` (measured: ``xlsent eval align_ablation``)."""


class Spans(StrEnum):
    """Which spans of two lines or more are embedded (:mod:`.adaptive`): ``all`` of them (Vecalign), or
    ``adaptive``ly only where a first path, found with each span pooled from its lines' vectors, is unsure."""

    ALL = "all"
    ADAPTIVE = "adaptive"


class LengthRatio(StrEnum):
    """What a document's lengths are scaled by to compare with the other's: the ratio of the characters of the lines
    a first alignment pairs, then aligned again (``paired``: unpaired lines such as page headers do not skew it), or
    of the two documents' totals (``documents``: one alignment)."""

    PAIRED = "paired"
    DOCUMENTS = "documents"


class Norm(StrEnum):
    """What a bead's distance ``1 - cos`` is divided by: the mean distance of its spans to their ``k`` nearest
    lines of the other document near the path (``neighbours``, the mining margin's idea), to random lines of the
    other document (``random``, Vecalign), or nothing (``none``)."""

    NEIGHBOURS = "neighbours"
    RANDOM = "random"
    NONE = "none"


@dataclass(frozen=True)
class AlignConfig:
    """The alignment's settings.

    ``cost``: see :class:`Cost`; ``norm``, ``size_weight``, ``neighbours``, ``window`` and ``samples`` shape the
    ``distance`` cost only. ``max_beads``: the most lines (both sides together) in one bead, as Vecalign's
    ``alignment_max_size``: 4 allows 1-1, 1-2, 2-1, 1-3, 3-1 and 2-2 beads besides the null beads 1-0 and 0-1, 5
    also 1-4, 4-1, 2-3 and 3-2 (as Bertalign), the default, 6, also 1-5, 5-1, 2-4, 4-2 and 3-3 (measured: ``xlsent
    eval align_ablation``). ``length_weight``: how much a bead's two lengths in characters (each document's scaled
    to the other's as ``length_ratio`` says, :class:`LengthRatio`) count: the exponent of the ``margin`` cost's
    length penalty, the weight of the absolute log ratio in the ``distance`` cost; 0 leaves lengths out.
    ``number_weight``: what the agreement of a bead's two sides' numbers (:mod:`.numbers`, from -1 to 1) takes off
    its cost; 0 leaves numbers out; ``number_min``: the smallest number that counts (:data:`.numbers.SMALLEST`).
    ``word_weight``: the same for the words both documents spell alike and use rarely (:mod:`.words`: names, places,
    terms); 0 leaves words out.
    ``bracket_cost``: what a bead boundary between two lines that one bracket holds together (:mod:`.brackets`)
    adds to the path (the default, 1, is as much as a bead's margin can take off: brackets all but decide); 0 leaves
    brackets out.
    ``spans``: which multi-line spans are embedded (:class:`Spans`); with ``adaptive``, ``unsure_share`` of the
    1-1 beads of the first path (the weakest) count as unsure besides every other bead, and ``unsure_radius`` beads
    on either side of an unsure one join it (:func:`.adaptive.unsure_lines`).
    ``null_cost``: the cost of a null bead (default: under the ``margin`` cost, ``null_scale`` times the median gain
    of the 1-1 beads of a first path, :func:`.aligner.document_null`, and ``null_scale`` 0 makes it 0, the best on
    every dev set but Text+Berg, ``xlsent eval align_ablation``; under ``distance``, :data:`NULL_COSTS`). The
    weights are numbers from 0 to :data:`MAX_WEIGHT`; ``max_beads`` is in :data:`MAX_BEADS_RULE`'s range.
    ``band``: lines on either side of the coarse path that the fine search looks at. ``full_dp``: documents
    of at most this many lines on both sides are searched whole (no coarse path). ``size_weight``: see
    :data:`SIZE_WEIGHTS`. ``neighbours``/``window``: the ``k`` nearest lines of the ``neighbours`` normalisation,
    among ``window`` lines either side of the path. ``samples``: random lines of the ``random`` normalisation.

    >>> AlignConfig(max_beads=3).bead_types()
    [(1, 1), (1, 2), (2, 1)]
    >>> AlignConfig(max_beads=3).overlaps
    2
    >>> AlignConfig().null, AlignConfig(cost="distance").null
    (0.0, 0.8)
    """

    max_beads: int = 6
    cost: Cost = Cost.MARGIN
    norm: Norm = Norm.NEIGHBOURS
    null_cost: float | None = None
    band: int = 8
    full_dp: int = 256
    neighbours: int = 4
    window: int = 16
    samples: int = 32
    seed: int = 0
    size_weight: str = "product"
    length_weight: float = 1.0
    length_ratio: LengthRatio = LengthRatio.PAIRED
    number_weight: float = 0.02
    number_min: int = SMALLEST
    word_weight: float = 0.0
    bracket_cost: float = 1.0
    null_scale: float = 0.0
    spans: Spans = Spans.ADAPTIVE
    unsure_share: float = 0.1
    unsure_radius: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "spans", Spans(self.spans))
        object.__setattr__(self, "cost", Cost(self.cost))
        object.__setattr__(self, "norm", Norm(self.norm))
        object.__setattr__(self, "length_ratio", LengthRatio(self.length_ratio))
        check_max_beads(self.max_beads)
        for flag, value in (("--band", self.band), ("--full-dp", self.full_dp), ("--neighbours", self.neighbours),
                            ("--window", self.window), ("--samples", self.samples)):
            if value < 1:
                raise ValueError(f"{flag} must be at least 1, not {value}")
        if self.size_weight not in SIZE_WEIGHTS:
            raise ValueError(f"--size-weight must be one of {', '.join(SIZE_WEIGHTS)}, not {self.size_weight!r}")
        weights = (self.null, self.length_weight, self.number_weight, self.word_weight, self.bracket_cost)
        for flag, weight in zip(WEIGHT_FLAGS, weights, strict=True):
            check_weight(flag, weight)
        if self.number_min < 0:
            raise ValueError(f"--number-min must be 0 or more, not {self.number_min}")
        check_weight("--null-scale", self.null_scale)
        if not 0 <= self.unsure_share <= 1:  # also refuses nan
            raise ValueError(f"--unsure-share must be a share from 0 to 1, not {self.unsure_share:g}")
        if self.unsure_radius < 0:
            raise ValueError(f"--unsure-radius must be 0 or more, not {self.unsure_radius}")

    @property
    def null(self) -> float:
        """The cost of a null bead: ``null_cost``, or the default of the cost."""
        return NULL_COSTS[self.cost] if self.null_cost is None else self.null_cost

    @property
    def overlaps(self) -> int:
        """The longest span of one side in a bead: ``max_beads - 1`` lines."""
        return self.max_beads - 1

    def size_weights(self) -> np.ndarray:
        """What the normalised distance of each of :meth:`bead_types` is multiplied by."""
        sizes = np.array(self.bead_types(), dtype=np.float32)
        if self.size_weight == "product":
            return sizes.prod(axis=1)
        return sizes.sum(axis=1) / 2

    def bead_types(self) -> list[tuple[int, int]]:
        """The ``(source lines, target lines)`` of every bead with lines on both sides, smallest first."""
        return sorted(((a, b) for a in range(1, self.max_beads) for b in range(1, self.max_beads)
                       if a + b <= self.max_beads), key=lambda t: (t[0] + t[1], t[0]))
