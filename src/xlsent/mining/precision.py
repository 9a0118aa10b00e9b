"""The precision of exact k-NN: fp32 products, or bf16 products to find candidates re-scored in fp32.

``--precision auto`` is measured, as the inference backends' ``auto`` is: ``knn_precision.json`` beside this module
(package data, written by ``benchmarks/mining_bench.py``) holds, per CPU class (:func:`xlsent.encoders.backends.
cpu_class`), the seconds of both paths on the same corpus and how many of their mined pairs differed. ``auto`` is
bf16 where that record shows bf16 faster and fp32 everywhere else (corpora under ``BF16_MIN_ROWS`` a side, where
the bf16 path's fixed costs outweigh its products). A CPU class without a shipped record, whose CPU has native bf16
products, is measured once on first use (:func:`measure_precision`, kept by :mod:`xlsent.machine_measures`): both
paths on ``BF16_MIN_ROWS`` planted pairs, and bf16 chosen where it was faster with at most ``PRECISION_GUARD`` of
the rows' neighbour lists differing from fp32's; a CPU without native bf16 (whose bf16 products are emulated) runs
fp32. Both run on the CPU.

>>> resolve_precision("fp32", 10, 10)
'fp32'
"""

from __future__ import annotations

import logging
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.encoders.backends import cpu_class, native_bf16
from xlsent.machine_measures import measure_once, measuring_enabled
from xlsent.mining.config import PRECISIONS
from xlsent.mining.knn import KnnResult, bidirectional_knn
from xlsent.mining.knn_bf16 import bf16_bidirectional_knn
from xlsent.mining.shipped import read_table, write_table

log = logging.getLogger(__name__)

BF16_MIN_ROWS = 20_000
PRECISION_GUARD = 0.001
"""Most share of rows whose k nearest neighbours may differ between bf16 and fp32 for ``auto`` to measure bf16 in."""
PROBE_DIM = 384
PROBE_K = 4
PROBE_NOISE = 0.7
"""Norm of the noise that makes each planted pair's second vector (unit vectors in ``PROBE_DIM`` dimensions)."""
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


def measure_precision(rows: int = BF16_MIN_ROWS, rounds: int = 2, seed: int = 0) -> dict[str, Any]:
    """Exact k-NN of ``rows`` planted pairs (unit vectors and a noisy copy of each) in fp32 and in bf16, in turn for
    ``rounds`` rounds: each path's fastest seconds and how many rows' neighbour lists (both directions) differed."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, PROBE_DIM), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = x + PROBE_NOISE * rng.standard_normal((rows, PROBE_DIM), dtype=np.float32) / np.sqrt(PROBE_DIM)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    seconds: dict[str, list[float]] = {"fp32": [], "bf16": []}
    results: dict[str, KnnResult] = {}
    for _ in range(rounds):
        for name, search in (("fp32", bidirectional_knn), ("bf16", bf16_bidirectional_knn)):
            start = time.perf_counter()
            results[name] = search(x, y, PROBE_K)
            seconds[name].append(time.perf_counter() - start)
    a, b = results["fp32"], results["bf16"]
    differ = int((np.sort(a.fwd_idx, axis=1) != np.sort(b.fwd_idx, axis=1)).any(axis=1).sum()
                 + (np.sort(a.bwd_idx, axis=1) != np.sort(b.bwd_idx, axis=1)).any(axis=1).sum())
    return {"fp32_s": min(seconds["fp32"]), "bf16_s": min(seconds["bf16"]), "rows_differ": differ,
            "rows": 2 * rows, "sentences": rows, "dim": PROBE_DIM, "k": PROBE_K,
            "corpus": f"planted pairs (unit vectors and a copy with noise of norm {PROBE_NOISE})"}


def precision_of(record: dict[str, Any]) -> str:
    """``bf16`` where ``record`` shows bf16 faster (and, where it counted them, at most ``PRECISION_GUARD`` of the
    rows with other neighbours than fp32's), else ``fp32``.

    >>> precision_of({"fp32_s": 2.0, "bf16_s": 1.0}), precision_of({"fp32_s": 2.0, "bf16_s": 1.0, "rows": 100,
    ...                                                            "rows_differ": 5})
    ('bf16', 'fp32')
    """
    held = record.get("rows_differ", 0) <= PRECISION_GUARD * record.get("rows", 1)
    return "bf16" if record["bf16_s"] < record["fp32_s"] and held else "fp32"


@lru_cache(maxsize=1)
def measured_choice() -> str:
    """What ``auto`` stands for on corpora of at least ``BF16_MIN_ROWS`` a side on this machine: from the shipped
    record of its CPU class, else from this machine's own measurement (see the module's notes); logged."""
    klass = cpu_class()
    record, source = shipped_precision().get(klass), "shipped record"
    if record is None and not native_bf16():
        log.info("precision auto -> fp32: no record for %s CPUs and no native bf16 products on this one", klass)
        return "fp32"
    if record is None and not measuring_enabled():
        log.info("precision auto -> fp32: no record for %s CPUs and measuring is off", klass)
        return "fp32"
    if record is None:
        record, path = measure_once(klass, "knn precision", measure_precision, f"precision auto: no record for "
                                    f"{klass} CPUs; timing exact k-NN in fp32 and bf16 once ({BF16_MIN_ROWS} "
                                    "planted pairs)")
        source = f"measured on this machine: {path}"
    choice = precision_of(record)
    log.info("precision auto -> %s on %s CPUs (fp32 %.1f s, bf16 %.1f s; %s)", choice, klass, record["fp32_s"],
             record["bf16_s"], source)
    return choice


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
              progress: bool = False, warn_k: bool = True) -> KnnResult:
    """Exact inner-product k-NN of ``x`` in ``y`` and of ``y`` in ``x`` at ``precision`` (see
    :func:`resolve_precision`): :func:`~xlsent.mining.knn.bidirectional_knn` in fp32, or
    :func:`~xlsent.mining.knn_bf16.bf16_bidirectional_knn`; ``warn_k``: warn where ``k`` is clipped to a side.

    >>> x = np.eye(3, dtype=np.float32)
    >>> exact_knn(x, x, 1, precision="bf16").fwd_idx.ravel().tolist()
    [0, 1, 2]
    """
    chosen = resolve_precision(precision, len(x), len(y))
    log.debug("exact k-NN %d x %d at %s (asked: %s)", len(x), len(y), chosen, precision)
    if chosen == "fp32":
        return bidirectional_knn(x, y, k, max_memory=max_memory, progress=progress, warn_k=warn_k)
    return bf16_bidirectional_knn(x, y, k, max_memory=max_memory, progress=progress, warn_k=warn_k)
