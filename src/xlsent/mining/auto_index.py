"""``xlsent mine --index auto``: the search chosen by corpus size, and the recall measured for it.

The size rule is :func:`xlsent.mining.knn.auto_index_kind`, the one ``xlsent index --kind auto`` uses: exact
below ``AUTO_FLAT_MAX_ROWS`` distinct sentences on the larger side (mining searches exactly with its own one-pass
k-NN rather than a flat FAISS index, same lists), and above it an approximate search measured by the mining
benchmark (``benchmarks/mining_bench.py``) at a million sentences a side: ``ivfbf16`` where bf16 products are the
measured choice of this CPU class (:mod:`xlsent.mining.precision`: CPUs with bf16 matrix units), else
``ivfpqfs``. The expected recall is read from the
recall shipped with xlsent (``index_recall.json`` beside this module, package data), never copied into the code:
one record per index kind, written by the benchmark with how and on what it was measured (corpus, size, nprobe,
command, date, machine). Exact search finds every neighbour (1.0).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from xlsent.mining.config import IVF_BF16
from xlsent.mining.faiss_index import auto_index_kind
from xlsent.mining.precision import measured_choice
from xlsent.mining.shipped import read_table, write_table

log = logging.getLogger(__name__)

AUTO_LARGE_KIND, AUTO_LARGE_KIND_BF16 = "ivfpqfs", IVF_BF16
SHIPPED_RECALL = Path(__file__).with_name("index_recall.json")
"""The recall of the approximate index kinds shipped with xlsent (package data), keyed by index kind."""
SHIPPED_RECALL_ABOUT = ("Recall of the approximate index kinds for `xlsent mine --index auto`, keyed by index kind: "
                        "the largest run of benchmarks/mining_bench.py for that kind, with how and on what it was "
                        "measured. Written by that benchmark (with its record in results/bench/, or "
                        "--ship-recall-from RECORD); do not edit by hand.")


def choose_index(src_rows: int, tgt_rows: int) -> str:
    """The ``--index`` that ``auto`` stands for with ``src_rows`` x ``tgt_rows`` distinct sentences.

    >>> choose_index(40_000, 1_000), choose_index(150_000, 1_500_000) in ("ivfpqfs", "ivfbf16")
    ('exact', True)
    """
    large = AUTO_LARGE_KIND_BF16 if measured_choice() == "bf16" else AUTO_LARGE_KIND
    kind = auto_index_kind(max(src_rows, tgt_rows), large)
    return "exact" if kind == "flat" else kind


def shipped_recall(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The shipped recall records (``path``: the shipped file), by index kind; none if the file is absent."""
    return read_table(path or SHIPPED_RECALL, "recall")


def ship_recall(records: dict[str, dict[str, Any]], path: Path | None = None) -> Path:
    """Write ``records`` (index kind to recall record) into the shipped recall (``path``: the shipped file),
    atomically, replacing the records of those kinds and keeping the others."""
    path = path or SHIPPED_RECALL
    write_table(path, SHIPPED_RECALL_ABOUT, "recall", shipped_recall(path) | records)
    log.info("wrote the recall of %s into %s", ", ".join(sorted(records)), path)
    return path


def expected_recall(index: str, path: Path | None = None) -> str:
    """What recall to expect of ``index``: 1.0 for exact search, else the planted-pair recall the mining benchmark
    measured for that index kind (from the shipped recall, ``path``), with the size and nprobe; says so when there
    is no such measurement."""
    if index == "exact":
        return "1.0 (exact search)"
    record = shipped_recall(path).get(index)
    if record is None:
        return f"not measured (no {index} run of benchmarks/mining_bench.py in {(path or SHIPPED_RECALL).name})"
    rows = record["sentences"]
    return (f"{record['recall_planted']:.3f} of the planted pairs, measured by benchmarks/mining_bench.py at {rows} x "
            f"{rows} sentences with nprobe={record['nprobe']}")


def describe_choice(index: str, src_rows: int, tgt_rows: int, effort: int | None, path: Path | None = None) -> str:
    """One line on what ``--index auto`` chose for ``src_rows`` x ``tgt_rows`` distinct sentences (``index``) and the
    recall to expect (from the shipped recall, ``path``); ``effort`` is the run's ``--nprobe`` (``None``: tuned)."""
    tuned = ("reach 98% of a sample's nearest neighbours from either side" if index == IVF_BF16 else
             "find 95% of a sample's nearest neighbours")
    search = ("" if index == "exact" else f"; this run: nprobe={effort}" if effort else
              f"; this run: nprobe tuned to {tuned}")
    return (f"--index auto: {index} for {src_rows} x {tgt_rows} distinct sentences; expected recall "
            f"{expected_recall(index, path)}{search}")
