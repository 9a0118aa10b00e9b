"""``--threshold auto``: the calibrated mining threshold of an encoder, for a run of a given margin and k; and the rule
that a cut applies only to the scores it was made for.

A cut is a number on one scale: a ratio margin (around 1), a distance margin (around 0) or a cosine. A cut made for
one scale keeps or drops arbitrary pairs on another (a ratio cut of 1.0 drops every pair scored by cosines), so
:meth:`AutoThreshold.cut_for` gives the cut for the scale of the scores a run computes, or refuses: the record's
``threshold`` for the margin it was calibrated with, its ``cosine_threshold`` (where calibrated) for cosines.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from xlsent.encoders.base import Encoder
from xlsent.mining.calibration import load_calibration

log = logging.getLogger(__name__)

COSINE = "absolute"
"""The margin whose scores are the cosines themselves (as are the scores of a side too small for k neighbours)."""
SCALES = {"ratio": "ratio margins", "distance": "distance margins", COSINE: "cosines"}
"""What the scores of each margin are, in words."""


@dataclass(frozen=True)
class AutoThreshold:
    """A calibrated threshold, its calibration record and where the record was found (``flag``: the option that
    asked for it, as messages name it; a cut given as a number is one too, its record its value and margin)."""

    threshold: float
    record: dict[str, Any]
    found: str
    flag: str = "--threshold auto"

    def describe(self) -> str:
        """One line: the threshold, the sets and date it was calibrated on, where it comes from (a given cut: what
        it cuts).

        >>> given_cut(1.05, "ratio").describe()
        '--threshold 1.05: a given cut of ratio margins'
        """
        if self.found == "given":
            margin = str(self.record.get("margin", "ratio"))
            return f"{self.flag}: a given cut of {SCALES.get(margin, margin)}"
        sets = ", ".join(self.record.get("sets", [])) or "unrecorded sets"
        return (f"--threshold auto: {self.threshold:.6g}, calibrated on {sets} "
                f"({self.record.get('date', 'undated')}; from {self.found})")

    def cut_for(self, margin: str, *, why: str = "", fix: str = "") -> float:
        """The cut for scores of the margin ``margin`` (``absolute``: cosines): :attr:`threshold` where the record
        was made for that margin, its ``cosine_threshold`` for cosines where it has one. Otherwise a ``ValueError``
        saying what the cut and the scores are (``why``: why the scores are what they are) and what to do (``fix``;
        default: run with the cut's margin, or give a threshold)."""
        made_for = str(self.record.get("margin", "ratio"))
        if margin == made_for:
            return self.threshold
        cosine = self.record.get("cosine_threshold")
        if margin == COSINE and isinstance(cosine, int | float) and not isinstance(cosine, bool):
            return float(cosine)
        cut = self.flag if self.flag != "--threshold auto" else f"{self.flag}: {self.threshold:.6g} (from {self.found})"
        fix = fix or f"run with --margin {made_for}, or give --threshold VALUE (a cut of {SCALES.get(margin, margin)})"
        raise ValueError(f"{cut} cuts {SCALES.get(made_for, made_for)}, but the scores of this run are "
                         f"{SCALES.get(margin, margin)}{why}; {fix}")

    def source(self, margin: str) -> str:
        """How the summary names this cut for scores of ``margin`` (``given``, or where the record was found)."""
        if self.flag != "--threshold auto":
            return "given"
        which = "the cosine cut " if margin == COSINE and margin != self.record.get("margin", "ratio") else ""
        return f"auto, {which}from {self.found}"


def given_cut(threshold: float, margin: str) -> AutoThreshold:
    """A cut given as a number (``--threshold``), which cuts scores of the run's ``margin``.

    >>> given_cut(0.8, "absolute").cut_for("absolute")
    0.8
    """
    return AutoThreshold(threshold, {"threshold": threshold, "margin": margin}, "given",
                         flag=f"--threshold {threshold:g}")


def calibrated_record(encoder: Encoder) -> AutoThreshold:
    """The calibration record of ``encoder`` (:func:`~xlsent.mining.calibration.load_calibration`) as a cut of the
    margin it was calibrated with, repeating the record's own ``warning`` (e.g. too few gold pairs)."""
    record, found = load_calibration(encoder)
    if record.get("warning"):
        log.warning("--threshold auto: the calibration record (%s) warns: %s", found, record["warning"])
    return AutoThreshold(float(record["threshold"]), record, found)


def auto_threshold(encoder: Encoder, *, margin: str, k: int) -> AutoThreshold:
    """The calibrated threshold of ``encoder`` (:func:`calibrated_record`) for scores of ``margin``
    (:meth:`AutoThreshold.cut_for`: a record of another margin is an error), warning when the margin was calibrated
    with another k than the run's."""
    calibrated = calibrated_record(encoder)
    record = calibrated.record
    if margin != COSINE and record.get("k") != k:
        log.warning("--threshold auto: the threshold was calibrated with margin=%s, k=%s; this run uses margin=%s, "
                    "k=%d", record.get("margin"), record.get("k"), margin, k)
    return replace(calibrated, threshold=calibrated.cut_for(margin))
