from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from xlsent.encoders.transformer import TransformerEncoder
from xlsent.methods.dueam import wmd as wmd_module
from xlsent.methods.dueam.wmd import (
    Idf,
    WmdCache,
    WmdCacheError,
    WmdSettings,
    content_ids,
    pair_distances,
    pair_keys,
    token_weights,
    unit_rows,
    wmd,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _cost(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.array([[np.linalg.norm(a - b) for b in y] for a in x])


def _brute_force(x: np.ndarray, y: np.ndarray) -> float:
    """Equal sizes, uniform weights: the optimal plan is a permutation (Birkhoff), mass 1/n per token."""
    cost = _cost(x, y)
    n = len(x)
    return min(sum(cost[i, p[i]] for i in range(n)) for p in itertools.permutations(range(n))) / n


@pytest.mark.parametrize(("n", "dim", "seed"), [(1, 3, 0), (2, 2, 1), (4, 3, 2), (5, 8, 3), (6, 2, 4)])
def test_emd_equals_the_best_assignment(n: int, dim: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(n, dim)), rng.normal(size=(n, dim))
    expected = _brute_force(x, y)
    assert wmd(x, y) == pytest.approx(expected, abs=1e-9)
    rows, cols = linear_sum_assignment(_cost(x, y))
    assert wmd(x, y) == pytest.approx(_cost(x, y)[rows, cols].mean(), abs=1e-9)
    assert wmd(y, x) == pytest.approx(expected, abs=1e-9)  # symmetric for a symmetric cost


def test_integer_weights_equal_repeated_tokens() -> None:
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(2, 4)), rng.normal(size=(3, 4))
    # weights (2, 1) on x and (1, 1, 1) on y: the same as x's first token written twice, then an assignment
    assert wmd(x, y, np.array([2.0, 1.0])) == pytest.approx(_brute_force(x[[0, 0, 1]], y), abs=1e-9)
    # one token against many: all its mass moves to each target in proportion to the target weights
    b = np.array([1.0, 3.0, 0.0])
    assert wmd(x[:1], y, None, b) == pytest.approx(0.25 * _cost(x[:1], y)[0, 0] + 0.75 * _cost(x[:1], y)[0, 1])
    with pytest.raises(ValueError, match="non-negative"):
        wmd(x, y, np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="at least one token"):
        wmd(x[:0], y)


def test_sinkhorn_approaches_the_exact_distance_from_above() -> None:
    rng = np.random.default_rng(6)
    x, y = unit_rows(rng.normal(size=(5, 6))), unit_rows(rng.normal(size=(7, 6)))
    exact = wmd(x, y)
    loose, tight = wmd(x, y, solver="sinkhorn", reg=0.2), wmd(x, y, solver="sinkhorn", reg=0.005)
    assert loose > tight >= exact - 1e-6
    assert tight == pytest.approx(exact, abs=5e-3)
    with pytest.raises(ValueError, match="solver"):
        wmd(x, y, solver="greedy")


@pytest.mark.parametrize("reg", [1e-4, 1e-30])
def test_a_sinkhorn_regularisation_too_small_to_converge_is_an_error_not_a_distance(reg: float) -> None:
    """Unconverged, its plan misses the token weights: a "distance" of 23 between unit vectors (at most 2), or
    one below the exact optimum."""
    rng = np.random.default_rng(0)
    x, y = unit_rows(rng.normal(size=(12, 32))), unit_rows(rng.normal(size=(15, 32)))
    with pytest.raises(ValueError, match=r"Sinkhorn did not converge with regularisation .*: raise sinkhorn_reg"):
        wmd(x, y, solver="sinkhorn", reg=reg)
    assert wmd(x, y, solver="sinkhorn", reg=1e-3) == pytest.approx(wmd(x, y), abs=1e-3)


def test_idf_weights_and_uniform_fallback() -> None:
    idf = Idf.fit([[5, 6], [5], [5, 7, 7]])
    assert idf.n == 3 and idf.df == {5: 3, 6: 1, 7: 1}
    np.testing.assert_allclose(idf.weights([6, 7, 8]), [np.log(4 / 2), np.log(4 / 2), np.log(4)])
    assert token_weights([5, 5], idf) is None  # every idf is 0: uniform instead
    assert token_weights([5, 6], None) is None
    assert idf.checksum() == Idf.fit([[6, 5], [5], [7, 5]]).checksum() != Idf.fit([[5]]).checksum()


# --- anchor distances and the cache ------------------------------------------------------------------------------

SRC = ["the dog barks", "a cat runs", "der hund bellt", "the dog"]
TGT = ["der hund bellt", "the cat", "the dog barks", "hund"]


def _settings(anchor: TransformerEncoder, weighting: str = "uniform", solver: str = "emd", idf: str = ""
              ) -> WmdSettings:
    return WmdSettings(anchor=anchor.id, layer=2, weighting=weighting, solver=solver, idf=idf)


def test_content_ids_align_with_token_states(tiny_encoder: TransformerEncoder) -> None:
    states = tiny_encoder.token_states(SRC, 1)
    ids = content_ids(tiny_encoder, SRC)
    assert [len(i) for i in ids] == [len(s) for s in states]
    assert all(len(i) > 0 for i in ids)


def test_pair_distances_are_wmd_of_unit_token_states_and_are_cached(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(tiny_encoder)
    got = pair_distances(tiny_encoder, SRC, TGT, settings, root=tmp_path, chunk_pairs=3)
    states = {s: unit_rows(x) for s, x in zip(SRC + TGT, tiny_encoder.token_states(SRC + TGT, 2), strict=True)}
    expected = [wmd(states[s], states[t]) for s, t in zip(SRC, TGT, strict=True)]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert got[0] == pytest.approx(got[2], abs=1e-6)  # the same pair in the other order
    assert len(list(tmp_path.rglob("*.npz"))) == 2  # two chunks, two shards

    def no_anchor(*args: object, **kwargs: object) -> list[np.ndarray]:
        raise AssertionError("the anchor ran although every pair is cached")

    monkeypatch.setattr(tiny_encoder, "token_states", no_anchor)
    np.testing.assert_array_equal(pair_distances(tiny_encoder, SRC, TGT, settings, root=tmp_path), got)
    np.testing.assert_array_equal(pair_distances(tiny_encoder, SRC[1:3], TGT[1:3], settings, root=tmp_path), got[1:3])
    with pytest.raises(AssertionError, match="anchor ran"):  # other settings: another cache folder
        pair_distances(tiny_encoder, SRC, TGT, _settings(tiny_encoder, solver="sinkhorn"), root=tmp_path)


def test_an_interrupted_computation_keeps_its_finished_chunks(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(tiny_encoder)
    real = tiny_encoder.token_states
    calls: list[int] = []

    def dies_on_second_chunk(sentences: list[str], layer: int, **kw: bool) -> list[np.ndarray]:
        calls.append(len(sentences))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(sentences, layer, **kw)

    monkeypatch.setattr(tiny_encoder, "token_states", dies_on_second_chunk)
    with pytest.raises(KeyboardInterrupt):
        pair_distances(tiny_encoder, SRC, TGT, settings, root=tmp_path, chunk_pairs=2)
    monkeypatch.setattr(tiny_encoder, "token_states", real)
    cache = WmdCache(tmp_path, settings)
    assert np.isfinite(cache.lookup(pair_keys(SRC[:2], TGT[:2]))).all()
    assert np.isnan(cache.lookup(pair_keys(SRC[2:], TGT[2:]))).all()


def test_idf_weighting_uses_the_table_it_is_keyed_by(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    idf = Idf.fit(content_ids(tiny_encoder, SRC + TGT))
    settings = _settings(tiny_encoder, weighting="idf", idf=idf.checksum())
    got = pair_distances(tiny_encoder, SRC, TGT, settings, idf=idf, root=tmp_path)
    ids = dict(zip(SRC + TGT, content_ids(tiny_encoder, SRC + TGT), strict=True))
    states = dict(zip(SRC + TGT, tiny_encoder.token_states(SRC + TGT, 2), strict=True))
    expected = [wmd(unit_rows(states[s]), unit_rows(states[t]), token_weights(ids[s], idf), token_weights(ids[t], idf))
                for s, t in zip(SRC, TGT, strict=True)]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    uniform = pair_distances(tiny_encoder, SRC, TGT, _settings(tiny_encoder), root=tmp_path)
    assert not np.allclose(got, uniform)
    with pytest.raises(ValueError, match="idf"):
        pair_distances(tiny_encoder, SRC, TGT, settings, root=tmp_path)  # no table
    with pytest.raises(ValueError, match="idf"):
        pair_distances(tiny_encoder, SRC, TGT, settings, idf=Idf.fit([[1]]), root=tmp_path)  # another table
    with pytest.raises(ValueError, match="anchor"):
        pair_distances(tiny_encoder, SRC, TGT, WmdSettings(anchor="other@1", layer=2), root=tmp_path)
    with pytest.raises(ValueError, match="layer"):
        pair_distances(tiny_encoder, SRC, TGT, WmdSettings(anchor=tiny_encoder.id, layer=3), root=tmp_path)


def test_cache_refuses_a_folder_of_other_settings(tmp_path: Path) -> None:
    settings = WmdSettings(anchor="toy@1", layer=1)
    cache = WmdCache(tmp_path, settings)
    info = cache.directory / "settings.json"
    assert json.loads(info.read_text())["layer"] == 1
    info.write_text(json.dumps({**json.loads(info.read_text()), "layer": 2}))
    with pytest.raises(WmdCacheError, match="holds distances"):
        WmdCache(tmp_path, settings)
    assert WmdSettings(anchor="toy@1", layer=1, reg=0.5).key() == settings.key()  # reg only matters to sinkhorn
    assert WmdSettings(anchor="toy@1", layer=1, solver="sinkhorn").key() != settings.key()


def test_pair_keys_depend_on_both_texts_and_their_order() -> None:
    keys = pair_keys(["ab", "a", "b"], ["c", "bc", "a"])
    assert keys.shape == (3, wmd_module.KEY_BYTES) and len({k.tobytes() for k in keys}) == 3
    np.testing.assert_array_equal(pair_keys(["ab"], ["c"]), keys[:1])
