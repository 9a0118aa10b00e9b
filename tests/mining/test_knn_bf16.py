"""Exact k-NN with bf16 products: the fp32 lists (indices and fp32 similarities), candidates found in bf16."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from xlsent.encoders import backends
from xlsent.mining import knn_bf16, precision
from xlsent.mining.bf16_scan import kth_largest, merge_into, scan_tile
from xlsent.mining.knn import bidirectional_knn, read_rows
from xlsent.mining.knn_bf16 import bf16_bidirectional_knn, bf16_values
from xlsent.mining.margin import select_candidates


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def assert_same_lists(got, want, near: float = 1e-6) -> None:  # type: ignore[no-untyped-def]
    """fp32 similarities equal to 1e-6; indices equal but where two neighbours' similarities are within ``near``."""
    for idx, sim, want_idx, want_sim in ((got.fwd_idx, got.fwd_sim, want.fwd_idx, want.fwd_sim),
                                         (got.bwd_idx, got.bwd_sim, want.bwd_idx, want.bwd_sim)):
        assert idx.dtype == np.int64 and sim.dtype == np.float32 and idx.shape == want_idx.shape
        np.testing.assert_allclose(sim, want_sim, atol=1e-6)
        differ = idx != want_idx
        assert np.all(np.abs(sim[differ] - want_sim[differ]) <= near), "an index differs outside a near-tie"


@pytest.mark.parametrize(("n_x", "n_y", "k"), [(700, 900, 4), (130, 70, 3), (5, 9, 4), (1, 40, 2)])
def test_bf16_lists_equal_the_fp32_ones(n_x: int, n_y: int, k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(knn_bf16, "TILE_ROWS", 128)  # several tiles both ways, and partial ones
    monkeypatch.setattr(knn_bf16, "TILE_COLS", 256)
    rng = np.random.default_rng(n_x + n_y)
    x, y = unit_rows(rng, n_x, 32), unit_rows(rng, n_y, 32)
    assert_same_lists(bf16_bidirectional_knn(x, y, k), bidirectional_knn(x, y, k))


def test_planted_translations_are_found_among_dense_near_ties(monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """Sentence-embedding-like data: every vector near one common direction (cosines ~0.8, so bf16 rounds them
    0.004 apart) with planted pairs closer still. Lists whose bf16 candidates cannot prove them are searched again,
    and the mined pairs are those of fp32."""
    monkeypatch.setattr(knn_bf16, "TILE_ROWS", 256)
    monkeypatch.setattr(knn_bf16, "TILE_COLS", 256)
    rng = np.random.default_rng(5)
    common = rng.normal(size=64)
    x = common + 0.5 * rng.normal(size=(600, 64))
    y = np.concatenate([x[:300] + 0.15 * rng.normal(size=(300, 64)), common + 0.5 * rng.normal(size=(300, 64))])
    x, y = (v / np.linalg.norm(v, axis=1, keepdims=True) for v in (x.astype(np.float32), y.astype(np.float32)))
    with caplog.at_level(logging.DEBUG, logger="xlsent.mining.knn_bf16"):
        got = bf16_bidirectional_knn(x, y, 4)
    assert "not proven by their bf16 candidates" in caplog.text
    want = bidirectional_knn(x, y, 4)
    assert_same_lists(got, want)
    pairs = [select_candidates(r.fwd_idx, r.fwd_sim, r.bwd_idx, r.bwd_sim) for r in (got, want)]
    assert {*zip(*pairs[0][:2], strict=True)} == {*zip(*pairs[1][:2], strict=True)}


def test_negative_similarities_and_memmaps(tmp_path: Path) -> None:
    """Anti-correlated sides (every similarity negative: thresholds that are not positive take every entry) read
    from memmaps."""
    rng = np.random.default_rng(7)
    base = unit_rows(rng, 1, 16)
    x = unit_rows(rng, 80, 16) * 0.1 + base
    y = unit_rows(rng, 90, 16) * 0.1 - base
    x, y = (v / np.linalg.norm(v, axis=1, keepdims=True) for v in (x, y))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    xm, ym = np.load(tmp_path / "x.npy", mmap_mode="r"), np.load(tmp_path / "y.npy", mmap_mode="r")
    got = bf16_bidirectional_knn(xm, ym, 3)
    assert (got.fwd_sim < 0).all()
    assert_same_lists(got, bidirectional_knn(x, y, 3))


def test_scan_keeps_exactly_the_entries_at_or_above_a_threshold() -> None:
    rng = np.random.default_rng(3)
    tile = rng.integers(-2000, 2000, size=(40, 150)).astype(np.int16)
    row_bits = rng.integers(1500, 2000, size=40).astype(np.int16)
    col_bits = rng.integers(1700, 2000, size=150).astype(np.int16)
    f_row, f_col, f_val, n_f, b_row, b_col, b_val, n_b = scan_tile(tile, 3, 37, 150, row_bits, col_bits, 4)
    assert n_f > 4 and n_b > 4  # too little room: counted, to scan again
    f_row, f_col, f_val, n_f, b_row, b_col, b_val, n_b = scan_tile(tile, 3, 37, 150, row_bits, col_bits, n_f + n_b)
    rows = np.arange(40)[:, None]
    want_f = {(i, j) for i, j in zip(*np.nonzero((tile >= row_bits[:, None]) & (rows >= 3) & (rows < 37)),
                                     strict=True)}
    want_b = {(i, j) for i, j in zip(*np.nonzero((tile >= col_bits[None, :]) & (rows >= 3) & (rows < 37)),
                                     strict=True)}
    assert {*zip(f_row[:n_f].tolist(), f_col[:n_f].tolist(), strict=True)} == want_f
    assert {*zip(b_row[:n_b].tolist(), b_col[:n_b].tolist(), strict=True)} == want_b
    np.testing.assert_array_equal(f_val[:n_f], tile[f_row[:n_f], f_col[:n_f]])
    assert kth_largest(tile, np.array([0, 5]), 150, 3).tolist() == [np.sort(tile[r])[-3] for r in (0, 5)]


def test_merge_keeps_the_best_with_ties_to_the_smaller_index() -> None:
    sim = np.full((2, 3), -np.inf, np.float32)
    idx = np.full((2, 3), -1, np.int64)
    merge_into(sim, idx, np.array([0, 0, 0, 0, 1]), np.array([9, 4, 7, 2, 5]),
               np.array([0.5, 0.5, 0.9, 0.1, 0.3], np.float32))
    merge_into(sim, idx, np.array([0]), np.array([1]), np.array([0.5], np.float32))
    assert idx.tolist() == [[7, 1, 4], [5, -1, -1]] and sim[0].tolist() == [0.8999999761581421, 0.5, 0.5]
    assert bf16_values(np.array([0x3F80], np.int16)).tolist() == [1.0]


def test_auto_precision_follows_the_shipped_measurement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "knn_precision.json"
    monkeypatch.setattr(precision, "SHIPPED_PRECISION", table)
    monkeypatch.setattr(precision, "cpu_class", lambda: "amx")
    precision.measured_choice.cache_clear()
    big = precision.BF16_MIN_ROWS
    assert precision.resolve_precision("auto", big, big) == "fp32"  # no measurement: fp32
    precision.ship_precision("amx", {"fp32_s": 10.0, "bf16_s": 4.0}, table)
    precision.measured_choice.cache_clear()
    assert precision.resolve_precision("auto", big, big) == "bf16"
    assert precision.resolve_precision("auto", big - 1, big) == "fp32"  # small corpora: fp32
    assert precision.resolve_precision("fp32", big, big) == "fp32"
    precision.ship_precision("amx", {"fp32_s": 3.0, "bf16_s": 4.0}, table)
    precision.measured_choice.cache_clear()
    assert precision.resolve_precision("auto", big, big) == "fp32"
    precision.measured_choice.cache_clear()
    with pytest.raises(ValueError, match="precision must be one of auto, fp32, bf16"):
        precision.resolve_precision("fp16", 1, 1)


@pytest.mark.parametrize(("flags", "choice"), [({"avx2", "avx512_vnni"}, "fp32"),
                                               ({"avx2", "avx512_vnni", "avx512_bf16"}, "bf16")])
def test_a_cpu_without_native_bf16_does_not_take_the_row_of_one_with_it(
        flags: set[str], choice: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the shipped row measured on an AVX512-BF16 EPYC (bf16 1.8x faster) was filed under avx512-vnni, the class of
    # CPUs that emulate bf16 too: there auto took bf16
    monkeypatch.setattr(backends, "cpu_flags", lambda: frozenset(flags))
    monkeypatch.setenv("XLSENT_AUTO_MEASURE", "0")
    precision.measured_choice.cache_clear()
    try:
        assert precision.measured_choice() == choice
    finally:
        precision.measured_choice.cache_clear()


def test_read_only_embeddings_become_writable_tiles_torch_can_share() -> None:
    """Given embeddings loaded read-only: torch.from_numpy of a read-only block warns on stderr (even with -q)."""
    vectors = np.eye(4, dtype=np.float32)
    vectors.flags.writeable = False
    block = read_rows(vectors, 1, 3)
    assert block.flags.writeable and block.tolist() == vectors[1:3].tolist()
