"""What a mining or scoring job is asked to do, and what it reports: configurations and summaries.

:class:`SearchConfig` is what both jobs share (the neighbourhoods of the margin: k, the margin, distinct sentences,
the k-NN search and its precision); :class:`MineConfig` adds how candidate pairs are chosen and kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xlsent.mining.faiss_index import INDEX_KINDS
from xlsent.mining.margin import Margin, Mode

IVF_BF16 = "ivfbf16"
"""``--index`` of xlsent's own inverted file scanned with bf16 products (:mod:`xlsent.mining.ivf_bf16`)."""
PRECISIONS = ("auto", "fp32", "bf16")
"""``--precision`` of exact search (:mod:`xlsent.mining.precision` says what ``auto`` stands for)."""


MIN_MAX_MEMORY = 1 << 20
"""The least ``max_memory``: a similarity tile of one row pair of a 4096-d encoder takes 64 KiB, so less is a slip
(GiB read as bytes), refused when the settings are made instead of after both sides are embedded."""


@dataclass(frozen=True)
class SearchConfig:
    """The neighbourhoods of the margin. Defaults follow Artetxe & Schwenk (2019): ratio margin, k=4.

    ``index`` is ``exact`` (blocked one-pass search at ``precision``: ``auto``, ``fp32`` or ``bf16``, see
    :mod:`xlsent.mining.precision`), ``auto`` (exact or an approximate index by corpus size), ``ivfbf16`` (xlsent's
    inverted file scanned in bf16, :mod:`xlsent.mining.ivf_bf16`) or a FAISS kind; ``effort`` its
    ``nprobe``/``efSearch``. ``max_memory`` bounds the similarity tiles (bytes), ``shard_rows`` the
    rows of a resumable k-NN shard.
    """

    k: int = 4
    margin: str = "ratio"
    unify: bool = True
    index: str = "exact"
    effort: int | None = None
    precision: str = "auto"
    max_memory: int = 1 << 30
    shard_rows: int = 200_000

    def problems(self) -> list[str]:
        """What is wrong with the settings, one message each (empty when they are fine)."""
        checks = [(self.k >= 1, f"--k must be at least 1, not {self.k}"),
                  (self.margin in set(Margin), f"--margin must be one of {', '.join(Margin)}, not {self.margin!r}"),
                  (self.index in ("exact", IVF_BF16, *INDEX_KINDS),
                   f"--index must be exact, {IVF_BF16} or one of {', '.join(INDEX_KINDS)}, not {self.index!r}"),
                  (self.effort is None or (self.effort >= 1 and self.index not in ("exact", "flat")),
                   f"--nprobe/--ef-search need an IVF or HNSW --index and a value of at least 1, not {self.effort} "
                   f"with --index {self.index}"),
                  (self.precision in PRECISIONS,
                   f"--precision must be one of {', '.join(PRECISIONS)}, not {self.precision!r}"),
                  (self.max_memory >= MIN_MAX_MEMORY, f"--max-memory must be at least {MIN_MAX_MEMORY} bytes (1 MiB), "
                   f"not {self.max_memory} bytes"),
                  (self.shard_rows >= 1, f"shard_rows must be at least 1, not {self.shard_rows}")]
        return [message for ok, message in checks if not ok]

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class MineConfig(SearchConfig):
    """How to mine: the search of :class:`SearchConfig`, candidate generation (``mode``), the threshold, and
    which pairs are kept (``dedup``: each distinct text in its best pair only; ``one_to_one``: each sentence once).
    Defaults follow Artetxe & Schwenk (2019): max retrieval, no threshold (a candidate list)."""

    mode: str = "max"
    threshold: float | None = None
    dedup: bool = True
    one_to_one: bool = False
    with_ids: bool = False

    def problems(self) -> list[str]:
        own = [message for ok, message in (
            (self.mode in set(Mode), f"--mode must be one of {', '.join(Mode)}, not {self.mode!r}"),
            (self.threshold is None or math.isfinite(self.threshold),
             f"--threshold must be a finite number, not {self.threshold}")) if not ok]
        return super().problems() + own


@dataclass(frozen=True)
class Candidates:
    """Candidate pairs: source row, target row, margin score (sorted by score, best first)."""

    src: np.ndarray
    tgt: np.ndarray
    score: np.ndarray


@dataclass
class MineSummary:
    """What a mining run produced: lines and distinct sentences per side, candidates, pairs written, threshold, and
    how many candidates each selection rule dropped."""

    output: Path
    src_rows: int
    tgt_rows: int
    src_distinct: int
    tgt_distinct: int
    candidates: int
    written: int
    threshold: float | None
    seconds: float
    dropped: dict[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        """One line: pairs written, out of how many candidates, at which threshold (or that there was none), what
        dropped the other candidates.

        >>> MineSummary(Path("o"), 5, 4, 5, 4, 3, 2, 1.05, 0.5, {"under the threshold": 1}).describe()
        'wrote o: 2 pairs out of 3 candidates at threshold 1.05 (dropped: under the threshold 1; 5 x 4 lines) in 0.5s'
        >>> MineSummary(Path("p.tsv"), 3, 3, 3, 3, 3, 3, None, 0.5).describe()
        'wrote p.tsv: 3 pairs out of 3 candidates with no threshold: a candidate list, not a mined bitext (3 x 3 \
lines) in 0.5s'
        """
        kept = (f"at threshold {self.threshold:.6g}" if self.threshold is not None else
                "with no threshold: a candidate list, not a mined bitext")
        reasons = ", ".join(f"{why} {n}" for why, n in self.dropped.items())
        dropped = f"dropped: {reasons}; " if reasons else ""
        distinct = ("" if (self.src_distinct, self.tgt_distinct) == (self.src_rows, self.tgt_rows) else
                    f", {self.src_distinct} x {self.tgt_distinct} distinct")
        return (f"wrote {self.output}: {self.written} pairs out of {self.candidates} candidates {kept} "
                f"({dropped}{self.src_rows} x {self.tgt_rows} lines{distinct}) in {self.seconds:.1f}s")


@dataclass
class ScoreSummary:
    """What a scoring run produced: pairs read, pairs scored, pairs left unscored (an empty side), what the scores
    are (``margin``, or ``cosine`` where a side was too small for the neighbourhoods), time taken."""

    output: Path
    pairs: int
    scored: int
    missing: int
    measure: str
    seconds: float

    def describe(self) -> str:
        """One line: pairs scored, unscored, the measure.

        >>> ScoreSummary(Path("s.tsv"), 5, 4, 1, "ratio margin (k=4)", 0.25).describe()
        'wrote s.tsv: 4 of 5 pairs scored (ratio margin (k=4)), 1 left unscored (an empty side) in 0.2s'
        """
        missing = f", {self.missing} left unscored (an empty side)" if self.missing else ""
        return (f"wrote {self.output}: {self.scored} of {self.pairs} pairs scored ({self.measure}){missing} "
                f"in {self.seconds:.1f}s")
