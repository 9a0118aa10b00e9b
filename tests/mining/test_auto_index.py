"""``--index auto``: the size rule shared with ``xlsent index --kind auto``, and the recall read from bench records."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xlsent.mining import knn
from xlsent.mining.auto_index import BENCH_DIR, choose_index, describe_choice, expected_recall


def write_record(folder: Path, rows: list[dict[str, object]]) -> Path:
    """A mining bench record with ``rows`` in ``folder``."""
    folder.mkdir(exist_ok=True)
    record = {"bench": "mining", "machine": {}, "rows": rows, "notes": [], "created": "2026-01-01T00:00:00Z"}
    (folder / "mining.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


def test_the_size_rule_is_the_sentence_index_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert choose_index(knn.AUTO_FLAT_MAX_ROWS - 1, 10) == "exact"
    assert choose_index(10, knn.AUTO_FLAT_MAX_ROWS) == "ivfpqfs"
    monkeypatch.setattr(knn, "AUTO_FLAT_MAX_ROWS", 5)  # one constant decides both
    assert choose_index(5, 1) == "ivfpqfs"
    assert knn.build_index(np.eye(5, dtype=np.float32)).__class__.__name__ != "IndexFlatIP"


def test_expected_recall_comes_from_the_largest_measured_run(tmp_path: Path) -> None:
    rows = [{"case": "approx N=1000 ivfpqfs nprobe=8", "checks": {"recall planted": 0.9}},
            {"case": "approx N=50000 ivfpqfs nprobe=64", "checks": {"recall planted": 0.987654}},
            {"case": "approx N=90000 ivfsq nprobe=64", "checks": {"recall planted": 0.5}},
            {"case": "exact N=10000 one-pass", "checks": {"same pairs as baseline": True}}]
    bench = write_record(tmp_path / "bench", rows)
    assert expected_recall("ivfpqfs", bench) == ("0.988 of the planted pairs, measured by benchmarks/mining_bench.py "
                                                 "at 50000 x 50000 sentences with nprobe=64")
    assert expected_recall("exact", bench) == "1.0 (exact search)"
    assert expected_recall("hnsw", bench).startswith("not measured (no hnsw run in ")
    assert expected_recall("ivfpqfs", tmp_path / "nowhere").startswith("not measured")
    line = describe_choice("ivfpqfs", 300_000, 20, None, bench)
    assert line.startswith("--index auto: ivfpqfs for 300000 x 20 distinct sentences; expected recall 0.988")
    assert line.endswith("nprobe tuned to find 95% of a sample's nearest neighbours")


def test_the_repository_record_has_a_recall_for_the_large_kind() -> None:
    if not (BENCH_DIR / "mining.json").is_file():
        pytest.skip(f"no bench record in {BENCH_DIR}")
    assert expected_recall(choose_index(10**6, 10**6)).split()[0].replace(".", "").isdigit()
