"""Exact one-pass bidirectional k-NN against brute force and FAISS; approximate indexes' recall."""

from __future__ import annotations

import doctest
import gc
import itertools
import logging
import tracemalloc
from pathlib import Path

import faiss
import numpy as np
import pytest

from xlsent.mining import knn as knn_module
from xlsent.mining.faiss_index import (
    approx_bidirectional_knn,
    build_index,
    default_nlist,
    fill_index,
    from_shard_form,
    merge_index,
    mergeable,
    serialized_shard_form,
    train_index,
    two_pass_faiss_knn,
)
from xlsent.mining.knn import (
    KnnResult,
    bidirectional_knn,
    recall,
    sample_bidirectional_knn,
    tile_shape,
)


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def brute_force(x: np.ndarray, y: np.ndarray, k: int) -> KnnResult:
    """Full similarity matrix, rows and columns sorted best first (ties: smaller index first)."""
    sims = x.astype(np.float64) @ y.astype(np.float64).T
    fwd = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    bwd = np.argsort(-sims.T, axis=1, kind="stable")[:, :k]
    return KnnResult(fwd, np.take_along_axis(sims, fwd, 1), bwd, np.take_along_axis(sims.T, bwd, 1))


def assert_knn_equal(got: KnnResult, want: KnnResult, x: np.ndarray, y: np.ndarray, *, exact_ties: bool) -> None:
    """Similarities match (whatever the tie order), each reported similarity is that of its index, and
    indices match exactly where ties cannot differ."""
    for idx, sim, want_idx, want_sim, a, b in ((got.fwd_idx, got.fwd_sim, want.fwd_idx, want.fwd_sim, x, y),
                                               (got.bwd_idx, got.bwd_sim, want.bwd_idx, want.bwd_sim, y, x)):
        assert idx.dtype == np.int64 and sim.dtype == np.float32 and idx.shape == want_idx.shape
        np.testing.assert_allclose(sim, want_sim, atol=1e-5)
        np.testing.assert_allclose(sim, np.einsum("id,ikd->ik", a, b[idx]), atol=1e-5)
        assert (np.diff(sim, axis=1) <= 0).all()
        if exact_ties:
            np.testing.assert_array_equal(idx, want_idx)


@pytest.mark.parametrize("block_rows", [None, 1, 7, 20])
@pytest.mark.parametrize(("n_x", "n_y", "k"), [(45, 38, 4), (30, 61, 1), (12, 9, 3)])
def test_one_pass_equals_brute_force(block_rows: int | None, n_x: int, n_y: int, k: int) -> None:
    rng = np.random.default_rng(n_x * n_y)
    x, y = unit_rows(rng, n_x, 16), unit_rows(rng, n_y, 16)
    got = bidirectional_knn(x, y, k, block_rows=block_rows)
    assert_knn_equal(got, brute_force(x, y, k), x, y, exact_ties=True)


@pytest.mark.parametrize("block_rows", [None, 5, 16])
def test_ties_go_to_the_smaller_index(block_rows: int | None) -> None:
    """Small-integer vectors give exactly tied similarities (and tiles full of candidates)."""
    rng = np.random.default_rng(1)
    x = rng.integers(-1, 2, size=(40, 3)).astype(np.float32)
    y = rng.integers(-1, 2, size=(50, 3)).astype(np.float32)
    got = bidirectional_knn(x, y, 4, block_rows=block_rows)
    assert_knn_equal(got, brute_force(x, y, 4), x, y, exact_ties=True)


def test_one_pass_equals_two_pass_faiss() -> None:
    rng = np.random.default_rng(2)
    x, y = unit_rows(rng, 300, 32), unit_rows(rng, 250, 32)
    assert_knn_equal(bidirectional_knn(x, y, 4, block_rows=64), two_pass_faiss_knn(x, y, 4), x, y, exact_ties=True)


def test_memmap_inputs_with_a_small_memory_budget(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    x, y = unit_rows(rng, 200, 24), unit_rows(rng, 150, 24).astype(np.float64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    xm, ym = np.load(tmp_path / "x.npy", mmap_mode="r"), np.load(tmp_path / "y.npy", mmap_mode="r")
    budget = 40_000
    rows, cols = tile_shape(200, 150, 24, budget)
    assert rows < 200 and cols < 150
    got = bidirectional_knn(xm, ym, 4, max_memory=budget)
    want = bidirectional_knn(x, y.astype(np.float32), 4)
    for a, b in zip((got.fwd_idx, got.fwd_sim, got.bwd_idx, got.bwd_sim),
                    (want.fwd_idx, want.fwd_sim, want.bwd_idx, want.bwd_sim), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_working_memory_stays_within_the_budget(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    n, dim, k, budget = 2000, 256, 4, 400_000
    for name in ("x", "y"):
        np.save(tmp_path / f"{name}.npy", unit_rows(rng, n, dim))
    xm, ym = np.load(tmp_path / "x.npy", mmap_mode="r"), np.load(tmp_path / "y.npy", mmap_mode="r")
    bidirectional_knn(xm[:50], ym[:50], k)  # first call: lazy imports would count
    tracemalloc.start()
    try:
        bidirectional_knn(xm, ym, k, max_memory=budget)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    results = 2 * n * k * 12
    # the lists of each core's span of sources, then their merge, hold up to 4x the final lists at once
    assert peak <= budget + 4 * results + 32_000, peak
    assert peak < n * dim * 4  # never a whole side in memory


def test_whole_file_memmaps_are_read_with_file_reads(tmp_path: Path) -> None:
    """Rows of a memmap from ``np.load`` come from file reads (mapped pages would stay in the RSS); views
    and copy-on-write maps, whose rows may not be where the file has them, are read through the mapping."""
    x = unit_rows(np.random.default_rng(10), 300, 12)
    np.save(tmp_path / "x.npy", x)
    xm = np.load(tmp_path / "x.npy", mmap_mode="r")
    block = knn_module._file_rows(xm, 100, 250)
    assert block is not None
    np.testing.assert_array_equal(block, x[100:250])
    assert knn_module._file_rows(xm[10:], 0, 5) is None
    assert knn_module._file_rows(np.load(tmp_path / "x.npy", mmap_mode="c"), 0, 5) is None
    np.testing.assert_array_equal(knn_module.take_rows(xm, np.array([299, 3, 150, 3])), x[[299, 3, 150, 3]])


@pytest.mark.parametrize("on_disk", [False, True])
def test_sample_knn_equals_the_full_search(on_disk: bool, tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    x, y = unit_rows(rng, 300, 16), unit_rows(rng, 250, 16)
    full = bidirectional_knn(x, y, 4)
    if on_disk:
        np.save(tmp_path / "x.npy", x)
        np.save(tmp_path / "y.npy", y)
        x, y = np.load(tmp_path / "x.npy", mmap_mode="r"), np.load(tmp_path / "y.npy", mmap_mode="r")
    rows = rng.choice(300, 40, replace=False)
    got = sample_bidirectional_knn(x, y, 4, rows)
    np.testing.assert_array_equal(got.rows, rows)
    np.testing.assert_array_equal(got.fwd_idx, full.fwd_idx[rows])
    np.testing.assert_array_equal(got.targets, np.unique(full.fwd_idx[rows]))
    np.testing.assert_array_equal(got.bwd_idx, full.bwd_idx[got.targets])
    np.testing.assert_allclose(got.fwd_sim, full.fwd_sim[rows], atol=1e-6)
    np.testing.assert_allclose(got.bwd_sim, full.bwd_sim[got.targets], atol=1e-6)
    with pytest.raises(ValueError, match="rows"):
        sample_bidirectional_knn(x, y, 4, np.array([300]))


def test_tile_shape_respects_the_budget() -> None:
    shape = tile_shape(10**7, 10**7, 1024, max_memory=64 << 20)
    assert knn_module._tile_bytes(*shape, 1024) <= 64 << 20 and shape[0] >= shape[1]
    assert tile_shape(3, 5, 8, block_rows=4) == (3, 4)
    with pytest.raises(ValueError, match="max_memory"):
        tile_shape(10, 10, 1024, max_memory=1000)


def test_k_larger_than_a_side_is_clipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    rng = np.random.default_rng(4)
    x, y = unit_rows(rng, 3, 8), unit_rows(rng, 10, 8)
    with caplog.at_level(logging.WARNING, logger="xlsent.mining.knn"):
        got = bidirectional_knn(x, y, 4)
    assert "k=4 exceeds" in caplog.text
    assert got.fwd_idx.shape == (3, 4) and got.bwd_idx.shape == (10, 3)
    assert_knn_equal(got, KnnResult(*_brute(x, y)), x, y, exact_ties=True)


def _brute(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    fwd, bwd = brute_force(x, y, 4), brute_force(y, x, 3)
    return fwd.fwd_idx, fwd.fwd_sim, bwd.fwd_idx, bwd.fwd_sim


@pytest.mark.parametrize(("x", "y", "message"), [
    (np.zeros((0, 4)), np.ones((3, 4)), "empty"),
    (np.ones((2, 4)), np.ones((3, 5)), "dimension mismatch"),
    (np.ones(4), np.ones((3, 4)), "2-d"),
    (np.full((2, 4), np.nan), np.ones((3, 4)), "NaN"),
])
def test_bad_inputs_are_errors(x: np.ndarray, y: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bidirectional_knn(x, y, 2)


@pytest.fixture
def one_faiss_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """FAISS on one OpenMP thread: on a shared machine with busy cores, spinning OpenMP threads can make
    k-means training (PQ above all) orders of magnitude slower."""
    monkeypatch.setattr(knn_module, "cores", lambda: 1)


def clustered(rng: np.random.Generator, centers: np.ndarray, n: int) -> np.ndarray:
    """Points around random cluster centers (unit norm), as sentence embeddings of topical corpora are."""
    v = centers[rng.integers(0, len(centers), n)] + 0.35 * rng.normal(size=(n, centers.shape[1]))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize(("kind", "effort", "min_recall"),
                         [("ivf", None, 0.95), ("ivf", 2, 0.9), ("hnsw", None, 0.95), ("ivfpq", None, 0.7),
                          ("ivfsq", None, 0.95), ("ivfpqfs", None, 0.95), ("auto", None, 1.0)])
@pytest.mark.usefixtures("one_faiss_thread")
def test_approximate_indexes_recover_nearest_neighbours(kind: str, effort: int | None, min_recall: float,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    rng = np.random.default_rng(6)
    centers = rng.normal(size=(30, 32))
    x, y = clustered(rng, centers, 1500), clustered(rng, centers, 1200)
    exact = bidirectional_knn(x, y, 4)
    with caplog.at_level(logging.INFO, logger="xlsent.mining.knn"):
        approx = approx_bidirectional_knn(x, y, 4, kind, nlist=24, pq_bits=4, hnsw_m=16, effort=effort,
                                          target_recall=min_recall, sample=200)
    assert "searching exactly instead" not in caplog.text
    assert approx.fwd_idx.shape == exact.fwd_idx.shape and approx.bwd_idx.shape == exact.bwd_idx.shape
    assert (approx.fwd_idx >= 0).all() and (approx.bwd_idx >= 0).all()
    assert recall(exact, approx) >= min_recall


@pytest.mark.usefixtures("one_faiss_thread")
def test_ivf_without_cluster_structure_falls_back_to_exact(caplog: pytest.LogCaptureFixture) -> None:
    rng = np.random.default_rng(8)
    x, y = unit_rows(rng, 600, 64), unit_rows(rng, 500, 64)
    with caplog.at_level(logging.WARNING, logger="xlsent.mining.knn"):
        approx = approx_bidirectional_knn(x, y, 4, "ivf", nlist=16, sample=100)
    assert "searching exactly instead" in caplog.text
    assert recall(bidirectional_knn(x, y, 4), approx) == 1.0


@pytest.mark.usefixtures("one_faiss_thread")
def test_build_index_kinds() -> None:
    y = unit_rows(np.random.default_rng(7), 400, 16)
    assert faiss.extract_index_ivf(build_index(y, "ivf", nlist=8)).nlist == 8
    assert build_index(y, "auto").ntotal == 400
    with pytest.raises(ValueError, match="unknown index kind"):
        build_index(y, "lsh")
    assert default_nlist(10**6, "ivfsq") == default_nlist(10**6, "ivfpqfs") == default_nlist(10**6) // 2
    for kind, index_type in (("ivfsq", faiss.IndexIVFScalarQuantizer), ("ivfpqfs", faiss.IndexRefine)):
        index = build_index(y, kind, nlist=8)
        assert isinstance(index, index_type) and index.ntotal == 400
        assert faiss.extract_index_ivf(index).nlist == 8
        copy = faiss.deserialize_index(faiss.serialize_index(index))  # `xlsent index` saves it
        np.testing.assert_array_equal(copy.search(y[:5], 3)[1], index.search(y[:5], 3)[1])


@pytest.mark.usefixtures("one_faiss_thread")
@pytest.mark.parametrize("kind", ["flat", "ivf", "ivfpq", "ivfsq", "ivfpqfs"])
def test_shards_filled_apart_merge_into_the_index_of_one_fill(kind: str) -> None:
    """Byte for byte, ``ivfpqfs`` included (its shards filled as a plain IVF-PQ, packed into fast-scan lists after
    the merge), whatever the shards' sizes: multiples of the fast-scan block (32) or not."""
    y = unit_rows(np.random.default_rng(3), 700, 16)
    trained = train_index(y, kind, nlist=8)
    assert mergeable(trained)
    whole = fill_index(faiss.deserialize_index(faiss.serialize_index(trained)), y)
    form = serialized_shard_form(trained)  # as the Ray engine sends it to its workers
    for bounds in ((0, 240, 480, 690, 700), (0, 32, 256, 288, 700)):  # 10 rows: too few for BLAS in FAISS
        merged = faiss.deserialize_index(form)
        for lo, hi in itertools.pairwise(bounds):
            part = fill_index(faiss.deserialize_index(form), y[lo:hi])
            merge_index(merged, faiss.deserialize_index(faiss.serialize_index(part)))
        joined = from_shard_form(trained, merged)
        del merged  # the index made of it lives on
        gc.collect()
        assert joined.ntotal == 700
        assert bytes(faiss.serialize_index(joined)) == bytes(faiss.serialize_index(whole))
        np.testing.assert_array_equal(joined.search(y[:50], 5)[1], whole.search(y[:50], 5)[1])


@pytest.mark.usefixtures("one_faiss_thread")
def test_graphs_are_not_merged() -> None:
    assert not mergeable(train_index(unit_rows(np.random.default_rng(3), 300, 16), "hnsw"))


@pytest.mark.usefixtures("one_faiss_thread")
def test_prebuilt_indexes_give_the_same_neighbours() -> None:
    rng = np.random.default_rng(12)
    centers = rng.normal(size=(10, 16))
    x, y = clustered(rng, centers, 300), clustered(rng, centers, 200)
    indexes = build_index(y, "ivfsq", nlist=8), build_index(x, "ivfsq", nlist=8)
    got = approx_bidirectional_knn(x, y, 4, "ivfsq", effort=4, indexes=indexes)
    want = approx_bidirectional_knn(x, y, 4, "ivfsq", nlist=8, effort=4)
    np.testing.assert_array_equal(got.fwd_idx, want.fwd_idx)
    np.testing.assert_array_equal(got.bwd_idx, want.bwd_idx)
    with pytest.raises(ValueError, match="indexes hold"):
        approx_bidirectional_knn(y, x, 4, indexes=indexes)


def test_docstring_examples() -> None:
    assert doctest.testmod(knn_module).failed == 0


def test_a_damaged_saved_shard_is_named_and_recomputed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from xlsent.mining.config import SearchConfig
    from xlsent.mining.stages import knn_shard_path, sharded_knn

    rng = np.random.default_rng(0)
    x, y = unit_rows(rng, 30, 8), unit_rows(rng, 20, 8)
    cfg = SearchConfig(k=3, shard_rows=10)
    first = sharded_knn(x, y, cfg, tmp_path)
    for shard, damage in ((0, b"garbage"), (1, knn_shard_path(tmp_path, 1).read_bytes()[:200])):
        knn_shard_path(tmp_path, shard).write_bytes(damage)
    with caplog.at_level(logging.WARNING):
        again = sharded_knn(x, y, cfg, tmp_path)
    assert "knn-00000.npz: truncated or unreadable" in caplog.text and "recomputing this shard" in caplog.text
    for field in ("fwd_idx", "fwd_sim", "bwd_idx", "bwd_sim"):
        assert np.array_equal(getattr(first, field), getattr(again, field))


def test_a_sharded_search_warns_of_k_for_the_corpus_not_for_each_shard(caplog: pytest.LogCaptureFixture) -> None:
    """Shards of fewer source rows than k clip their backward lists by design (merged over the shards); each shard
    warned 'k=4 exceeds the corpus size (2 sources, ...)' of a corpus that had 30."""
    from xlsent.mining.config import SearchConfig
    from xlsent.mining.stages import sharded_knn

    rng = np.random.default_rng(0)
    x, y = unit_rows(rng, 30, 8), unit_rows(rng, 24, 8)
    whole = sharded_knn(x, y, SearchConfig(k=4, shard_rows=1000), None)
    with caplog.at_level(logging.WARNING, logger="xlsent.mining"):
        sharded = sharded_knn(x, y, SearchConfig(k=4, shard_rows=2), None)
    assert "exceeds the corpus size" not in caplog.text
    np.testing.assert_array_equal(sharded.bwd_idx, whole.bwd_idx)
    with caplog.at_level(logging.WARNING, logger="xlsent.mining"):
        sharded_knn(x[:3], y, SearchConfig(k=4, shard_rows=2), None)
    assert caplog.text.count("k=4 exceeds the corpus size (3 sources, 24 targets)") == 1
