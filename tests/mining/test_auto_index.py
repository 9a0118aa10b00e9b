"""``--index auto``: the size rule shared with ``xlsent index --kind auto``, and the recall shipped with xlsent (package
data written by the mining benchmark)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from xlsent.mining import auto_index
from xlsent.mining import faiss_index as knn
from xlsent.mining.auto_index import (
    SHIPPED_RECALL,
    choose_index,
    describe_choice,
    expected_recall,
    ship_recall,
    shipped_recall,
)

ROOT = Path(__file__).resolve().parents[2]


def bench_record(rows: list[dict[str, object]]) -> dict[str, object]:
    """A mining bench record with ``rows``, as ``benchmarks/mining_bench.py`` writes it."""
    arguments = {"k": 4, "dim": 384, "seed": 0, "planted": 0.3, "planted_cos": 0.85, "recall_sample": 2000}
    return {"bench": "mining", "command": "python benchmarks/mining_bench.py", "arguments": arguments,
            "machine": {"cpu": "EPYC", "cores": 2, "ram_gib": 8.0, "platform": "Linux", "xlsent": "0.1.0",
                        "packages": {"faiss-cpu": "1.15.1"}},
            "rows": rows, "notes": [], "created": "2026-01-01T00:00:00Z"}


def approx_row(case: str, planted: float) -> dict[str, object]:
    """An approximate row of a mining bench record."""
    return {"case": case, "checks": {"recall planted": planted, "recall all": 0.3}, "details": {"nlist": 40}}


def test_the_size_rule_is_the_sentence_index_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auto_index, "measured_choice", lambda: "fp32")
    assert choose_index(knn.AUTO_FLAT_MAX_ROWS - 1, 10) == "exact"
    assert choose_index(10, knn.AUTO_FLAT_MAX_ROWS) == "ivfpqfs"
    monkeypatch.setattr(knn, "AUTO_FLAT_MAX_ROWS", 5)  # one constant decides both
    assert choose_index(5, 1) == "ivfpqfs"
    assert knn.build_index(np.eye(5, dtype=np.float32)).__class__.__name__ != "IndexFlatIP"


def test_large_corpora_take_the_bf16_inverted_file_where_bf16_products_are_measured_faster(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auto_index, "measured_choice", lambda: "bf16")
    assert choose_index(10, knn.AUTO_FLAT_MAX_ROWS) == "ivfbf16"
    assert choose_index(knn.AUTO_FLAT_MAX_ROWS - 1, 10) == "exact"


def test_expected_recall_is_read_from_the_shipped_file(bench: ModuleType, tmp_path: Path) -> None:
    record = bench_record([approx_row("approx N=1000 ivfpqfs nprobe=8", 0.9),
                           approx_row("approx N=50000 ivfpqfs nprobe=64", 0.987654),
                           approx_row("approx N=9000 ivfsq nprobe=16", 0.5),
                           {"case": "exact N=10000 one-pass", "checks": {"same pairs as baseline": True}}])
    shipped = tmp_path / "index_recall.json"
    ship_recall(bench.recall_records(record), shipped)
    assert expected_recall("ivfpqfs", shipped) == ("0.988 of the planted pairs, measured by benchmarks/mining_bench.py "
                                                   "at 50000 x 50000 sentences with nprobe=64")  # the largest run
    assert expected_recall("ivfsq", shipped).startswith("0.500 of the planted pairs")
    assert expected_recall("exact", shipped) == "1.0 (exact search)"
    assert expected_recall("hnsw", shipped) == ("not measured (no hnsw run of benchmarks/mining_bench.py in "
                                                "index_recall.json)")
    assert expected_recall("ivfpqfs", tmp_path / "nowhere.json").startswith("not measured (no ivfpqfs run")
    line = describe_choice("ivfpqfs", 300_000, 20, None, shipped)
    assert line.startswith("--index auto: ivfpqfs for 300000 x 20 distinct sentences; expected recall 0.988")
    assert line.endswith("nprobe tuned to find 95% of a sample's nearest neighbours")
    entry = shipped_recall(shipped)["ivfpqfs"]
    assert entry["date"] == "2026-01-01" and entry["nlist"] == 40 and "platform" not in entry["machine"]
    assert "30% of the N targets" in entry["corpus"] and entry["command"] == "python benchmarks/mining_bench.py"


def test_shipping_a_kind_keeps_the_others(bench: ModuleType, tmp_path: Path) -> None:
    shipped = tmp_path / "index_recall.json"
    ship_recall(bench.recall_records(bench_record([approx_row("approx N=9000 ivfsq nprobe=16", 0.5)])), shipped)
    ship_recall(bench.recall_records(bench_record([approx_row("approx N=2000 ivfpqfs nprobe=8", 0.75)])), shipped)
    assert sorted(shipped_recall(shipped)) == ["ivfpqfs", "ivfsq"]
    assert [p.name for p in tmp_path.iterdir()] == ["index_recall.json"]  # written atomically: no temporary left
    assert json.loads(shipped.read_text(encoding="utf-8"))["about"].startswith("Recall of the approximate index kinds")


def test_the_shipped_file_is_package_data_with_a_recall_for_the_large_kind() -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "mining/index_recall.json" in package_data["package-data"]["xlsent"]
    large = shipped_recall()[choose_index(10**6, 10**6)]
    assert 0 < large["recall_planted"] <= 1 and large["sentences"] >= 10**6
    assert {"recall_all", "nprobe", "command", "date", "machine", "corpus", "method"} <= large.keys()
    assert expected_recall(choose_index(10**6, 10**6)).split()[0].replace(".", "").isdigit()
    assert SHIPPED_RECALL.parent == Path(knn.__file__).parent


def test_auto_index_does_not_import_the_evaluation_package() -> None:
    code = "import sys, xlsent.mining.auto_index; print(sorted(m for m in sys.modules if m.startswith('xlsent.eval')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
