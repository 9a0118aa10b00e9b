"""The bf16 inverted file (``--index ivfbf16``): its kernels against plain numpy, its lists against exact search."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xlsent.mining import ivf_bf16
from xlsent.mining.bf16_scan import merge_into
from xlsent.mining.config import Candidates, MineConfig
from xlsent.mining.ivf_bf16 import IvfShape, ivf_bf16_knn, nearest_columns
from xlsent.mining.knn import bidirectional_knn
from xlsent.mining.stages import FolderStore, mine_arrays


def _unit(a: np.ndarray) -> np.ndarray:
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)


def _planted(n: int, dim: int, cos: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random unit sources; targets: copies of a shuffled half of them at cosine ``cos``, random rows otherwise;
    ``copy_of[t]`` is the source of target t (-1 for random targets)."""
    rng = np.random.default_rng(seed)
    x = _unit(rng.normal(size=(n, dim)))
    y = _unit(rng.normal(size=(n, dim)))
    copy_of = np.full(n, -1)
    chosen = rng.permutation(n)[: n // 2]
    noise = _unit(rng.normal(size=(len(chosen), dim)))
    noise = _unit(noise - (noise * x[chosen]).sum(1, keepdims=True) * x[chosen])
    y[: len(chosen)] = _unit(cos * x[chosen] + np.sqrt(1 - cos**2) * noise)
    copy_of[: len(chosen)] = chosen
    return x, y, copy_of


def _check_nearest(got: np.ndarray, products: np.ndarray) -> None:
    """``got`` holds, per row, the columns of the largest ``products``: the largest first (the smaller column among
    equals), the others in any order."""
    m = got.shape[1]
    columns = np.broadcast_to(np.arange(products.shape[1]), products.shape)
    assert (got[:, 0] == np.lexsort((columns, -products), axis=1)[:, 0]).all()
    assert all(len(set(row)) == m for row in got.tolist())
    chosen = np.sort(np.take_along_axis(products, got, 1), axis=1)
    assert (chosen == np.sort(products, axis=1)[:, -m:]).all()


@pytest.mark.parametrize("m", [1, 3, 40, 130])
def test_nearest_columns_are_those_of_the_largest_products(m: int) -> None:
    rng = np.random.default_rng(1)
    rows = torch.from_numpy(rng.normal(size=(300, 16)).astype(np.float32)).to(torch.bfloat16)
    cols = torch.from_numpy(rng.normal(size=(500, 16)).astype(np.float32)).to(torch.bfloat16)
    cols[7] = cols[3]  # an exact tie: column 3 first where it is the largest
    _check_nearest(nearest_columns(rows, cols, m), (rows @ cols.T).float().numpy())


def test_nearest_columns_rank_negative_products_too() -> None:
    rng = np.random.default_rng(2)
    rows = torch.from_numpy(rng.normal(size=(50, 8)).astype(np.float32)).to(torch.bfloat16)
    cols = torch.from_numpy(rng.normal(size=(12, 8)).astype(np.float32)).to(torch.bfloat16)
    _check_nearest(nearest_columns(rows, cols, 12), (rows @ cols.T).float().numpy())
    _check_nearest(nearest_columns(-rows.abs(), cols.abs(), 5), (-rows.abs() @ cols.abs().T).float().numpy())


def test_offer_inserts_in_order_and_never_twice() -> None:
    idx = np.array([[5, 2, -1]], dtype=np.int64)
    sim = np.array([[0.9, 0.5, -np.inf]], dtype=np.float32)
    merge_into(sim, idx, np.array([0, 0, 0, 0]), np.array([2, 8, 1, 4]), np.array([0.5, 0.7, 0.1, 0.7], np.float32),
               True)
    assert idx.tolist() == [[5, 4, 8]]  # 2 was held already; 4 and 8 tie at 0.7: the smaller first; 1 drops out
    assert sim[0].tolist() == pytest.approx([0.9, 0.7, 0.7])


def test_probing_every_list_gives_the_exact_lists() -> None:
    x, y, _ = _planted(1500, 24, 0.9)
    got = ivf_bf16_knn(x, y, 3, IvfShape(nlist=12, nprobe=12))
    want = bidirectional_knn(x, y, 3)
    assert got is not None
    assert (got.fwd_idx == want.fwd_idx).mean() > 0.99 and (got.bwd_idx == want.bwd_idx).mean() > 0.99
    same = got.fwd_idx == want.fwd_idx
    np.testing.assert_allclose(got.fwd_sim[same], want.fwd_sim[same], atol=1e-5)


def test_planted_copies_are_found_from_either_side() -> None:
    x, y, copy_of = _planted(4000, 32, 0.85)
    got = ivf_bf16_knn(x, y, 4, IvfShape(nlist=64, nprobe=8))
    assert got is not None
    targets = np.flatnonzero(copy_of >= 0)
    found = (got.fwd_idx[copy_of[targets]] == targets[:, None]).any(axis=1)
    found_back = (got.bwd_idx[targets] == copy_of[targets][:, None]).any(axis=1)
    assert found.mean() > 0.95
    assert (found == found_back).all()  # a pair found in one direction is offered to the other


def test_a_rerun_reuses_the_finished_directions(tmp_path, monkeypatch) -> None:
    x, y, _ = _planted(800, 16, 0.9)
    first = ivf_bf16_knn(x, y, 2, IvfShape(nlist=8, nprobe=2), store=FolderStore(tmp_path))
    assert first is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ivfbf16-bwd.npz", "ivfbf16-centroids-8.npz",
                                                         "ivfbf16-fwd.npz"]

    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("a finished direction was searched again")

    monkeypatch.setattr(ivf_bf16, "search_direction", no_search)
    again = ivf_bf16_knn(x, y, 2, IvfShape(nlist=8, nprobe=2), store=FolderStore(tmp_path))
    assert again is not None
    assert (again.fwd_idx == first.fwd_idx).all() and (again.bwd_sim == first.bwd_sim).all()


def test_data_without_clusters_falls_back_to_exact_search() -> None:
    rng = np.random.default_rng(3)
    x, y = _unit(rng.normal(size=(600, 64))), _unit(rng.normal(size=(600, 64)))
    assert ivf_bf16_knn(x, y, 2, IvfShape(nlist=15)) is None  # tuned nprobe would scan more than an eighth


def test_mining_with_ivfbf16_keeps_the_pairs_of_exact_search() -> None:
    x, y, copy_of = _planted(3000, 32, 0.9, seed=4)

    def kept(cands: Candidates) -> set[tuple[int, int]]:
        above = cands.score >= 1.3
        return set(zip(cands.src[above].tolist(), cands.tgt[above].tolist(), strict=True))

    approx = kept(mine_arrays(x, y, MineConfig(index="ivfbf16", effort=16)))
    exact = kept(mine_arrays(x, y, MineConfig()))
    assert len(exact) >= 0.9 * (copy_of >= 0).sum()
    assert len(approx & exact) >= 0.99 * len(exact) and len(approx - exact) <= 0.01 * len(exact)
