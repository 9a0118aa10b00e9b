"""``--threshold auto``: the calibrated mining threshold of an encoder, for a run of a given margin and k."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from xlsent.encoders.base import Encoder
from xlsent.mining.calibration import load_calibration

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AutoThreshold:
    """A calibrated threshold, its calibration record and where the record was found."""

    threshold: float
    record: dict[str, Any]
    found: str

    def describe(self) -> str:
        """One line: the threshold, the sets and date it was calibrated on, where it comes from."""
        sets = ", ".join(self.record.get("sets", [])) or "unrecorded sets"
        return (f"--threshold auto: {self.threshold:.6g}, calibrated on {sets} "
                f"({self.record.get('date', 'undated')}; from {self.found})")


def auto_threshold(encoder: Encoder, *, margin: str, k: int) -> AutoThreshold:
    """The calibrated threshold of ``encoder`` (:func:`~xlsent.mining.calibration.load_calibration`), warning when
    it was calibrated with another margin or k than the run's ``margin`` and ``k``, and repeating the record's own
    ``warning`` (e.g. too few gold pairs)."""
    record, found = load_calibration(encoder)
    how = {key: record.get(key) for key in ("margin", "k")}
    if how != {"margin": margin, "k": k}:
        log.warning("--threshold auto: the threshold was calibrated with margin=%s, k=%s; this run uses margin=%s, "
                    "k=%d", how["margin"], how["k"], margin, k)
    if record.get("warning"):
        log.warning("--threshold auto: the calibration record (%s) warns: %s", found, record["warning"])
    return AutoThreshold(float(record["threshold"]), record, found)
