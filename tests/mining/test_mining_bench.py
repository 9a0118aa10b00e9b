"""The mining benchmark's measuring core, in-process at a toy size (the script runs each method in a subprocess)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from xlsent.mining import faiss_index
from xlsent.mining.knn import KnnResult, bidirectional_knn, sample_bidirectional_knn
from xlsent.mining.margin import Margin, Mode, select_candidates
from xlsent.mining.stages import approx_shard_path


def test_exact_methods_mine_the_same_pairs(bench: ModuleType) -> None:
    runs = {m: bench.run_method(m, 400, 16, 4, 1, 4) for m in ("faiss-2pass", "one-pass", "one-pass-bf16", "ivf-fixed")}
    (_, base_pairs, base_knn), (ours_stats, ours_pairs, ours_knn) = runs["faiss-2pass"], runs["one-pass"]
    assert bench._pair_set(ours_pairs) == bench._pair_set(base_pairs)
    assert bench.compare_pairs(base_pairs, base_knn, ours_pairs, ours_knn).text() == "same pairs"
    assert len(base_pairs) >= 200 and ours_stats["total_s"] > 0 and ours_stats["rss_mib"] >= 0
    assert runs["ivf-fixed"][1].shape[1] == 2 and ours_knn.fwd_idx.shape == (400, 4)
    bf16_pairs, bf16_knn = runs["one-pass-bf16"][1:]
    assert bench.compare_pairs(ours_pairs, ours_knn, bf16_pairs, bf16_knn).text() == "same pairs"


def test_xlsent_score_gives_laser_score_mode_margins(bench: ModuleType) -> None:
    checked = bench.score_check(500, 16, 4)
    assert checked["max_diff"] <= bench.SCORE_TOLERANCE and checked["ours_s"] > 0


def _exact_knn(sims: np.ndarray, k: int) -> KnnResult:
    """Exact k-NN lists of a hand-written similarity matrix (sources x targets), best first."""
    fwd_idx, bwd_idx = (np.argsort(-m, axis=1, kind="stable")[:, :k] for m in (sims, sims.T))
    return KnnResult(fwd_idx, np.take_along_axis(sims, fwd_idx, 1), bwd_idx, np.take_along_axis(sims.T, bwd_idx, 1))


def _mined(knn: KnnResult) -> np.ndarray:
    src, tgt, _ = select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim, margin=Margin.RATIO,
                                    mode=Mode.MAX)
    return np.stack([src, tgt], axis=1)


def test_pairs_are_compared_up_to_near_ties_and_real_differences_still_differ(bench: ModuleType) -> None:
    # Targets 0 and 1 have the same k-NN similarities, so source 0 (at 0.8 to both) scores both the same ratio margin
    # (0.8 / ((0.8 + 0.55) / 2)); a float32-sized change (1e-7) of one cosine decides which one it takes.
    sims = np.array([[0.8, 0.8, 0.1], [0.2, 0.3, 0.7], [0.3, 0.2, 0.6]], np.float32)
    a, b, real = sims.copy(), sims.copy(), sims.copy()
    a[0, 1] -= 1e-7  # "method a" rounds (0, 1) down: source 0 takes target 0
    b[0, 0] -= 1e-7  # "method b" rounds (0, 0) down: source 0 takes target 1
    real[0, 1] -= 1e-7
    real[2, 2] = 0.9  # a real difference: source 2 now beats source 1 to target 2 (margin 1.29 against 1.08)
    knn = {name: _exact_knn(m, 2) for name, m in (("a", a), ("b", b), ("real", real))}
    pairs = {name: _mined(lists) for name, lists in knn.items()}
    assert bench._pair_set(pairs["a"]) == {(0, 0), (1, 2)} and bench._pair_set(pairs["b"]) == {(0, 1), (1, 2)}
    assert bench._pair_set(pairs["real"]) == {(0, 0), (2, 2)}

    src_tied, tgt_tied = bench.near_tie_sentences(knn["a"])
    assert src_tied.tolist() == [True, False, False] and not tgt_tied.any()
    assert bench.compare_pairs(pairs["a"], knn["a"], pairs["a"], knn["a"]).text() == "same pairs"
    tie = bench.compare_pairs(pairs["a"], knn["a"], pairs["b"], knn["b"])
    assert (tie.not_shared, tie.near_tie, tie.ties, tie.differ) == (2, 2, 1, 0)
    assert tie.text() == "same pairs up to 1 near-tie (2 pairs not shared; competing scores within 1e-05 relative)"
    strict = bench.compare_pairs(pairs["a"], knn["a"], pairs["b"], knn["b"], rtol=1e-9)  # 1e-7 is no tie at 1e-9
    assert strict.differ == 2 and strict.text() == "PAIRS DIFFER (2 not shared)"

    differ = bench.compare_pairs(pairs["a"], knn["a"], pairs["real"], knn["real"])
    assert (differ.not_shared, differ.near_tie, differ.differ) == (2, 0, 2)
    assert differ.text() == "PAIRS DIFFER (2 not shared)"
    both = bench.compare_pairs(pairs["b"], knn["b"], pairs["real"], knn["real"])  # the tie and the real difference
    assert (both.not_shared, both.near_tie, both.ties, both.differ) == (4, 2, 1, 2)
    assert both.text() == "PAIRS DIFFER (2 not shared, 2 more at near-ties)"


def test_knn_lists_that_differ_only_at_the_kth_place_are_a_near_tie(bench: ModuleType) -> None:
    idx, sim = np.array([[4, 7]]), np.array([[0.5, 0.3]], np.float32)
    other_idx, rounded = np.array([[4, 9]]), np.array([[0.5, 0.3 + 1e-7]], np.float32)  # 9 or 7 comes 2nd: rounding
    assert bench._boundary_ties(idx, sim, other_idx, rounded, 1e-5).tolist() == [True]
    far = np.array([[0.5, 0.31]], np.float32)  # neighbour 9 found 0.01 above the k-th of the other list: no tie
    assert bench._boundary_ties(idx, sim, other_idx, far, 1e-5).tolist() == [False]
    assert bench._boundary_ties(idx, sim, idx, far, 1e-5).tolist() == [False]  # same neighbours: nothing to excuse


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
    monkeypatch.setattr(faiss_index, "cores", lambda: 1)  # busy shared cores make multi-threaded k-means crawl
    bench.planted_corpus(tmp_path, 3000, 64, 0.3, 0.85, 0)
    stats = bench.run_approx(tmp_path, kind, 4, 16, 500, 0)
    assert stats["nlist"] == faiss_index.default_nlist(3000, kind)  # the pipeline's default
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
    from xlsent.mining import stages

    monkeypatch.setattr(stages, "approximate_knn", lambda *args, **kwargs: None)  # IVF would need too many lists
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
    assert bench.main(["--ship-recall-from", str(tmp_path / "elsewhere" / "mining-approx.json")]) == 0
    first = auto_index.shipped_recall()["ivfbf16"]
    assert (first["sentences"], first["nprobe"], first["k"]) == (1000, 8, 4) and "--out" in first["command"]
    monkeypatch.setattr(bench, "DEFAULT_OUT", tmp_path / "results")  # the repository's record ships at once
    assert bench.main([*argv, "--approx-nprobe", "4", "--approx-index", "ivfpqfs", "--out",
                       str(tmp_path / "results")]) == 0
    assert auto_index.shipped_recall()["ivfpqfs"]["nprobe"] == 4
    assert auto_index.shipped_recall()["ivfbf16"]["nprobe"] == 8  # the other kind's record is kept


def test_shipping_the_recall_from_a_bad_record_names_the_file(bench: ModuleType, tmp_path: Path) -> None:
    for name, text in (("broken.json", "not json"), ("embed.json", '{"bench": "embed"}'), ("list.json", "[]")):
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=name):
            bench.ship_recall_from(tmp_path / name)
    with pytest.raises(ValueError, match="missing.json"):
        bench.ship_recall_from(tmp_path / "missing.json")
