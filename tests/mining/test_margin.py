"""Margin scoring and candidate selection against a direct double-loop reference of LASER's mine_bitexts.py."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.mining.knn import bidirectional_knn
from xlsent.mining.margin import Margin, Mode, greedy_one_to_one, margin_scores, select_candidates

MARGINS = {"ratio": lambda a, b: a / b, "distance": lambda a, b: a - b, "absolute": lambda a, b: a}


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def reference_knn(x: np.ndarray, y: np.ndarray, k: int) -> tuple[list[list[float]], list[list[int]], list[list[int]]]:
    """Full cosine matrix and the k-NN lists of both sides, pair by pair in plain Python."""
    cos = [[sum(float(a) * float(b) for a, b in zip(xi, yj, strict=True)) for yj in y] for xi in x]
    fwd = [[j for _, j in sorted((-cos[i][j], j) for j in range(len(y)))][:k] for i in range(len(x))]
    bwd = [[i for _, i in sorted((-cos[i][j], i) for i in range(len(x)))][:k] for j in range(len(y))]
    return cos, fwd, bwd


def reference_mine(x: np.ndarray, y: np.ndarray, k: int, margin: str, mode: str) -> list[tuple[int, int, float]]:
    """LASER's ``mine`` mode, loop by loop: each side's best-scoring neighbour, then the retrieval strategy."""
    cos, fwd, bwd = reference_knn(x, y, k)
    fwd_mean = [sum(cos[i][j] for j in fwd[i]) / k for i in range(len(x))]
    bwd_mean = [sum(cos[i][j] for i in bwd[j]) / k for j in range(len(y))]

    def score(i: int, j: int) -> float:
        return MARGINS[margin](cos[i][j], (fwd_mean[i] + bwd_mean[j]) / 2)

    fwd_best = [first_best(fwd[i], [score(i, j) for j in fwd[i]]) for i in range(len(x))]
    bwd_best = [first_best(bwd[j], [score(i, j) for i in bwd[j]]) for j in range(len(y))]
    forward = [(i, fwd_best[i], score(i, fwd_best[i])) for i in range(len(x))]
    backward = [(bwd_best[j], j, score(bwd_best[j], j)) for j in range(len(y))]
    if mode == "forward":
        return forward
    if mode == "backward":
        return backward
    if mode == "intersect":
        return [p for p in forward if bwd_best[p[1]] == p[0]]
    return reference_one_to_one(forward + backward)


def first_best(candidates: list[int], scores: list[float]) -> int:
    """The candidate with the highest score, the first one on ties (as numpy's argmax)."""
    best = 0
    for n, sc in enumerate(scores):
        if sc > scores[best]:
            best = n
    return candidates[best]


def reference_one_to_one(pairs: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    seen_src, seen_tgt, kept = set(), set(), []
    for s, t, sc in sorted(pairs, key=lambda p: -p[2]):
        if s not in seen_src and t not in seen_tgt:
            seen_src.add(s)
            seen_tgt.add(t)
            kept.append((s, t, sc))
    return kept


def assert_same_pairs(got: tuple[np.ndarray, np.ndarray, np.ndarray], want: list[tuple[int, int, float]]) -> None:
    src, tgt, score = got
    assert src.dtype == np.int64 and tgt.dtype == np.int64 and score.dtype == np.float32
    assert list(zip(src.tolist(), tgt.tolist(), strict=True)) == [(s, t) for s, t, _ in want]
    np.testing.assert_allclose(score, [sc for _, _, sc in want], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", [m.value for m in Mode])
@pytest.mark.parametrize("margin", [m.value for m in Margin])
def test_mining_equals_double_loop_reference(margin: str, mode: str) -> None:
    rng = np.random.default_rng(0)
    for n_x, n_y, k in ((13, 17, 4), (9, 6, 3)):
        x, y = unit_rows(rng, n_x, 6), unit_rows(rng, n_y, 6)
        knn = bidirectional_knn(x, y, k, block_rows=5)
        got = select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim, margin=margin, mode=mode)
        assert_same_pairs(got, reference_mine(x, y, k, margin, mode))


def test_select_candidates_takes_reference_knn_lists() -> None:
    rng = np.random.default_rng(3)
    x, y = unit_rows(rng, 11, 5), unit_rows(rng, 8, 5)
    cos, fwd, bwd = reference_knn(x, y, 4)
    fwd_sim = np.array([[cos[i][j] for j in fwd[i]] for i in range(len(x))], dtype=np.float32)
    bwd_sim = np.array([[cos[i][j] for i in bwd[j]] for j in range(len(y))], dtype=np.float32)
    got = select_candidates(np.array(fwd), fwd_sim, np.array(bwd), bwd_sim, margin=Margin.RATIO, mode=Mode.MAX)
    assert_same_pairs(got, reference_mine(x, y, 4, "ratio", "max"))


def test_margin_scores_broadcast() -> None:
    cos = np.array([[0.8, 0.6], [0.5, 0.4]])
    fwd, bwd = np.array([[0.7], [0.45]]), np.array([[0.5, 0.3], [0.5, 0.3]])
    np.testing.assert_allclose(margin_scores(cos, fwd, bwd, Margin.RATIO), cos / ((fwd + bwd) / 2))
    np.testing.assert_allclose(margin_scores(cos, fwd, bwd, Margin.DISTANCE), cos - (fwd + bwd) / 2)
    np.testing.assert_array_equal(margin_scores(cos, fwd, bwd, Margin.ABSOLUTE), cos)


def test_greedy_one_to_one_equals_loop_with_many_conflicts_and_ties() -> None:
    rng = np.random.default_rng(5)
    src, tgt = rng.integers(0, 6, 60), rng.integers(0, 7, 60)
    score = rng.integers(0, 5, 60).astype(np.float32)  # many equal scores: input order decides
    s, t, sc = greedy_one_to_one(src, tgt, score)
    want = reference_one_to_one(list(zip(src.tolist(), tgt.tolist(), score.tolist(), strict=True)))
    assert list(zip(s.tolist(), t.tolist(), sc.tolist(), strict=True)) == want
    assert len(set(s.tolist())) == len(s) and len(set(t.tolist())) == len(t)


def test_unknown_margin_or_mode_is_an_error() -> None:
    one = np.zeros((1, 1))
    with pytest.raises(ValueError):
        select_candidates(one.astype(int), one, one.astype(int), one, margin="cosine")
    with pytest.raises(ValueError):
        select_candidates(one.astype(int), one, one.astype(int), one, mode="both")
