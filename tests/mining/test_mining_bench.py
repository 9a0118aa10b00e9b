"""The mining benchmark's measuring core, in-process at a toy size (the script runs each method in a subprocess)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "mining_bench.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mining_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_exact_methods_mine_the_same_pairs() -> None:
    bench = load_bench()
    runs = {m: bench.run_method(m, 400, 16, 4, 1, 4) for m in ("faiss-2pass", "one-pass", "ivf-fixed")}
    base_pairs, (ours_stats, ours_pairs) = runs["faiss-2pass"][1], runs["one-pass"]
    assert bench._pair_set(ours_pairs) == bench._pair_set(base_pairs)
    assert len(base_pairs) >= 200 and ours_stats["total_s"] > 0 and ours_stats["rss_mib"] >= 0
    assert runs["ivf-fixed"][1].shape[1] == 2


def test_unit_vectors_are_unit_and_seeded() -> None:
    bench = load_bench()
    v = bench.unit_vectors(5000, 8, 3)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(v, bench.unit_vectors(5000, 8, 3))
