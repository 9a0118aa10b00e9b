"""The mining benchmark's measuring core, in-process at a toy size (the script runs each method in a subprocess)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from xlsent.mining import knn as knn_module
from xlsent.mining.knn import bidirectional_knn, sample_bidirectional_knn
from xlsent.mining.margin import Margin, Mode, select_candidates
from xlsent.mining.pipeline import approx_shard_path


def test_exact_methods_mine_the_same_pairs(bench: ModuleType) -> None:
    runs = {m: bench.run_method(m, 400, 16, 4, 1, 4) for m in ("faiss-2pass", "one-pass", "ivf-fixed")}
    base_pairs, (ours_stats, ours_pairs) = runs["faiss-2pass"][1], runs["one-pass"]
    assert bench._pair_set(ours_pairs) == bench._pair_set(base_pairs)
    assert len(base_pairs) >= 200 and ours_stats["total_s"] > 0 and ours_stats["rss_mib"] >= 0
    assert runs["ivf-fixed"][1].shape[1] == 2


def test_unit_vectors_are_unit_and_seeded(bench: ModuleType) -> None:
    v = bench.unit_vectors(5000, 8, 3)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(v, bench.unit_vectors(5000, 8, 3))


def test_planted_corpus_is_seeded_and_has_its_copies(bench: ModuleType, tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        bench.planted_corpus(tmp_path / name, 3000, 32, 0.3, 0.85, 5)
    x, y, planted = (np.load(tmp_path / "a" / f"{f}.npy") for f in ("x", "y", "planted"))
    assert x.shape == y.shape == (3000, 32) and x.dtype == y.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(np.concatenate([x, y]), axis=1), 1.0, rtol=1e-5)
    has_copy = planted >= 0
    assert has_copy.sum() == 900 and len(np.unique(planted[has_copy])) == 900
    cos = np.einsum("ij,ij->i", x[has_copy], y[planted[has_copy]])
    assert abs(cos.mean() - 0.85) < 0.02 and cos.min() > 0.6
    for f in ("x", "y", "planted"):
        np.testing.assert_array_equal(np.load(tmp_path / "a" / f"{f}.npy"), np.load(tmp_path / "b" / f"{f}.npy"))


def test_exact_forward_best_of_a_sample_is_that_of_the_full_search(bench: ModuleType) -> None:
    x, y = bench.unit_vectors(500, 16, 1), bench.unit_vectors(400, 16, 2)
    full = bidirectional_knn(x, y, 4)
    forward = select_candidates(full.fwd_idx, full.fwd_sim, full.bwd_idx, full.bwd_sim, margin=Margin.RATIO,
                                mode=Mode.FORWARD)[1]
    rows = np.arange(0, 500, 7)
    np.testing.assert_array_equal(bench.exact_forward_best(sample_bidirectional_knn(x, y, 4, rows)), forward[rows])


@pytest.mark.parametrize("kind", ["ivfpqfs", "ivfsq"])
def test_approximate_run_finds_the_planted_pairs(bench: ModuleType, kind: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(knn_module, "cores", lambda: 1)  # busy shared cores make multi-threaded k-means crawl
    bench.planted_corpus(tmp_path, 3000, 64, 0.3, 0.85, 0)
    stats = bench.run_approx(tmp_path, kind, 4, 16, 500, 0)
    assert stats["nlist"] == knn_module.default_nlist(3000, kind)  # the pipeline's default
    # mined by xlsent mine's path: one query shard file per direction (shards of 200k rows) in the work folder
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == [
        approx_shard_path(tmp_path / "work", kind, direction, 0).name for direction in ("bwd", "fwd")]
    assert stats["sampled"] == 500 and 100 < stats["sampled_planted"] < 200
    assert stats["exact_is_planted"] == 1.0 and stats["recall_planted"] >= 0.95
    assert 0 < stats["recall_all"] <= 1 and stats["pairs"] >= 900
    assert stats["build_s"] > 0 and stats["search_s"] > 0 and stats["rss_mib"] > 0
    assert stats["total_s"] == pytest.approx(stats["build_s"] + stats["search_s"] + stats["margin_s"])
    assert bench._verdict(3000, stats).startswith("-")
    fast = stats | {"total_s": 60.0, "rss_mib": 1024.0}  # this process's RSS depends on the tests run before
    assert bench._verdict(10**6, fast) == "PASS"
    assert bench._verdict(10**6, fast | {"total_s": 10**4, "recall_planted": 0.9}) == "FAIL (time, recall)"


def test_an_approximate_run_that_falls_back_to_exact_search_fails(bench: ModuleType, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from xlsent.mining import pipeline

    monkeypatch.setattr(pipeline, "approximate_knn", lambda *args, **kwargs: None)  # IVF would need too many lists
    bench.planted_corpus(tmp_path, 200, 8, 0.3, 0.85, 0)
    with pytest.raises(RuntimeError, match="exact search is faster"):
        bench.run_approx(tmp_path, "ivfsq", 4, 4, 50, 0)


def test_the_recall_is_shipped_from_the_default_record_or_on_request(bench: ModuleType, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from xlsent.mining import auto_index

    shipped = tmp_path / "index_recall.json"
    monkeypatch.setattr(auto_index, "SHIPPED_RECALL", shipped)
    argv = ["--sizes", "--approx-sizes", "1000", "--dim", "16", "--recall-sample", "100", "--approx-nprobe", "8"]
    assert bench.main([*argv, "--out", str(tmp_path / "elsewhere")]) == 0
    assert not shipped.exists()  # a record written elsewhere ships nothing
    assert bench.main(["--ship-recall-from", str(tmp_path / "elsewhere" / "mining.json")]) == 0
    first = auto_index.shipped_recall()["ivfpqfs"]
    assert (first["sentences"], first["nprobe"], first["k"]) == (1000, 8, 4) and "--out" in first["command"]
    monkeypatch.setattr(bench, "DEFAULT_OUT", tmp_path / "results")  # the repository's record ships at once
    assert bench.main([*argv, "--approx-nprobe", "4", "--out", str(tmp_path / "results")]) == 0
    assert auto_index.shipped_recall()["ivfpqfs"]["nprobe"] == 4
