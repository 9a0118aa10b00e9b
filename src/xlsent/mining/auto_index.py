"""``xlsent mine --index auto``: the search chosen by corpus size, and the recall measured for it.

The size rule is :func:`xlsent.mining.knn.auto_index_kind`, the one ``xlsent index --kind auto`` uses: exact
below ``AUTO_FLAT_MAX_ROWS`` distinct sentences on the larger side (mining searches exactly with its own one-pass
k-NN rather than a flat FAISS index, same lists), and above it ``ivfpqfs``, the kind the mining benchmark
(``benchmarks/mining_bench.py``) measures at a million sentences a side. The expected recall is read from that
benchmark's record (``results/bench/mining.json``), never copied into the code: exact search finds every
neighbour (1.0).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from xlsent.evaluation.report_bench import load_bench_records
from xlsent.mining.knn import auto_index_kind

log = logging.getLogger(__name__)

AUTO_LARGE_KIND = "ivfpqfs"
BENCH_DIR = Path(__file__).resolve().parents[3] / "results" / "bench"
_APPROX_CASE = re.compile(r"approx N=(\d+) (\S+) nprobe=(\d+)")


def choose_index(src_rows: int, tgt_rows: int) -> str:
    """The ``--index`` that ``auto`` stands for with ``src_rows`` x ``tgt_rows`` distinct sentences.

    >>> choose_index(40_000, 1_000), choose_index(150_000, 1_500_000)
    ('exact', 'ivfpqfs')
    """
    kind = auto_index_kind(max(src_rows, tgt_rows), AUTO_LARGE_KIND)
    return "exact" if kind == "flat" else kind


def expected_recall(index: str, bench_dir: Path = BENCH_DIR) -> str:
    """What recall to expect of ``index``: 1.0 for exact search, else the planted-pair recall the mining benchmark
    measured for that index kind at its largest size (from ``bench_dir/mining.json``), with the size and nprobe;
    says so when there is no such measurement."""
    if index == "exact":
        return "1.0 (exact search)"
    measured = [(int(found[1]), int(found[3]), row["checks"]["recall planted"])
                for record in load_bench_records(bench_dir) if record["bench"] == "mining"
                for row in record["rows"] if (found := _APPROX_CASE.fullmatch(row["case"])) and found[2] == index
                and "recall planted" in row.get("checks", {})]
    if not measured:
        return f"not measured (no {index} run in {bench_dir / 'mining.json'})"
    rows, nprobe, value = max(measured)
    return (f"{value:.3f} of the planted pairs, measured by benchmarks/mining_bench.py at {rows} x {rows} sentences "
            f"with nprobe={nprobe}")


def describe_choice(index: str, src_rows: int, tgt_rows: int, effort: int | None, bench_dir: Path = BENCH_DIR) -> str:
    """One line on what ``--index auto`` chose for ``src_rows`` x ``tgt_rows`` distinct sentences (``index``) and the
    recall to expect; ``effort`` is the run's ``--nprobe`` (``None``: tuned)."""
    search = "" if index == "exact" else (f"; this run: nprobe={effort}" if effort else
                                          "; this run: nprobe tuned to find 95% of a sample's nearest neighbours")
    return (f"--index auto: {index} for {src_rows} x {tgt_rows} distinct sentences; expected recall "
            f"{expected_recall(index, bench_dir)}{search}")
