"""The precision of exact k-NN: fp32 products, or bf16 products to find candidates re-scored in fp32.

``--precision auto`` is measured, as the inference backends' ``auto`` is: ``knn_precision.json`` beside this module
(package data, written by ``benchmarks/mining_bench.py``) holds, per CPU class (:func:`xlsent.encoders.backends.
cpu_class`), the seconds of both paths on the same corpus and how many of their mined pairs differed. ``auto`` is
bf16 where that record shows bf16 faster and fp32 everywhere else (CPUs without a record, and corpora under
``BF16_MIN_ROWS`` a side, where the bf16 path's fixed costs outweigh its products). Both run on the CPU.

>>> resolve_precision("fp32", 10, 10)
'fp32'
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.encoders.backends import cpu_class
from xlsent.mining.config import PRECISIONS
from xlsent.mining.knn import KnnResult, bidirectional_knn
from xlsent.mining.knn_bf16 import bf16_bidirectional_knn
from xlsent.mining.shipped import read_table, write_table

log = logging.getLogger(__name__)

BF16_MIN_ROWS = 20_000
SHIPPED_PRECISION = Path(__file__).with_name("knn_precision.json")
SHIPPED_PRECISION_ABOUT = ("Exact k-NN in fp32 and in bf16 (candidates re-scored in fp32), timed by "
                           "benchmarks/mining_bench.py on one corpus per CPU class, for `xlsent mine --precision "
                           "auto`. Written by that benchmark; do not edit by hand.")


def shipped_precision(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The shipped measurements (``path``: the shipped file), by CPU class; none if the file is absent."""
    return read_table(path or SHIPPED_PRECISION, "precision")


def ship_precision(cpu: str, record: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``record`` as the measurement of the CPU class ``cpu`` into the shipped file (``path``), atomically."""
    path = path or SHIPPED_PRECISION
    write_table(path, SHIPPED_PRECISION_ABOUT, "precision", shipped_precision(path) | {cpu: record})
    return path


@lru_cache(maxsize=1)
def measured_choice() -> str:
    """``bf16`` where this machine's CPU class has a record in which bf16 was faster, else ``fp32``."""
    record = shipped_precision().get(cpu_class())
    if record is None:
        return "fp32"
    return "bf16" if record["bf16_s"] < record["fp32_s"] else "fp32"


def resolve_precision(precision: str, rows_x: int, rows_y: int) -> str:
    """``fp32`` or ``bf16``: ``precision`` itself, or what ``auto`` stands for on this machine for ``rows_x`` x
    ``rows_y`` vectors (see the module's notes)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if precision != "auto":
        return precision
    if min(rows_x, rows_y) < BF16_MIN_ROWS:
        return "fp32"
    return measured_choice()


def exact_knn(x: np.ndarray, y: np.ndarray, k: int, *, precision: str = "auto", max_memory: int | None = None,
              progress: bool = False) -> KnnResult:
    """Exact inner-product k-NN of ``x`` in ``y`` and of ``y`` in ``x`` at ``precision`` (see
    :func:`resolve_precision`): :func:`~xlsent.mining.knn.bidirectional_knn` in fp32, or
    :func:`~xlsent.mining.knn_bf16.bf16_bidirectional_knn`.

    >>> x = np.eye(3, dtype=np.float32)
    >>> exact_knn(x, x, 1, precision="bf16").fwd_idx.ravel().tolist()
    [0, 1, 2]
    """
    chosen = resolve_precision(precision, len(x), len(y))
    log.debug("exact k-NN %d x %d at %s (asked: %s)", len(x), len(y), chosen, precision)
    if chosen == "fp32":
        return bidirectional_knn(x, y, k, max_memory=max_memory, progress=progress)
    return bf16_bidirectional_knn(x, y, k, max_memory=max_memory, progress=progress)
